"""pinshift.syntax.meaning: what a Nix file means apart from comments and layout, in one linear walk.

Every spelling of a comment and of layout leaves the meaning alone; every change of a token (a name, a string's
text, an operator, a number, a path, a parenthesis) changes it; what Nix does not read (after a NUL) does not
count. The walk visits each node once: the visits grow linearly with a file's size, nesting included.
"""

from __future__ import annotations

import pytest

from conftest import nix_parse
from pinshift.syntax.meaning import meaning

BASE = b'{ pkgs, lib, ... }:\nlet x = "a ${pkgs.b} c"; in\nlib.optionals true [ x ./p.nix 1.5 (y: y.z or 2) ]\n'


@pytest.mark.parametrize("other", [
    b"# head\n" + BASE,
    BASE.replace(b"\n", b"\n\n  ").replace(b" ", b"\t", 3),
    BASE.replace(b"${pkgs.b}", b"${ /* inside */ pkgs.b # and here\n }"),
    BASE.replace(b"let x", b"let /* c */ x").replace(b"in\n", b"in # c\n"),
    BASE.replace(b"\n", b"\r\n"),
    BASE + b"\0 anything Nix does not read",
])
def test_comments_and_layout_leave_the_meaning(other):
    accepted, _ = nix_parse(other)
    assert accepted, other
    assert meaning(other) == meaning(BASE)


@pytest.mark.parametrize("old, new", [
    (b'"a ${', b'"a  ${'),  # whitespace inside a string is its text
    (b"y.z or 2", b"y.z or 3"),
    (b"./p.nix", b"./q.nix"),
    (b"lib.optionals true", b"lib.optionals false"),
    (b"(y: y.z or 2)", b"y: y.z or 2"),
    (b"1.5", b"1.50"),
    (b"let x", b"let x'"),
    (b"[ x", b"[ (x)"),
])
def test_a_token_changed_changes_the_meaning(old, new):
    other = BASE.replace(old, new, 1)
    assert other != BASE
    assert meaning(other) != meaning(BASE)


def test_an_indented_string_re_indented_counts_as_changed():
    """Conservative: the text of the string changes even where Nix would strip the same indentation."""
    before = b"{ s = ''\n  a\n  b\n''; }\n"
    after = b"{ s = ''\n    a\n    b\n''; }\n"
    assert meaning(before) != meaning(after)


@pytest.mark.parametrize("shape", ["nested lists", "nested parentheses", "long chain", "many strings"])
def test_the_walk_is_linear(shape):
    def make(n: int) -> bytes:
        if shape == "nested lists":
            return b"[ " * n + b"1" + b" ]" * n
        if shape == "nested parentheses":
            return b"(" * n + b"1" + b")" * n
        if shape == "long chain":
            return b" + ".join(b"a%d" % i for i in range(n))
        return b"[ " + b" ".join(b'"s ${x} %d"' % i for i in range(n)) + b" ]"

    counts = []
    for n in (2000, 4000):
        visits: list[int] = []
        data = make(n)
        meaning(data, visits)
        assert visits[0] <= 4 * len(data), (shape, n, visits)
        counts.append(visits[0])
    assert 1.8 <= counts[1] / counts[0] <= 2.2, counts
