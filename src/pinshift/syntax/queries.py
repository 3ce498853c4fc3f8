"""Typed views of the Nix constructs migration steps look for.

Each query walks a Document's tree and returns small frozen dataclasses that
keep the tree-sitter nodes (for byte ranges) next to decoded names (for matching).
Steps match on names and edit by node ranges; nothing here edits anything.

Examples:
    `nixpkgs_pinned.python3Packages.torch.override` -> Select(base_name="nixpkgs_pinned",
        names=("python3Packages", "torch", "override"))
    `meta = oldAttrs.meta // { description = "x"; }` and `meta.description = "x"` both give
        a Binding with path ("meta", "description").
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node, Query, QueryCursor

from pinshift.syntax.document import Document
from pinshift.syntax.language import nix_language

ATTRSET_TYPES = ("attrset_expression", "rec_attrset_expression", "let_attrset_expression")
BINDING_CONTAINERS = ATTRSET_TYPES + ("let_expression",)
STRING_TYPES = ("string_expression", "indented_string_expression")


def walk(node: Node, *types: str) -> Iterator[Node]:
    """Every descendant of `node` (itself included) whose type is one of `types`, in source order.

    With `types`, a compiled tree-sitter query finds the nodes in C (the steps'
    hot path: a Python cursor walk visits every node of the file); without, every
    node is visited.
    """
    if types:
        found = QueryCursor(_query(types)).captures(node).get("n", ())
        yield from sorted(found, key=_preorder)
        return
    cursor = node.walk()
    visited_children = False
    while True:
        if not visited_children:
            yield cursor.node  # type: ignore[misc]  # a cursor always stands on a node
            if cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited_children = False
            continue
        if not cursor.goto_parent():
            return
        visited_children = True


def _preorder(node: Node) -> tuple[int, int]:
    return node.start_byte, -node.end_byte


def nodes_spelling(doc: Document, needle: bytes) -> list[Node]:
    """The smallest node around each place the file's bytes spell `needle` (a targeted, cheap lookup).

    All found in one sweep of a cursor (`Ancestry.locate`), which also learns the parents of
    every node on the way: the callers' climbs from these nodes cost no walk from the root.
    """
    return doc.ancestry.locate(places_spelling(doc.data, (needle,)))


def places_spelling(data: bytes, needles) -> list[tuple[int, int]]:
    """The byte ranges where `data` spells each of `needles` (bytes), needle by needle: located together in one
    sweep (`Ancestry.locate`), several needles cost one walk, not one each."""
    ranges = []
    for needle in needles:
        start = data.find(needle) if needle else -1
        while start >= 0:
            end = start + len(needle)
            ranges.append((start, end))
            start = data.find(needle, end)
    return ranges


@functools.lru_cache(maxsize=None)
def _query(types: tuple[str, ...]) -> Query:
    return Query(nix_language(), "[" + " ".join(f"({t})" for t in types) + "] @n")


def unwrap(node: Node | None) -> Node | None:
    """The expression inside any number of parentheses."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.child_by_field_name("expression")
    return node


def name_of(doc: Document, node: Node) -> str | None:
    """The name an attrpath segment or identifier spells: `foo`, `"foo"`; None for `${...}` or escapes."""
    if node.type == "identifier":
        return doc.text(node).decode("utf-8", "surrogateescape")
    if node.type == "string_expression":
        parts = [c for c in node.named_children]
        if all(c.type == "string_fragment" for c in parts):
            return b"".join(doc.text(c) for c in parts).decode("utf-8", "surrogateescape")
    return None


# --- select expressions -------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """One attrpath segment: its node and the name it spells (None when interpolated)."""

    node: Node
    name: str | None


@dataclass(frozen=True)
class Select:
    """`base.a.b.c` (optionally `or default`): the base expression and its attrpath segments."""

    node: Node
    base: Node
    base_name: str | None
    segments: tuple[Segment, ...]
    default: Node | None

    @property
    def names(self) -> tuple[str | None, ...]:
        return tuple(s.name for s in self.segments)

    @property
    def dotted(self) -> str:
        parts = [self.base_name or "<expr>"] + [n if n is not None else "${...}" for n in self.names]
        return ".".join(parts)


def attrpath_segments(doc: Document, attrpath: Node | None) -> tuple[Segment, ...]:
    """The segments of an attrpath; none when there is no attrpath (a tree tree-sitter recovered from an error)."""
    if attrpath is None:
        return ()
    return tuple(Segment(c, name_of(doc, c)) for c in attrpath.children_by_field_name("attr"))


