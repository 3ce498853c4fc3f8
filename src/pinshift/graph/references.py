"""The references one Nix file makes to other files: path literals, and how each is used.

A reference is a relative path literal (`./x.nix`, `../lib/x.nix`, `./dir`, `./.`, also `x/y.nix`) and
what the file does with it:

- `import ./x.nix` (also `builtins.import`, `scopedImport attrs ./x.nix`): how = "import";
- `callPackage ./x.nix { … }` (any `callPackage`, `pkgs.callPackage`, `python3Packages.callPackage`):
  how = "callPackage";
- anything else (`src = ./.;`, `patches = [ ./fix.patch ];`, `builtins.readFile ./x.nix`): how = "path".

An import or callPackage applied to an argument set (`import ./x.nix { inherit lib; }`, also
`(import ./x.nix) { }`) records the names it passes (`Arguments`): each binding's first attribute and
each inherited name, or `open` when they cannot all be read (`${…}` names, a variable, `args // { }`).

A call whose path is computed (`import (./. + "/x.nix")`, `import ./${name}.nix`, `import "${./.}/x.nix"`)
is recorded with `computed = True` and never resolved: pinshift does not guess which file it names.
Absolute paths, `~/…` and `<nixpkgs>` name nothing in the tree and are not references.

Found in one pass linear in the file: a byte search for the spots a path literal can start at, each
looked up in the tree (`Ancestry.locate`, one cursor sweep), then a climb of a few parents
(`Ancestry.parent`) to see how it is used.

Examples:
    `customPytorch = import ./pytorch-python313-cuda12_8-sm61-avx.nix { inherit python3Packages lib; };`
        -> Reference(literal="./pytorch-python313-cuda12_8-sm61-avx.nix", how="import",
                     arguments=Arguments(names=("python3Packages", "lib"), open=False))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pinshift.syntax.document import Document
from pinshift.syntax.queries import name_of

# where a relative path literal can begin: a run of path characters ending in a `/`, not preceded by another
# `/` or by what makes it a URL (`https://`), `$out/…`, `${x}/…` or `~/…`
_PATH_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-"
_PATH_SET = frozenset(_PATH_CHARS)
_NOT_BEFORE = frozenset(b"/:~$}")
_LOOK_BACK = 256  # bytes a literal's first component may have: a longer run is no literal pinshift follows
# what a computed path climbs through on its way to the import that uses it
_COMPUTED = ("binary_expression", "parenthesized_expression", "interpolation", "string_expression",
             "indented_string_expression")
_ATTRSETS = ("attrset_expression", "rec_attrset_expression")
CALLERS = ("import", "callPackage")


@dataclass(frozen=True)
class Arguments:
    """The argument set a call passes: its names in order (`open` when they cannot all be read).

    `places` holds each name's (line, column); `start`/`end` are the set's bytes.
    """

    names: tuple[str, ...]
    open: bool
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)
    places: tuple[tuple[int, int], ...] = field(default=(), compare=False)

    def place(self, name: str) -> tuple[int, int]:
        """Where `name` is passed (line, column); the set's own place's first entry when unknown."""
        for passed, where in zip(self.names, self.places):
            if passed == name:
                return where
        return self.places[0] if self.places else (0, 0)


@dataclass(frozen=True)
class Reference:
    """One path literal of a file and how the file uses it (see the module docstring).

    `start`/`end` are the literal's bytes (the whole computed expression when `computed`); `line` and
    `column` its place. Two references are equal when they say the same (literal, use, arguments),
    wherever they are in the file.
    """

    literal: str
    how: str  # "import", "callPackage" or "path"
    arguments: Arguments | None = None  # what a call passes; None when the file is not called here
    computed: bool = False
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def verb(self) -> str:
        """How messages say what the file does with it: `imports`, `calls` (callPackage) or `names`."""
        return {"import": "imports", "callPackage": "calls"}.get(self.how, "names")


def _spots(data: bytes) -> list[tuple[int, int]]:
    """The byte ranges (first component and its `/`) where a relative path literal may start.

    Found from each `/` by one strip of the path characters before it (no pattern tried at every
    byte: a file's slashes are few, its words many). A `/` with no path character before it starts
    no relative literal (`/abs`, `https://`, `${x}/y`)."""
    spots = []
    slash = data.find(b"/")
    while slash >= 0:
        if slash and data[slash - 1] in _PATH_SET:
            window = data[max(0, slash - _LOOK_BACK):slash]
            start = slash - (len(window) - len(window.rstrip(_PATH_CHARS)))
            if start == 0 or data[start - 1] not in _NOT_BEFORE:
                spots.append((start, slash + 1))
        slash = data.find(b"/", slash + 1)
    return spots


def references(doc: Document, placed: bool = True) -> tuple[Reference, ...]:
    """Every reference `doc` makes, in source order (see the module docstring); without `placed`, lines and
    columns are left 0 (what a comparison needs, cheaper)."""
    return tuple(reference for reference, _ in references_and_spans(doc, placed))


def references_and_spans(doc: Document, placed: bool = True) -> list[tuple[Reference, tuple[int, int]]]:
    """Each reference with the byte range an edit must leave alone for it to stay the same reference:
    the literal, and for a call everything from the function called to the end of its argument set."""
    spots = _spots(doc.data)
    if not spots:
        return []
    ancestry = doc.ancestry
    found: dict[int, tuple[Reference, tuple[int, int]]] = {}
    position = doc.position if placed else _unplaced
    for node in ancestry.locate(spots):
        if node.type == "path_fragment":
            node = ancestry.parent(node)
        if node is None or node.type != "path_expression" or node.start_byte in found:
            continue
        made = _reference(doc, node, position)
        if made is not None:
            found.setdefault(made[0].start, made)
    return [found[start] for start in sorted(found)]


def _unplaced(offset: int) -> tuple[int, int]:
    return (0, 0)


def _reference(doc: Document, path, position) -> tuple[Reference, tuple[int, int]] | None:
    ancestry = doc.ancestry
    text = doc.text(path).decode("utf-8", "surrogateescape")
    if text.startswith("/"):
        return None  # absolute: outside any tree
    interpolated = any(child.type == "interpolation" for child in path.children)
    outer, parent = _climb_parentheses(ancestry, path)
    if parent is not None and parent.type == "apply_expression" and _same(parent.child_by_field_name("argument"), outer):
        how = _caller(doc, ancestry, parent.child_by_field_name("function"))
        if how is not None:
            return _call(doc, how, path, parent, interpolated, position)
    computed = _computed_call(doc, path, position)
    if computed is not None or interpolated:
        return computed
    reference = Reference(text, "path", None, False, path.start_byte, path.end_byte, *position(path.start_byte))
    return reference, (path.start_byte, path.end_byte)


def _climb_parentheses(ancestry, node):
    """(the outermost `(…)` around `node`, or `node`; that one's parent)."""
    parent = ancestry.parent(node)
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, ancestry.parent(parent)
    return node, parent


def _same(a, b) -> bool:
    return a is not None and b is not None and a.id == b.id


def _caller(doc: Document, ancestry, function) -> str | None:
    """"import" or "callPackage" when `function` is one (also `builtins.import`, `x.callPackage`,
    `scopedImport attrs`), else None."""
    while function is not None and function.type == "parenthesized_expression":
        function = function.child_by_field_name("expression")
    if function is None:
        return None
    if function.type == "variable_expression":
        name = doc.text(function).decode("utf-8", "surrogateescape")
        return {"import": "import", "callPackage": "callPackage"}.get(name)
    if function.type == "select_expression":
        attrpath = function.child_by_field_name("attrpath")
        attrs = attrpath.children_by_field_name("attr") if attrpath is not None else []
        last = name_of(doc, attrs[-1]) if attrs else None
        base = function.child_by_field_name("expression")
        if last == "callPackage":
            return "callPackage"
        if last == "import" and len(attrs) == 1 and base is not None and doc.text(base) == b"builtins":
            return "import"
        return None
    if function.type == "apply_expression":  # scopedImport attrs ./x.nix
        inner = function.child_by_field_name("function")
        while inner is not None and inner.type == "parenthesized_expression":
            inner = inner.child_by_field_name("expression")
        if inner is not None and doc.text(inner) in (b"scopedImport", b"builtins.scopedImport"):
            return "import"
    return None


def _call(doc: Document, how: str, path, call, computed: bool, position) -> tuple[Reference, tuple[int, int]]:
    """The reference a call `how path` makes, with the argument set an enclosing application passes."""
    ancestry = doc.ancestry
    outer, parent = _climb_parentheses(ancestry, call)
    arguments, end = None, call.end_byte
    if parent is not None and parent.type == "apply_expression" and _same(parent.child_by_field_name("function"), outer):
        arguments = _arguments(doc, parent.child_by_field_name("argument"), position)
        end = parent.end_byte
    start = path.start_byte
    reference = Reference(doc.text(path).decode("utf-8", "surrogateescape"), how, arguments, computed, start,
                          path.end_byte, *position(start))
    return reference, (call.start_byte, end)


def _computed_call(doc: Document, path, position) -> tuple[Reference, tuple[int, int]] | None:
    """The call a path literal is part of the computed argument of (`import (./. + "/x.nix")`), else None."""
    ancestry = doc.ancestry
    node, parent = path, ancestry.parent(path)
    climbed = False
    while parent is not None and parent.type in _COMPUTED:
        node, parent = parent, ancestry.parent(parent)
        climbed = True
    if not climbed and not any(child.type == "interpolation" for child in path.children):
        return None
    if parent is None or parent.type != "apply_expression" or not _same(parent.child_by_field_name("argument"), node):
        return None
    how = _caller(doc, ancestry, parent.child_by_field_name("function"))
    if how is None:
        return None
    reference, span = _call(doc, how, path, parent, True, position)
    text = doc.text(node).decode("utf-8", "surrogateescape")
    return Reference(text, how, reference.arguments, True, node.start_byte, node.end_byte,
                     *position(node.start_byte)), span


def _arguments(doc: Document, expression, position) -> Arguments:
    """The names an argument expression passes (`open` unless it is an attrset literal with plain names)."""
    while expression is not None and expression.type == "parenthesized_expression":
        expression = expression.child_by_field_name("expression")
    if expression is None:
        return Arguments((), True)
    start, end = expression.start_byte, expression.end_byte
    if expression.type not in _ATTRSETS:
        return Arguments((), True, start, end, (position(start),))
    names, places, open_ = [], [], False
    binding_set = next((c for c in expression.named_children if c.type == "binding_set"), None)
    for item in binding_set.named_children if binding_set is not None else ():
        if item.type == "binding":
            attrpath = item.child_by_field_name("attrpath")
            attrs = attrpath.children_by_field_name("attr") if attrpath is not None else []
            name = name_of(doc, attrs[0]) if attrs else None
            if name is None:
                open_ = True
            elif name not in names:
                names.append(name)
                places.append(position(attrs[0].start_byte))
        elif item.type in ("inherit", "inherit_from"):
            attrs = item.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                name = name_of(doc, attr)
                if name is None:
                    open_ = True
                elif name not in names:
                    names.append(name)
                    places.append(position(attr.start_byte))
    return Arguments(tuple(names), open_, start, end, tuple(places) or (position(start),))
