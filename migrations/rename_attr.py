"""rename-attr — rename one attribute-path segment, e.g. python3Packages -> python313Packages.

What it changes:
  - in select expressions (`nixpkgs_pinned.python3Packages.torch`) and attribute tests
    (`pkgs ? python3Packages`), every attrpath segment that is exactly `from` (plain or
    quoted); with `base`, only those whose base is the variable `base`
    (`nixpkgs_pinned.python3Packages`, not `pkgs.python3Packages`);
  - without `base`: when the file's own function takes `from` as an argument (Flox style
    `{ python3Packages, lib, ... }:`), that formal and every reference bound to it, found
    by lexical scope: a `let python3Packages = ...;`, a `rec` binding or an inner function's
    argument of the same name shadows it, and references bound there keep their name.

What it never touches: comments, strings, look-alike names (`python3PackagesExtra`,
`my.python3Packages_old`), binding names (except definitions, below), and references bound
anywhere else.

Definitions in the same file. When a select it would rename reads an attribute this file
defines itself, renaming only the select would read another attribute and silently drop the
definition from the build. Definitions are the bindings of `from` in
  - an overlay's result, `final: prev: { python3Packages = prev.python3Packages.override { … }; }`,
    in `import … { overlays = [ … ]; }` (written in the list, or bound by a `let`/`rec` and named
    there), `SET.extend …`, `SET.appendOverlays [ … ]`, or a file that is itself an overlay;
  - `config.packageOverrides = pkgs: { python3Packages = …; }`;
  - the attrset of `SET // { python3Packages = …; }`, or any attrset literal selected from;
followed through `let`/`rec` aliases (`let ps = nixpkgs_pinned.python3Packages; in ps.torch`,
`pinned = nixpkgs_pinned;`) and the overlays' own arguments (`prev.python3Packages` reads it too).
A `let python3Packages = nixpkgs_pinned.python3Packages.override { … };` is a variable of the
file, not an attribute of the set: its right-hand side is renamed as usual.
  - definitions = "refuse" (default): the file is refused and left unchanged, naming the
    definition and the use (`path:line:col: python3Packages is defined here (in an overlay) and
    used at path:line:col (nixpkgs_pinned.python3Packages): …`). A refused file stops
    `pinshift migrate` (no branch is created) and `pinshift apply` (no file is written): the
    file cannot be migrated as asked, and committing a build that quietly lost its overlay is worse
    than stopping.
  - definitions = "rename": the definition's name is renamed with its uses, and so are the other
    uses of it through the overlays' arguments (`prev.python3Packages`, `final.python3Packages`),
    even where `base` would not reach. `python313Packages = prev.python313Packages.override { … };`
    then overrides the new pin's own python313Packages, which is what the rename means. Refused
    instead (the meaning could not be kept) when the definition is an `inherit`, when `to` is already
    defined there, when a `rec` refers to it by name, or when something else reads it and is not
    renamed (another base under `base`, `inherit (nixpkgs_pinned) python3Packages;`, a `with`).
    A file that is an overlay or a nixpkgs config defines the attribute for a set another file
    builds: it is renamed with a warning to rename that set's users too.
  - overlays this file does not show (`overlays = [ (import ./overlay.nix) ]`) cannot be checked:
    one warning per file names them.

Reported as warnings with their location, never silently skipped:
  - `inherit (x) python3Packages;` (renaming it would rename the binding it makes);
  - an argument `from` of a function inherited with `inherit python3Packages;` (the attribute
    name would change), or one whose new name an inner binding would capture, or a
    function that already takes `to`: the argument is then left as it is;
  - a reference to `from` that only a `with` can supply (dynamic: not renamed);
  - with `base`: a function argument `from` (it is not `base.from`; run without `base`
    to rename arguments).

Parameters:
  from         str, required. The segment to rename.
  to           str, required. The new name (a plain Nix identifier).
  base         str, optional. Only selects on this variable (e.g. nixpkgs_pinned); also
               turns off the renaming of function arguments.
  definitions  "refuse" or "rename", default "refuse". What to do when the file defines
               `from` itself (see "Definitions in the same file").

Example recipe step:
    [[steps]]
    kind = "rename-attr"
    title = "Use python313Packages"
    [steps.params]
    from = "python3Packages"
    to = "python313Packages"
    base = "nixpkgs_pinned"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pinshift.edits import Edit
from pinshift.errors import ParamError
from pinshift.migrations._rename_definitions import Reader, check_definitions
from pinshift.steps.kind import StepContext, StepOutput
from pinshift.syntax.queries import name_of, nodes_spelling, unwrap
from pinshift.syntax.scopes import binder_of, inherited_binder, resolve

NAME = "rename-attr"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): the package selected, and every symbolic path with `from` renamed.
BUILD_CHANGES = ("package", "«{from_}→{to}»")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_'-]*\Z")
_KEYWORDS = {"if", "then", "else", "assert", "with", "let", "in", "rec", "inherit", "or"}


@dataclass(frozen=True)
class Params:
    from_: str
    to: str
    base: str | None = None
    definitions: Literal["refuse", "rename"] = "refuse"

    def __post_init__(self) -> None:
        for key, value in (("from", self.from_), ("to", self.to)) + ((("base", self.base),) if self.base else ()):
            if not _IDENTIFIER.match(value) or value in _KEYWORDS:
                raise ParamError(key, f"'{key}' must be a plain Nix identifier, not {value!r}")
        if self.from_ == self.to:
            raise ParamError("to", f"'to' is the same name as 'from' ({self.to!r})")


def needles(params: Params) -> tuple[bytes, ...]:
    return (params.from_.encode(),)


def _occurrences(doc, name: str) -> list:
    """Every identifier spelling exactly `name`, and every quoted attr `"name"` (its string node).

    Found from a byte search rather than a visit of every node: whatever the step looks at
    (segments, references, inherited names, formals) spells the name.
    """
    found = []
    for node in nodes_spelling(doc, name.encode()):
        if doc.text(node) != name.encode():
            continue
        if node.type == "identifier":
            found.append(node)
        elif node.type == "string_fragment":
            string = doc.ancestry.parent(node)
            if string is not None and string.named_child_count == 1:
                found.append(string)
    return found


def _above(doc, node, levels: int = 1):
    """The node `levels` parents up (parents from doc.ancestry: no walk from the root for each)."""
    for _ in range(levels):
        node = doc.ancestry.parent(node) if node is not None else None
    return node


def _role(doc, node) -> str | None:
    """What an occurrence is: an attrpath segment, a variable, an inherited name, or something else."""
    parent = _above(doc, node)
    if parent is None:
        return None
    holder = _above(doc, parent)
    if parent.type == "attrpath" and holder is not None and holder.type in (
        "select_expression", "has_attr_expression"
    ) and holder.child_by_field_name("attrpath") == parent:
        return "segment"
    if parent.type == "variable_expression":
        return "variable"
    if parent.type == "inherited_attrs" and holder is not None:
        return holder.type  # "inherit" or "inherit_from"
    return None


def _segment_edit(doc, segment, params: Params, why: str) -> Edit | None:
    """The edit renaming one attrpath segment spelling `from` (identifier or plain quoted string)."""
    if name_of(doc, segment) != params.from_:
        return None
    if segment.type == "identifier":
        return Edit(segment.start_byte, segment.end_byte, params.to.encode(), why)
    fragment = segment.named_children[0]  # a quoted segment without escapes: one string_fragment
    return Edit(fragment.start_byte, fragment.end_byte, params.to.encode(), why)


def _renamed_segments(doc, occurrences: list, params: Params) -> list:
    """The attrpath segments spelling `from` that the step renames (with `base`, only on that variable)."""
    found = []
    for segment in occurrences:
        if _role(doc, segment) != "segment" or name_of(doc, segment) != params.from_:
            continue
        base = _above(doc, segment, 2).child_by_field_name("expression")
        if params.base is not None and not (base.type == "variable_expression" and doc.text(base) == params.base.encode()):
            continue
        found.append(segment)
    return found


def _readers(doc, occurrences: list, params: Params) -> list[Reader]:
    """What reads `from` without being renamed: `inherit (x) from;` and names a `with x;` supplies."""
    found = []
    for occurrence in occurrences:
        role = _role(doc, occurrence)
        if role == "inherit_from":
            source = _above(doc, occurrence, 2).child_by_field_name("expression")
            text = doc.text(source).decode("utf-8", "replace")
            found.append(Reader(occurrence, source, f"inherit ({text}) {params.from_};"))
        elif role == "variable" and (binder := binder_of(doc, _above(doc, occurrence))).kind == "with":
            source = binder.scope.child_by_field_name("environment")
            text = doc.text(source).decode("utf-8", "replace")
            found.append(Reader(occurrence, source, f"{params.from_} (from `with {text};`)"))
    return found


def _inherit_warnings(doc, occurrences: list, params: Params, out: StepOutput) -> None:
    for attr in occurrences:
        if _role(doc, attr) != "inherit_from":
            continue
        source = _above(doc, attr, 2).child_by_field_name("expression")
        if params.base is not None and not (source is not None and doc.text(unwrap(source) or source) == params.base.encode()):
            continue
        source_text = doc.text(source).decode("utf-8", "replace") if source is not None else "x"
        out.warn(attr.start_byte, f"inherit ({source_text}) {params.from_}: not renamed (it also names the "
                                  f"binding); write `{params.from_} = {source_text}.{params.to};` "
                                  "if that is meant")


def _top_function(doc):
    node = unwrap(doc.root.child_by_field_name("expression") or next(
        (c for c in doc.root.named_children if c.type != "comment"), None))
    return node if node is not None and node.type == "function_expression" else None


def _formal(doc, function, name: str):
    formals = function.child_by_field_name("formals")
    for formal in formals.children_by_field_name("formal") if formals is not None else ():
        identifier = formal.child_by_field_name("name")
        if identifier is not None and not identifier.is_missing and doc.text(identifier).decode() == name:
            return identifier
    return None


def _argument_edits(doc, occurrences: list, params: Params, out: StepOutput) -> None:
    """Rename the file function's formal `from` and the references bound to it, when that is safe."""
    function = _top_function(doc)
    formal = _formal(doc, function, params.from_) if function is not None else None
    if formal is None:
        return
    if params.base is not None:
        out.warn(formal.start_byte, f"{params.from_} is an argument of this file's function, not "
                                    f"{params.base}.{params.from_}: left alone (rename-attr without 'base' renames arguments)")
        return
    if _formal(doc, function, params.to) is not None:
        out.warn(formal.start_byte, f"the function already takes {params.to}: argument {params.from_} left alone")
        return
    variables = [_above(doc, o) for o in occurrences if _role(doc, o) == "variable"]
    bound = [v for v in variables if binder_of(doc, v).scope == function]
    for attr in occurrences:
        if _role(doc, attr) == "inherit" and inherited_binder(doc, _above(doc, attr, 2), attr).scope == function:
            out.warn(attr.start_byte, f"inherit {params.from_}: renaming argument {params.from_} would rename "
                                      "this attribute too: argument left alone")
            return
    for variable in bound:
        capture = resolve(doc, params.to, variable)
        if capture.lexical and capture.scope != function:
            out.warn(variable.start_byte, f"{params.to} is bound here by an inner {capture.kind}: renaming argument "
                                          f"{params.from_} would change what this refers to; argument left alone")
            return
    why = f"{NAME}: argument {params.from_} -> {params.to}"
    out.edits.append(Edit(formal.start_byte, formal.end_byte, params.to.encode(), why))
    for variable in bound:
        out.edits.append(Edit(variable.start_byte, variable.end_byte, params.to.encode(), why))


def _dynamic_warnings(doc, occurrences: list, params: Params, out: StepOutput) -> None:
    for occurrence in occurrences:
        if _role(doc, occurrence) == "variable" and binder_of(doc, _above(doc, occurrence)).kind == "with":
            out.warn(occurrence.start_byte, f"{params.from_} here comes from a `with`: not renamed (check it by hand)")


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    occurrences = _occurrences(doc, params.from_)
    renamed = _renamed_segments(doc, occurrences, params)
    segments = [o for o in occurrences if _role(doc, o) == "segment"]
    readers = _readers(doc, occurrences, params) if params.definitions == "rename" else []
    renamed += check_definitions(doc, params, renamed, segments, readers, out)
    why = f"{NAME}: {params.from_} -> {params.to}"
    out.edits.extend(_segment_edit(doc, segment, params, why) for segment in renamed)
    _argument_edits(doc, occurrences, params, out)
    _inherit_warnings(doc, occurrences, params, out)
    _dynamic_warnings(doc, occurrences, params, out)
    return out