def selects(doc: Document) -> list[Select]:
    """Every select expression, e.g. `nixpkgs_pinned.python3Packages.torch.override`."""
    found = []
    for node in walk(doc.root, "select_expression"):
        base = node.child_by_field_name("expression")
        attrpath = node.child_by_field_name("attrpath")
        if base is None or attrpath is None:
            continue
        base_name = None
        if base.type == "variable_expression":
            base_name = doc.text(base).decode("utf-8", "surrogateescape")
        found.append(
            Select(
                node=node,
                base=base,
                base_name=base_name,
                segments=attrpath_segments(doc, attrpath),
                default=node.child_by_field_name("default"),
            )
        )
    return found


# --- bindings -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Binding:
    """`a.b = value;` with its full logical path through enclosing attrsets.

    `container` is the attrset or let that holds the binding; `root` is the outermost
    container of the chain the path is counted from; `root_kind` is "let", "rec" or "attrset".
    `names` are the binding's own attrpath's names, `outer` the binding whose value holds
    `container` (None at the root): `path` is put together from them when asked, so the
    bindings of a file 1,000 attrsets deep hold 1,000 names, not half a million; `depth`
    (the path's length) costs nothing.
    """

    node: Node
    attrpath: Node
    names: tuple[str | None, ...]
    value: Node
    container: Node
    root: Node
    outer: Binding | None = field(default=None, repr=False, compare=False)
    depth: int = 0

    @property
    def path(self) -> tuple[str | None, ...]:
        if self.outer is None:
            return self.names
        parts = []
        binding: Binding | None = self
        while binding is not None:
            parts.append(binding.names)
            binding = binding.outer
        return tuple(name for names in reversed(parts) for name in names)

    @property
    def root_kind(self) -> str:
        return {
            "let_expression": "let",
            "rec_attrset_expression": "rec",
            "let_attrset_expression": "let",
        }.get(self.root.type, "attrset")

    @property
    def dotted(self) -> str:
        return ".".join(p if p is not None else "${...}" for p in self.path)


def _binding_set(container: Node) -> Node | None:
    return next((c for c in container.named_children if c.type == "binding_set"), None)


def _attrsets_of_value(value: Node) -> list[Node]:
    """The attrsets a binding's value is, directly or as an operand of `//` or inside parentheses."""
    found, stack = [], [value]
    while stack:
        node = stack.pop()
        if node.type in ATTRSET_TYPES:
            found.append(node)
        elif node.type == "parenthesized_expression":
            stack.extend(node.named_children)
        elif node.type == "binary_expression":
            operator = node.child_by_field_name("operator")
            if operator is not None and operator.type == "//":
                stack.extend(c for c in (node.child_by_field_name("left"), node.child_by_field_name("right")) if c)
    return found


def bindings(doc: Document) -> list[Binding]:
    """Every `path = value;` binding, with paths counted through nested and `//`-merged attrsets.

    One pass over the containers from the outside in: an attrset that is a binding's value (through
    parentheses and `//`) continues that binding's path. No climb from a node to its parents (each
    a walk down from the root in tree-sitter: quadratic on `{ a0 = 1; } // { a1 = 1; } // …`).
    """
    found: list[tuple[int, int, Binding]] = []
    owners: dict[int, tuple[Binding, Node]] = {}  # attrset id -> the binding (and its root) its value continues
    held: set[int] = set()  # binding sets whose container was seen
    container: Node | None
    binding_set: Node | None
    types = BINDING_CONTAINERS + (("binding_set",) if doc.root.has_error else ())  # ERROR nodes hold sets too
    for node in walk(doc.root, *types):
        if node.type == "binding_set":
            if node.id in held:
                continue
            container, binding_set = doc.ancestry.parent(node), node  # a binding set in an ERROR node
            if container is None:
                continue
            outer, root = None, container
        else:
            container, binding_set = node, _binding_set(node)
            outer, root = owners.get(node.id, (None, node)) if node.type in ATTRSET_TYPES else (None, node)
            if binding_set is None:
                continue
            held.add(binding_set.id)
        above = outer.depth if outer is not None else 0
        for entry in binding_set.named_children:
            if entry.type != "binding":
                continue
            attrpath = entry.child_by_field_name("attrpath")
            value = entry.child_by_field_name("expression")
            if attrpath is None or value is None:
                continue
            names = tuple(s.name for s in attrpath_segments(doc, attrpath))
            binding = Binding(entry, attrpath, names, value, container, root, outer, above + len(names))
            found.append((entry.start_byte, len(found), binding))
            kind = value.type
            if kind in ATTRSET_TYPES:
                owners[value.id] = (binding, root)
            elif kind == "parenthesized_expression" or kind == "binary_expression":
                for attrset in _attrsets_of_value(value):
                    owners[attrset.id] = (binding, root)
    found.sort()  # source order (an inner container's bindings were found after all of the outer one's)
    return [binding for _, _, binding in found]


