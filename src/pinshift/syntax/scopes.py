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


_KINDS = {"let_expression": "let", "rec_attrset_expression": "rec", "let_attrset_expression": "rec"}


def _names_of_function(doc: Document, function: Node) -> dict[bytes, Binder]:
    """What a function binds: its formals (the first of a name), then its plain or `@` argument."""
    names: dict[bytes, Binder] = {}
    formals = function.child_by_field_name("formals")
    for formal in formals.children_by_field_name("formal") if formals is not None else ():
        identifier = formal.child_by_field_name("name")
        if identifier is not None and not identifier.is_missing:
            names.setdefault(doc.text(identifier), Binder("formal", function, identifier))
    universal = function.child_by_field_name("universal")
    if universal is not None:
        names.setdefault(doc.text(universal), Binder("argument", function, universal))
    return names


def _bindings_of(container: Node) -> list[Node]:
    binding_set = next((c for c in container.named_children if c.type == "binding_set"), None)
    return binding_set.named_children if binding_set is not None else []


def _bound_names(data: bytes, binding: Node) -> list[tuple[bytes, Node]]:
    """The names a binding (its first attrpath segment) or an inherit binds in a let / rec, with their nodes."""
    if binding.type == "binding":
        attrpath = binding.child(0)
        first = attrpath.child(0) if attrpath is not None and attrpath.type == "attrpath" else None
        if first is None:
            return []
        if first.type == "identifier" and not first.is_missing:  # the common case, without static_name
            return [(data[first.start_byte : first.end_byte], first)]
        name = static_name(data, first)
        return [(name, first)] if name is not None else []
    if binding.type in ("inherit", "inherit_from"):
        attrs = binding.child_by_field_name("attrs")
        found = ((static_name(data, attr), attr) for attr in (attrs.children_by_field_name("attr") if attrs else ()))
        return [(name, attr) for name, attr in found if name is not None]
    return []


def _names_of_bindings(doc: Document, container: Node) -> dict[bytes, Binder]:
    """What a let / rec binds: each binding's first attrpath segment and each inherited name (`${"a"}` too)."""
    names: dict[bytes, Binder] = {}
    kind = _KINDS[container.type]
    for binding in _bindings_of(container):
        for name, node in _bound_names(doc.data, binding):
            if name not in names:
                names[name] = Binder(kind, container, node)
    return names


def _binding_of(doc: Document, container: Node, name: bytes) -> Binder | None:
    """The first binding of `name` in a let / rec, read up to it (what a lookup or two needs)."""
    for binding in _bindings_of(container):
        for bound, node in _bound_names(doc.data, binding):
            if bound == name:
                return Binder(_KINDS[container.type], container, node)
    return None


def _inside(node: Node, ancestor: Node | None) -> bool:
    return ancestor is not None and ancestor.start_byte <= node.start_byte and node.end_byte <= ancestor.end_byte


_NO_BINDER = Binder("free", None, None)
_READ_UP_TO = 4  # lookups of a let / rec read up to the name before its names are put in a table


