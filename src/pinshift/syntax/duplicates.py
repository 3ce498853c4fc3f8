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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from pinshift.syntax.attrnames import static_name
from pinshift.syntax.stackless import Call, run

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
    value: Node | None = None  # an attrset literal this name holds, read on demand
    nested: "_Set | None" = None

    @property
    def is_attrset(self) -> bool:
        return self.nested is not None or self.value is not None


class _Set:
    """The names one attrset defines: those added so far, and for an attrset literal (`source`) its own
    bindings, read one first name at a time when that name is looked up (`_Model.get`).

    Reading a literal whole each time a binding walks into it made a check quadratic (and recursive) in
    the nesting: `{ a = { a = { … }; a.z = 1; }; a.z = 1; }` 1,000 deep took 22 s (issue 36).
    """

    __slots__ = ("defs", "source", "read")

    def __init__(self, source: Node | None = None):
        self.defs: dict[bytes, _Def] = {}
        self.source = source
        self.read: set[bytes] = set()


def _unwrap(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression":
        node = node.child_by_field_name("expression")
    return node


def _attrset_value(node: Node | None) -> Node | None:
    node = _unwrap(node)
    return node if node is not None and node.type in ATTRSET_LITERALS else None


def _binding_set(container: Node) -> Node | None:
    return next((c for c in container.named_children if c.type == "binding_set"), None)


def _entries(binding_set: Node) -> Iterator[Node]:
    for child in binding_set.named_children:
        if child.type in ("binding", "inherit", "inherit_from"):
            yield child


def _segments(binding: Node) -> list[Node]:
    attrpath = binding.child_by_field_name("attrpath")
    return attrpath.children_by_field_name("attr") if attrpath is not None else []


def _inherited(entry: Node) -> list[Node]:
    attrs = entry.child_by_field_name("attrs")
    return attrs.children_by_field_name("attr") if attrs is not None else []


def _first_name(data: bytes, entry: Node) -> list[bytes]:
    """The static names an entry defines first: a binding's first segment, an inherit's names."""
    if entry.type == "binding":
        segments = _segments(entry)
        name = static_name(data, segments[0]) if segments else None
        return [name] if name is not None else []
    names = (static_name(data, a) for a in _inherited(entry))
    return [n for n in names if n is not None]


# the entries of one binding set by the name they define first: (binding, None) or (inherit, its attr)
Index = dict[bytes, list[tuple[Node, "Node | None"]]]


class _Model:
    """Nix's addAttr over some entries of one binding set, collecting duplicates.

    Its steps are generators run by stackless.run: a binding that walks into an attrset literal reads
    that literal's bindings of the name it walks through, which may walk into another literal, as deep
    as the file nests.
    """

    def __init__(self, data: bytes, found: list[Duplicate], indexes: dict[int, Index]):
        self.data, self.found, self.indexes = data, found, indexes

    def index(self, container: Node) -> Index:
        """The entries of a literal by first name, made once per check of a file (`indexes`)."""
        found = self.indexes.get(container.id)
        if found is None:
            found = self.indexes[container.id] = {}
            binding_set = _binding_set(container)
            for entry in _entries(binding_set) if binding_set is not None else ():
                if entry.type == "binding":
                    for name in _first_name(self.data, entry):
                        found.setdefault(name, []).append((entry, None))
                    continue
                for attr in _inherited(entry):
                    inherited = static_name(self.data, attr)
                    if inherited is not None:
                        found.setdefault(inherited, []).append((entry, attr))
        return found

    def get(self, into: _Set, name: bytes) -> Call[_Def | None]:
        """What `into` defines as `name`, reading a literal's own bindings of it first (quietly: a duplicate
        inside the literal is the literal's own problem, reported when it is checked)."""
        if into.source is not None and name not in into.read:
            into.read.add(name)
            for entry, attr in self.index(into.source).get(name, ()):
                if attr is None:
                    yield self.add(into, entry, report=False)
                elif name not in into.defs:
                    into.defs[name] = _Def(attr)
        return into.defs.get(name)

    def report(self, node: Node, first: Node, path: tuple[bytes, ...]) -> None:
        self.found.append(Duplicate(node, first, path))

    @staticmethod
    def inside(definition: _Def) -> _Set:
        if definition.nested is None:
            definition.nested = _Set(definition.value)
        return definition.nested

    def build(self, container: Node, only: set[bytes]) -> Call[None]:
        into = _Set()
        binding_set = _binding_set(container)
        for entry in _entries(binding_set) if binding_set is not None else ():
            if not any(n in only for n in _first_name(self.data, entry)):
                continue
            if entry.type == "binding":
                yield self.add(into, entry, report=True)
                continue
            for attr in _inherited(entry):
                name = static_name(self.data, attr)
                if name is None:
                    continue
                if name in into.defs:
                    self.report(attr, into.defs[name].node, (name,))
                else:
                    into.defs[name] = _Def(attr)

    def add(self, into: _Set, binding: Node, report: bool) -> Call[None]:
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
            existing = yield self.get(current, name)
            if existing is None:
                existing = current.defs[name] = _Def(segment, nested=_Set())
            elif not existing.is_attrset:
                if report:
                    self.report(segment, existing.node, path + self._rest(segments, len(path)))
                return
            current = self.inside(existing)
        last = segments[-1]
        name = static_name(self.data, last)
        if name is None:
            return
        path += (name,)
        value = _attrset_value(binding.child_by_field_name("expression"))
        existing = yield self.get(current, name)
        if existing is None:
            current.defs[name] = _Def(last, value=value)
        elif existing.is_attrset and value is not None:
            # two attrset literals: the second's attributes join the first's, one level deep
            target, source = self.inside(existing), _Set(value)
            for inner in list(self.index(value)):
                definition = yield self.get(source, inner)
                clash = yield self.get(target, inner)
                if definition is None:
                    continue
                if clash is not None:
                    if report:
                        self.report(definition.node, clash.node, path + (inner,))
                else:
                    target.defs[inner] = definition
        elif report:
            self.report(last, existing.node, path)

    def _rest(self, segments: list[Node], done: int) -> tuple[bytes, ...]:
        names = (static_name(self.data, s) for s in segments[done:])
        return tuple(n if n is not None else b"${...}" for n in names)


def attribute_duplicates(data: bytes, container: Node, indexes: dict[int, Index] | None = None) -> list[Duplicate]:
    """Conflicts between the bindings of one attrset / rec / let / `let { }` (see the module docstring).

    `indexes` may be shared by the checks of one file's containers: each literal is indexed once.
    """
    binding_set = _binding_set(container)
    if binding_set is None:
        return []
    seen: set[bytes] = set()
    repeated: set[bytes] = set()
    names: Sequence[bytes]
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
    if not repeated or _paths_apart(data, binding_set, repeated):
        return []
    found: list[Duplicate] = []
    run(_Model(data, found, {} if indexes is None else indexes).build(container, repeated))
    return found


def _paths_apart(data: bytes, binding_set: Node, repeated: set[bytes]) -> bool:
    """Whether the entries sharing a first name cannot conflict, decided without the model: each is a binding
    with static names and a value that is no attrset literal, and no path is another's or begins another
    (`a.b = 1; a.c = 2;`). Then addAttr only walks through sets the paths create and defines new names.
    False means: not decided here (the model decides)."""
    paths = set()
    for entry in _entries(binding_set):
        if not any(n in repeated for n in _first_name(data, entry)):
            continue
        if entry.type != "binding" or _attrset_value(entry.child_by_field_name("expression")) is not None:
            return False
        names = tuple(static_name(data, segment) for segment in _segments(entry))
        if None in names or names in paths:
            return False
        paths.add(names)
    return not any(path[:cut] in paths for path in paths for cut in range(1, len(path)))


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
        spelled = data[identifier.start_byte : identifier.end_byte]
        if spelled in seen:
            found.append((identifier, spelled))
        seen.add(spelled)
    return found