def bindings_spelling(doc: Document, names) -> list[Binding]:
    """The bindings whose attrpath has an identifier segment spelling one of `names` (`config.cudaCapabilities`
    for "cudaCapabilities"), in source order, found from a byte search for each name and a climb from each
    place (not a walk of the file): a reader needing a handful of bindings pays for those bindings. (One
    regular expression for all names scans slower than these searches: 0.49 s against 0.29 s for the
    facts of 1,804 recipes.) Parents come from `doc.ancestry`; each container's path is found once."""
    memo: dict[int, tuple[tuple, Node]] = {}
    found: dict[int, Binding] = {}
    ranges = places_spelling(doc.data, [name.encode("utf-8", "surrogateescape") for name in names])
    ancestry = doc.ancestry  # its `parent` is a table lookup, not tree-sitter's walk from the root
    for (start, end), node in zip(ranges, doc.ancestry.locate(ranges)):
        if node.start_byte != start or node.end_byte != end or node.type != "identifier":
            continue  # the identifier spelling the name exactly, no more
        attrpath = ancestry.parent(node)
        if attrpath is None or attrpath.type != "attrpath":
            continue
        binding = ancestry.parent(attrpath)
        if binding is None or binding.type != "binding" or binding.id in found:
            continue
        value = binding.child_by_field_name("expression")
        container = _container_of(doc, binding)
        if value is None or container is None or binding.child_by_field_name("attrpath") != attrpath:
            continue
        prefix, root = _prefix_and_root(doc, container, memo)
        path = prefix + tuple(s.name for s in attrpath_segments(doc, attrpath))
        found[binding.id] = Binding(binding, attrpath, path, value, container, root, None, len(path))
    return sorted(found.values(), key=lambda b: b.node.start_byte)


def _container_of(doc: Document, binding: Node) -> Node | None:
    """The attrset or let holding `binding`."""
    binding_set = doc.ancestry.parent(binding)
    if binding_set is None or binding_set.type != "binding_set":
        return None
    return doc.ancestry.parent(binding_set)


def _attrset_parent_binding(doc: Document, container: Node) -> Node | None:
    """The binding whose value is `container`, directly or as an operand of `//` or inside parentheses."""
    node = container
    while (above := doc.ancestry.parent(node)) is not None:
        if above.type == "parenthesized_expression":
            node = above
            continue
        if above.type == "binary_expression":
            operator = above.child_by_field_name("operator")
            if operator is None or operator.type != "//":
                return None
            node = above
            continue
        if above.type == "binding" and above.child_by_field_name("expression") == node:
            return above
        return None
    return None


def _prefix_and_root(doc: Document, container: Node, memo: dict) -> tuple[tuple, Node]:
    """The path of the bindings around `container` and the outermost container it is counted from; climbed
    without recursion, each container's answer remembered (a file 8,000 attrsets deep costs 8,000 steps)."""
    chain: list[tuple[Node, Node | None]] = []  # (container, the binding whose value it is), innermost first
    current: Node | None = container
    while current is not None and current.id not in memo:
        outer = _attrset_parent_binding(doc, current) if current.type in ATTRSET_TYPES else None
        chain.append((current, outer))
        current = _container_of(doc, outer) if outer is not None else None
    prefix, root = memo[current.id] if current is not None else ((), None)
    for node, outer in reversed(chain):
        if outer is None or root is None:
            prefix, root = (), node
        else:
            prefix = prefix + tuple(s.name for s in attrpath_segments(doc, outer.child_by_field_name("attrpath")))
        memo[node.id] = (prefix, root)
    return memo[container.id]


def find_bindings(doc: Document, dotted: str, within: Node | None = None) -> list[Binding]:
    """Bindings whose full path is `dotted` (e.g. "meta.longDescription"), optionally under `within`."""
    wanted = tuple(dotted.split("."))
    return [
        b
        for b in bindings(doc)
        if b.depth == len(wanted) and b.path == wanted
        and (within is None or within.start_byte <= b.node.start_byte < within.end_byte)
    ]


# --- functions, formals, inherit, with ---------------------------------------------------


@dataclass(frozen=True)
class Formal:
    node: Node
    name_node: Node
    name: str
    default: Node | None


