"""syntax/ancestry.py: the parents and the node around a byte range it gives are tree-sitter's own answers."""

from __future__ import annotations

import random
import sys

import pytest

from conftest import FIXTURES
from pinshift.syntax.ancestry import ASKED, Ancestry
from pinshift.syntax.document import parse_document

SOURCES = [p.read_bytes() for p in sorted(FIXTURES.rglob("*.nix"))] + [
    b"{ a, b, }: a", b"{ a ? 1, }: a", b"[ 1 2 ", b"{ a = 1; inherit; }", b"{\n  a = ;\n}\n", b"let in in a", b"", b"# c\n",
    ("{ a }: " + "with a; " * 300 + "a").encode(),  # deeper than ASKED lookups can cover
]


def _nodes(root):
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)
    return found


def test_every_parent_is_tree_sitters():
    """Asked in random order, of one Ancestry (cheap lookups, then descents, then one walk) and of fresh ones."""
    rng = random.Random(7)
    checked = 0
    for data in SOURCES:
        root = parse_document(data).root
        nodes = _nodes(root)
        rng.shuffle(nodes)
        shared = Ancestry(root)
        for node in nodes:
            want = node.parent
            for ancestry in (shared, Ancestry(root)):
                got = ancestry.parent(node)
                assert (got is None, got and got.id) == (want is None, want and want.id), (data[:40], node)
                checked += 1
    assert checked > 20_000


def test_the_nodes_around_ranges_are_descendant_for_byte_range():
    """Token ranges, random ranges and empty ones, many at once (the sweep) and few (tree-sitter asked)."""
    rng = random.Random(11)
    for data in SOURCES:
        root = parse_document(data).root
        ranges = [(n.start_byte, n.end_byte) for n in _nodes(root)]
        for _ in range(100):
            start = rng.randint(0, len(data))
            ranges.append((start, rng.choice([start, min(len(data), start + rng.randint(1, 30))])))
        rng.shuffle(ranges)
        for batch in (ranges, ranges[: ASKED // 2]):
            got = Ancestry(root).locate(batch)
            want = [root.descendant_for_byte_range(start, end) for start, end in batch]
            assert [n.id for n in got] == [(w or root).id for w in want], data[:40]


def test_a_deep_tree_is_walked_once_not_once_per_lookup():
    """8,000 nested `with`s, every parent asked deepest first: the descents spend one move per node, then one
    walk of the tree (under 3 moves per node, failed ones counted): within 4 moves per node in all."""
    data = ("{ a }: " + "with a; " * 8000 + "a").encode()
    root = parse_document(data).root
    ancestry = Ancestry(root)
    nodes = _nodes(root)
    moves = 0

    def profile(frame, event, arg):
        nonlocal moves
        if event == "c_call" and getattr(arg, "__name__", "").startswith("goto_"):
            moves += 1

    sys.setprofile(profile)
    try:
        for node in reversed(nodes):  # deepest first: the worst order for descents from the root
            ancestry.parent(node)
    finally:
        sys.setprofile(None)
    assert len(nodes) > 40_000 and moves <= 4 * len(nodes), (moves, len(nodes))


@pytest.mark.parametrize("source", [b"{ a = 1; }", b"x: x.y"])
def test_the_root_has_no_parent(source):
    root = parse_document(source).root
    assert Ancestry(root).parent(root) is None
