"""Package sets a Nix file builds itself, and the attributes it defines on them.

`nixpkgs_pinned.python3Packages.torch` reads `python3Packages` from whatever
`nixpkgs_pinned` is. When the file builds that set itself, with an overlay that says
`python3Packages = prev.python3Packages.override { … };`, the attribute is *defined
here*, and renaming only the select would read another attribute and bypass the
definition. This module finds those definitions; it edits nothing.

A *layer* is an attrset whose bindings become attributes of a set:

  - an overlay's result, `final: prev: { … }`, for the set built by
    `import SRC { overlays = [ … ]; }`, `SET.extend OVERLAY` or `SET.appendOverlays [ … ]`.
    The overlay is written in the list, or is a name a `let`/`rec` binds (`overlays = [ myOverlay ]`),
    `inherit overlays;`, a list joined with `++`, `lib.composeManyExtensions [ … ]`/`composeExtensions a b`;
  - packageOverrides' result, `config.packageOverrides = pkgs: { … };` (or `config = { packageOverrides = …; }`);
  - the right-hand side of `SET // { … }`, and an attrset literal selected from directly.

A result may be wrapped in `let … in`, `with …;`, `if … then … else …` (both branches),
`lib.optionalAttrs COND { … }`, `rec { }` or `//`.

`PackageSets(doc).layers(expr)` follows an expression to the layers of the set it denotes:
through parentheses, `let`/`rec` bindings (`let ps = nixpkgs_pinned; in ps.python3Packages`),
`let … in`, `//`, `.extend`, `import … { overlays … }`, and the arguments of overlay and
packageOverrides functions (`final`, `prev`, `pkgs`: the set being built, so
`prev.python3Packages` inside an overlay reaches that overlay's definition). Anything else,
e.g. the file's own function arguments, `import ./overlay.nix` or
`inputs.nixpkgs.legacyPackages.x86_64-linux`, comes from the caller or another file and has no
layers here.

Example:
    let nixpkgs_pinned = import src { overlays = [ (final: prev: { python3Packages = …; }) ]; };
    in nixpkgs_pinned.python3Packages.torch
    -> definitions(<nixpkgs_pinned>, "python3Packages") == [the `python3Packages = …;` binding (an overlay)]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tree_sitter import Node

from pinshift.syntax.document import Document
from pinshift.syntax.queries import name_of, nodes_spelling, unwrap
from pinshift.syntax.scopes import Binder, binder_of, inherited_binder
from pinshift.syntax.stackless import Call, run

_ATTRSETS = ("attrset_expression", "rec_attrset_expression")
_COMBINATORS = ("composeManyExtensions", "composeExtensions", "optionals", "optional")
KIND_TEXT = {"overlay": "in an overlay", "packageOverrides": "in packageOverrides", "attrset": "in an attrset"}


@dataclass(frozen=True)
class Layer:
    """An attrset expression whose bindings become attributes of a set; kind overlay, packageOverrides or attrset.

    `elsewhere`: the set is built by another file (this file *is* an overlay, a nixpkgs config, a module's
    `nixpkgs.overlays`), so other files read what this layer defines.
    """

    node: Node
    kind: str
    elsewhere: bool = False


@dataclass(frozen=True)
class Definition:
    """`name = …;` (or `inherit … name;`) in a layer: `name_node` is the segment that spells the name."""

    node: Node
    name_node: Node
    layer: Layer

    @property
    def inherited(self) -> bool:
        return self.node.type in ("inherit", "inherit_from")

    @property
    def described(self) -> str:
        return KIND_TEXT.get(self.layer.kind, self.layer.kind)


@dataclass
class _Construction:
    """One set the file builds: the overlays and packageOverrides functions applied, and the set they extend."""

    site: Node
    overlays: list[Node] = field(default_factory=list)
    overrides: list[Node] = field(default_factory=list)
    base: Node | None = None
    opaque: list[Node] = field(default_factory=list)  # overlays this file does not show (`import ./overlay.nix`)


def bound_value(doc: Document, binder: Binder) -> Node | None:
    """The value a `let`/`rec` binder binds: `x` of `name = x;` (None for `inherit` and dotted paths)."""
    if binder.kind not in ("let", "rec") or binder.name_node is None:
        return None
    attrpath = doc.ancestry.parent(binder.name_node)
    binding = doc.ancestry.parent(attrpath) if attrpath is not None else None
    if attrpath is None or attrpath.type != "attrpath" or binding is None or binding.type != "binding":
        return None
    if len(attrpath.children_by_field_name("attr")) != 1:
        return None
    return binding.child_by_field_name("expression")


def _callee_name(doc: Document, function: Node | None) -> str | None:
    """The last name of a called function: `lib.composeManyExtensions` -> composeManyExtensions."""
    function = unwrap(function)
    while function is not None and function.type == "apply_expression":
        function = unwrap(function.child_by_field_name("function"))
    if function is None:
        return None
    if function.type == "variable_expression":
        return doc.text(function).decode("utf-8", "surrogateescape")
    if function.type == "select_expression":
        attrpath = function.child_by_field_name("attrpath")
        attrs = attrpath.children_by_field_name("attr") if attrpath is not None else []
        return name_of(doc, attrs[-1]) if attrs else None
    return None


def _is_operator(node: Node, operator: str) -> bool:
    found = node.child_by_field_name("operator")
    return node.type == "binary_expression" and found is not None and found.type == operator


def layer_definitions(doc: Document, layer: Layer, name: str) -> list[Definition]:
    """The bindings of `layer` whose first attrpath segment is `name`, and `inherit`s of `name`."""
    found = []
    binding_set = next((c for c in layer.node.named_children if c.type == "binding_set"), None)
    for binding in binding_set.named_children if binding_set is not None else ():
        if binding.type == "binding":
            attrpath = binding.child_by_field_name("attrpath")
            first = attrpath.child_by_field_name("attr") if attrpath is not None else None
            if first is not None and name_of(doc, first) == name:
                found.append(Definition(binding, first, layer))
        elif binding.type in ("inherit", "inherit_from"):
            attrs = binding.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                if name_of(doc, attr) == name:
                    found.append(Definition(binding, attr, layer))
    return found


class PackageSets:
    """The sets one document builds (overlays, packageOverrides, `.extend`), indexed once per document."""

    def __init__(self, doc: Document):
        self.doc = doc
        self._by_site: dict[int, list[_Construction]] = {}
        self._by_function: dict[int, list[_Construction]] = {}
        self._sets: dict[tuple[int, ...], tuple[tuple[Layer, ...], tuple[Node, ...]]] = {}  # see `_shared`
        self._definitions: dict[tuple[tuple[int, ...], str], tuple[Definition, ...]] = {}
        self._index()

    # --- public ---------------------------------------------------------------------------

    def layers(self, expr: Node | None) -> list[Layer]:
        """The layers of the set `expr` denotes, nearest first (empty when it comes from elsewhere)."""
        return list(self._followed(expr)[0])

    def opaque(self, expr: Node | None) -> list[Node]:
        """Overlays and packageOverrides of the set `expr` denotes whose result this file does not show.

        `overlays = [ (import ./overlay.nix) ]`, `final: prev: import ./python.nix final prev`: they may
        define any attribute, and only another file can tell.
        """
        return list(self._followed(expr)[1])

    def definitions(self, expr: Node | None, name: str) -> list[Definition]:
        """Where this file defines attribute `name` of the set `expr` denotes."""
        key = self._shared(expr)
        if key is not None and (key, name) in self._definitions:
            return list(self._definitions[key, name])
        found = [d for layer in self.layers(expr) for d in layer_definitions(self.doc, layer, name)]
        if key is not None:
            self._definitions[key, name] = tuple(found)
        return found

    def is_set_argument(self, variable: Node) -> bool:
        """Whether a variable is an overlay's `final`/`prev` or packageOverrides' `pkgs` argument."""
        binder = binder_of(self.doc, variable)
        return (binder.kind in ("argument", "formal") and binder.scope is not None
                and binder.scope.id in self._by_function)

    # --- following an expression --------------------------------------------------------

    def _followed(self, expr: Node | None) -> tuple[tuple[Layer, ...], tuple[Node, ...]]:
        """(layers, opaque functions) of the set `expr` denotes, each once, in the order found."""
        key = self._shared(expr)
        if key is not None and key in self._sets:
            return self._sets[key]
        opaque: list[Node] = []
        layers: dict[int, Layer] = {}
        for layer in run(self._layers(expr, "attrset", set(), opaque)):
            layers.setdefault(layer.node.id, layer)
        found = tuple(layers.values()), tuple({node.id: node for node in opaque}.values())
        if key is not None:
            self._sets[key] = found
        return found

    def _shared(self, expr: Node | None) -> tuple[int, ...] | None:
        """For the argument of overlays or packageOverrides (`prev`, `final`, `pkgs`), the sets they build: what
        it denotes is the same in every function of those sets, and is followed once (1,000 overlays that each
        read `prev.x` followed the same 1,000 layers for each). None for anything else."""
        expr = unwrap(expr)
        if expr is None or expr.type != "variable_expression":
            return None
        binder = binder_of(self.doc, expr)
        bound = binder.kind in ("argument", "formal") and binder.scope is not None
        constructions = self._by_function.get(binder.scope.id) if bound and binder.scope else None
        return tuple(id(c) for c in constructions) if constructions else None
    # `_layers`, `_construction_layers` and `_functions` recurse as deep as the file nests (`let in` 1,000
    # times, 1,000 overlays joined by `++`): generators that yield each call they make, run by stackless.run.

    def _layers(self, expr: Node | None, kind: str, seen: set[int], opaque: list[Node]) -> Call[list[Layer]]:
        expr = unwrap(expr)
        if expr is None or expr.id in seen:
            return []
        seen.add(expr.id)
        found = []
        for construction in self._by_site.get(expr.id, ()):
            found += yield self._construction_layers(construction, seen, opaque)
        kind_of = expr.type
        if kind_of in _ATTRSETS:
            found.append(Layer(expr, kind))
        elif kind_of == "let_expression" or kind_of == "with_expression":
            found += yield self._layers(expr.child_by_field_name("body"), kind, seen, opaque)
        elif kind_of == "if_expression":
            found += yield self._layers(expr.child_by_field_name("consequence"), kind, seen, opaque)
            found += yield self._layers(expr.child_by_field_name("alternative"), kind, seen, opaque)
        elif _is_operator(expr, "//"):
            found += yield self._layers(expr.child_by_field_name("right"), kind, seen, opaque)
            found += yield self._layers(expr.child_by_field_name("left"), kind, seen, opaque)
        elif kind_of == "variable_expression":
            binder = binder_of(self.doc, expr)
            if binder.kind in ("let", "rec"):
                found += yield self._layers(bound_value(self.doc, binder), kind, seen, opaque)
            elif binder.kind in ("argument", "formal") and binder.scope is not None:
                for construction in self._by_function.get(binder.scope.id, ()):
                    found += yield self._construction_layers(construction, seen, opaque)
        elif kind_of == "apply_expression" and _callee_name(self.doc, expr) == "optionalAttrs":
            found += yield self._layers(expr.child_by_field_name("argument"), kind, seen, opaque)
        return found

    def _construction_layers(self, construction: _Construction, seen: set[int], opaque: list[Node]) -> Call[list[Layer]]:
        found: list[Layer] = []
        elsewhere = construction.site.type != "apply_expression"
        for depth, kind, functions in ((2, "overlay", construction.overlays),
                                       (1, "packageOverrides", construction.overrides)):
            for function in functions:
                if function.id in seen:
                    continue
                seen.add(function.id)
                result = _returned(function, depth)
                returned = yield self._layers(result, kind, seen, opaque)
                if not returned and not (result is not None and result.type == "variable_expression"
                                         and self.is_set_argument(result)):  # `final: prev: prev` adds nothing
                    opaque.append(function)
                found += [replace(layer, elsewhere=True) for layer in returned] if elsewhere else returned
        opaque.extend(construction.opaque)
        if construction.base is not None:
            found += yield self._layers(construction.base, "attrset", seen, opaque)
        return found

    # --- the index ------------------------------------------------------------------------

    def _construction(self, site: Node) -> _Construction:
        constructions = self._by_site.setdefault(site.id, [])
        if not constructions:
            constructions.append(_Construction(site))
        return constructions[0]

    def _index(self) -> None:
        for node in nodes_spelling(self.doc, b"overlays"):
            value, args = self._named_value(node, "overlays")
            if value is not None and args is not None:
                self._add_overlays(self._construction(_site(self.doc, args)), value)
        for node in nodes_spelling(self.doc, b"packageOverrides"):
            value, args = self._named_value(node, "packageOverrides", under="config")
            if value is None or args is None:
                continue
            construction = self._construction(_site(self.doc, args))
            for function in run(self._functions(value, set(), construction.opaque)):
                construction.overrides.append(function)
                self._by_function.setdefault(function.id, []).append(construction)
        for method in (b"extend", b"appendOverlays"):
            for node in nodes_spelling(self.doc, method):
                self._index_method(node)
        self._index_overlay_file()

    def _index_overlay_file(self) -> None:
        """A file that is an overlay (`final: prev: { … }`) or a list of them, for a set built elsewhere."""
        root = self.doc.root
        top = unwrap(root.child_by_field_name("expression") or next(
            (c for c in root.named_children if c.type != "comment"), None))
        if top is None:
            return
        elements = [unwrap(e) for e in top.named_children if e.type != "comment"] if top.type == "list_expression" else [top]
        overlays = [e for e in elements if _overlay_shaped(e)]
        if overlays:
            self._add_overlays(self._construction(top), top if top.type == "list_expression" else overlays[0])

    def _named_value(self, node: Node, name: str, under: str | None = None) -> tuple[Node | None, Node | None]:
        """(value, arguments attrset) of `name = value;` / `inherit name;` in an attrset (also `under.name`)."""
        ancestry = self.doc.ancestry
        holder = ancestry.parent(node)
        if node.type != "identifier" or self.doc.text(node) != name.encode() or holder is None:
            return None, None
        above = ancestry.parent(holder)
        if holder.type == "inherited_attrs" and above is not None and above.type == "inherit":
            value = bound_value(self.doc, inherited_binder(self.doc, above, node))
            return value, _container(self.doc, above)
        if holder.type != "attrpath" or above is None or above.type != "binding":
            return None, None
        attrs = [name_of(self.doc, a) for a in holder.children_by_field_name("attr")]
        if attrs[-1] != name:
            return None, None
        binding = above
        container = _container(self.doc, binding)
        if under is not None and attrs == [name] and container is not None:
            outer = ancestry.parent(container)
            while outer is not None and outer.type == "parenthesized_expression":
                outer = ancestry.parent(outer)
            outer_path = outer.child_by_field_name("attrpath") if outer is not None and outer.type == "binding" else None
            if outer is not None and outer_path is not None:
                outer_attrs = [name_of(self.doc, a) for a in outer_path.children_by_field_name("attr")]
                if outer_attrs == [under] and unwrap(outer.child_by_field_name("expression")) == container:
                    container = _container(self.doc, outer)
        return binding.child_by_field_name("expression"), container

    def _add_overlays(self, construction: _Construction, value: Node | None) -> None:
        for function in run(self._functions(value, set(), construction.opaque)):
            construction.overlays.append(function)
            self._by_function.setdefault(function.id, []).append(construction)
            inner = unwrap(function.child_by_field_name("body"))
            if inner is not None and inner.type == "function_expression":
                self._by_function.setdefault(inner.id, []).append(construction)

    def _index_method(self, node: Node) -> None:
        """`SET.extend OVERLAY` / `SET.appendOverlays [ … ]`: a set built on SET."""
        ancestry = self.doc.ancestry
        attrpath = ancestry.parent(node)
        select = ancestry.parent(attrpath) if attrpath is not None else None
        if node.type != "identifier" or attrpath is None or attrpath.type != "attrpath" or select is None:
            return
        if select.type != "select_expression" or attrpath.children_by_field_name("attr")[-1] != node:
            return
        apply = ancestry.parent(select)
        while apply is not None and apply.type == "parenthesized_expression":
            apply = ancestry.parent(apply)
        if apply is None or apply.type != "apply_expression" or unwrap(apply.child_by_field_name("function")) != select:
            return
        construction = self._construction(apply)
        if len(attrpath.children_by_field_name("attr")) == 1:
            construction.base = select.child_by_field_name("expression")
        self._add_overlays(construction, apply.child_by_field_name("argument"))

    def _functions(self, expr: Node | None, seen: set[int], opaque: list[Node]) -> Call[list[Node]]:
        """The functions an overlay (or overlays) expression names: in lists, `++`, let names, combinators.

        What names none this file shows (`import ./overlay.nix`, `inputs.x.overlays.default`) goes to `opaque`.
        """
        expr = unwrap(expr)
        if expr is None or expr.id in seen:
            return []
        seen.add(expr.id)
        if expr.type == "function_expression":
            return [expr]
        if expr.type == "variable_expression":
            value = bound_value(self.doc, binder_of(self.doc, expr))
            if value is None:
                opaque.append(expr)
            return (yield self._functions(value, seen, opaque))
        if expr.type == "list_expression":
            found = []
            for element in expr.named_children:
                if element.type != "comment":
                    found += yield self._functions(element, seen, opaque)
            return found
        if _is_operator(expr, "++"):
            left = yield self._functions(expr.child_by_field_name("left"), seen, opaque)
            return left + (yield self._functions(expr.child_by_field_name("right"), seen, opaque))
        callee = _callee_name(self.doc, expr) if expr.type == "apply_expression" else None
        if callee in _COMBINATORS:
            arguments: list[Node | None] = []
            call: Node | None = expr
            while call is not None and call.type == "apply_expression":
                arguments.insert(0, call.child_by_field_name("argument"))
                call = unwrap(call.child_by_field_name("function"))
            if callee in ("optionals", "optional"):
                arguments = arguments[1:]  # the condition
            found = []
            for argument in arguments:
                found += yield self._functions(argument, seen, opaque)
            return found
        opaque.append(expr)
        return []


def _container(doc: Document, binding: Node) -> Node | None:
    """The attrset (or let) that holds a binding or inherit."""
    binding_set = doc.ancestry.parent(binding)
    return doc.ancestry.parent(binding_set) if binding_set is not None and binding_set.type == "binding_set" else None


def _site(doc: Document, args: Node) -> Node:
    """The expression that builds the set: `import SRC ARGS` when ARGS is applied, else ARGS itself."""
    node = args
    parent = doc.ancestry.parent(node)
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, doc.ancestry.parent(parent)
    if parent is not None and parent.type == "apply_expression" and parent.child_by_field_name("argument") == node:
        return parent
    return args


def _overlay_shaped(node: Node | None) -> bool:
    """`final: prev: BODY`: two plain arguments (a Flox recipe's `{ pkgs, ... }:` is not an overlay)."""
    if node is None or node.type != "function_expression":
        return False
    inner = unwrap(node.child_by_field_name("body"))
    return (inner is not None and inner.type == "function_expression"
            and node.child_by_field_name("formals") is None and inner.child_by_field_name("formals") is None)


def _returned(function: Node, depth: int) -> Node | None:
    """What a function of `depth` arguments returns (`final: prev: BODY` -> BODY); None if it takes fewer."""
    node = unwrap(function)
    for _ in range(depth):
        if node is None or node.type != "function_expression":
            return None
        node = unwrap(node.child_by_field_name("body"))
    return node


def definition_read(doc: Document, name: str) -> tuple[Node, Definition] | None:
    """The first select `x.name…` (source order) that reads a definition of `name` made in this file, and that definition.

    `lint` asks this before recommending a rename of `name`: renaming only such a select bypasses the definition.
    """
    sets = None
    for node in nodes_spelling(doc, name.encode()):
        attrpath = doc.ancestry.parent(node)
        select = doc.ancestry.parent(attrpath) if attrpath is not None else None
        if select is None or attrpath is None or attrpath.type != "attrpath" or select.type not in ("select_expression", "has_attr_expression"):
            continue
        if attrpath.child_by_field_name("attr") != node or name_of(doc, node) != name:
            continue
        sets = sets or PackageSets(doc)
        found = sets.definitions(select.child_by_field_name("expression"), name)
        if found:
            return node, found[0]
    return None
