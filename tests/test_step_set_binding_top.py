"""set-binding on a module's top-level attrset (issue 46): `at = "."`, `only-missing`, and `at` meaning the
top-level path, never a submodule's own `options = { … }` nested inside it. Checked by the real Nix parser."""

from __future__ import annotations

MODULE = """\
{ config, lib, ... }:
let
  cfg = config.programs.foo;
in
{
  options.programs.foo = {
    enable = lib.mkEnableOption "foo";
    settings = lib.mkOption {
      type = lib.types.submodule {
        options = {
          a = lib.mkOption { };
        };
      };
    };
  };

  config = lib.mkIf cfg.enable { };
}
"""

HAS_META = """\
{ lib, ... }:
{
  meta.maintainers = [ lib.maintainers.someone ];
  config = { };
}
"""


def _apply(run_cli, tmp_path, files, *settings):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = [item for setting in settings for item in ("--set", setting)]
    return run_cli("apply", "set-binding", *args, str(tmp_path))


def test_meta_maintainers_is_added_where_missing_only(run_cli, tmp_path, nix_oracle):
    result = _apply(run_cli, tmp_path, {"a.nix": MODULE, "b.nix": HAS_META},
                    "at=.", "path=meta.maintainers", "value=[ ]", "only-missing=true")
    assert result.exit_code == 0, result
    expected = MODULE.replace("  config = lib.mkIf cfg.enable { };\n",
                              "  config = lib.mkIf cfg.enable { };\n\n  meta.maintainers = [ ];\n")
    written = (tmp_path / "a.nix").read_text()
    assert written == expected  # indented like its siblings, separated as they are
    assert nix_oracle(written.encode()) == nix_oracle(expected.encode()) and nix_oracle(written.encode())[0]
    assert (tmp_path / "b.nix").read_text() == HAS_META  # already there: kept as it is
    assert "1 file changed" in result.output


def test_without_only_missing_an_existing_value_is_set(run_cli, tmp_path):
    result = _apply(run_cli, tmp_path, {"b.nix": HAS_META}, "at=.", "path=meta.maintainers", "value=[ ]")
    assert result.exit_code == 0, result
    assert (tmp_path / "b.nix").read_text() == HAS_META.replace("[ lib.maintainers.someone ]", "[ ]")


def test_a_file_whose_value_is_not_an_attrset_is_a_warning(run_cli, tmp_path):
    result = _apply(run_cli, tmp_path, {"c.nix": "{ lib }: lib.mkMerge [ ]\n"}, "at=.", "path=x", "value=1")
    assert result.exit_code == 0, result
    assert "the file's value is not an attrset: x not set" in result.output


def test_at_is_the_top_level_path_not_a_nested_submodule_set(run_cli, tmp_path, nix_oracle):
    result = _apply(run_cli, tmp_path, {"a.nix": MODULE}, "at=options", "path=programs.foo.extra", "value=1")
    assert result.exit_code == 0, result
    written = (tmp_path / "a.nix").read_text()
    assert written.count("extra") == 1
    assert '    enable = lib.mkEnableOption "foo";' in written
    assert "        options = {\n          a = lib.mkOption { };\n        };" in written  # the submodule's, untouched
    assert "    extra = 1;\n  };\n" in written  # inside options.programs.foo = { … }, indented like its siblings
    assert nix_oracle(written.encode())[0]


def test_a_glob_reaches_nested_sets(run_cli, tmp_path):
    result = _apply(run_cli, tmp_path, {"a.nix": MODULE}, "at=*.options", "path=b", "value=1")
    assert result.exit_code == 0, result
    assert "          a = lib.mkOption { };\n          b = 1;\n" in (tmp_path / "a.nix").read_text()
