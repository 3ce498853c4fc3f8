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

`newly_unbound(before, after, edits)` is the check every edit goes through: a reference
that a binder (or a `with`) reached before the edits and nothing reaches after them, or a
new reference to a name nothing binds, is an undefined variable Nix would reject. Free
names a file already had are not new (a recipe may name what its caller provides).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from pinshift.syntax.attrnames import static_name
from pinshift.syntax.document import Document
from pinshift.syntax.parse_rules import inside_literal_text
from pinshift.syntax.queries import name_of, nodes_spelling, walk

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
    """The binding of `name` in a let / rec: a first attrpath segment or an inherited name (`${"a"}` too)."""
    kind = "let" if container.type == "let_expression" else "rec"
    binding_set = next((c for c in container.named_children if c.type == "binding_set"), None)
    if binding_set is None:
        return None
    wanted = name.encode("utf-8", "surrogateescape")
    for binding in binding_set.named_children:
        if binding.type == "binding":
            attrpath = binding.child_by_field_name("attrpath")
            first = attrpath.child_by_field_name("attr") if attrpath is not None else None
            if first is not None and static_name(doc.data, first) == wanted:
                return Binder(kind, container, first)
        elif binding.type in ("inherit", "inherit_from"):
            attrs = binding.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                if static_name(doc.data, attr) == wanted:
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


# --- references an edit leaves unbound ---------------------------------------------------

# What Nix 2.8's global scope binds without `builtins.` (every other builtin is `__name`).
NIX_GLOBALS = frozenset(
    "abort baseNameOf builtins derivation derivationStrict dirOf false fetchGit fetchMercurial fetchTarball "
    "fetchTree fromTOML import isNull map null placeholder removeAttrs scopedImport throw toString true".split()
)
# `or` is missing on purpose: Nix reads `f or` as `f` applied to a variable named `or`
_KEYWORDS = frozenset({"if", "then", "else", "assert", "with", "let", "in", "rec", "inherit"})
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_'-]*")
_UNDEFINED = ("undefined variable '{name}': nothing in the file binds it "
              "(take it as a function argument, or use a name that is bound)")
_NAME_BYTE = re.compile(rb"[A-Za-z0-9_'-]")


def is_nix_global(name: str) -> bool:
    """Whether Nix itself binds `name` (`true`, `map`, `builtins`, `__typeOf`, ...)."""
    return name in NIX_GLOBALS or name.startswith("__")


@dataclass(frozen=True)
class Reference:
    """A use of a name: the identifier of a variable or of a plain `inherit name;`, and its binder."""

    node: Node
    binder: Binder

    @property
    def free(self) -> bool:
        return self.binder.kind == "free"


def references_to(doc: Document, name: str) -> list[Reference]:
    """Every reference spelling `name`, in source order, found from a byte search (not a walk of the file)."""
    spelled = name.encode("utf-8", "surrogateescape")
    found = []
    for node in nodes_spelling(doc, spelled):
        parent = node.parent
        if node.type != "identifier" or parent is None or doc.text(node) != spelled:
            continue
        if parent.type == "variable_expression":
            found.append(Reference(node, binder_of(doc, parent)))
        elif parent.type == "inherited_attrs" and parent.parent is not None and parent.parent.type == "inherit":
            found.append(Reference(node, inherited_binder(doc, parent.parent, node)))
    return found


def referenced_names(doc: Document, node: Node) -> set[str]:
    """The names of every variable and plain `inherit name;` inside `node`."""
    variables = (v for v in walk(node, "variable_expression") if v.end_byte > v.start_byte)
    names = {doc.text(v).decode("utf-8", "surrogateescape") for v in variables}
    for attrs in walk(node, "inherited_attrs"):
        if attrs.parent is not None and attrs.parent.type == "inherit":
            names.update(doc.text(a).decode("utf-8", "surrogateescape") for a in attrs.children_by_field_name("attr")
                         if a.type == "identifier" and not a.is_missing)  # `inherit;` holds a MISSING one
    return names


