"""Lexical scopes: which binder a variable name refers to at a place in a Nix file.

Renaming a function argument is only safe when every reference bound to it, and
nothing else, changes. Nix scoping is lexical except for `with`: a name is bound
by the nearest enclosing

  - function: its set-pattern formals (`{ a, b ? 1, ... }:`) or its plain / `@` argument (`x:`, `x@{ }:`);
  - `let ... in`: every binding's first attrpath segment and every inherited name;
  - `rec { }` and legacy `let { }`: the same, for references inside the attrset;

and only when no lexical binder exists does an enclosing `with e;` supply it
(dynamically: we cannot know whether `e` has that attribute), else it is free
(a builtin such as `true`, or an error). `inherit x;` inside a `let`/`rec` reads
`x` from the scope *around* that `let`/`rec`, so lookups for inherited names
skip their own container.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from pinshift.syntax.document import Document
from pinshift.syntax.queries import name_of, walk

_RECURSIVE = ("let_expression", "rec_attrset_expression", "let_attrset_expression")


@dataclass(frozen=True)
class Binder:
    """Where a name is bound: `kind` is formal, argument, let, rec, with or free.

    `scope` is the function / let / rec / with node (None when free); `name_node` is the
    identifier that binds the name (None for `with` and free names).
    """

    kind: str
    scope: Node | None
    name_node: Node | None

    @property
    def lexical(self) -> bool:
        return self.kind not in ("with", "free")


def _bound_by_function(doc: Document, function: Node, name: str) -> Binder | None:
    formals = function.child_by_field_name("formals")
    if formals is not None:
        for formal in formals.children_by_field_name("formal"):
            identifier = formal.child_by_field_name("name")
            if identifier is not None and not identifier.is_missing and doc.text(identifier).decode() == name:
                return Binder("formal", function, identifier)
    universal = function.child_by_field_name("universal")
    if universal is not None and doc.text(universal).decode() == name:
        return Binder("argument", function, universal)
    return None


def _bound_by_bindings(doc: Document, container: Node, name: str) -> Binder | None:
    kind = "let" if container.type == "let_expression" else "rec"
    binding_set = next((c for c in container.named_children if c.type == "binding_set"), None)
    if binding_set is None:
        return None
    for binding in binding_set.named_children:
        if binding.type == "binding":
            attrpath = binding.child_by_field_name("attrpath")
            first = attrpath.child_by_field_name("attr") if attrpath is not None else None
            if first is not None and name_of(doc, first) == name:
                return Binder(kind, container, first)
        elif binding.type in ("inherit", "inherit_from"):
            attrs = binding.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                if name_of(doc, attr) == name:
                    return Binder(kind, container, attr)
    return None


def _inside(node: Node, ancestor: Node | None) -> bool:
    return ancestor is not None and ancestor.start_byte <= node.start_byte and node.end_byte <= ancestor.end_byte


def resolve(doc: Document, name: str, at: Node, skip: Node | None = None) -> Binder:
    """The binder of `name` as seen from node `at` (not counting `skip`, a let/rec holding an inherit)."""
    nearest_with = None
    child, scope = at, at.parent
    while scope is not None:
        if skip is None or scope != skip:
            found = None
            if scope.type == "function_expression":
                found = _bound_by_function(doc, scope, name)
            elif scope.type in _RECURSIVE:
                found = _bound_by_bindings(doc, scope, name)
            elif scope.type == "with_expression" and nearest_with is None:
                if _inside(child, scope.child_by_field_name("body")):
                    nearest_with = scope
            if found is not None:
                return found
        child, scope = scope, scope.parent
    if nearest_with is not None:
        return Binder("with", nearest_with, None)
    return Binder("free", None, None)


def binder_of(doc: Document, variable: Node) -> Binder:
    """The binder a `variable_expression` refers to."""
    return resolve(doc, doc.text(variable).decode("utf-8", "surrogateescape"), variable)


def inherited_binder(doc: Document, inherit: Node, attr: Node) -> Binder:
    """What a plain `inherit name;` reads: the name looked up around the let/rec/attrset holding it."""
    container = inherit.parent.parent if inherit.parent is not None else None
    return resolve(doc, name_of(doc, attr) or "", inherit, skip=container)


def references(doc: Document, name: str, within: Node | None = None) -> list[tuple[Node, Binder]]:
    """Every `variable_expression` spelling `name` (inside `within`), with its binder, in source order."""
    found = []
    for variable in walk(within or doc.root, "variable_expression"):
        if doc.text(variable).decode("utf-8", "surrogateescape") == name:
            found.append((variable, binder_of(doc, variable)))
    return found
