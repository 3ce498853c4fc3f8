"""The `rewrite` step kind (issue 46): structural, scope-aware rewrites of Nix, verified by the real Nix parser.

Each test writes home-manager-shaped modules, runs the real `pinshift apply rewrite`, and checks the exact
bytes written, that `nix-instantiate --parse` accepts them, and that the canonical parse changed only where
the rule matched (the expected file's parse).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_growth import GROWTH, LINEAR, counted

TO_STRING = ("--set", "pattern=toString $X", "--set", "replacement=builtins.toString $X")
OPTIONALS = ("--set", "pattern=lib.optional $C $X", "--set", "replacement=lib.optionals $C [ $X ]")

MODULE = """\
{ config, lib, pkgs, ... }:
let
  cfg = config.programs.foo;
  helper = cfg: lib.optional cfg.enable "from-argument";
in
{
  options.programs.foo = {
    enable = lib.mkEnableOption "foo";
    enableMcpIntegration = lib.mkOption {
      type = lib.types.bool;
      default = false; # off until stable
    };
    settings = lib.mkOption {
      type = lib.types.submodule {
        options.enableMcpIntegration = lib.mkOption { default = false; };
        options.other = lib.mkOption { default = false; };
      };
    };
  };
  config = lib.mkIf cfg.enable {
    home.packages = lib.optional cfg.x pkgs.hello ++ lib.optional (cfg.y) (pkgs.callPackage ./x.nix { });
    home.file.a.text = "${toString cfg.port} toString ''${toString}";
    home.file.b.text = ''
      toString 1 ''${toString 2} ${toString 3}
    '';
    # toString 4
    xs = let toString = x: x; in toString 5;
    ys = x: with lib; toString x;
    zs = lib.optional (cfg.z) (f: let lib = { }; in lib.optional f 2);
    n = toString (toString 6);
  };
}
"""


def _run(run_cli, tmp_path: Path, files: dict[str, str], *args: str):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return run_cli("apply", "rewrite", *args, str(tmp_path))


def _same_parse(nix_oracle, written: str, expected: str) -> None:
    ok, parsed = nix_oracle(written.encode())
    assert ok, parsed
    assert parsed == nix_oracle(expected.encode())[1]


def test_to_string_becomes_builtins_to_string_in_code_only(run_cli, tmp_path, nix_oracle):
    result = _run(run_cli, tmp_path, {"modules/foo.nix": MODULE}, *TO_STRING)
    assert result.exit_code == 0, result
    expected = (MODULE.replace('"${toString cfg.port}', '"${builtins.toString cfg.port}')
                .replace("${toString 3}", "${builtins.toString 3}")
                .replace("ys = x: with lib; toString x;", "ys = x: with lib; builtins.toString x;")
                .replace("n = toString (toString 6);", "n = builtins.toString (toString 6);"))
    written = (tmp_path / "modules/foo.nix").read_text()
    assert written == expected  # strings, ''${ escapes, comments and the let-bound toString untouched
    _same_parse(nix_oracle, written, expected)
    assert "toString here is the let binding at" in result.output
    assert "a match inside another match: left for a second run" in result.output
    again = run_cli("apply", "rewrite", *TO_STRING, str(tmp_path))  # the second run takes the inner one
    assert "n = builtins.toString (builtins.toString 6);" in (tmp_path / "modules/foo.nix").read_text(), again


def test_optional_becomes_optionals_and_a_shadowed_lib_is_left(run_cli, tmp_path, nix_oracle):
    result = _run(run_cli, tmp_path, {"foo.nix": MODULE}, *OPTIONALS)
    assert result.exit_code == 0, result
    expected = (MODULE.replace('helper = cfg: lib.optional cfg.enable "from-argument";',
                               'helper = cfg: lib.optionals cfg.enable [ "from-argument" ];')
                .replace("lib.optional cfg.x pkgs.hello ++ lib.optional (cfg.y) (pkgs.callPackage ./x.nix { })",
                         "lib.optionals cfg.x [ pkgs.hello ] ++ lib.optionals (cfg.y) [ (pkgs.callPackage ./x.nix { }) ]")
                .replace("zs = lib.optional (cfg.z) (f: let lib = { }; in lib.optional f 2);",
                         "zs = lib.optionals (cfg.z) [ (f: let lib = { }; in lib.optional f 2) ];"))
    written = (tmp_path / "foo.nix").read_text()
    assert written == expected
    _same_parse(nix_oracle, written, expected)
    assert "lib here is the let binding at" in result.output


def test_a_name_read_by_the_pattern_must_be_the_top_level_one(run_cli, tmp_path, nix_oracle):
    # `cfg` of the top `let` beside a lambda argument `cfg`: only the first is the pattern's `cfg`
    rule = ("--set", "pattern=cfg.enable", "--set", "replacement=cfg.enabled")
    result = _run(run_cli, tmp_path, {"foo.nix": MODULE}, *rule)
    assert result.exit_code == 0, result
    written = (tmp_path / "foo.nix").read_text()
    assert 'helper = cfg: lib.optional cfg.enable "from-argument";' in written
    assert "config = lib.mkIf cfg.enabled {" in written
    assert "cfg here is the function argument at 4:12" in result.output
    _same_parse(nix_oracle, written, MODULE.replace("lib.mkIf cfg.enable {", "lib.mkIf cfg.enabled {"))


def test_inside_a_named_option_and_not_inside(run_cli, tmp_path, nix_oracle):
    rule = ("--set", "pattern=default = false;", "--set", "replacement=default = true;")
    result = _run(run_cli, tmp_path, {"foo.nix": MODULE}, *rule, "--set", 'inside=["*.enableMcpIntegration"]')
    assert result.exit_code == 0, result
    written = (tmp_path / "foo.nix").read_text()
    expected = (MODULE.replace("default = false; # off", "default = true; # off")
                .replace("options.enableMcpIntegration = lib.mkOption { default = false; };",
                         "options.enableMcpIntegration = lib.mkOption { default = true; };"))
    assert written == expected  # both nested option sets, never `other`
    _same_parse(nix_oracle, written, expected)
    (tmp_path / "foo.nix").write_text(MODULE)
    result = run_cli("apply", "rewrite", *rule, "--set", 'not-inside=["*.enableMcpIntegration"]', str(tmp_path))
    assert result.exit_code == 0, result
    assert (tmp_path / "foo.nix").read_text() == MODULE.replace(
        "options.other = lib.mkOption { default = false; };", "options.other = lib.mkOption { default = true; };")


def test_a_replacement_captured_by_a_local_binding_is_refused(run_cli, tmp_path):
    source = "{ lib, ... }:\n{\n  a = toString 1;\n  b = let builtins = { }; in toString 2;\n}\n"
    result = _run(run_cli, tmp_path, {"c.nix": source}, *TO_STRING)
    assert result.exit_code == 1, result
    assert "c.nix:4:30: the replacement's `builtins` would be the let binding at 4:11 here" in result.output
    assert "no file written" in result.output
    assert (tmp_path / "c.nix").read_text() == source


def test_runs_and_parentheses(run_cli, tmp_path, nix_oracle):
    source = "{ lib, f, g }:\n{\n  a = lib.concatStringsSep \",\" [ f g \"x\" ];\n  b = f g == null;\n  c = [ ] == null;\n}\n"
    result = _run(run_cli, tmp_path, {"r.nix": source}, "--set", 'pattern=lib.concatStringsSep "," [ $$$XS ]',
                  "--set", 'replacement=lib.concatStringsSep ", " [ $$$XS ]')
    assert result.exit_code == 0, result
    result = run_cli("apply", "rewrite", "--set", "pattern=$X == null", "--set", "replacement=isNull $X", str(tmp_path))
    assert result.exit_code == 0, result
    expected = "{ lib, f, g }:\n{\n  a = lib.concatStringsSep \", \" [ f g \"x\" ];\n  b = isNull (f g);\n  c = isNull [ ];\n}\n"
    written = (tmp_path / "r.nix").read_text()
    assert written == expected
    _same_parse(nix_oracle, written, expected)


def test_call_arguments_are_one_run(run_cli, tmp_path):
    source = "{ lib }:\n[ (lib.mkMerge a b) (lib.mkMerge c) ]\n"
    result = _run(run_cli, tmp_path, {"m.nix": source}, "--set", "pattern=lib.mkMerge $$$ARGS",
                  "--set", "replacement=lib.mkMerge' $$$ARGS")
    assert result.exit_code == 0, result
    assert (tmp_path / "m.nix").read_text() == "{ lib }:\n[ (lib.mkMerge' a b) (lib.mkMerge' c) ]\n"


def test_a_comment_inside_a_match_is_never_dropped(run_cli, tmp_path):
    source = "{ lib, c }:\nlib.optional c # why\n  1\n"
    result = _run(run_cli, tmp_path, {"k.nix": source}, *OPTIONALS)
    assert result.exit_code == 0, result
    assert "a comment inside this match would be lost" in result.output
    assert (tmp_path / "k.nix").read_text() == source


@pytest.mark.parametrize("settings, says", [
    (("pattern=toString (", "replacement=x"), "'pattern' is not a Nix expression or one binding"),
    (("pattern=toString $X", "replacement=builtins.toString $Y"), "uses $Y, which the pattern does not capture"),
    (("pattern=f [ $$$A $$$B ]", "replacement=x"), "at most one $$$ run"),
    (("pattern=default = false;", "replacement=true"), "must be a binding when the pattern is one"),
    (("pattern=  ", "replacement=x"), "'pattern' is empty"),
    (("pattern=$X", "replacement=x"), "$X alone matches everything"),
    (("pattern=x", "replacement=y", "inside=a b"), "'inside' globs are dotted binding paths"),
])
def test_bad_rules_are_one_line_errors(run_cli, tmp_path, settings, says):
    (tmp_path / "a.nix").write_text("{ }\n")
    args = [item for setting in settings for item in ("--set", setting)]
    result = run_cli("apply", "rewrite", *args, str(tmp_path))
    assert result.exit_code == 2, result
    assert says in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_matching_work_grows_linearly(tmp_path):
    from pinshift.migrations import rewrite
    from pinshift.steps.kind import StepContext
    from pinshift.syntax.document import parse_document

    params = rewrite.Params(pattern="lib.optional $C $X", replacement="lib.optionals $C [ $X ]")

    def source(n: int) -> bytes:  # many matches, nested calls, and a deep chain of applications
        items = " ".join(f"(lib.optional c{i} (lib.optional d{i} x))" for i in range(n))
        chain = "lib.optional " + " ".join(f"a{i}" for i in range(n))
        return ("{ lib }: [ " + items + " (" + chain + ") ]\n").encode()

    works = {}
    for n in (50, 50, 50 * GROWTH):
        data = source(n)
        works[n] = counted(lambda: rewrite.plan(parse_document(data, "x.nix"), params, StepContext("x.nix")), data)
    assert works[50 * GROWTH] <= LINEAR * works[50], works


def test_a_top_level_let_shadows_a_builtin_but_binds_other_names_at_the_top(run_cli, tmp_path):
    shadowing = '{ lib, ... }:\nlet\n  toString = x: "bar-${x}";\nin\n{ a = toString "x"; }\n'
    result = _run(run_cli, tmp_path, {"bar.nix": shadowing}, *TO_STRING)
    assert result.exit_code == 0, result
    assert (tmp_path / "bar.nix").read_text() == shadowing
    assert "toString here is the let binding at 3:3, not the top-level toString: left alone" in result.output
    top_let = "{ pkgs, ... }:\nlet lib = pkgs.lib; in\n{ a = lib.optional true 1; }\n"
    (tmp_path / "bar.nix").write_text(top_let)
    result = run_cli("apply", "rewrite", *OPTIONALS, str(tmp_path))
    assert result.exit_code == 0, result
    assert (tmp_path / "bar.nix").read_text() == top_let.replace("lib.optional true 1", "lib.optionals true [ 1 ]")


def test_a_top_level_let_binding_builtins_refuses_the_replacement(run_cli, tmp_path):
    source = "{ lib, ... }:\nlet builtins = import ./compat.nix; in\n{ a = toString 1; }\n"
    result = _run(run_cli, tmp_path, {"baz.nix": source}, *TO_STRING)
    assert result.exit_code == 1, result
    assert "baz.nix:3:7: the replacement's `builtins` would be the let binding at 2:5 here" in result.output
    assert (tmp_path / "baz.nix").read_text() == source


def test_edits_are_narrow_and_a_rule_matching_its_replacement_changes_nothing(tmp_path):
    from pinshift.migrations import rewrite
    from pinshift.steps.kind import StepContext
    from pinshift.syntax.document import parse_document

    doc = parse_document(b"{ x = toString (f  1); }\n", "x.nix")
    params = rewrite.Params(pattern="toString $X", replacement="builtins.toString $X")
    [edit] = rewrite.plan(doc, params, StepContext("x.nix")).edits
    assert (edit.start, edit.end, edit.replacement) == (6, 6, b"builtins.")
    same = rewrite.Params(pattern="toString $X", replacement="toString $X")
    assert rewrite.plan(doc, same, StepContext("x.nix")).edits == []
