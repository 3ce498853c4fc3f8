"""A step's `needles` prefilter may skip only files its `plan` provably leaves alone (issue 46).

A file without any needle is never parsed: whatever the step would have said about it (a warning, a
refusal, a note) is lost. For every bundled kind with needles, and files that hold none of them, `plan`
itself (run without the prefilter) must have nothing to say; a file the plan would warn about must pass.
"""

from __future__ import annotations

import pytest

from pinshift.steps.kind import StepContext
from pinshift.steps.registry import bundled_kinds

CASES = {  # kind: (params, files holding none of its needles: path -> text)
    "set-binding": ({"path": "b", "value": "2"}, {}),  # no needles at all: see the CLI test below
    "metadata-rev": ({"missing": "skip"}, {"a.nix": "{ stdenv }: stdenv.mkDerivation { pname = \"a\"; }\n"}),
    "python-constant": ({"constants": {"VERSION": '"2"'}}, {"setup.py": "NAME = 'x'\nassert 1 == 1\n"}),
    "readme-branch-table": ({"base": "main-a", "target": "main-b"},
                            {"README.md": "# Notes\n\n| Other | Column |\n|---|---|\n| x | y |\n"}),
    "rename-attr": ({"from": "python3Packages", "to": "python313Packages"},
                    {"a.nix": "{ pkgs }: pkgs.python312Packages.torch\n"}),
    "rename-binding": ({"from": "cfg", "to": "conf"}, {"a.nix": "let c = 1; in c\n"}),
    "replace-in-strings": ({"paths": ["meta.description"], "old": "a", "new": "b"},
                           {"a.nix": "{ pname = \"a\"; }\n"}),
    "pin-swap": ({"old": "abcdef1", "new": "1234567" * 5 + "12345"}, {"a.nix": "{ pkgs }: pkgs.hello\n"}),
    "rewrite": ({"pattern": "toString $X", "replacement": "builtins.toString $X"},
                {"a.nix": "{ lib }: lib.x # tostring\n"}),
}


def _document(kind, path: str, text: str):
    from pinshift.languages import language_for, parse

    return parse(language_for(path), text.encode(), path)


def test_every_kind_with_needles_is_audited():
    with_needles = {name for name, kind in bundled_kinds().items() if hasattr(kind.module, "needles")}
    assert with_needles <= set(CASES), sorted(with_needles - set(CASES))


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_file_without_needles_gets_nothing_from_the_plan(name):
    kind = bundled_kinds()[name]
    raw, files = CASES[name]
    params = kind.parse_params(raw)
    needles = kind.needles(params)
    for path, text in files.items():
        assert needles and not any(n in text.encode() for n in needles), (name, needles)
        output = kind.plan(_document(kind, path, text), params, StepContext(path))
        assert (output.edits, output.warnings, output.refusals, output.notes) == ([], [], [], []), (name, output)


def test_set_binding_warns_about_a_file_without_overrideattrs(run_cli, tmp_path):
    (tmp_path / "x.nix").write_text("{ a = 1; }\n")
    result = run_cli("apply", "set-binding", "--set", "path=b", "--set", "value=2", str(tmp_path / "x.nix"))
    assert result.exit_code == 0, result
    assert "found no overrideAttrs attrset: b not set" in result.output
    assert "1 warning" in result.output


def test_a_readme_naming_a_branch_without_a_table_still_warns(tmp_path):
    kind = bundled_kinds()["readme-branch-table"]
    params = kind.parse_params({"base": "main-a", "target": "main-b"})
    output = kind.plan(_document(kind, "README.md", "# main-a\n\nno table\n"), params, StepContext("README.md"))
    assert [w.message for w in output.warnings] == ["no branch table (no table with a 'Branch' column); file left alone"]


def test_rewrite_inside_needs_the_glob_literal_and_the_plan_agrees():
    kind = bundled_kinds()["rewrite"]
    params = kind.parse_params({"pattern": "default = false;", "replacement": "default = true;",
                                "inside": ["*.enableMcpIntegration"]})
    assert kind.needles(params) == (b"enableMcpIntegration",)
    text = "{ lib }:\n{ options.x.enable = lib.mkOption { default = false; }; }\n"
    output = kind.plan(_document(kind, "a.nix", text), params, StepContext("a.nix"))
    assert (output.edits, output.warnings, output.notes) == ([], [], [])
    matched = text.replace("x.enable", "x.enableMcpIntegration")
    assert len(kind.plan(_document(kind, "a.nix", matched), params, StepContext("a.nix")).edits) == 1