class Scopes:
    """The scopes of one document and the binders of names in them, each worked out once.

    A lookup climbs from a node to the scopes around it (a function, let, rec, or a `with` whose body
    holds it) and asks each what it binds. Every step is remembered: the scope around each node passed,
    the names each scope binds, and the binder of (scope, name) for the scopes passed, so any number of
    lookups is linear in the file (`{ a }: with a; with a; … a` made every lookup climb the whole chain,
    each parent a walk from the root inside tree-sitter: cubic). Parents come from `doc.ancestry`.
    """

    def __init__(self, doc: Document):
        self.doc = doc
        self._around: dict[int, Node | None] = {}  # node id -> the nearest scope around it
        self._names: dict[int, dict[bytes, Binder]] = {}  # scope id -> what it binds
        self._asked: dict[int, int] = {}  # let / rec id -> lookups read up to the name
        self._lexical: dict[tuple[int, bytes], Binder | None] = {}  # (scope id, name) -> its lexical binder
        self._with: dict[int, Node | None] = {}  # scope id -> the nearest `with` at or around it

    def scope_around(self, node: Node) -> Node | None:
        """The nearest function, let, rec or `with` (holding `node` in its body) strictly around `node`."""
        passed = []
        current = node
        ancestry = self.doc.ancestry
        while True:
            known = self._around.get(current.id, current)
            if known is not current:
                found = known
                break
            passed.append(current.id)
            parent = ancestry.parent(current)
            if parent is None or parent.type in _KINDS or parent.type == "function_expression" or (
                parent.type == "with_expression" and _inside(current, parent.child_by_field_name("body"))
            ):
                found = parent
                break
            current = parent
        for key in passed:
            self._around[key] = found
        return found

    def _binds(self, scope: Node, name: bytes) -> Binder | None:
        """What `scope` binds `name` to. A let / rec is read up to the name for its first few lookups
        (a recipe asks one or two), then once whole into a table (a file may ask for each of its names)."""
        names = self._names.get(scope.id)
        if names is None:
            if scope.type in _KINDS:
                asked = self._asked[scope.id] = self._asked.get(scope.id, 0) + 1
                if asked <= _READ_UP_TO:
                    return _binding_of(self.doc, scope, name)
                names = _names_of_bindings(self.doc, scope)
            elif scope.type == "function_expression":
                names = _names_of_function(self.doc, scope)
            else:
                names = {}  # a `with` binds nothing lexically
            self._names[scope.id] = names
        return names.get(name)

    def lexical(self, scope: Node | None, name: bytes) -> Binder | None:
        """The binder of `name` in `scope` or the scopes around it (None: only a `with`, or nothing)."""
        passed = []
        found = None
        while scope is not None:
            key = (scope.id, name)
            if key in self._lexical:
                found = self._lexical[key]
                break
            passed.append(key)
            found = self._binds(scope, name)
            if found is not None:
                break
            scope = self.scope_around(scope)
        for key in passed:
            self._lexical[key] = found
        return found

    def nearest_with(self, scope: Node | None) -> Node | None:
        """The innermost `with` among `scope` and the scopes around it."""
        passed = []
        found = None
        while scope is not None:
            if scope.id in self._with:
                found = self._with[scope.id]
                break
            passed.append(scope.id)
            if scope.type == "with_expression":
                found = scope
                break
            scope = self.scope_around(scope)
        for key in passed:
            self._with[key] = found
        return found

    def resolve(self, name: str, at: Node, skip: Node | None = None) -> Binder:
        """The binder of `name` as seen from node `at`, not counting `skip` (the let/rec holding an inherit)."""
        wanted = name.encode("utf-8", "surrogateescape")
        scope = self.scope_around(at)
        found = None
        if skip is not None and skip.type in _KINDS:
            inner = scope
            while inner is not None and inner.id != skip.id:  # only scopes below `skip` (none for an inherit)
                found = self._binds(inner, wanted)
                if found is not None:
                    break
                inner = self.scope_around(inner)
            if found is None and inner is not None:
                found = self.lexical(self.scope_around(inner), wanted)
        else:
            found = self.lexical(scope, wanted)
        if found is not None:
            return found
        around = self.nearest_with(scope)
        return Binder("with", around, None) if around is not None else _NO_BINDER


def scopes_of(doc: Document) -> Scopes:
    """The document's `Scopes`, made on first use."""
    found = doc.memo.get("scopes")
    if found is None:
        found = doc.memo["scopes"] = Scopes(doc)
    return found


def resolve(doc: Document, name: str, at: Node, skip: Node | None = None) -> Binder:
    """The binder of `name` as seen from node `at` (not counting `skip`, a let/rec holding an inherit)."""
    return scopes_of(doc).resolve(name, at, skip)


def binder_of(doc: Document, variable: Node) -> Binder:
    """The binder a `variable_expression` refers to."""
    return resolve(doc, doc.text(variable).decode("utf-8", "surrogateescape"), variable)


def inherited_binder(doc: Document, inherit: Node, attr: Node) -> Binder:
    """What a plain `inherit name;` reads: the name looked up around the let/rec/attrset holding it."""
    ancestry = doc.ancestry
    holder = ancestry.parent(inherit)
    container = ancestry.parent(holder) if holder is not None else None
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
    return [r for r in (_reference(doc, node, spelled) for node in nodes_spelling(doc, spelled)) if r is not None]


