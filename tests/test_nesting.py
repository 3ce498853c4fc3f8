"""Nesting deeper than Nix's parser allows is a problem, exactly where Nix says so (issue 36; syntax/nesting.py).

Nix 2.8's parser stack holds 10,000 entries; beyond, "memory exhausted". For each shape the deepest nesting
Nix parses is given by hand (measured with nix-instantiate, and checked by it here: CI runs these with Nix),
and pinshift must accept it and reject one level more, with the location and a message that says why.
"""

from __future__ import annotations

import pytest

from pinshift.syntax.document import parse_document

# name: (a file nesting n deep, the deepest n Nix 2.8 parses)
DEEPEST = {
    "lists": (lambda n: "[ " * n + "1" + " ]" * n, 4998),
    "parentheses": (lambda n: "( " * n + "1" + " )" * n, 9995),
    "curried trailing-comma formals": (lambda n: "".join("{ a%d, }: " % i for i in range(n)) + "1", 2497),
    "attrsets": (lambda n: "{ a = " * n + "1" + "; }" * n, 2496),
    "lets": (lambda n: "let a = 1; in " * n + "1", 3331),
    "lambdas": (lambda n: "a: " * n + "1", 4998),
    "formals of one function": (lambda n: "{ " + ", ".join("a%d" % i for i in range(n)) + " }: 1", 4998),
    "empty formals": (lambda n: "{ }: " * n + "1", 1663),  # each `{ }` split reduces every body above it
    "empty formals then @": (lambda n: "{ }@a: " * n + "1", 1247),
    "lambdas ending in { }": (lambda n: "a: " * n + "{ }", 2493),
    "interpolations": (lambda n: '"${' * n + "1" + '}"' * n, 4997),
    "defaults": (lambda n: "{ a ? " * n + "1" + ", }: 1" * n, 3330),
}


@pytest.mark.nix
@pytest.mark.parametrize("shape", DEEPEST)
def test_pinshift_nests_exactly_as_deep_as_nix(shape, nix_oracle):
    make, deepest = DEEPEST[shape]
    for depth, parses in ((deepest, True), (deepest + 1, False)):
        data = make(depth).encode()
        accepted, message = nix_oracle(data)
        assert accepted == parses, (depth, message[:200])
        assert parses or "memory exhausted" in message
        found = parse_document(data, "deep.nix").problems
        assert (not found) == parses, (depth, [str(p) for p in found[:2]])


def test_too_deep_is_one_located_problem_saying_why():
    (problem,) = parse_document(("[ " * 4999 + "1" + " ]" * 4999).encode(), "deep.nix").problems
    assert problem.message == ("syntax error: nesting deeper than Nix's parser allows "
                               "(its stack holds 9,998 entries; this needs 9,999)")
    assert (problem.line, problem.column) == (1, 2 * 4998 + 1)  # the innermost `[`: Nix fails there too


def test_a_recipe_sized_file_is_decided_without_a_walk(monkeypatch):
    """A file of fewer nodes than the stack holds cannot fill it: nothing but the root is looked at."""
    from pinshift.syntax import nesting

    looked = []
    monkeypatch.setattr(nesting, "_helds", lambda node, children: looked.append(node) or [0] * len(children))
    data = b"{ " + b"a = [ { b = 1; } ]; " * 200 + b"}"
    document = parse_document(data, "x.nix")
    assert 1000 < document.root.descendant_count < nesting.LIMIT
    assert [p.message for p in document.problems][:1] == ["syntax error: attribute 'a' already defined"]  # not nesting
    assert looked == []


@pytest.mark.parametrize("make", [
    lambda n: "[ " + "1 " * n + "]",  # a wide file: the walk starts, and prunes every element at once
    lambda n: "[ " + "[ [ 1 ] ] " * n + "]",  # wide and a little deep
    lambda n: "[ " * 2000 + "{ " + " ".join("a%d = [ 1 ];" % i for i in range(n)) + " }" + " ]" * 2000,  # deep, then wide
])
def test_the_walk_is_linear_in_the_file(make, monkeypatch):
    """nesting.py looks only at subtrees that could fill the stack: its work at 8n is at most about 8 times its
    work at n (counted: the nodes whose children it reads), whatever the shape."""
    from pinshift.syntax import nesting

    counted = []
    real = nesting._children
    monkeypatch.setattr(nesting, "_children", lambda node: counted.append(1) or real(node))

    def work(n: int) -> int:
        counted.clear()
        assert not parse_document(make(n).encode(), "wide.nix").problems
        return len(counted)

    small, large = work(12_000), work(96_000)
    assert small > 0 and large <= 9 * small, (small, large)
