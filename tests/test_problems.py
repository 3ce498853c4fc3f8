"""Syntax problems: located as path:line:col with the offending line; the trailing-comma gap and nothing more is forgiven."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from pinshift.syntax.document import parse_document
from pinshift.syntax.problems import BOM, forgiven_nodes

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
    assert forgiven_nodes(parse_document(source).root)  # tree-sitter-nix reports the comma; the walk forgives it


@pytest.mark.parametrize("depth", [1, 2, 5, 25, 200])
def test_nested_trailing_commas_in_defaults_are_valid_at_any_depth(depth):
    """nixfmt writes `{ a ? { a ? 1, }: 1, }:` 25 deep in its tests; each level was re-walked for every comma above it."""
    assert problems(("{ a ? " * depth + "1" + ", }: 1" * depth).encode()) == ()
    assert problems(("{ a ? " * depth + "1 +" + ", }: 1" * depth).encode())  # a real error at the bottom stays one


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
        assert forgiven_nodes(doc.root) == set(), source


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
    assert doc.data is data and doc.text(doc.root) == data[doc.root.start_byte : doc.end]  # a NUL ends Nix's reading


@pytest.mark.parametrize("path", sorted((SYNTAX / "invalid").glob("*.nix")), ids=lambda p: p.name)
def test_invalid_fixtures_have_located_problems(path):
    data = path.read_bytes()
    doc = parse_document(data, "x.nix")
    assert doc.problems
    for problem in doc.problems:
        assert str(problem).startswith(f"x.nix:{problem.line}:{problem.column}: syntax error")
        assert doc.position(problem.offset) == (problem.line, problem.column)
        assert problem.source_line.strip("…") in data.decode("utf-8", "replace")  # a long line is cut, marked …


def test_error_swallowing_the_file_is_reported_at_the_token_inside_it():
    doc = parse_document((SYNTAX / "invalid" / "bad_interpolation.nix").read_bytes(), "i.nix")
    assert [str(p) for p in doc.problems] == ["i.nix:2:26: syntax error: unexpected '\";'"]


# --- Nix's parse-time rules (issue 22) ---------------------------------------------------------


@pytest.mark.parametrize(
    "source, expected",
    [
        (b"{ a = 1; inherit; }", []),  # tree-sitter's MISSING identifier in an empty inherit is forgiven
        (b"x: { inherit (x) /* c */ ; }", []),
        (b"{ a ? { b ? 1, }: 1, }: a", []),  # the outer comma follows a formal whose only error is forgiven
        (b"{ a ? { b, }: 1, c ? { d ? { e, }: 1, }: 1, }: a", []),
        (b"/a/", ["f.nix:1:3: syntax error: path has a trailing slash"]),
        (b"b: ./a/${b}/", ["f.nix:1:12: syntax error: path has a trailing slash"]),
        (b"/foo//bar", ["f.nix:1:5: syntax error: empty segment ('//') in path '/foo//bar'"]),
        (b"a/b//c", ["f.nix:1:4: syntax error: empty segment ('//') in path 'a/b//c'"]),
        (b"~//foo", ["f.nix:1:1: syntax error: invalid home path '~//foo'"]),
        (b"# only a comment\n", ["f.nix:2:1: syntax error: unexpected end of file (the file holds no expression)"]),
        (b"x: { inherit ${x}; }", ["f.nix:1:14: syntax error: dynamic attributes not allowed in inherit"]),
        (b"x: let ${x} = 1; in 1", ["f.nix:1:8: syntax error: dynamic attributes not allowed in let"]),
        (b"{ a = 1; a = 2; }", ["f.nix:1:10: syntax error: attribute 'a' already defined (first defined at 1:3)"]),
        (b"{ a.b = 1; a = { b = 2; }; }",
         ["f.nix:1:18: syntax error: attribute 'a.b' already defined (first defined at 1:5)"]),
        (b"a: { inherit a; a = 1; }", ["f.nix:1:17: syntax error: attribute 'a' already defined (first defined at 1:14)"]),
        (b"{ foo, foo }: foo", ["f.nix:1:8: syntax error: duplicate formal function argument 'foo'"]),
        (b"args@{ args }: args", ["f.nix:1:8: syntax error: duplicate formal function argument 'args'"]),
        (b"9223372036854775808", ["f.nix:1:1: syntax error: invalid integer '9223372036854775808' (above 2^63 - 1)"]),
        (b"1.8e308", ["f.nix:1:1: syntax error: invalid float '1.8e308' (out of range)"]),
        (b"x: x.rec", ["f.nix:1:6: syntax error: unexpected keyword 'rec' as an attribute name"]),
        (b"a: b: [ a//b ]", ["f.nix:1:10: syntax error: 'a//b' is not a path for Nix but 'a // b', which does not parse here"]),
        (b"a: b: [ a//b//a ]",
         ["f.nix:1:10: syntax error: 'a//b//a' is not a path for Nix but 'a // b // a', which does not parse here"]),
        # each fragment parses when read alone; Nix reads both at once: `a // b/ // b`
        (b"a: b: { z = a//b/ //b; }",
         ["f.nix:1:19: syntax error: '//b' is not a path for Nix but ' // b', which does not parse here"]),
    ],
)
def test_nix_parse_time_rules_are_problems_with_their_location(source, expected):
    assert [str(p) for p in problems(source)] == expected


@pytest.mark.parametrize(
    "source",
    [
        b"x: { a.b = 1; a.c = 2; }",  # dotted paths merge
        b"x: { a = { b = 1; }; a.c = 2; }",  # walking into an attrset literal
        b"x: { a = { b = 1; }; a = { c = 2; }; }",  # two attrset literals merge one level deep
        b"x: { a = 1; ${x} = 2; ${x} = 3; }",  # dynamic names are no duplicates at parse time
        b'x: { a = 1; "${"a"}" = 2; }',  # a string with an interpolation is dynamic
        b"x: { a = { b = 1; }; c = { b = 2; }; }",  # the same name in two different sets
        b"x: /foo//${x}",  # one piece between the first path token and `${` is allowed
        b"x: /foo/${x}//bar",  # after an interpolation anything goes
        b"a: b: a//b",  # not a path for Nix: `a // b`
        b"a: b: c: a//b//c",  # `a // b // c`
        b"a: b: c: a//b/c",  # `a // b/c`: the rest starts a path
        b"a: b: { x = a//b; y = b//a; z = a//b; }",  # read together, as Nix reads them
        b"9223372036854775807",
        b"x: { or = 1; y = x.or; }",
    ],
)
def test_what_nix_accepts_stays_accepted(source):
    assert problems(source) == ()


def test_a_file_of_update_operators_without_spaces_is_read_again_once(monkeypatch):
    """`xN = a//b;` 2,000 times: the file was parsed again for each fragment (quadratic); now once for all."""
    from pinshift.syntax.document import Document

    parses = []
    original = Document.parsed.__func__
    monkeypatch.setattr(Document, "parsed", classmethod(lambda cls, data, path: parses.append(len(data)) or original(cls, data, path)))
    source = b"{ a, b }: {\n" + b"".join(b"  x%d = a//b;\n" % i for i in range(2000)) + b"}\n"
    assert problems(source) == ()
    assert len(parses) == 1 and parses[0] == len(source) + 2 * 2000  # one space each side of each `//`


def test_where_a_duplicate_was_first_defined_is_shown_but_not_compared():
    (early,) = problems(b"{ a = 1; a = 2; }")
    (late,) = problems(b"\n\n{ a = 1; a = 2; }")
    assert early.detail == " (first defined at 1:3)" and late.detail == " (first defined at 3:3)"
    assert early.key == late.key  # an edit that moves lines does not make an old problem look new


def test_an_error_in_a_nested_default_still_counts():
    assert problems(b"{ a ? { b ? , }: 1, }: a")
    assert problems(b"{ a ? { b, ..., }: 1, }: a")


# --- what Nix's grammar and lexer reject that tree-sitter-nix accepts (issue 36) ------------------


@pytest.mark.parametrize(
    "source, expected",
    [
        (b"a: b: c: a == b == c", ["f.nix:1:17: syntax error: unexpected '==' (comparisons do not chain: add parentheses)"]),
        (b"a: b: c: a <= b >= c", ["f.nix:1:17: syntax error: unexpected '>=' (comparisons do not chain: add parentheses)"]),
        (b"let or = 1; in or",
         ["f.nix:1:16: syntax error: unexpected keyword 'or' (a variable 'or' only follows a simple expression: `f or`)"]),
        (b"{ or }: 1", ["f.nix:1:3: syntax error: unexpected keyword 'or' (it cannot name an argument)"]),
        (b"{ a, in }: 1", ["f.nix:1:6: syntax error: unexpected keyword 'in' (a keyword is not a name)"]),
        (b"{ }@if: 1", ["f.nix:1:5: syntax error: unexpected keyword 'if' (a keyword is not a name)"]),
        (b"1\x0c", ["f.nix:1:2: syntax error: unexpected form feed ('\\f') (Nix's whitespace is space, tab, CR and LF)"]),
        (b"[ 1\x0b2 ]", ["f.nix:1:4: syntax error: unexpected vertical tab ('\\v') (Nix's whitespace is space, tab, CR and LF)"]),
        (b"x: x. a/b", ["f.nix:1:7: syntax error: 'a/b' is a path for Nix, not an attribute name"]),
        (b"x: x ? a -b/c",
         ["f.nix:1:10: syntax error: unexpected path '-b/c' (Nix reads a path here, not an operator; add spaces)"]),
        (b"1 #\r)", ["f.nix:1:5: syntax error: unexpected ')'"]),  # the comment ends at the CR
        (b"{ a = 1; #\r a = 2; }", ["f.nix:1:13: syntax error: attribute 'a' already defined (first defined at 1:3)"]),
    ],
)
def test_issue_36_rules_are_problems_with_their_location(source, expected):
    assert [str(p) for p in problems(source)] == expected


@pytest.mark.parametrize(
    "source",
    [
        b"a: b: c: a < b == c",  # the two kinds of comparison mix
        b"a: b: c: (a == b) == c",
        b"a: b: c: a ? b ? c",
        b"f: g: x: with x; [ (f or) (f g or) [ f or ] ((f) or) (1 or) (x.a or f or) (x.a or x.b or f or) ]",
        b"x: { or = 1; a.or.b = 2; c = x.or or x ? or; } // { inherit (x) or; }",
        b"let or = 1; in 1",
        b'"\x0c" + \'\'\x0b\'\' # \x0c',  # inside strings and comments a form feed is a character
        b"[ 1 #\r2 ]",
        b"x: x.a/b",  # one path
        b"x: x ? a / b",
        b"x: x ? a//b",
        b"x: x.a or x /c",
        b'{ ${"a"} = 1; b = 2; } # \0 after a NUL in a comment Nix reads on\n',
        b"1 \0 {",  # a NUL between tokens: Nix reads no further
    ],
)
def test_issue_36_what_nix_accepts_stays_accepted(source):
    assert problems(source) == ()
