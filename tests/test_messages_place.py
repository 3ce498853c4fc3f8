"""Messages name places the way a report can group them (issue 46): a place in the file a message is about is
`line:col` (its own path is the report's), and a callee's function head is quoted without its comments."""

from __future__ import annotations

from pinshift.graph.signature import signature
from pinshift.syntax.document import parse_document


def test_a_function_head_is_quoted_without_its_comments():
    doc = parse_document(b"{ lib, # the library, or null\n  pkgs /* a set */ ? null, ... }:\nlib\n", "callee.nix")
    assert signature(doc).head == "{ lib, pkgs ? null, ... }:"


def test_an_argument_problem_quotes_the_head_without_the_callee_comment(run_cli, tmp_path):
    (tmp_path / "callee.nix").write_text("{ lib # ) the library\n}:\nlib\n")
    (tmp_path / "caller.nix").write_text("{ lib }:\nimport ./callee.nix { inherit lib; extra = 1; }\n")
    result = run_cli("lint", str(tmp_path))
    assert "callee.nix:1:1 ({ lib }:) does not take" in result.output, result
    assert "the library" not in result.output


def test_refusals_point_at_line_and_column_not_at_a_file(run_cli, tmp_path):
    (tmp_path / "r.nix").write_text("let a = 1; in { inherit a; }\n")
    result = run_cli("apply", "rename-binding", "--set", "from=a", "--set", "to=b", str(tmp_path))
    assert result.exit_code == 1, result
    assert "inherit a; reads the binding at 1:5 and names an attribute by it" in result.output
    assert "<file>" not in result.output


def test_a_refused_edit_says_file_left_unchanged_without_a_placeholder(run_cli, tmp_path):
    for name in ("a.nix", "b.nix"):
        (tmp_path / name).write_text("{ x = 1; }\n")
    result = run_cli("apply", "rewrite", "--set", "pattern=1", "--set", "replacement=y", str(tmp_path))
    assert result.exit_code == 1, result
    assert "file left unchanged" in result.output and "<file>" not in result.output
