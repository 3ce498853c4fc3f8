"""A parsed Nix file that keeps its original bytes next to the tree-sitter tree.

Nothing is ever decoded and re-encoded: every position is a byte offset into
`Document.data`, so BOMs, CRLF, tabs, non-UTF-8 bytes and a missing final
newline survive every edit that does not touch them. The tree is parsed from
the bytes as Nix reads them (reading.py: up to the first NUL byte, a lone CR
read as a LF), at the same offsets.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import tree_sitter

from pinshift.syntax.ancestry import Ancestry
from pinshift.syntax.language import nix_language, parser  # noqa: F401  (nix_language: for older imports)
from pinshift.syntax.problems import Problem, find_problems
from pinshift.syntax.reading import nix_end, nix_reading, read_as_is
from pinshift.syntax.source import LINE_WIDTH

COUNTED = 8  # positions per document counted in the bytes before a line index is built
EXACT_EDITS = 32  # up to this many edits are told to a tree one by one (see Document._moved_tree)
_NEWLINE = re.compile(rb"\n")


@dataclass
class Document:
    """A Nix source file: its path (as the user should read it), its bytes and its tree."""

    path: str
    data: bytes
    tree: tree_sitter.Tree = field(repr=False)
    # query results computed on this tree (see queries.fetcher_calls); a reparse starts afresh
    memo: dict = field(default_factory=dict, repr=False, compare=False)
    # set by `reparse`: the byte ranges (of this document) that the edits wrote or whose structure
    # tree-sitter found changed; when the document it came from had no problems (`clean_origin`),
    # new problems and unbound references can only be there
    changed: tuple[tuple[int, int], ...] | None = field(default=None, repr=False, compare=False)
    clean_origin: bool = field(default=False, repr=False, compare=False)

    @property
    def root(self) -> tree_sitter.Node:
        return self.tree.root_node

    @cached_property
    def end(self) -> int:
        """Where Nix stops reading: the first NUL byte (the tree ends there), else `len(data)`."""
        return nix_end(self.data)

    @cached_property
    def ancestry(self) -> Ancestry:
        """Parents of this tree's nodes and the node around a byte range, without tree-sitter's `.parent`
        (a walk down from the root on every use): see syntax/ancestry.py."""
        return Ancestry(self.tree.root_node)

    def text(self, node: tree_sitter.Node) -> bytes:
        """The exact bytes a node covers."""
        return self.data[node.start_byte : node.end_byte]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset; the column counts bytes.

        The first few are counted in the bytes; then from a line index built once (a count from the
        start for each of 8,000 problems was quadratic).
        """
        starts = line_starts(self)
        if starts is None:
            line_start = self.data.rfind(b"\n", 0, offset) + 1
            return self.data.count(b"\n", 0, line_start) + 1, offset - line_start + 1
        index = bisect.bisect_right(starts, offset) - 1
        return index + 1, offset - starts[index] + 1

    def line_text(self, offset: int, width: int = LINE_WIDTH) -> str:
        """The source line holding `offset`, decoded leniently for messages only.

        A line longer than `width` bytes is cut to `width` bytes around `offset`, each cut
        marked `…`: a message shows where the problem is, not a 56 KB line (one per problem).
        """
        data = self.data
        starts = line_starts(self)
        if starts is None:
            start, end = data.rfind(b"\n", 0, offset) + 1, data.find(b"\n", offset)
            end = end if end >= 0 else len(data)
        else:
            index = bisect.bisect_right(starts, offset) - 1
            start, end = starts[index], starts[index + 1] - 1 if index + 1 < len(starts) else len(data)
        if end - start <= 2 * width:
            line = data[start:end].rstrip(b"\r")
            if len(line) <= width:
                return line.decode("utf-8", "replace")
            end = start + len(line)
        first = max(start, min(offset - width // 3, end - width))
        last = first + width
        while start < first < end and data[first] & 0xC0 == 0x80:  # never cut a UTF-8 sequence in two
            first += 1
        while last < end and data[last] & 0xC0 == 0x80:
            last -= 1
        text = data[first:last].rstrip(b"\r") if last >= end else data[first:last]
        return ("…" if first > start else "") + text.decode("utf-8", "replace") + ("…" if last < end else "")

    def location(self, offset: int) -> str:
        """`path:line:col` for a byte offset, as every message prints it."""
        line, column = self.position(offset)
        return f"{self.path}:{line}:{column}"

    def reparse(self, data: bytes, edits) -> "Document":
        """The document for `data`, which is `self.data` with sorted, non-overlapping `edits` applied.

        Incremental: the old tree is told where the bytes moved, so tree-sitter
        re-reads only the changed regions (several times faster than a fresh parse
        on a recipe-sized file). The result is the same tree a fresh parse gives.
        When this document's problems are known to be none, the new document checks
        Nix's rules only where something changed (`changed`; the result is the same).
        """
        edits = sorted(edits, key=lambda e: e.start)
        if not (read_as_is(self.data) and read_as_is(data)):
            return parse_document(data, self.path)  # a NUL or a lone CR: Nix's reading may change anywhere
        tree = self._moved_tree(edits, data)
        new_tree = parser().parse(data, tree)
        written, shift = [], 0
        for edit in edits:
            start = edit.start + shift
            written.append((start, start + len(edit.replacement)))
            shift += len(edit.replacement) - (edit.end - edit.start)
        changed = tuple(written) + tuple((r.start_byte, r.end_byte) for r in tree.changed_ranges(new_tree))
        clean = "problems" in self.__dict__ and not self.problems
        return Document(path=self.path, data=data, tree=new_tree, changed=changed, clean_origin=clean)

    @classmethod
    def parsed(cls, data: bytes, path: str) -> "Document":
        """A fresh parse of `data` (what `parse_document` does), for code that has a Document but not this module."""
        return parse_document(data, path)

    def retokened(self, data: bytes, edits) -> "Document | None":
        """The document for `data` without a parse, when `edits` provably leave every token's kind as it was.

        That holds for an edit inside one string fragment of a string value (not an attribute
        name) writing only plain text (letters, digits, `._/:+=@,%-` and spaces; never
        emptying the fragment), and for an edit replacing a whole attribute-path segment of a
        select (`pkgs.python3Packages.torch`) by another plain identifier. Then the tree a
        parse would build is this tree with its positions moved (`tree.edit`), there is no
        new problem (this document has none), no name is bound or unbound, and no attribute
        defined: the proof re-parse and its checks can be skipped. Otherwise None (re-parse).
        tests/test_retokened.py checks the result against fresh parses.
        """
        if "problems" not in self.__dict__ or self.problems or not edits or len(edits) > EXACT_EDITS:
            return None  # many edits: each told to the tree costs a walk to it; a re-parse is linear
        if not read_as_is(self.data):
            return None  # the tree was parsed from other bytes than `data` (reading.py)
        tokens = self.ancestry.locate([(edit.start, edit.end) for edit in edits])
        for edit, node in zip(edits, tokens):
            if not _keeps_tokens(self, edit, node):
                return None
        result = Document(path=self.path, data=data, tree=self._moved_tree(edits), clean_origin=True)
        result.__dict__["problems"] = ()
        return result

    def _moved_tree(self, edits, data: bytes | None = None) -> tree_sitter.Tree:
        """A copy of the tree told where `edits` (non-overlapping, applied to `self.data`) moved the bytes.

        tree-sitter walks to each edited node (O(depth) per edit). Given the new bytes (`data`: the tree
        is about to be parsed again), more than EXACT_EDITS edits are told as one edit spanning them
        all, and the parse reads that span afresh (linear); a tree used without a parse needs each.
        """
        tree = self.tree.copy()
        if data is not None and len(edits) > EXACT_EDITS:
            start = min(edit.start for edit in edits)
            end = max(edit.end for edit in edits)
            grown = sum(len(edit.replacement) - (edit.end - edit.start) for edit in edits)
            edits = [_Told(start, end, data[start : end + grown])]
        for edit in reversed(self._coalesced(edits)):
            start = self._point(edit.start)
            tree.edit(
                start_byte=edit.start,
                old_end_byte=edit.end,
                new_end_byte=edit.start + len(edit.replacement),
                start_point=start,
                old_end_point=self._point(edit.end),
                new_end_point=_advance(start, edit.replacement),
            )
        return tree

    def _coalesced(self, edits) -> list:
        """`edits` in order, those that touch (an insertion where a replacement starts or ends) told as one:
        told one by one, the second would be placed by coordinates the first has already moved."""
        merged: list = []
        for edit in sorted(edits, key=lambda e: (e.start, e.end)):
            if merged and edit.start <= merged[-1].end:
                last = merged[-1]
                merged[-1] = _Told(last.start, edit.end,
                                   last.replacement + self.data[last.end:edit.start] + edit.replacement)
            else:
                merged.append(edit)
        return merged

    @cached_property
    def problems(self) -> tuple[Problem, ...]:
        return tuple(find_problems(self, self.changed if self.clean_origin else None))

    def _point(self, offset: int) -> tuple[int, int]:
        """tree-sitter's 0-based (row, byte column) of an offset."""
        line, column = self.position(offset)
        return line - 1, column - 1


def line_starts(doc) -> list[int] | None:
    """The offset each line of `doc.data` starts at, once `position` has been asked COUNTED times (None before)."""
    state = doc.__dict__
    starts = state.get("_line_starts")
    if starts is None:
        asked = state["_positions_asked"] = state.get("_positions_asked", 0) + 1
        if asked <= COUNTED:
            return None
        starts = state["_line_starts"] = [0] + [m.end() for m in _NEWLINE.finditer(doc.data)]
    return starts


class _Told(NamedTuple):
    """Several edits told to a tree as one: bytes [start, end) of the old bytes became `replacement`."""

    start: int
    end: int
    replacement: bytes


def _advance(start: tuple[int, int], inserted: bytes) -> tuple[int, int]:
    """The point reached after writing `inserted` at `start`."""
    newlines = inserted.count(b"\n")
    if not newlines:
        return start[0], start[1] + len(inserted)
    return start[0] + newlines, len(inserted) - (inserted.rfind(b"\n") + 1)


def parse_document(data: bytes, path: str = "<memory>") -> Document:
    """Parse bytes into a Document; syntax problems are reported by `Document.problems`, never raised."""
    return Document(path=path, data=data, tree=parser().parse(nix_reading(data)))


_PLAIN_TEXT = re.compile(rb"[A-Za-z0-9 ._/:+=@,%-]*\Z")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_'-]*\Z")
_NOT_NAMES = frozenset({b"if", b"then", b"else", b"assert", b"with", b"let", b"in", b"rec", b"inherit", b"or"})


def _keeps_tokens(doc: Document, edit, node: tree_sitter.Node) -> bool:
    """Whether `edit` changes only the text of `node`, the token around it, and leaves its kind (see Document.retokened)."""
    if node.child_count or not (node.start_byte <= edit.start and edit.end <= node.end_byte):
        return False
    if edit.start == edit.end and edit.start in (node.start_byte, node.end_byte):
        return False  # an insertion on a token's edge: tree-sitter could move it to the neighbour
    parent = doc.ancestry.parent(node)
    if node.type == "string_fragment":
        owner = doc.ancestry.parent(parent) if parent is not None else None
        if parent is None or parent.type not in ("string_expression", "indented_string_expression"):
            return False
        if owner is not None and owner.type in ("attrpath", "inherited_attrs"):
            return False  # a quoted attribute name: its text is a name
        if not _PLAIN_TEXT.match(edit.replacement):
            return False
        return len(edit.replacement) > 0 or (node.end_byte - node.start_byte) > (edit.end - edit.start)
    if node.type == "identifier":
        if (edit.start, edit.end) != (node.start_byte, node.end_byte):
            return False
        if not _IDENTIFIER.match(edit.replacement) or edit.replacement in _NOT_NAMES:
            return False
        select = doc.ancestry.parent(parent) if parent is not None and parent.type == "attrpath" else None
        return select is not None and select.type in ("select_expression", "has_attr_expression") \
            and select.child_by_field_name("attrpath") == parent
    return False
