"""Syntax problems: located as path:line:col with the offending line; the trailing-comma gap and nothing more is forgiven."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from pinshift.syntax.document import parse_document
from pinshift.syntax.problems import BOM, is_trailing_formals_comma

SYNTAX = FIXTURES / "syntax"


def problems(source: bytes, path: str = "f.nix"):
    return parse_document(source, path).problems


def test_missing_semicolon_located_with_its_line():
    doc = parse_document((SYNTAX / "invalid" / "missing_semicolon.nix").read_bytes(), "pkgs/x.nix")
    (problem,) = doc.problems
    assert str(problem) == "pkgs/x.nix:3:11: syntax error: unexpected '='"
    assert problem.source_line == '  version = "1";'
    assert doc.data[problem.offset : problem.offset + 1] == b"="


def test_column_counts_bytes_and_crlf_is_not_part_of_the_line():
    (problem,) = problems(b'{\r\n  a = 1\r\n  "\xc3\xa9" = 2;\r\n}\r\n')
    assert (problem.line, problem.column) == (3, 8)  # the `=` after a 2-byte character
    assert problem.source_line == '  "\u00e9" = 2;'


@pytest.mark.parametrize(
    "source",
    [
        b"{ a, b, }: a",  # MISSING identifier in an empty formal
        b"args@{ a, b, }: a",
        b"{ a, b, }@args: a",
        b"{ a ? 1, }: a",  # ERROR node holding the lone comma
        b"{ a ? { }, }: a",
        b"{\n  a,\n  b, # last\n}: a",
        b"{ a, /* c */ }: a",
        b"x: { f = { a, }: a; }",
    ],
)
def test_trailing_comma_in_formals_is_valid(source):
    assert problems(source) == ()


@pytest.mark.parametrize(
    "source, column",
    [
        (b"{ a, ..., }: a", 9),  # Nix rejects a comma after the ellipsis
        (b"{ a,, }: a", 4),
        (b"{ , a }: a", 3),
        (b"{ , }: 1", 3),
    ],
)
def test_commas_nix_rejects_stay_problems(source, column):
    found = problems(source)
    assert found, source
    assert found[0].column == column and found[0].line == 1


def test_real_error_next_to_a_tolerated_trailing_comma_is_reported():
    doc = parse_document((SYNTAX / "invalid" / "trailing_comma_plus_error.nix").read_bytes(), "t.nix")
    assert [str(p) for p in doc.problems] == ["t.nix:3:9: syntax error: unexpected '+'"]
    assert [str(p) for p in problems(b"{ a, }:\nlet in in a\n", "t.nix")] == ["t.nix:2:8: syntax error: unexpected 'in'"]


def test_broken_formal_before_the_trailing_comma_is_not_forgiven():
    assert problems(b"{ a ? , b, }: a")


def test_forgiveness_is_limited_to_formals():
    trailing_in_list_like_places = [b"[ 1, ]", b"{ a = 1, }", b"f(a, b,)"]
    for source in trailing_in_list_like_places:
        doc = parse_document(source)
        assert doc.problems, source
        assert not any(is_trailing_formals_comma(n) for n in _error_nodes(doc.root)), source


def _error_nodes(node):
    if node.is_error or node.is_missing:
        yield node
    for child in node.children:
        yield from _error_nodes(child)


def test_missing_token_message_names_it():
    (problem,) = problems(b'(builtins.fetchTarball "u"\n')
    assert problem.message == "syntax error: missing ')'"


def test_leading_bom_is_a_problem_like_in_nix_but_its_bytes_are_kept():
    doc = parse_document(BOM + b"{ }: 1\n", "b.nix")
    (problem,) = doc.problems
    assert (problem.line, problem.column, problem.offset) == (1, 1, 0)
    assert "byte-order mark" in problem.message
    assert doc.data.startswith(BOM)
    assert problems(b"{ }: 1 # \xef\xbb\xbf inside a comment is fine\n") == ()


@pytest.mark.parametrize("path", sorted((SYNTAX / "valid").glob("*.nix")), ids=lambda p: p.name)
def test_valid_fixtures_have_no_problems_and_round_trip(path):
    data = path.read_bytes()
    doc = parse_document(data, str(path))
    assert doc.problems == ()
    assert doc.data is data and doc.text(doc.root) == data[doc.root.start_byte :]


@pytest.mark.parametrize("path", sorted((SYNTAX / "invalid").glob("*.nix")), ids=lambda p: p.name)
def test_invalid_fixtures_have_located_problems(path):
    data = path.read_bytes()
    doc = parse_document(data, "x.nix")
    assert doc.problems
    for problem in doc.problems:
        assert str(problem).startswith(f"x.nix:{problem.line}:{problem.column}: syntax error")
        assert doc.position(problem.offset) == (problem.line, problem.column)
        assert problem.source_line in data.decode("utf-8", "replace")


def test_error_swallowing_the_file_is_reported_at_the_token_inside_it():
    doc = parse_document((SYNTAX / "invalid" / "bad_interpolation.nix").read_bytes(), "i.nix")
    assert [str(p) for p in doc.problems] == ["i.nix:2:26: syntax error: unexpected '\";'"]