def _reference(doc: Document, node: Node, spelled: bytes) -> Reference | None:
    """The reference `node` is, if it is the identifier of a variable or of a plain `inherit` spelling `spelled`."""
    ancestry = doc.ancestry
    parent = ancestry.parent(node)
    if node.type != "identifier" or parent is None or doc.text(node) != spelled:
        return None
    if parent.type == "variable_expression":
        return Reference(node, binder_of(doc, parent))
    if parent.type == "inherited_attrs":
        inherit = ancestry.parent(parent)
        if inherit is not None and inherit.type == "inherit":
            return Reference(node, inherited_binder(doc, inherit, node))
    return None


_FEW_NAMES = 16  # up to this many names are each searched for in the bytes; more, in one pass over them


_STARTS_NO_TOKEN_AFTER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_'-")


def _inside_a_word(data: bytes, start: int, end: int) -> bool:
    """Whether bytes [start, end) lie inside a longer run of name bytes that no identifier token can be exactly.

    In a tree without errors an identifier is a whole token, lexed longest first: a name byte right after it
    would have been part of it, and one can start right after a digit (`1v`: an integer, then `v`), a `-`
    (`1-v`) or a `'` (`''s''v`: an indented string, then `v`), never after a letter or `_` (the token before,
    a name, path or URI, would have run on). Only for such a tree.
    """
    return (end < len(data) and data[end] in _NAME_BYTES) or (start > 0 and data[start - 1] in _STARTS_NO_TOKEN_AFTER)


def references_by_name(doc: Document, names: Sequence[str]) -> dict[str, list[Reference]]:
    """`references_to(doc, name)` for each of `names`, in one pass over the file when they are many.

    An edit that rewrote a large part of a file makes every name in it a candidate: a search of the
    whole file for each would be quadratic. Many names are found by one scan for name-like words and
    one sweep of the cursor over them all; the references are the same.
    """
    wanted = {name.encode("utf-8", "surrogateescape"): name for name in names}
    if len(names) <= _FEW_NAMES:  # each name's places found in the bytes, all located in one sweep
        data, words = doc.data, []
        whole = not doc.root.has_error  # then every identifier is a whole token (see _inside_a_word)
        for spelled in wanted:
            start = data.find(spelled) if spelled else -1
            while start >= 0:
                end = start + len(spelled)
                if not (whole and _inside_a_word(data, start, end)):
                    words.append((start, end))
                start = data.find(spelled, end)
        words.sort()
    else:
        words = [(m.start(), m.end()) for m in _NAME.finditer(doc.data) if m.group() in wanted]
    found: dict[str, list[Reference]] = {name: [] for name in names}
    for (start, end), node in zip(words, doc.ancestry.locate(words)):
        reference = _reference(doc, node, doc.data[start:end])
        if reference is not None:
            found[wanted[doc.data[start:end]]].append(reference)
    return found


def referenced_names(doc: Document, node: Node) -> set[str]:
    """The names of every variable and plain `inherit name;` inside `node`."""
    variables = (v for v in walk(node, "variable_expression") if v.end_byte > v.start_byte)
    names = {doc.text(v).decode("utf-8", "surrogateescape") for v in variables}
    for attrs in walk(node, "inherited_attrs"):
        holder = doc.ancestry.parent(attrs)
        if holder is not None and holder.type == "inherit":
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


