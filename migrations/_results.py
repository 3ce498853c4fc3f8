"""Which `overrideAttrs` call makes a value: where set-binding (and clone-files' `values`) insert by default.

A companion recipe holds more than one `overrideAttrs`: its own, and the one inside the PyTorch
build it links (`customPytorch = (torch.override { … }).overrideAttrs (…);`). A binding meant
for the recipe must go into the call that makes the file's value, never into the nested one
(`propagatedBuildInputs = … ++ [ customPytorch.out ];` inside customPytorch's own attrset makes
it depend on itself: infinite recursion). `result_override(doc)` follows the file's value down
its spine: a function's body, a `let`'s body, `with`/`assert` bodies, both branches of an `if`,
parentheses, and a variable bound by a `let` or `rec` to its value. The first `x.overrideAttrs f`
met is the outermost one (`(a.overrideAttrs f).overrideAttrs g`: g's). `binding_override(doc,
name)` does the same from the value of the `let` binding `name`.

    >>> from pinshift.syntax.document import parse_document
    >>> doc = parse_document(b"let t = a.overrideAttrs (o: { x = 1; }); in (b.override { inherit t; }).overrideAttrs (o: { y = 2; })")
    >>> [doc.text(c.attrset).decode() for c in result_overrides(doc)]
    ['{ y = 2; }']
    >>> [doc.text(c.attrset).decode() for c in binding_overrides(doc, "t")]
    ['{ x = 1; }']
"""

from __future__ import annotations

from pinshift.syntax.queries import OverrideAttrs, bindings, override_attrs, unwrap
from pinshift.syntax.scopes import binder_of

_BODIES = {"function_expression": ("body",), "let_expression": ("body",), "with_expression": ("body",),
           "assert_expression": ("body",), "if_expression": ("consequence", "alternative")}
_SCOPES = ("let_expression", "rec_attrset_expression")
MAX_DEPTH = 64  # a spine longer than this (variables bound to variables…) is not followed further


def _calls(doc, node, by_node: dict, seen: set, depth: int = 0) -> list[OverrideAttrs]:
    node = unwrap(node)
    if node is None or depth > MAX_DEPTH:
        return []
    if node.type in _BODIES:
        found = []
        for field in _BODIES[node.type]:
            found += _calls(doc, node.child_by_field_name(field), by_node, seen, depth + 1)
        return found
    if node.type == "variable_expression":
        binder = binder_of(doc, node)
        if binder.kind not in ("let", "rec") or binder.name_node is None:
            return []
        value = _value_of(binder.name_node)
        if value is None or value.id in seen:
            return []
        seen.add(value.id)
        return _calls(doc, value, by_node, seen, depth + 1)
    if node.type == "apply_expression":
        call = by_node.get(node.id)
        return [call] if call is not None else []
    return []


def _value_of(name_node):
    """The value of `name = value;` when `name_node` is its whole attrpath (not `name.x = …`, not inherit)."""
    attrpath = name_node.parent
    binding = attrpath.parent if attrpath is not None else None
    if attrpath is None or attrpath.type != "attrpath" or binding is None or binding.type != "binding":
        return None
    if len(attrpath.named_children) != 1:
        return None
    return binding.child_by_field_name("expression")


def _index(doc) -> dict:
    return {call.node.id: call for call in override_attrs(doc)}


def result_overrides(doc) -> list[OverrideAttrs]:
    """The outermost `overrideAttrs` calls the file's value is made by (one, or one per `if` branch)."""
    root = doc.root.child_by_field_name("expression") or next(
        (c for c in doc.root.named_children if c.type != "comment"), None)
    return _calls(doc, root, _index(doc), set())


def binding_overrides(doc, name: str) -> list[OverrideAttrs]:
    """The outermost `overrideAttrs` calls making the value of each `let`/`rec` binding `name = …;`."""
    by_node = _index(doc)
    found: list[OverrideAttrs] = []
    for binding in bindings(doc):
        if binding.path == (name,) and binding.container.type in _SCOPES:
            found += [c for c in _calls(doc, binding.value, by_node, set()) if c not in found]
    return found