@dataclass(frozen=True)
class Function:
    """A lambda: `x: body`, `{ a, b ? 1, ... }: body`, or either with an `@` pattern."""

    node: Node
    formals: tuple[Formal, ...]
    has_formals: bool
    ellipsis: bool
    at_name: str | None
    at_node: Node | None
    body: Node | None

    @property
    def names(self) -> tuple[str, ...]:
        bound = tuple(f.name for f in self.formals)
        return bound + ((self.at_name,) if self.at_name else ())


def functions(doc: Document) -> list[Function]:
    found = []
    for node in walk(doc.root, "function_expression"):
        formals_node = node.child_by_field_name("formals")
        formals = []
        ellipsis = False
        if formals_node is not None:
            ellipsis = formals_node.child_by_field_name("ellipses") is not None
            for formal in formals_node.children_by_field_name("formal"):
                name_node = formal.child_by_field_name("name")
                if name_node is None or name_node.is_missing:
                    continue
                formals.append(
                    Formal(formal, name_node, doc.text(name_node).decode(), formal.child_by_field_name("default"))
                )
        universal = node.child_by_field_name("universal")
        found.append(
            Function(
                node=node,
                formals=tuple(formals),
                has_formals=formals_node is not None,
                ellipsis=ellipsis,
                at_name=doc.text(universal).decode() if universal is not None else None,
                at_node=universal,
                body=node.child_by_field_name("body"),
            )
        )
    return found


@dataclass(frozen=True)
class Inherit:
    """`inherit a b;` or `inherit (source) a b;` with each inherited name and its node."""

    node: Node
    source: Node | None
    names: tuple[Segment, ...]


def inherits(doc: Document) -> list[Inherit]:
    found = []
    for node in walk(doc.root, "inherit", "inherit_from"):
        attrs = node.child_by_field_name("attrs")
        names = tuple(Segment(c, name_of(doc, c)) for c in attrs.children_by_field_name("attr")) if attrs else ()
        found.append(Inherit(node, node.child_by_field_name("expression"), names))
    return found


@dataclass(frozen=True)
class With:
    node: Node
    environment: Node | None  # None only in a tree tree-sitter recovered from an error
    body: Node | None


def withs(doc: Document) -> list[With]:
    return [
        With(n, n.child_by_field_name("environment"), n.child_by_field_name("body"))
        for n in walk(doc.root, "with_expression")
    ]


# --- strings ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StringPart:
    """A piece of a string: "literal" (raw fragment), "escape" or "interpolation"."""

    kind: str
    node: Node


@dataclass(frozen=True)
class NixString:
    node: Node
    indented: bool
    parts: tuple[StringPart, ...]

    def literals(self) -> tuple[Node, ...]:
        return tuple(p.node for p in self.parts if p.kind == "literal")


_PART_KINDS = {"string_fragment": "literal", "escape_sequence": "escape", "dollar_escape": "escape", "interpolation": "interpolation"}


def as_string(node: Node) -> NixString | None:
    """The string view of a string node (None for anything else)."""
    if node.type not in STRING_TYPES:
        return None
    parts: list[StringPart] = []
    for child in node.named_children:
        kind = _PART_KINDS.get(child.type)
        if kind is None:
            continue
        if kind == "literal" and parts and parts[-1].node.type == "dollar_escape" and child.end_byte - child.start_byte == 1:
            # tree-sitter-nix 0.1.0 splits `\$` and `''$` into a dollar_escape (`\`, `''`) and a
            # one-byte `$` fragment; that `$` belongs to the escape, it is not literal text to edit.
            kind = "escape"
        parts.append(StringPart(kind, child))
    return NixString(node, node.type == "indented_string_expression", tuple(parts))


def strings(doc: Document, within: Node | None = None) -> list[NixString]:
    """Every string literal (double-quoted and indented), including attrpath keys like `"a b" = 1;`."""
    return [s for s in (as_string(n) for n in walk(within or doc.root, *STRING_TYPES)) if s is not None]


def string_value(doc: Document, node: Node) -> bytes | None:
    """The raw bytes of a string with no interpolations and no escapes (None otherwise)."""
    string = as_string(node)
    if string is None or any(p.kind != "literal" for p in string.parts):
        return None
    return b"".join(doc.text(p.node) for p in string.parts)


# --- overrideAttrs ------------------------------------------------------------------------


@dataclass(frozen=True)
class OverrideAttrs:
    """`x.overrideAttrs (old: { ... })`: the returned attrset and the name of the old-attrs parameter."""

    node: Node
    attrset: Node
    old_name: str | None


