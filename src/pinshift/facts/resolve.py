"""Values a recipe binds by name, followed through its `let`/`rec` scopes (pinshift.syntax.scopes).

Recipes name their facts once and use the name: `pname = variantName;` with `variantName = "…";`
in the `let`, `cudaCapabilities = gpuCapabilities;`, `"-DCMAKE_CUDA_ARCHITECTURES=${gpuArchCMake}"`,
`version = ortVersion;`. A `Resolver` reads such an expression to the literal it stands for:

- a string without escapes, its `${…}` parts resolved in turn (`"${baseName}-sm86"`);
- a variable bound by an enclosing `let` or `rec` (the syntax layer's scope rules, so a function
  argument or a `with` of the same name is not mistaken for it), followed up to `MAX_DEPTH` names;
- a list of such strings (`[ "9.0" gpuCap ]`), lists joined with `++`, and `toString LIST`.

Anything else (a function argument, `old.version`, an arithmetic expression) is None: never guessed.

Each lookup climbs the tree from the reference to its binder, so a file could make many lookups
cost more than the file's size; a Resolver makes at most `budget` lookups (the facts need a handful
per recipe) and answers None after that, which keeps reading a recipe linear in its size
(tests/test_facts_kinds.py counts them).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from pinshift.syntax.document import Document
from pinshift.syntax.package_sets import bound_value
from pinshift.syntax.queries import as_string, unwrap
from pinshift.syntax.scopes import binder_of

MAX_DEPTH = 8  # names followed from one reference (`a = b; b = c; …`)
MAX_ITEMS = 32  # list items and string parts read from one value
BUDGET = 256  # binder lookups per document


@dataclass(frozen=True)
class Resolved:
    """A literal a value stands for: its text, where the literal is written, and the names followed to it."""

    value: str
    node: Node
    via: tuple[str, ...] = ()

    @property
    def offset(self) -> int:
        return self.node.start_byte


class Resolver:
    """Follows names of one document to literals, at most `budget` binder lookups in all."""

    def __init__(self, doc: Document, budget: int = BUDGET):
        self.doc = doc
        self.budget = budget
        self.lookups = 0  # how many were made (the linearity test reads it)

    def follow(self, node: Node | None) -> tuple[Node | None, tuple[str, ...]]:
        """The expression a (chain of) let/rec-bound variable(s) stands for, and the names followed."""
        node = unwrap(node)
        via: list[str] = []
        while node is not None and node.type == "variable_expression" and len(via) < MAX_DEPTH:
            if self.lookups >= self.budget:
                return None, tuple(via)
            self.lookups += 1
            value = bound_value(self.doc, binder_of(self.doc, node))
            if value is None:
                break
            via.append(self.doc.text(node).decode("utf-8", "replace"))
            node = unwrap(value)
        return node, tuple(via)

    def string(self, node: Node | None, depth: int = 0) -> Resolved | None:
        """The text a string-valued expression stands for, None when it is not literal all the way down."""
        target, via = self.follow(node)
        if target is None or depth > MAX_DEPTH:
            return None
        if target.type == "apply_expression":
            return self._to_string(target, via, depth)
        string = as_string(target)
        if string is None or len(string.parts) > MAX_ITEMS:
            return None
        pieces = []
        for part in string.parts:
            if part.kind == "literal":
                pieces.append(self.doc.text(part.node).decode("utf-8", "replace"))
            elif part.kind == "interpolation":
                inner = self.string(part.node.child_by_field_name("expression"), depth + 1)
                if inner is None:
                    return None
                pieces.append(inner.value)
                via += inner.via
            else:
                return None  # an escape: not worth decoding for a fact
        text = "".join(pieces)
        if string.indented:
            text = text.strip()
        return Resolved(text, target, via)

    def _to_string(self, node: Node, via: tuple[str, ...], depth: int) -> Resolved | None:
        """`toString LIST` (and `builtins.toString`): the items joined by spaces."""
        function = unwrap(node.child_by_field_name("function"))
        name = self.doc.text(function) if function is not None else b""
        if name not in (b"toString", b"builtins.toString"):
            return None
        items = self.strings(node.child_by_field_name("argument"), depth + 1)
        if items is None:
            return None
        return Resolved(" ".join(item.value for item in items), node, via + sum((i.via for i in items), ()))

    def strings(self, node: Node | None, depth: int = 0) -> tuple[Resolved, ...] | None:
        """The strings a list-valued expression holds (`[ "8.9" ]`, a let-bound list, `a ++ b`); a single
        string counts as a list of one. None when any item is not literal."""
        target, via = self.follow(node)
        if target is None or depth > MAX_DEPTH:
            return None
        if target.type == "binary_expression":
            operator = target.child_by_field_name("operator")
            if operator is None or operator.type != "++":
                return None
            left = self.strings(target.child_by_field_name("left"), depth + 1)
            right = self.strings(target.child_by_field_name("right"), depth + 1)
            return None if left is None or right is None else left + right
        if target.type != "list_expression":
            single = self.string(target, depth + 1)
            return None if single is None else (Resolved(single.value, single.node, via + single.via),)
        items = [item for item in target.named_children if item.type != "comment"]
        if len(items) > MAX_ITEMS:
            return None
        found = []
        for item in items:
            value = self.string(item, depth + 1)
            if value is None:
                return None
            found.append(Resolved(value.value, value.node, via + value.via))
        return tuple(found)
