"""Parents of a tree's nodes, and the node around a byte range, without walking down from the root each time.

tree-sitter keeps no parent pointers: `node.parent`, `prev_sibling` and `next_sibling` walk down from the
root on every use, and so does `descendant_for_byte_range`: O(depth) each, quadratic in a loop over a
deep file (`a + a + … + a`, `with a; with a; …`, 1,000 levels deep: seconds; issue 29). A tree cursor
keeps its path, so one cursor walk learns every parent it passes. An `Ancestry` (one per tree, built
when first asked: `Document.ancestry`) answers from what its walks recorded:

- the first few lookups of a tree are asked of tree-sitter itself (`.parent`,
  `descendant_for_byte_range`): on a recipe-sized tree they are the cheapest. At most ASKED of them,
  fewer in a large tree (about ASKED_NODES / its size, at least 8): their walks from the root cost
  a bounded multiple of the tree's size;
- then `parent(node)`: a node not seen yet is reached by one cursor descent from the root, which
  records every node on the way. The descents share a budget of one step per node of the tree; once
  it is spent, one walk of the whole tree records every parent. In all, at most twice that walk.
- and `locate(ranges)`: the smallest node around each byte range (what `descendant_for_byte_range`
  gives), all in one sweep of the cursor in source order: it climbs only as far as the next range
  needs and never re-enters what it left, so every node is passed at most twice.

Only this module reads `.parent` (at most ASKED times per tree); tests/test_growth.py holds the rest
of the syntax layer to reading parents and siblings through it.
"""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node


ASKED = 64  # lookups per tree asked of tree-sitter itself, each a walk from the root (see above)
ASKED_NODES = 32_768  # ... and in a larger tree, as many as keep their walks within about this many nodes


_UNKNOWN = object()  # a node whose parent no walk has recorded yet


class Ancestry:
    """The parents of one tree's nodes, learnt from cursor walks."""

    def __init__(self, root: Node):
        self.root = root
        self._parent: dict[int, Node | None] = {root.id: None}
        size = root.descendant_count
        self._asked = ASKED - max(8, min(ASKED, ASKED_NODES // max(size, 1)))  # as if that many were asked
        self._budget = size  # descent steps left before one walk records everything
        self._complete = False

    def parent(self, node: Node) -> Node | None:
        """The parent of `node` (None for the root)."""
        key = node.id
        known = self._parent.get(key, _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        if self._asked < ASKED:
            self._asked += 1
            found = self._parent[key] = node.parent
            return found
        if not self._complete and (self._budget <= 0 or not self._descend(node)):
            self._walk_all()
        return self._parent.get(key)

    def locate(self, ranges: Sequence[tuple[int, int]]) -> list[Node]:
        """The smallest node holding each byte range [start, end), in the order the ranges are given.

        Exactly what `root.descendant_for_byte_range(start, end)` gives. An empty range (an insertion
        point) is asked of tree-sitter itself: which node touching it holds it follows tree-sitter's
        own rules for empty (MISSING) nodes, which a cursor cannot see.
        """
        if self._asked + len(ranges) <= ASKED:
            self._asked += len(ranges)
            return [self.root.descendant_for_byte_range(start, end) or self.root for start, end in ranges]
        found: list[Node | None] = [None] * len(ranges)
        for index, (start, end) in enumerate(ranges):
            if start >= end:
                found[index] = self.root.descendant_for_byte_range(start, end) or self.root
        order = sorted((i for i in range(len(ranges)) if ranges[i][0] < ranges[i][1]), key=lambda i: ranges[i])
        cursor = self.root.walk()
        down, up = cursor.goto_first_child_for_byte, cursor.goto_parent
        root = self.root
        path = [(root, root.start_byte, root.end_byte)]  # the cursor's node and those above it, with their spans
        record = self._parent
        for index in order:
            start, end = ranges[index]
            top, top_start, top_end = path[-1]
            while len(path) > 1 and not (top_start <= start and end <= top_end):
                up()
                path.pop()
                top, top_start, top_end = path[-1]
            while down(start) is not None:
                child = cursor.node
                assert child is not None  # a cursor that moved stands on a node
                child_start, child_end = child.start_byte, child.end_byte
                if not (child_start <= start and end <= child_end):
                    up()
                    break
                record[child.id] = top
                path.append((child, child_start, child_end))
                top = child
            found[index] = top
        return found  # type: ignore[return-value]

    # --- walks ---------------------------------------------------------------------------

    def _descend(self, target: Node) -> bool:
        """Walk a cursor from the root down to `target`, recording each node's parent; False if it is missed."""
        start, end, key = target.start_byte, target.end_byte, target.id
        if start == end:
            return False  # an empty node (a MISSING token) may sit beside another that starts where it is
        cursor = self.root.walk()
        above = self.root
        while cursor.goto_first_child_for_byte(start) is not None:
            self._budget -= 1
            child = cursor.node
            assert child is not None  # a cursor that moved stands on a node
            if not (child.start_byte <= start and end <= child.end_byte):
                return False
            self._parent[child.id] = above
            if child.id == key:
                return True
            above = child
        return False

    def _walk_all(self) -> None:
        """One cursor walk of the whole tree, recording every node's parent."""
        cursor = self.root.walk()
        path = [self.root]
        record = self._parent
        while True:
            if cursor.goto_first_child():
                child = cursor.node
                assert child is not None  # a cursor that moved stands on a node
                record[child.id] = path[-1]
                path.append(child)
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    self._complete = True
                    return
                path.pop()
            sibling = cursor.node
            assert sibling is not None  # a cursor that moved stands on a node
            path[-1] = sibling
            record[sibling.id] = path[-2]