def _trimmed(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) without the whitespace around it."""
    text = data[start:end]
    start += len(text) - len(text.lstrip())
    return start, max(start, end - (len(text) - len(text.rstrip())))


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
    for doc in (before, after):
        widened = [_word_range(doc.data, first, last) for owner, (first, last) in ranges if owner is doc]
        for first, last in widened:
            names.update(m.group().decode("utf-8", "surrogateescape") for m in _NAME.finditer(doc.data, first, last))
        around = doc.ancestry.locate([_trimmed(doc.data, first, last) for first, last in widened])
        for node in _outermost(around):  # the smallest node around each edit, once, and none inside another
            names |= referenced_names(doc, node)
    return names - _KEYWORDS


def _outermost(nodes: Sequence[Node]) -> list[Node]:
    """`nodes` without those inside another of them (whose names are that one's too).

    The nodes around 1,000 edits of `lib.a or lib.a or …` each hold the rest of the chain: walking each
    was quadratic (issue 36). Tree nodes nest or are apart, so one sweep in source order finds them.
    """
    found: list[Node] = []
    for node in sorted({node.id: node for node in nodes}.values(), key=lambda n: (n.start_byte, -n.end_byte)):
        if found and node.end_byte <= found[-1].end_byte and node.start_byte >= found[-1].start_byte:
            continue
        found.append(node)
    return found


def _only_literal_text(before: Document, after: Document, edits: Sequence) -> bool:
    """Whether every edit only rewrote literal string text, before and after, and nothing else re-structured."""
    if after.changed is None:
        return False
    return inside_literal_text(before, [(e.start, e.end) for e in edits]) and inside_literal_text(after, after.changed)


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


_HEADS = ("function_expression", "let_expression", "with_expression", "assert_expression", "parenthesized_expression")


class _TopScopes:
    """The scopes around the file's whole body (`{ lib, ... }:`, `final: prev:`, the `let … in` after them), and
    whether one of them binds a name for every place the file spells it.

    Every node inside a function or `let` is a descendant of it, so a reference there climbs through it
    (`Scopes.lexical`): bound by it or by a scope inside, never free. The one way out is a plain `inherit
    name;` written directly in that `let` (it reads the scope around the `let`): that `let` does not count
    for that name. A place the bytes spell the name outside the scope (a formal's default before the `let`,
    a comment above the file) leaves the name to the full lookup. Found once per document, from the top
    expression down through function bodies, `let`, `with` and `assert` bodies and parentheses; what each
    binds is read as `Scopes` reads it.
    """

    def __init__(self, doc: Document):
        self.doc = doc
        self.heads: list[tuple[int, int, set[bytes]]] = []  # (start, end, names bound throughout), outermost first
        node = next((c for c in doc.root.named_children if c.type != "comment"), None)
        while node is not None and node.type in _HEADS:
            if node.type == "function_expression":
                self.heads.append((node.start_byte, node.end_byte, set(_names_of_function(doc, node))))
            elif node.type == "let_expression":
                escaping = {name for entry in _bindings_of(node) if entry.type == "inherit"
                            for name, _ in _bound_names(doc.data, entry)}
                self.heads.append((node.start_byte, node.end_byte, set(_names_of_bindings(doc, node)) - escaping))
            node = node.child_by_field_name("expression" if node.type == "parenthesized_expression" else "body")

    def never_free(self, name: str) -> bool:
        """True when no reference spelling `name` can be free: none is spelled, or a top scope binds it around
        every place the bytes spell it; False means: look it up."""
        spelled = name.encode("utf-8", "surrogateescape")
        data = self.doc.data
        first = data.find(spelled)
        if first < 0:
            return True  # a reference spells its name
        last = data.rfind(spelled) + len(spelled)
        return any(start <= first and last <= end and spelled in names for start, end, names in self.heads)


def _never_reported(before: Document, top: _TopScopes, name: str) -> bool:
    """Whether `newly_unbound` cannot report `name`, decided without looking up its references: no reference of
    the edited file spelling it can be free (`_TopScopes.never_free`), or it is a Nix global the file did not
    spell before the edits (a new reference to a global is never reported, and there was no old one to lose
    its binder: a reference spells its name)."""
    if is_nix_global(name) and name.encode("utf-8", "surrogateescape") not in before.data:
        return True
    return top.never_free(name)


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
    if names is None:  # names that cannot be reported are not looked up (`_never_reported`)
        top = _TopScopes(after)
        candidates = sorted(name for name in _candidate_names(before, after, edits)
                            if not _never_reported(before, top, name))
    else:
        candidates = sorted(names)
    after_references = references_by_name(after, candidates)
    free = [name for name in candidates if any(r.free for r in after_references[name])]
    before_references = references_by_name(before, free)
    for name in free:
        new = [r for r in after_references[name] if r.free]
        old = before_references[name]
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
    assert node is not None  # a binder that binds (not a free one) has its scope
    line, column = before.position(node.start_byte)
    kinds = {"formal": "function argument", "argument": "function argument", "with": "`with`"}
    what = kinds.get(binder.kind, binder.kind)
    after = f"it would refer to Nix's builtin '{name}'" if is_nix_global(name) else "undefined variable"
    return f"'{name}' would no longer be bound by the {what} at {line}:{column} ({after})"
