"""Attributes and formals defined twice, decided the way Nix's parser (2.8) decides.

Within one attrset, `rec { }`, `let ... in` or `let { }`, Nix adds each binding along its
attrpath (its `addAttr`):

- a name not yet defined is added; a dotted path creates nested attrsets on the way
  (`a.b = 1; a.c = 2;` is one `a` holding `b` and `c`);
- walking through a name already defined works only if that name holds an attrset literal
  (`a = { b = 1; }; a.c = 2;` is fine, `a = 1; a.b = 2;` and `inherit a; a.b = 1;` are not);
- defining a name already defined is an error, unless both values are attrset literals, whose
  attributes are then merged one level deep (`a = { b = 1; }; a = { c = 2; };` is fine,
  `a.b = 1; a = { b = 2; };` is not);
- `inherit a;` and `inherit (x) a;` define `a` like a binding whose value is not an attrset;
- dynamic names (`${x} = 1;`) are never duplicates at parse time; `${"a"}`, `"a"` and `a` are the
  same static name (see attrnames.py).

An "attrset literal" is `{ }` or `rec { }`, also in parentheses; `let in { }`, `with`, `//` are not.
Formals: a name may appear once among `{ a, b }` and the `@` name (`args@{ args }:` is a duplicate).

Each container is checked for conflicts *between its own bindings*; a nested attrset's internal
duplicates are reported when that attrset is checked. Bindings whose first names all differ
cannot conflict, so a container is only modelled for the names it repeats.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from pinshift.syntax.attrnames import static_name

ATTRSET_LITERALS = ("attrset_expression", "rec_attrset_expression")
CONTAINERS = ATTRSET_LITERALS + ("let_expression", "let_attrset_expression")


@dataclass(frozen=True)
class Duplicate:
    """A name defined a second time at `node`; `first` is where it was defined before."""

    node: Node
    first: Node
    path: tuple[bytes, ...]

    @property
    def dotted(self) -> str:
        return ".".join(p.decode("utf-8", "replace") for p in self.path)


@dataclass
class _Def:
    node: Node
    value: Node | None = None  # an attrset literal this name holds, expanded on demand
    nested: "_Set | None" = None

    @property
    def is_attrset(self) -> bool:
        return self.nested is not None or self.value is not None


@dataclass
class _Set:
    defs: dict = field(default_factory=dict)


def _unwrap(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression":
        node = node.child_by_field_name("expression")
    return node


def _attrset_value(node: Node | None) -> Node | None:
    node = _unwrap(node)
    return node if node is not None and node.type in ATTRSET_LITERALS else None


def _entries(binding_set: Node) -> Iterator[Node]:
    for child in binding_set.named_children:
        if child.type in ("binding", "inherit", "inherit_from"):
            yield child


def _segments(binding: Node) -> list[Node]:
    attrpath = binding.child_by_field_name("attrpath")
    return attrpath.children_by_field_name("attr") if attrpath is not None else []


def _first_name(data: bytes, entry: Node) -> list[bytes]:
    """The static names an entry defines first: a binding's first segment, an inherit's names."""
    if entry.type == "binding":
        segments = _segments(entry)
        name = static_name(data, segments[0]) if segments else None
        return [name] if name is not None else []
    attrs = entry.child_by_field_name("attrs")
    names = (static_name(data, a) for a in attrs.children_by_field_name("attr")) if attrs is not None else ()
    return [n for n in names if n is not None]


class _Model:
    """Nix's addAttr over some entries of one binding set, collecting duplicates."""

    def __init__(self, data: bytes, found: list[Duplicate] | None):
        self.data, self.found = data, found

    def report(self, node: Node, first: Node, path: tuple[bytes, ...]) -> None:
        if self.found is not None:
            self.found.append(Duplicate(node, first, path))

    def expand(self, definition: _Def) -> _Set:
        if definition.nested is None:
            definition.nested = _Model(self.data, None).build(definition.value)
        return definition.nested

    def build(self, container: Node, only: set[bytes] | None = None) -> _Set:
        into = _Set()
        binding_set = next((c for c in container.named_children if c.type == "binding_set"), None)
        for entry in _entries(binding_set) if binding_set is not None else ():
            if only is not None and not any(n in only for n in _first_name(self.data, entry)):
                continue
            if entry.type == "binding":
                self.add(into, entry)
            else:
                self.inherit(into, entry)
        return into

    def inherit(self, into: _Set, entry: Node) -> None:
        attrs = entry.child_by_field_name("attrs")
        for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
            name = static_name(self.data, attr)
            if name is None:
                continue
            if name in into.defs:
                self.report(attr, into.defs[name].node, (name,))
            else:
                into.defs[name] = _Def(attr)

    def add(self, into: _Set, binding: Node) -> None:
        segments = _segments(binding)
        if not segments:
            return
        path: tuple[bytes, ...] = ()
        current = into
        for segment in segments[:-1]:
            name = static_name(self.data, segment)
            if name is None:
                return  # a dynamic segment: what follows lives in a set of its own
            path += (name,)
            existing = current.defs.get(name)
            if existing is None:
                existing = current.defs[name] = _Def(segment, nested=_Set())
            elif not existing.is_attrset:
                self.report(segment, existing.node, path + self._rest(segments, len(path)))
                return
            current = self.expand(existing)
        last = segments[-1]
        name = static_name(self.data, last)
        if name is None:
            return
        path += (name,)
        value = _attrset_value(binding.child_by_field_name("expression"))
        existing = current.defs.get(name)
        if existing is None:
            current.defs[name] = _Def(last, value=value)
        elif existing.is_attrset and value is not None:
            target, source = self.expand(existing), _Model(self.data, None).build(value)
            for inner, definition in source.defs.items():
                if inner in target.defs:
                    self.report(definition.node, target.defs[inner].node, path + (inner,))
                else:
                    target.defs[inner] = definition
        else:
            self.report(last, existing.node, path)

    def _rest(self, segments: list[Node], done: int) -> tuple[bytes, ...]:
        names = (static_name(self.data, s) for s in segments[done:])
        return tuple(n if n is not None else b"${...}" for n in names)