def override_attrs(doc: Document) -> list[OverrideAttrs]:
    found = []
    for node in walk(doc.root, "apply_expression"):
        function = unwrap(node.child_by_field_name("function"))
        if function is None or function.type != "select_expression":
            continue
        names = attrpath_segments(doc, function.child_by_field_name("attrpath"))
        if not names or names[-1].name != "overrideAttrs":
            continue
        argument = unwrap(node.child_by_field_name("argument"))
        old_name = None
        while argument is not None and argument.type == "function_expression":
            universal = argument.child_by_field_name("universal")
            if universal is not None:
                old_name = doc.text(universal).decode()
            argument = unwrap(argument.child_by_field_name("body"))
        if argument is not None and argument.type in ATTRSET_TYPES:
            found.append(OverrideAttrs(node, argument, old_name))
    return found


# --- fetchers -----------------------------------------------------------------------------

FETCHER_NAMES = frozenset(
    {"fetchTarball", "fetchurl", "fetchzip", "fetchFromGitHub", "fetchgit", "fetchGit"}
)
_FETCHER_NEEDLES = tuple(sorted(name.encode() for name in FETCHER_NAMES))


@dataclass(frozen=True)
class FetcherCall:
    """A fetcher applied to an attrset (`{ url = ...; rev = ...; }`) or to a bare URL string.

    `args` maps each top-level argument name to its value node; `url`, `rev` and the
    hash nodes are shortcuts into it (for the bare form, `url` is the string argument).
    """

    node: Node
    function: str
    form: str
    args: dict
    url: Node | None

    @property
    def rev(self) -> Node | None:
        return self.args.get("rev")

    @property
    def hashes(self) -> dict:
        return {k: v for k, v in self.args.items() if k in ("hash", "sha256", "narHash", "outputHash")}


def _function_name(doc: Document, function: Node | None) -> str | None:
    node = unwrap(function)
    if node is None:
        return None
    if node.type == "variable_expression":
        return doc.text(node).decode("utf-8", "replace")
    if node.type == "select_expression":
        base = node.child_by_field_name("expression")
        spelled = [s.name for s in attrpath_segments(doc, node.child_by_field_name("attrpath"))]
        names = [name for name in spelled if name is not None]
        if len(names) < len(spelled) or base is None:
            return None
        prefix = doc.text(base).decode("utf-8", "replace") if base.type == "variable_expression" else "<expr>"
        return ".".join([prefix] + names)
    return None


def fetcher_calls(doc: Document) -> list[FetcherCall]:
    """Calls of builtins.fetchTarball, fetchTarball, fetchurl, fetchzip, fetchFromGitHub, fetchgit, builtins.fetchGit.

    Found from the places the file spells a fetcher's name (a byte search, then
    a climb to the enclosing application), not by visiting every node: a call's
    function always spells its name. Remembered per document: a step's survey
    and its plan both ask for them.
    """
    if "fetcher_calls" in doc.memo:
        return list(doc.memo["fetcher_calls"])
    applications = {}
    climbed: dict[int, Node | None] = {}  # node id -> the application above it (each climb step done once)
    ancestry = doc.ancestry  # its `parent` is a table lookup, not tree-sitter's walk from the root
    for spelling in doc.ancestry.locate(places_spelling(doc.data, _FETCHER_NEEDLES)):  # every name in one sweep
        passed = []
        node: Node | None = spelling
        while node is not None and node.type != "apply_expression" and node.id not in climbed:
            passed.append(node.id)
            node = ancestry.parent(node)
        if node is not None and node.type != "apply_expression":
            node = climbed[node.id]
        climbed.update((key, node) for key in passed)
        if node is not None:
            applications[node.id] = node
    found = []
    for node in sorted(applications.values(), key=_preorder):
        called = _function_name(doc, node.child_by_field_name("function"))
        if called is None or called.rsplit(".", 1)[-1] not in FETCHER_NAMES:
            continue
        name = called
        argument = unwrap(node.child_by_field_name("argument"))
        if argument is None:
            continue
        if argument.type in STRING_TYPES:
            found.append(FetcherCall(node, name, "url", {"url": argument}, argument))
        elif argument.type in ("attrset_expression", "rec_attrset_expression"):
            args = {}
            binding_set = _binding_set(argument)
            for binding in binding_set.named_children if binding_set is not None else ():
                if binding.type != "binding":
                    continue
                segments = attrpath_segments(doc, binding.child_by_field_name("attrpath"))
                if len(segments) == 1 and segments[0].name is not None:
                    args[segments[0].name] = binding.child_by_field_name("expression")
            found.append(FetcherCall(node, name, "attrset", args, args.get("url")))
    doc.memo["fetcher_calls"] = tuple(found)
    return found
