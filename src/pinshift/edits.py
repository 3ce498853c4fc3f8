"""Byte-range edits, applied to one file in a single pass and checked by re-parsing.

An `Edit` is (start, end, replacement, reason). Steps return edits; they never
write files. `apply_edits` sorts them, collapses identical duplicates, rejects
overlaps with a message naming both edits, and splices once. `apply_to_document`
then re-parses and refuses the whole file's change when the result has a syntax
problem the input did not have (Nix's parse-time rules included: a duplicate attribute
or formal, a path with a trailing slash, ...), or, in a Nix file, a reference the edits
leave unbound (see syntax/scopes.py `newly_unbound`).

Examples:
    >>> apply_edits(b"abc", [Edit(1, 2, b"X", "demo")])
    b'aXc'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pinshift.errors import EditConflict, EditRefused
from pinshift.syntax.document import Document, parse_document
from pinshift.syntax.scopes import newly_unbound


@dataclass(frozen=True, order=True)
class Edit:
    """Replace bytes [start, end) with `replacement`; `reason` says why, for reports and conflicts."""

    start: int
    end: int
    replacement: bytes
    reason: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"bad edit range {self.start}..{self.end}")

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end

    def overlaps(self, other: Edit) -> bool:
        """Two edits overlap if they share a byte, or insert different text at the same point."""
        if self.is_insertion and other.is_insertion:
            return self.start == other.start
        if self.is_insertion:
            return other.start < self.start < other.end
        if other.is_insertion:
            return self.start < other.start < self.end
        return self.start < other.end and other.start < self.end


def _describe(edit: Edit, doc: Document | None) -> str:
    where = doc.location(edit.start) if doc is not None else f"byte {edit.start}"
    return f"{where} ({edit.reason or 'unnamed edit'})"


def normalize_edits(edits: Iterable[Edit], doc: Document | None = None) -> list[Edit]:
    """Sorted, de-duplicated edits; raises EditConflict naming both sides of the first overlap."""
    unique = sorted({(e.start, e.end, e.replacement): e for e in edits}.values())
    for before, after in zip(unique, unique[1:]):
        if before.overlaps(after):
            raise EditConflict(
                f"overlapping edits: {_describe(before, doc)} and {_describe(after, doc)}"
            )
    return unique


def apply_edits(data: bytes, edits: Sequence[Edit], doc: Document | None = None) -> bytes:
    """Splice all edits into `data` in one pass; every byte outside them is kept."""
    parts: list[bytes] = []
    cursor = 0
    for edit in normalize_edits(edits, doc):
        if edit.end > len(data):
            raise EditConflict(f"edit past end of file: {_describe(edit, doc)}")
        parts.append(data[cursor : edit.start])
        parts.append(edit.replacement)
        cursor = edit.end
    parts.append(data[cursor:])
    return b"".join(parts)


def new_problems(before: Document, after: Document) -> list:
    """Problems of `after` that `before` did not have.

    Matched by message and line text first, then, for what is left, by message alone: an edit on
    the line of an old problem (`{ a = 1; a = 2; b = 3; }`, changing `b`) does not make it new.
    """
    remaining = Counter(p.key for p in before.problems)
    unmatched = []
    for problem in after.problems:
        if remaining[problem.key]:
            remaining[problem.key] -= 1
        else:
            unmatched.append(problem)
    messages = Counter(message for (message, _), count in remaining.items() for _ in range(count))
    fresh = []
    for problem in unmatched:
        if messages[problem.message]:
            messages[problem.message] -= 1
        else:
            fresh.append(problem)
    return fresh


def apply_to_document(doc: Document, edits: Sequence[Edit]) -> Document:
    """The re-parsed result of applying `edits`; raises EditRefused if it breaks the syntax
    or (in a Nix file) leaves a reference unbound."""
    if not edits:
        return doc
    edits = normalize_edits(edits, doc)
    data = apply_edits(doc.data, edits, doc)
    doc.problems  # known before the re-parse, so a clean file's result is checked only where it changed
    retokened = getattr(doc, "retokened", None)
    same_tokens = retokened(data, edits) if retokened else None
    if same_tokens is not None:
        return same_tokens  # no token changed kind: no new problem, nothing bound or unbound (no re-parse needed)
    reparse = getattr(doc, "reparse", None)
    result = reparse(data, edits) if reparse else parse_document(data, doc.path)
    fresh = new_problems(doc, result)
    if fresh:
        first = fresh[0]
        raise EditRefused(
            f"{first}: the change would break the file's syntax; "
            f"file left unchanged (line: {first.source_line.strip()!r})"
        )
    if isinstance(doc, Document) and isinstance(result, Document):
        unbound = newly_unbound(doc, result, edits)
        if unbound:
            first = unbound[0]
            raise EditRefused(
                f"{result.location(first.offset)}: {first.message}; "
                f"file left unchanged (line: {result.line_text(first.offset).strip()!r})"
            )
    return result
