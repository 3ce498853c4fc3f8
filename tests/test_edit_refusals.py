"""Edits that would introduce a duplicate attribute, a duplicate formal or an unbound reference are
refused, through the real CLI on small real files (issue 22). Each refused case also shows, by
asking Nix about the bytes the step would have written (written out here by hand), that the
refusal is right; each accepted case shows that Nix parses what was written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pinshift.edits import Edit, apply_to_document
from pinshift.errors import EditRefused
from pinshift.syntax.document import parse_document

FIXTURES = Path(__file__).parent / "fixtures"
WORD_SWAP = ("--migrations", str(FIXTURES / "migrations"))


def _refused(run_cli, tmp_path, source: str, *args: str) -> str:
    """Run `pinshift apply ARGS r.nix` on `source`; it must refuse and leave the file; the one refusal line."""
    target = tmp_path / "r.nix"
    target.write_text(source)
    result = run_cli("apply", *args, "r.nix", cwd=tmp_path)
    assert result.exit_code == 1, result
    assert target.read_text() == source
    assert result.stderr.splitlines()[-1].endswith("; no file written")
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("refused  ")]
    return line


def _written(run_cli, tmp_path, source: str, *args: str) -> str:
    target = tmp_path / "r.nix"
    target.write_text(source)
    result = run_cli("apply", *args, "r.nix", cwd=tmp_path)
    assert result.exit_code == 0, result
    return target.read_text()


OVERRIDE = """{ pkgs }:
pkgs.hello.overrideAttrs (oldAttrs: {
  inherit (oldAttrs) meta;
  pname = "hello-custom";
})
"""


def test_set_binding_beside_an_inherited_attrset_would_define_it_twice(run_cli, tmp_path, nix_oracle):
    line = _refused(run_cli, tmp_path, OVERRIDE, "set-binding", "--set", "path=meta.platforms",
                    "--set", 'value=[ "x86_64-linux" ]')
    assert line == ("refused  r.nix:5:3: syntax error: attribute 'meta.platforms' already defined (first defined at "
                    "3:22): the change would break the file's syntax; file left unchanged "
                    "(line: 'meta.platforms = [ \"x86_64-linux\" ];')")
    would_be = OVERRIDE.replace('  pname = "hello-custom";\n', '  pname = "hello-custom";\n  meta.platforms = [ "x86_64-linux" ];\n')
    accepted, message = nix_oracle(would_be.encode())
    assert not accepted and "attribute 'meta.platforms' already defined" in message


def test_set_binding_of_an_inherited_name_would_define_it_twice(run_cli, tmp_path, nix_oracle):
    source = '{ pkgs, version }:\npkgs.hello.overrideAttrs (oldAttrs: {\n  inherit version;\n  pname = "x";\n})\n'
    line = _refused(run_cli, tmp_path, source, "set-binding", "--set", "path=version", "--set", 'value="2"')
    assert line.startswith("refused  r.nix:5:3: syntax error: attribute 'version' already defined (first defined at 3:11)")
    accepted, message = nix_oracle(source.replace('pname = "x";', 'pname = "x";\n  version = "2";').encode())
    assert not accepted and "attribute 'version' already defined" in message


def test_set_binding_to_a_name_nothing_binds_is_refused(run_cli, tmp_path, nix_oracle):
    source = '{ pkgs }:\npkgs.hello.overrideAttrs (oldAttrs: {\n  pname = "x";\n})\n'
    line = _refused(run_cli, tmp_path, source, "set-binding", "--set", "path=meta.platforms",
                    "--set", "value=lib.platforms.linux")
    assert line == ("refused  r.nix:4:20: undefined variable 'lib': nothing in the file binds it (take it as a "
                    "function argument, or use a name that is bound); file left unchanged "
                    "(line: 'meta.platforms = lib.platforms.linux;')")
    accepted, message = nix_oracle(source.replace('"x";', '"x";\n  meta.platforms = lib.platforms.linux;').encode())
    assert not accepted and "undefined variable 'lib'" in message


@pytest.mark.parametrize(
    "header, value",
    [
        ("{ pkgs, lib }:\n", "lib.platforms.linux"),  # bound by the file's function
        ("{ pkgs }:\n", "pkgs.lib.platforms.linux"),
        ("{ pkgs }:\n", '[ builtins.currentSystem (toString 1) ]'),  # Nix's own globals
    ],
)
def test_set_binding_to_bound_names_and_builtins_is_written(run_cli, tmp_path, nix_oracle, header, value):
    source = header + 'pkgs.hello.overrideAttrs (oldAttrs: {\n  pname = "x";\n})\n'
    out = _written(run_cli, tmp_path, source, "set-binding", "--set", "path=meta.platforms", "--set", f"value={value}")
    assert f"  meta.platforms = {value};\n" in out
    assert nix_oracle(out.encode())[0], out


def test_a_name_the_file_already_leaves_free_is_not_a_new_problem(run_cli, tmp_path):
    """A recipe may name what its caller provides (`pkgs` here): one more use of it is written."""
    source = 'pkgs.hello.overrideAttrs (oldAttrs: {\n  pname = "x";\n})\n'
    out = _written(run_cli, tmp_path, source, "set-binding", "--set", "path=version", "--set", "value=pkgs.hello.version")
    assert "  version = pkgs.hello.version;\n" in out


def test_rename_attr_into_the_at_name_would_duplicate_a_formal(run_cli, tmp_path, nix_oracle):
    source = "python313Packages@{ python3Packages, lib, ... }:\npython3Packages.torch\n"
    line = _refused(run_cli, tmp_path, source, "rename-attr", "--set", "from=python3Packages",
                    "--set", "to=python313Packages")
    assert line.startswith("refused  r.nix:1:21: syntax error: duplicate formal function argument 'python313Packages'")
    accepted, message = nix_oracle(source.replace("python3Packages", "python313Packages").encode())
    assert not accepted and "duplicate formal function argument 'python313Packages'" in message


FORMAL_LEFT_BEHIND = """{ lib, pkgs }:
pkgs.hello.overrideAttrs (oldAttrs: {
  meta.platforms = lib.platforms.linux;
})
"""


def test_an_edit_removing_a_formal_its_references_need_is_refused(run_cli, tmp_path, nix_oracle):
    """word-swap (a text replacement loaded with --migrations) removes `lib, ` from the header only."""
    line = _refused(run_cli, tmp_path, FORMAL_LEFT_BEHIND, "word-swap", "--set", "old=lib, ", "--set", "new=", *WORD_SWAP)
    assert line == ("refused  r.nix:3:20: 'lib' would no longer be bound by the function argument at 1:3 (undefined "
                    "variable); file left unchanged (line: 'meta.platforms = lib.platforms.linux;')")
    accepted, message = nix_oracle(FORMAL_LEFT_BEHIND.replace("lib, ", "", 1).encode())
    assert not accepted and "undefined variable 'lib'" in message


def test_inside_a_with_nix_cannot_know_so_the_edit_is_written(run_cli, tmp_path, nix_oracle):
    source = FORMAL_LEFT_BEHIND.replace("  meta.platforms = lib.", "  meta.platforms = with pkgs; lib.")
    out = _written(run_cli, tmp_path, source, "word-swap", "--set", "old=lib, ", "--set", "new=", *WORD_SWAP)
    assert out.startswith("{ pkgs }:\n")
    assert nix_oracle(out.encode())[0]


def test_a_reference_that_would_fall_through_to_a_builtin_is_refused(run_cli, tmp_path, nix_oracle):
    source = "{ toString, x }:\ntoString x\n"
    line = _refused(run_cli, tmp_path, source, "word-swap", "--set", "old=toString, ", "--set", "new=", *WORD_SWAP)
    assert line.startswith("refused  r.nix:2:1: 'toString' would no longer be bound by the function argument at 1:3 "
                           "(it would refer to Nix's builtin 'toString')")
    assert nix_oracle(b"{ x }:\ntoString x\n")[0]  # Nix accepts it: only pinshift sees the meaning change


def test_problems_the_input_already_had_do_not_refuse_an_edit():
    doc = parse_document(b"{ a = 1; a = 2; b = 3; c = x; }\n", "r.nix")
    assert [p.message for p in doc.problems] == ["syntax error: attribute 'a' already defined"]
    result = apply_to_document(doc, [Edit(20, 21, b"4", "b")])
    assert result.data == b"{ a = 1; a = 2; b = 4; c = x; }\n"
    moved = apply_to_document(doc, [Edit(0, 0, b"# moved\n", "comment")])  # the duplicate's first line moves
    assert moved.problems[0].detail == " (first defined at 2:3)"


def test_a_new_duplicate_beside_an_old_one_is_still_refused():
    doc = parse_document(b"{ a = 1; a = 2; b = 3; c = 4; }\n", "r.nix")
    with pytest.raises(EditRefused, match=r"^r\.nix:1:24: syntax error: attribute 'b' already defined \(first defined at 1:17\)"):
        apply_to_document(doc, [Edit(23, 24, b"b", "c -> b")])
