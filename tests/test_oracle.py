"""Nix is the oracle: `pinshift parse` accepts a fixture exactly when `nix-instantiate --parse` does.

Every file under tests/fixtures/syntax/ is checked twice: against Nix (the directory it
sits in must match Nix's verdict, so a fixture cannot silently drift) and against
`pinshift parse` through the real CLI. Skipped with a reason when Nix is absent;
failing under CI=true (conftest.require_nix).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES

SYNTAX = FIXTURES / "syntax"
VALID = sorted((SYNTAX / "valid").glob("*.nix"))
INVALID = sorted((SYNTAX / "invalid").glob("*.nix"))
ALL = VALID + INVALID


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_fixture_set_is_large_enough():
    assert len(ALL) >= 40
    assert len(INVALID) >= 10


@pytest.mark.nix
@pytest.mark.parametrize("path", ALL, ids=_id)
def test_pinshift_agrees_with_nix(path, nix_oracle, run_cli):
    nix_accepts, nix_says = nix_oracle(path.read_bytes())
    assert nix_accepts == (path.parent.name == "valid"), f"fixture in the wrong directory; Nix says: {nix_says}"
    result = run_cli("parse", "--quiet", str(path))
    assert result.exit_code == (0 if nix_accepts else 1), result
    if not nix_accepts:
        assert f"{path}:" in result.stdout or f"{path.name}:" in result.stdout
    assert "Traceback" not in result.output


@pytest.mark.nix
def test_comma_after_ellipsis_follows_nix_not_the_issue_text(nix_oracle, run_cli, tmp_path):
    """The issue lists `args@{ a, ..., }:` as valid; Nix 2.8 rejects it, and the oracle wins."""
    source = b"args@{ a, ..., }:\nargs\n"
    accepted, message = nix_oracle(source)
    assert not accepted and "','" in message
    target = tmp_path / "ellipsis.nix"
    target.write_bytes(source)
    result = run_cli("parse", "--quiet", str(target))
    assert result.exit_code == 1
    assert ":1:14: syntax error" in result.stdout


@pytest.mark.nix
@pytest.mark.parametrize(
    "source",
    [b"{ a, b, }: a", b"args@{ a, b, }: a", b"{ a ? 1, }: a", b"{ a, b, }@args: a", b"{ a, /* c */ }: a"],
)
def test_trailing_comma_forms_nix_accepts_are_accepted(source, nix_oracle, run_cli, tmp_path):
    assert nix_oracle(source)[0]
    target = tmp_path / "f.nix"
    target.write_bytes(source)
    assert run_cli("parse", "--quiet", str(target)).exit_code == 0


# Issue 22: each construct it lists and each variant it asks to check against Nix. Nix's
# "undefined variable" counts as accepted: `pinshift parse` accepts names a caller may provide.
ISSUE_22 = [
    b"{ a = 1; inherit; }", b"{ a ? { b ? 1, }: 1, }: a",
    b"/a/", b"b: ./a/${b}/", b"/foo//bar", b"a/b//c", b"~//foo", b"# only a comment\n",
    b'{ inherit ${"f"}; }', b'a: { inherit (a) ${"b"}; }', b"x: { inherit ${x}; }", b'x: { inherit (x) "a${x}"; }',
    b"{ a = 1; a = 2; }", b"{ a.b = 1; a = { b = 2; }; }", b"{ a.b = 1; a.c = 2; }", b"{ a = { b = 1; }; a.c = 2; }",
    b"{ a = { b = 1; }; a = { c = 2; }; }", b"{ a = { b.x = 1; }; a = { b.y = 2; }; }",
    b"rec { a = 1; a = 2; }", b"let a = 1; a = 2; in a", b"let a.b = 1; a.c = 2; in a", b"let { a = 1; a = 2; body = a; }",
    b'{ ${"a"} = 1; }', b'{ a = 1; ${"a"} = 2; }', b"x: { ${x} = 1; ${x} = 2; }", b'{ a = 1; "a" = 2; }',
    b"a: { inherit a; a = 1; }", b"x: { inherit (x) a; a.b = 1; }",
    b"{ foo, foo }: foo", b"args@{ args, ... }: args", b"9223372036854775807", b"9223372036854775808",
]


# numbers at the edges of Nix's int64 and double (strtod's ERANGE: overflow, inexact underflow)
NUMBERS = [b"-9223372036854775808", b"1.0e308", b"1.8e308", b"1.0e-310", b"2.2250738585072014e-308",
           b"1.5e99999999999999999999", b"0.0e-99999999999999999", b"4.9e-324"]


@pytest.mark.nix
@pytest.mark.parametrize("source", ISSUE_22 + NUMBERS, ids=lambda s: s.decode())
def test_issue_22_constructs_agree_with_nix(source, nix_oracle, run_cli, tmp_path):
    accepted, message = nix_oracle(source)
    accepted = accepted or "undefined variable" in message
    target = tmp_path / "f.nix"
    target.write_bytes(source)
    result = run_cli("parse", "--quiet", str(target))
    assert result.exit_code == (0 if accepted else 1), (message, result)


@pytest.mark.nix
def test_static_interpolation_in_inherit_follows_nix_not_the_issue_text(nix_oracle, run_cli, tmp_path):
    """The issue lists `inherit ${"f"};` and `inherit (a) ${"b"};` as rejected; Nix 2.8 reads a
    constant string there as the name (only `f` being undefined stops the first), and the oracle wins."""
    accepted, message = nix_oracle(b'{ inherit ${"f"}; }')
    assert not accepted and "undefined variable 'f'" in message
    assert nix_oracle(b'a: { inherit (a) ${"b"}; }') == (True, '(a: { b = (a).b; })\n')
    target = tmp_path / "f.nix"
    target.write_bytes(b'f: a: { inherit ${"f"}; inherit (a) ${"b"}; }\n')
    assert run_cli("parse", "--quiet", str(target)).exit_code == 0
    target.write_bytes(b"a: { inherit (a) ${a}; }\n")
    lines = run_cli("parse", "--quiet", str(target)).stdout.splitlines()
    assert lines == [f"{target}:1:18: syntax error: dynamic attributes not allowed in inherit", "    a: { inherit (a) ${a}; }"]


# `a//b` is not a path for Nix but `a // b`; Nix reads every such fragment of a file at once (issue 29)
UPDATE_WITHOUT_SPACES = [
    b"a: b: a//b", b"a: b: [ a//b ]", b"a: b: c: a//b//c", b"a: b: [ a//b//a ]", b"a: b: c: a//b/c",
    b"a: b: { x = a//b; y = b//a; }", b"a: b: { z = a//b/ //b; }", b"x: a//b -a//b a//b// //b", b"a: b: f: f a//b",
    b"a: b: a//b/", b"a: b: ~//a", b"a: b: a//~/b", b"x: a//b/${x}", b"x: a//b${x}",
]


@pytest.mark.nix
@pytest.mark.parametrize("source", UPDATE_WITHOUT_SPACES, ids=lambda s: s.decode())
def test_update_operators_without_spaces_agree_with_nix(source, nix_oracle, run_cli, tmp_path):
    accepted, message = nix_oracle(source)
    accepted = accepted or "undefined variable" in message
    target = tmp_path / "f.nix"
    target.write_bytes(source)
    result = run_cli("parse", "--quiet", str(target))
    assert result.exit_code == (0 if accepted else 1), (message, result)


# nixfmt's test/diff/pattern/out-pure.nix nests `{ a ? { a ? 1, }: 1, }:` 25 deep (issue 29: minutes to check)
NESTED_DEFAULTS = {
    "plain": lambda n: "{ a ? " * n + "1" + ", }: 1" * n,
    "a later formal": lambda n: "{ a ? " * n + "1" + ", b, }: 1" * n,
    "a comment": lambda n: "{ a ? " * n + "1" + " , # c\n }: 1" * n,
    "broken at the bottom": lambda n: "{ a ? " * n + "1 +" + ", }: 1" * n,
    "after an ellipsis": lambda n: "{ a ? " * n + "1" + ", ..., }: 1" * n,
    "an empty inherit": lambda n: "{ a ? " * n + "{ inherit; }" + ", }: 1" * n,
}


@pytest.mark.nix
@pytest.mark.parametrize("depth", [2, 25])
@pytest.mark.parametrize("shape", NESTED_DEFAULTS)
def test_nested_trailing_commas_agree_with_nix(shape, depth, nix_oracle, run_cli, tmp_path):
    source = NESTED_DEFAULTS[shape](depth).encode()
    accepted = nix_oracle(source)[0]
    target = tmp_path / "f.nix"
    target.write_bytes(source)
    assert run_cli("parse", "--quiet", str(target)).exit_code == (0 if accepted else 1)


# Issue 36: each shape it lists, and variants around each rule, against `nix-instantiate` (the issue's notes
# are not the truth: `or` is allowed in more places than "as an attribute name", `a ? b ? c` chains, and a NUL
# inside a string or a comment is a character, not the end of the file).
ISSUE_36 = {
    "chained comparisons": [
        b"a: b: c: a == b == c", b"a: b: c: a != b == c", b"a: b: c: a < b < c", b"a: b: c: a <= b >= c",
        b"a: b: c: a == b != c", b"a: b: c: a < b > c", b"a: b: c: a < -b < c", b"a: b: c: a == b == c == a",
        b"a: b: c: (a == b) == c", b"a: b: c: a == (b == c)", b"a: b: c: a < b == c", b"a: b: c: a == b < c",
        b"a: b: c: a ? b ? c", b"a: b: c: a -> b -> c", b"a: b: c: !a == !b", b"a: b: c: a >= b > c",
    ],
    "or": [
        b"let or = 1; in or", b"[ or ]", b"{ or }: 1", b"a@{ or }: 1", b"f: f (or)", b"f: f or", b"f: [ f or ]",
        b"f: [ f or or ]", b"f: g: f g or", b"f: f (f) or", b"x: f: f x.a or", b"x: [ x.a or ]", b"x: x.a or or",
        b"x: x.or or 1", b"x: { inherit (x) or; }", b"x: x ? or", b"{ or = 1; }", b"let or = 1; in 1", b"x: 1 or",
        b'x: "s" or', b"x: [ 1 or ]", b"x: [ or 1 ]", b"x: { a = x or; }", b"x: -x or", b"x: x or.a", b"x: x or or",
        b"or: 1", b"or@{ }: 1", b"{ }@or: 1", b"{ a ? or }: 1", b"f: { a ? f or }: 1", b"x: x.${or}", b"f: f or f",
        b"x: y: x.a or y or", b"x: y: z: x.a or y.b or z or", b"f: f ({ } or)", b"f: f [ ] or", b"rec { or = 1; }",
        b"let { or = 1; body = 1; }", b"{ a.or.b = 1; }", b"x: x.or.or",
    ],
    "keywords as names": [
        b"{ a, in }: 1", b"{ a, rec ? 1 }: 1", b"a@{ if }: 1", b"{ }@if: 1", b"{ a, then }: 1", b"{ a, b ? 1, else }: 1",
        b"{ a, ... }@let: 1", b"in@{ a }: 1", b"{ a, inherit }: 1", b"[ in ]", b"{ a ? then }: 1", b"x: x.then",
        b"x: { inherit (x) with; }", b"assert: 1",
    ],
    "whitespace": [
        b"1\x0c", b"1\x0b", b"[ 1\x0c2 ]", b'"\x0c"', b"''\x0c''", b"1 #\x0c", b"1 /*\x0b*/", b'"${\x0c1}"', b"\x0c1",
        b'"\\\x0c"', b"x: x.\x0ca", b"{\x0ba = 1; }", b"1\xc2\xa0", b"1\t\r\n",
    ],
    "comments ended by a CR": [
        b"1 #\r)", b"[ 1 #\r2 ]", b"[ 1 #\r\n2 ]", b"# a\r# b\r1", b'# a\r"# b\r"', b"1\r", b"1 # x\r",
        b"{ a = 1; #\r b = 2; }", b"{ a = 1; #\r a = 2; }", b"let a = 1; #\r in a", b"/* \r */ 1", b'"a\rb"',
        b"x: x.a #\r.b",
    ],
    "paths after . and ?": [
        b"x: x. a/b", b"x: x ? a/b", b"x: x.a/b", b"x: x ? a /b", b"x: x ? a - b", b"x: x ? a /*c*/ -b/c",
        b"x: x ? a #c\r/b", b"x: x ? a -b/c", b"x: x ? a +b/c", b"x: x ? a .b/c", b"x: x ? a / b", b"x: x ? a//b",
        b'x: x ? "a"/b', b"x: x ? ${x}/b", b"x: x ? a.b/c", b"x: x.a.b/c", b'x: x."a".b/c', b'x: x."a". b/c',
        b"x: x.${x}.b/c", b"x: x. a.b", b"x: x ?a/b", b"x: x ? a -b", b"x: x ? a - b/c", b"x: x.a or x /c",
        b"x: x.a /c", b"x: (x).a/b", b"x: x. a+b/c", b"x: x ? a'/b",
    ],
    "attribute names": [
        b"{ ${''''\\n''} = 1; ${''''\\n''} = 2; }", b'{ ${/*c*/"a"} = 1; a = 2; }', b"{ ${''\n  a''} = 1; \"a\" = 2; }",
        b"{ ${''\na''} = 1; \"\\na\" = 2; }", b"{ ${''''\\t''} = 1; \"\\t\" = 2; }", b"{ ${''''\\$''} = 1; \"$\" = 2; }",
        b'{ ${ /*c*/ (/*d*/ "a") } = 1; a = 2; }', b"{ ${''   \n  a\n  b''} = 1; \"a\\nb\" = 2; }",
        b"{ ${''\n\n  a''} = 1; \"\\na\" = 2; }", b"{ ${''\n''} = 1; \"\" = 2; }", b"{ ${''  \n$''} = 1; \"$\" = 2; }",
        b"{ ${''\r\n a''} = 1; \"a\" = 2; }", b"{ ${''\t\n a''} = 1; \"a\" = 2; }", b"{ ${'' a\n  b\n  ''} = 1; \"a\\n b\\n\" = 2; }",
        b"{ ${'''''''} = 1; \"''\" = 2; }", b"let ${''\\na''} = 1; in 1", b"{ inherit ${''a''}; a = 1; }",
    ],
    "attributes walked into nested attrsets (read one name at a time)": [
        b"{ a = { b = { c = 1; }; b.d = 2; }; a.b.c = 3; }", b"{ a = { b = { c = 1; }; b.d = 2; }; a.b.d = 3; }",
        b"{ a = { b = { c = 1; }; b.d = 2; }; a.b.e = 3; }", b"{ a = { b = { c = 1; }; }; a = { b.d = 2; }; }",
        b"{ a = { b.c = 1; b = { d = 2; }; }; a.b.e = 3; }", b"{ a = { b.c = 1; b = { d = 2; }; }; a.b.d = 3; }",
        b"{ a.b = { c = 1; }; a.b.c = 2; }", b"x: { a = { inherit x; }; a.x = 1; }", b"{ a = rec { b = 1; }; a.b.c = 2; }",
        b"{ a = ({ b = 1; }); a.c = 2; }", b"{ a = { a = { a = { }; a.z = 1; }; a.z = 1; }; a.z = 1; }",
        b"{ a = { a = { a = { z = 1; }; }; }; a.a.a.z = 1; }", b"{ a = { a = { a = { }; }; }; a.a.a.z = 1; a.a.a.z = 2; }",
        b"let a = { b = 1; }; a.c = 2; a.b = 3; in a", b'{ a = { "b" = { }; }; a.${"b"}.c = 1; a.b.c = 2; }',
    ],
    "home paths interpolated right after ~/ (a gap of tree-sitter-nix 0.1.0)": [
        b"x: ~/${x}", b"x: ~/${x}/", b"x: ~/${x}/a", b"x: ~/${x}//a", b'x: "~/${x}"', b"x: ~//${x}", b"x: a~/${x}",
        b"x: [ ~/${x} ~/a ]", b"x: ~/${x}${x}",
    ],
    "NUL bytes": [
        b"{ \0 }", b"1\0junk", b"\0", b"1 \0 +", b"{ a = 1; }\0\x01\x02", b'"a\0b"', b"# c\0\n1", b"# c\r\0\n1",
        b'{ "a\0b" = 1; a = 2; }', b'"a\0b" + 1 \0 +', b"/* \0 */ 1", b"''a\0b''", b"x:x''\0 junk", b'./a/${"x"}\0',
        b'"${"a\0"}" \0 ]', b"{ ${''a\0b''} = 1; a = 2; }", b"[ 1 ]\0",
    ],
}


@pytest.mark.nix
@pytest.mark.parametrize("source", [s for shapes in ISSUE_36.values() for s in shapes], ids=repr)
def test_issue_36_constructs_agree_with_nix(source, nix_oracle, run_cli, tmp_path):
    accepted, message = nix_oracle(source)
    accepted = accepted or "undefined variable" in message
    target = tmp_path / "f.nix"
    target.write_bytes(source)
    result = run_cli("parse", "--quiet", str(target))
    assert result.exit_code == (0 if accepted else 1), (message, result)
    assert "Traceback" not in result.output
