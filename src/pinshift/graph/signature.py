"""The arguments a file takes: the function head its value is, read from the syntax tree.

A file's value is its top expression, through `let … in`, `with …;`, `assert …;` and parentheses.
When that is a function of a set (`{ python3Packages, lib ? null, ... }:`, with or without `args@`),
its `Signature` says which names it takes, which it requires (no default) and whether `...` takes
any other; `x: …` takes any one value. Anything else (an attrset, a call, a function the file only
computes) is no signature: what it takes is not known, and nothing is checked against it.

Nix's rules the checks follow: calling a set-pattern function with a name it does not list fails
("called with unexpected argument") unless it has `...`; `import f { }` without a name it lists
without a default fails too ("called without required argument"); `callPackage f { … }` fills the
missing ones from the package set, so only what it passes beyond the formals is checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pinshift.syntax.document import Document
from pinshift.syntax.queries import walk

_BODIES = {"let_expression": "body", "with_expression": "body", "assert_expression": "body",
           "parenthesized_expression": "expression"}
HEAD_SHOWN = 80  # characters of a head a message quotes


@dataclass(frozen=True)
class Signature:
    """What a file's function takes (see the module docstring); `line`/`column`/`head` are for messages."""

    formals: tuple[str, ...]
    required: tuple[str, ...]
    ellipsis: bool
    set_pattern: bool = True  # False: `x: …`, which takes any one value
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)
    head: str = field(default="", compare=False)

    def unexpected(self, names) -> list[str]:
        """The names a call passes that the function does not take."""
        if not self.set_pattern or self.ellipsis:
            return []
        return [name for name in names if name not in self.formals]

    def missing(self, names) -> list[str]:
        """The names the function requires that a call (by `import`) does not pass."""
        if not self.set_pattern:
            return []
        return [name for name in self.required if name not in names]

    def takes(self, name: str) -> bool:
        return not self.set_pattern or self.ellipsis or name in self.formals


def head_span(doc: Document) -> tuple[int, int] | None:
    """The bytes of the file's function head (from its start to its body), or None when it has none."""
    node = value_expression(doc)
    if node is None or node.type != "function_expression":
        return None
    body = node.child_by_field_name("body")
    return node.start_byte, body.start_byte if body is not None else node.end_byte


def value_expression(doc: Document):
    """The node of the file's value: its top expression through let, with, assert and parentheses."""
    node = doc.root.child_by_field_name("expression")
    if node is None:
        node = next((c for c in doc.root.named_children if c.type != "comment"), None)
    while node is not None and node.type in _BODIES:
        node = node.child_by_field_name(_BODIES[node.type])
    return node


def signature(doc: Document, placed: bool = True) -> Signature | None:
    """The Signature of the function `doc`'s value is, or None when it is not a function; without `placed`,
    no line, column or head text (what a comparison needs, cheaper)."""
    node = value_expression(doc)
    if node is None or node.type != "function_expression":
        return None
    formals = node.child_by_field_name("formals")
    line, column = doc.position(node.start_byte) if placed else (0, 0)
    if formals is None:
        universal = node.child_by_field_name("universal")
        head = doc.text(universal).decode("utf-8", "surrogateescape") if universal is not None else "x"
        return Signature((), (), False, False, line, column, f"{head}:")
    names, required = [], []
    for formal in formals.children_by_field_name("formal"):
        identifier = formal.child_by_field_name("name")
        if identifier is None or identifier.is_missing:
            continue
        name = doc.text(identifier).decode("utf-8", "surrogateescape")
        names.append(name)
        if formal.child_by_field_name("default") is None:
            required.append(name)
    ellipsis = formals.child_by_field_name("ellipses") is not None
    if not placed:
        return Signature(tuple(names), tuple(required), ellipsis, True)
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    text, last = [], node.start_byte
    for comment in (c for c in walk(formals, "comment") if c.end_byte <= end):  # a comment is not the head
        text.append(doc.data[last:comment.start_byte])
        last = comment.end_byte
    text.append(doc.data[last:end])
    head = " ".join(b" ".join(text).decode("utf-8", "surrogateescape").split())
    if len(head) > HEAD_SHOWN:
        head = head[: HEAD_SHOWN - 1] + "…"
    return Signature(tuple(names), tuple(required), ellipsis, True, line, column, head)
