"""Syntax problems of a Document, with the one known tree-sitter-nix 0.1.0 gap forgiven.

tree-sitter-nix 0.1.0 (the PyPI release) rejects a trailing comma after the last
formal, `{ a, b, }:` or `args@{ a ? 1, }:`, although Nix accepts it (RFC 166 style).
It reports that comma either as a MISSING identifier in an empty `formal` or as an
ERROR node holding the lone comma. Exactly that shape is forgiven: one comma, after
a real formal, followed only by comments and the closing brace. Nix itself rejects
a comma after `...`, and so do we.

Nix (2.8, our oracle) also rejects a file that starts with a UTF-8 byte-order
mark, which tree-sitter silently skips; that is reported as a problem too, so
`pinshift parse` agrees with Nix. The BOM's bytes are still kept by every edit.

Examples:
    `{ a, b, }: a`      -> no problems
    `{ a, ..., }: a`    -> one problem (Nix: "unexpected ','")
    `{ a,, }: a`        -> one problem
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tree_sitter import Node

if TYPE_CHECKING:
    from pinshift.syntax.document import Document, Problem


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
    return node is not None and node.type == "formal" and not node.has_error


def _comma_closes_formals(comma: Node) -> bool:
    """True when `comma` follows a real formal and only comments stand between it and `}`."""
    after = _next(comma)
    return _is_real_formal(_prev(comma)) and after is not None and after.type == "}"


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


def _problem_nodes(node: Node) -> Iterator[Node]:
    if not node.has_error and not node.is_missing:
        return
    if node.is_missing or node.is_error:
        if is_trailing_formals_comma(node):
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


def find_problems(doc: Document) -> Iterator[Problem]:
    """Every syntax problem in `doc`, in source order, forgiving only the trailing-comma gap."""
    from pinshift.syntax.document import Problem

    if doc.data.startswith(BOM):
        # No source line: a problem's key includes it, and edits on line 1 must not make this one look new.
        yield Problem(doc.path, 0, 1, 1, BOM_MESSAGE, "")
    for node in _problem_nodes(doc.root):
        offset = node.start_byte
        line, column = doc.position(offset)
        yield Problem(
            path=doc.path,
            offset=offset,
            line=line,
            column=column,
            message=_describe(doc, node),
            source_line=doc.line_text(offset),
        )