def attribute_duplicates(data: bytes, container: Node) -> list[Duplicate]:
    """Conflicts between the bindings of one attrset / rec / let / `let { }` (see the module docstring)."""
    binding_set = next((c for c in container.named_children if c.type == "binding_set"), None)
    if binding_set is None:
        return []
    seen: set[bytes] = set()
    repeated: set[bytes] = set()
    for entry in binding_set.named_children:
        kind = entry.type
        if kind == "binding":
            first = entry.child(0).child(0)  # attrpath, its first attr (the hot path: every container of every file)
            if first is None or first.type != "identifier":
                names = _first_name(data, entry)
            else:
                names = (data[first.start_byte : first.end_byte],)
        elif kind in ("inherit", "inherit_from"):
            names = _first_name(data, entry)
        else:
            continue
        for name in names:
            (repeated if name in seen else seen).add(name)
    if not repeated:
        return []
    found: list[Duplicate] = []
    _Model(data, found).build(container, only=repeated)
    return found


def formal_duplicates(data: bytes, function: Node) -> list[tuple[Node, bytes]]:
    """Names bound twice by one function's formals and `@` name: (the later identifier, name)."""
    identifiers = []
    formals = function.child_by_field_name("formals")
    for formal in formals.children_by_field_name("formal") if formals is not None else ():
        name = formal.child_by_field_name("name")
        if name is not None and not name.is_missing:
            identifiers.append(name)
    universal = function.child_by_field_name("universal")
    if universal is not None and formals is not None:
        identifiers.append(universal)
    if len(identifiers) < 2:
        return []
    seen: set[bytes] = set()
    found = []
    for identifier in sorted(identifiers, key=lambda n: n.start_byte):
        name = data[identifier.start_byte : identifier.end_byte]
        if name in seen:
            found.append((identifier, name))
        seen.add(name)
    return found
