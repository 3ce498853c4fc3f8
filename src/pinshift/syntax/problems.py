"""Syntax problems of a Document: tree-sitter-nix's errors, two of its gaps forgiven, plus Nix's own rules.

tree-sitter-nix 0.1.0 (the PyPI release) rejects a trailing comma after the last
formal, `{ a, b, }:` or `args@{ a ? 1, }:`, although Nix accepts it (RFC 166 style).
It reports that comma either as a MISSING identifier in an empty `formal` or as an
ERROR node holding the lone comma. Exactly that shape is forgiven: one comma, after
a well-formed formal, followed only by comments and the closing brace. A formal whose
default is itself a function with such a comma (`{ a ? { b ? 1, }: 1, }:`, as nixfmt
writes it) is well-formed: its only "error" is the forgiven inner comma. Nix itself
rejects a comma after `...`, and so do we.

It also rejects an empty inherit, `inherit;` or `inherit (x);`, which Nix accepts (and
drops): it reports a MISSING identifier as the only attribute; exactly that is forgiven.

Nix (2.8, our oracle) also rejects a file that starts with a UTF-8 byte-order
mark, which tree-sitter silently skips; that is reported as a problem too, so
`pinshift parse` agrees with Nix. The BOM's bytes are still kept by every edit.
What Nix's parser checks beyond its grammar (paths, integers, duplicates, dynamic
attributes in inherit and let, an empty file) comes from parse_rules.py.

Examples:
    `{ a, b, }: a`      -> no problems
    `{ a = 1; inherit; }` -> no problems
    `{ a, ..., }: a`    -> one problem (Nix: "unexpected ','")
    `{ a,, }: a`        -> one problem
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tree_sitter import Node

if TYPE_CHECKING:
    from pinshift.syntax.document import Document


@dataclass(frozen=True)
class Problem:
    """One syntax problem, located by byte offset and by 1-based line and column (in bytes)."""

    path: str
    offset: int
    line: int
    column: int
    message: str
    source_line: str
    # shown after the message but not part of `key`: where a duplicate was first defined moves with edits
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}{self.detail}"

    @property
    def key(self) -> tuple[str, str]:
        """What identifies a problem independently of where edits moved it."""
        return (self.message, self.source_line.strip())


def _significant(node: Node | None, step: str) -> Node | None:
    """The nearest sibling in direction `step` ('prev' or 'next') that is not a comment."""
    while node is not None and node.type == "comment":
        node = node.prev_sibling if step == "prev" else node.next_sibling
    return node


def _prev(node: Node) -> Node | None:
    return _significant(node.prev_sibling, "prev")


def _next(node: Node) -> Node | None:
    return _significant(node.next_sibling, "next")


def _is_real_formal(node: Node | None) -> bool:
    """A formal without problems of its own (a forgiven trailing comma inside its default is none)."""
    if node is None or node.type != "formal":
        return False
    return not node.has_error or next(_problem_nodes(node), None) is None


def _comma_closes_formals(comma: Node) -> bool:
    """True when `comma` follows a real formal and only comments stand between it and `}`."""
    after = _next(comma)
    return _is_real_formal(_prev(comma)) and after is not None and after.type == "}"


def is_empty_inherit(node: Node) -> bool:
    """True for the MISSING identifier tree-sitter-nix 0.1.0 puts in an empty `inherit;` / `inherit (x);`."""
    parent = node.parent
    if not (node.is_missing and node.type == "identifier" and parent is not None and parent.type == "inherited_attrs"):
        return False
    after = _next(parent)
    return (
        all(c == node or c.type == "comment" for c in parent.children)
        and parent.parent is not None
        and parent.parent.type in ("inherit", "inherit_from")
        and after is not None
        and after.type == ";"
    )


def is_trailing_formals_comma(node: Node) -> bool:
    """True for the two shapes tree-sitter-nix 0.1.0 gives a valid trailing comma in formals."""
    parent = node.parent
    if node.is_missing and node.type == "identifier" and parent is not None and parent.type == "formal":
        formal = parent
        if formal.start_byte != formal.end_byte or formal.parent is None or formal.parent.type != "formals":
            return False
        comma = _prev(formal)
        after = _next(formal)
        return (
            comma is not None
            and comma.type == ","
            and after is not None
            and after.type == "}"
            and _is_real_formal(_prev(comma))
        )
    if node.is_error and parent is not None and parent.type == "formals":
        children = node.children
        return len(children) == 1 and children[0].type == "," and _comma_closes_formals(node)
    return False


def grammar_problem_nodes(node: Node) -> Iterator[Node]:
    """The ERROR and MISSING nodes below `node` that are real problems (the gaps above forgiven)."""
    return _problem_nodes(node)


def _problem_nodes(node: Node) -> Iterator[Node]:
    if not node.has_error and not node.is_missing:
        return
    if node.is_missing or node.is_error:
        if is_trailing_formals_comma(node) or is_empty_inherit(node):
            return
        # An ERROR that swallowed the whole file says little at 1:1; the errors inside it point
        # at the offending token (`"torch-${version";` -> the `";`), so report those when there are any.
        inner = [p for child in node.children for p in _problem_nodes(child)] if node.is_error else []
        yield from inner or [node]
        return
    for child in node.children:
        yield from _problem_nodes(child)


def _describe(doc: Document, node: Node) -> str:
    if node.is_missing:
        return f"syntax error: missing {node.type!r}"
    text = doc.text(node)
    first = text.split()[0].decode("utf-8", "replace") if text.split() else ""
    if len(first) > 20:
        first = first[:20] + "…"
    return f"syntax error: unexpected {first!r}" if first else "syntax error"


BOM = b"\xef\xbb\xbf"
BOM_MESSAGE = "syntax error: byte-order mark (Nix rejects a file starting with a UTF-8 BOM; remove its first 3 bytes)"


def find_problems(doc: Document, regions: Sequence[tuple[int, int]] | None = None) -> list[Problem]:
    """Every syntax problem in `doc`, in source order, forgiving only the gaps above.

    With `regions` (byte ranges of a re-parsed file), Nix's own rules are checked only around
    them (parse_rules.rule_problems); the grammar is always checked in full (it costs nothing
    on a tree without errors).
    """
    from pinshift.syntax.parse_rules import rule_problems

    found = []
    if doc.data.startswith(BOM):
        # No source line: a problem's key includes it, and edits on line 1 must not make this one look new.
        found.append(Problem(doc.path, 0, 1, 1, BOM_MESSAGE, ""))
    located = [(node.start_byte, _describe(doc, node), "") for node in _problem_nodes(doc.root)]
    located += rule_problems(doc, regions, grammar_problem_nodes)
    for offset, message, detail in sorted(located, key=lambda item: item[0]):
        line, column = doc.position(offset)
        found.append(Problem(doc.path, offset, line, column, message, doc.line_text(offset), detail))
    return found