def _word_range(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to whole names at both ends (an edit beside a name changes that name)."""
    while start > 0 and _NAME_BYTE.match(data, start - 1):
        start -= 1
    while end < len(data) and _NAME_BYTE.match(data, end):
        end += 1
    return start, end


def _around(doc: Document, start: int, end: int) -> Node:
    """The smallest node holding bytes [start, end) once surrounding whitespace is left out."""
    text = doc.data[start:end]
    start += len(text) - len(text.lstrip())
    end = max(start, end - (len(text) - len(text.rstrip())))
    return doc.root.descendant_for_byte_range(start, end) or doc.root


def _candidate_names(before: Document, after: Document, edits: Sequence) -> set[str]:
    """Names whose references the edits can have unbound.

    The names in the bytes each edit removed and wrote (with any name they touch), and every
    name used inside the smallest node around each edit, before and after; and the same for the
    ranges tree-sitter found re-structured by the re-parse (`after.changed`: a `rec` or `with`
    removed, a comment that now swallows a function's header, a bracket that moves bindings).
    """
    ranges = [(before, (edit.start, edit.end)) for edit in edits]
    if after.changed is not None:
        ranges += [(after, r) for r in after.changed]
    else:
        shift = 0
        for edit in edits:
            start = edit.start + shift
            ranges.append((after, (start, start + len(edit.replacement))))
            shift += len(edit.replacement) - (edit.end - edit.start)
    names: set[str] = set()
    for doc, (first, last) in ranges:
        first, last = _word_range(doc.data, first, last)
        names.update(m.group().decode("utf-8", "surrogateescape") for m in _NAME.finditer(doc.data, first, last))
        names |= referenced_names(doc, _around(doc, first, last))
    return names - _KEYWORDS


def _only_literal_text(before: Document, after: Document, edits: Sequence) -> bool:
    """Whether every edit only rewrote literal string text, before and after, and nothing else re-structured."""
    if after.changed is None:
        return False
    return all(inside_literal_text(before, e.start, e.end) for e in edits) and all(
        inside_literal_text(after, start, end) for start, end in after.changed
    )


class _Shift:
    """Where a byte range of the old bytes sits after sorted, non-overlapping edits (None if edited)."""

    def __init__(self, edits: Sequence):
        self.edits = list(edits)
        self.ends = [e.end for e in self.edits]
        self.deltas = [0]
        for edit in self.edits:
            self.deltas.append(self.deltas[-1] + len(edit.replacement) - (edit.end - edit.start))

    def map(self, start: int, end: int) -> int | None:
        index = bisect.bisect_right(self.ends, start)  # edits ending at or before `start` lie before it
        if index < len(self.edits) and self.edits[index].start < end:
            return None  # the next edit starts inside the range
        return start + self.deltas[index]


@dataclass(frozen=True)
class Unbound:
    """A reference of the edited document that nothing binds: `offset` in it, and why it matters."""

    offset: int
    message: str


def newly_unbound(before: Document, after: Document, edits: Sequence, names: set[str] | None = None) -> list[Unbound]:
    """References the sorted, non-overlapping `edits` (which made `after` from `before`) leave unbound.

    A reference bound before (by a formal, argument, let, rec or with) and free after, or a new
    reference to a name that is neither bound, nor a Nix global, nor already free in `before`.
    Only names the edits can have affected are looked at (`_candidate_names`), unless `names`
    says which (tests pass every name of both files to check that choice).
    """
    if names is None and _only_literal_text(before, after, edits):
        return []
    shift = _Shift(edits)
    found = []
    for name in sorted(_candidate_names(before, after, edits) if names is None else names):
        new = [r for r in references_to(after, name) if r.free]
        if not new:
            continue
        old = references_to(before, name)
        moved = {shift.map(r.node.start_byte, r.node.end_byte): r for r in old}
        already_free = any(r.free for r in old)
        for reference in new:
            previous = moved.get(reference.node.start_byte)
            if previous is not None and not previous.free:
                found.append(Unbound(reference.node.start_byte, _lost_binder(before, name, previous.binder)))
            elif previous is None and not already_free and not is_nix_global(name):
                found.append(Unbound(reference.node.start_byte, _UNDEFINED.format(name=name)))
    return sorted(found, key=lambda u: u.offset)


def _lost_binder(before: Document, name: str, binder: Binder) -> str:
    node = binder.name_node if binder.name_node is not None else binder.scope
    line, column = before.position(node.start_byte)
    what = {"formal": "function argument", "argument": "function argument", "with": "`with`"}
    what = what.get(binder.kind, binder.kind)
    after = f"it would refer to Nix's builtin '{name}'" if is_nix_global(name) else "undefined variable"
    return f"'{name}' would no longer be bound by the {what} at {line}:{column} ({after})"
