"""rename-binding — rename a `let` (or `rec`) binding and every reference bound to it, e.g. python312Custom -> python311Custom.

What it changes: in every `let … in`, `rec { … }` and legacy `let { … }` of the file, a binding
whose name is `from` (`python312Custom = nixpkgs_pinned.python312.override { … };`, also the
first name of a dotted binding `python312Custom.x = …;`) gets the name `to`, and so does every
reference bound to it, found by lexical scope (src/pinshift/syntax/scopes.py): the variable in
`python312Custom.pkgs.vllm`, in `${python312Custom}` inside a string, in `inherit (python312Custom)
pkgs;`, in the binding's own value and in the `let`'s body. Every `let`/`rec` binding of that
name is renamed with its own references (an inner `let` that binds it again too, so its
references keep meaning that one); a function argument of the same name further in shadows it,
and the references bound to the argument keep their name.

With `regex = true`, `from` is a Python regular expression matched against whole binding names
and `to` its replacement (`\\1`, `\\g<name>` for groups): `from = 'python3\\d+Custom'`,
`to = "python311Custom"` renames `python312Custom` in one file and `python313Custom` in another.
A name it already has (`python311Custom` matches `python3\\d+Custom`) stays as it is, so the
step changes nothing on its own output.

What it never touches: comments, the literal text of strings, attribute names of plain
attrsets (`{ python312Custom = …; }` is data other code selects by name: rename-attr's), selects
from other values (`x.python312Custom`), function arguments (rename-attr renames a file's
arguments), and references bound anywhere else.

Refused (the file is left exactly as it was, with the place and the reason), because the result
would not mean what the file meant:
  - the same `let` or `rec` already binds `to` (two bindings of one name), or two names the
    regex renames there would both become `to`;
  - a renamed reference would be captured by an inner binding of `to` (`let python311Custom = 1;
    in python312Custom` inside the `let`);
  - a reference to `to` inside the `let` that meant an outer binding, a function argument, a
    `with` or a builtin would then mean the renamed binding;
  - `inherit python312Custom;` in an inner attrset reads the binding and names an attribute by
    it: renaming it would rename that attribute too (write `python312Custom = python312Custom;`
    first, or rename by hand).
Warned and left alone: a binding made by `inherit python312Custom;` or `inherit (x)
python312Custom;` (its name also says where the value comes from); a regex whose replacement
is not a plain Nix name. Noted: a renamed binding of a `rec { }` is an attribute too: whatever
selects it from outside the file must say `to`.

Parameters:
  from   str, required. The binding name (a Python regular expression with `regex`).
  to     str, required. The new name (with `regex`, a replacement template).
  regex  bool, default false. Treat `from` as a regular expression matched against whole names.

Example recipe step:
    [[steps]]
    kind = "rename-binding"
    title = "Rename the Python 3.12 interpreter binding to python311Custom"
    [steps.params]
    from = 'python3\\d+Custom'
    to = "python311Custom"
    regex = true

  -  python312Custom = nixpkgs_pinned.python312.override {
  +  python311Custom = nixpkgs_pinned.python312.override {
  -  vllm = python312Custom.pkgs.vllm;
  +  vllm = python311Custom.pkgs.vllm;
  (the interpreter itself, nixpkgs_pinned.python312, is rename-attr's: from = "python312", to = "python311")
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pinshift.edits import Edit
from pinshift.errors import ParamError
from pinshift.steps.kind import StepContext, StepOutput
from pinshift.syntax.attrnames import static_name
from pinshift.syntax.queries import walk
from pinshift.syntax.scopes import binder_of, inherited_binder, is_nix_global, resolve

NAME = "rename-binding"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): a variable renamed with its references builds the same.
BUILD_CHANGES = ()
LANGUAGES = ("nix",)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_'-]*\Z")
_KEYWORDS = {"if", "then", "else", "assert", "with", "let", "in", "rec", "inherit", "or"}
_CONTAINERS = ("let_expression", "rec_attrset_expression", "let_attrset_expression")


def _plain_name(name: str) -> bool:
    return bool(_IDENTIFIER.match(name)) and name not in _KEYWORDS


@dataclass(frozen=True)
class Params:
    from_: str
    to: str
    regex: bool = False

    def __post_init__(self) -> None:
        if self.regex:
            try:
                pattern = re.compile(self.from_)
            except re.error as error:
                raise ParamError("from", f"'from' is not a valid regular expression: {error}") from None
            try:
                pattern.sub(self.to, "")  # checks the group references in `to`
            except (re.error, IndexError) as error:
                raise ParamError("to", f"'to' refers to a group 'from' does not have: {error}") from None
            return
        for key, value in (("from", self.from_), ("to", self.to)):
            if not _plain_name(value):
                raise ParamError(key, f"'{key}' must be a plain Nix identifier, not {value!r} "
                                      "(set regex = true for a pattern)")
        if self.from_ == self.to:
            raise ParamError("to", f"'to' is the same name as 'from' ({self.to!r})")

    def new_name(self, name: str) -> str | None:
        """The name `name` becomes, None when the step does not rename it."""
        if not self.regex:
            return self.to if name == self.from_ else None
        match = re.fullmatch(self.from_, name)
        return match.expand(self.to) if match else None


def needles(params: Params) -> tuple[bytes, ...]:
    return () if params.regex else (params.from_.encode(),)


@dataclass
class _Binder:
    """One name bound by one let/rec: the name nodes spelling it there (a dotted `a.x = …; a.y = …;` has two)."""

    container: object
    name: str
    new: str
    names: list


def _name_nodes(doc, container):
    """(first attrpath segment or inherited name, name, inherited) for each binding of a let/rec."""
    binding_set = next((c for c in container.named_children if c.type == "binding_set"), None)
    for item in binding_set.named_children if binding_set is not None else ():
        if item.type == "binding":
            attrpath = item.child_by_field_name("attrpath")
            first = attrpath.child_by_field_name("attr") if attrpath is not None else None
            if first is not None:
                name = static_name(doc.data, first)
                if name is not None:
                    yield first, name.decode("utf-8", "surrogateescape"), False
        elif item.type in ("inherit", "inherit_from"):
            attrs = item.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                name = static_name(doc.data, attr)
                if name is not None:
                    yield attr, name.decode("utf-8", "surrogateescape"), True


def _binders(doc, params: Params, out: StepOutput) -> list[_Binder]:
    found = []
    for container in walk(doc.root, *_CONTAINERS):
        names = list(_name_nodes(doc, container))
        bound = {name for _, name, _ in names}
        chosen: dict[str, _Binder] = {}
        for node, name, inherited in names:
            new = params.new_name(name)
            if new is None or new == name:
                continue
            if inherited:
                out.warn(node.start_byte, f"{name} is bound by an inherit here (its name also says where the value "
                                          f"comes from): not renamed to {new}")
                continue
            if not _plain_name(new):
                out.warn(node.start_byte, f"{name} would become {new!r}, which is not a plain Nix name: not renamed")
                continue
            if node.type != "identifier" and not (node.type == "string_expression"
                                                  and all(c.type == "string_fragment" for c in node.named_children)):
                out.warn(node.start_byte, f"{name} is written as {doc.text(node).decode('utf-8', 'replace')}: "
                                          "not renamed (write it as a plain name first)")
                continue
            chosen.setdefault(name, _Binder(container, name, new, [])).names.append(node)
        targets: dict[str, str] = {}
        for binder in chosen.values():
            if binder.new in bound:
                out.refuse(binder.names[0].start_byte, f"{binder.name} would become {binder.new}, which this "
                                                       f"{_what(container)} already binds")
                return []
            if binder.new in targets:
                out.refuse(binder.names[0].start_byte, f"{targets[binder.new]} and {binder.name} would both become "
                                                       f"{binder.new} in this {_what(container)}")
                return []
            targets[binder.new] = binder.name
        found.extend(chosen.values())
    return found


def _what(container) -> str:
    return "let" if container.type in ("let_expression", "let_attrset_expression") else "rec attrset"


def _inside(node, outer) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _name_edit(doc, node, new: str, why: str) -> Edit:
    if node.type == "identifier":
        return Edit(node.start_byte, node.end_byte, new.encode(), why)
    inner = node.named_children  # a plain quoted name: its fragments
    if not inner:
        return Edit(node.start_byte + 1, node.end_byte - 1, new.encode(), why)
    return Edit(inner[0].start_byte, inner[-1].end_byte, new.encode(), why)


@dataclass
class _Uses:
    """Every use of the names a step looks at, found in one pass over the file: name -> [(identifier, binder)]."""

    by_name: dict
    _groups: dict = field(default_factory=dict)

    def bound_in(self, name: str, container) -> list:
        """The uses of `name` bound by `container` (grouped once per name: each binder reads its own)."""
        groups = self._groups.setdefault(name, {})
        if not groups and self.by_name[name]:
            for node, bound in self.by_name[name]:
                groups.setdefault(bound.scope.id if bound.scope is not None else None, []).append((node, bound))
        return groups.get(container.id, [])

    def enclosed(self, name: str, containers: dict) -> dict:
        """container id -> the uses of `name` inside it, for the given containers (each use climbs its ancestors once)."""
        found: dict = {}
        for node, bound in self.by_name[name]:
            ancestor = node.parent
            while ancestor is not None:
                if ancestor.id in containers:
                    found.setdefault(ancestor.id, []).append((node, bound))
                ancestor = ancestor.parent
        return found

    @classmethod
    def of(cls, doc, names: set[str]) -> "_Uses":
        found: dict[str, list] = {name: [] for name in names}
        for variable in walk(doc.root, "variable_expression"):
            name = doc.text(variable).decode("utf-8", "surrogateescape")
            if name in found:
                found[name].append((variable.child_by_field_name("name") or variable, binder_of(doc, variable)))
        for inherit in walk(doc.root, "inherit"):
            attrs = inherit.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                name = doc.text(attr).decode("utf-8", "surrogateescape")
                if attr.type == "identifier" and name in found:
                    found[name].append((attr, inherited_binder(doc, inherit, attr)))
        return cls(found)


def _rename(doc, binder: _Binder, uses: _Uses, inside_new: list, out: StepOutput) -> list[Edit] | None:
    """The edits renaming one binder and its references; None (after a refusal) when that would change meaning."""
    container, name, new = binder.container, binder.name, binder.new
    why = f"{NAME}: {name} -> {new}"
    edits = [_name_edit(doc, node, new, why) for node in binder.names]
    for node, bound in uses.bound_in(name, container):
        if node.parent.type != "variable_expression":
            out.refuse(node.start_byte, f"inherit {name}; reads the binding at {_line_column(doc, binder.names[0].start_byte)}"
                                        f" and names an attribute by it: renaming it would rename that attribute too "
                                        f"(write {name} = {name}; first, or rename by hand)")
            return None
        capture = resolve(doc, new, node.parent)
        if capture.lexical and capture.scope is not None and capture.scope != container \
                and _inside(capture.scope, container):
            out.refuse(node.start_byte, f"{name} here would become {new}, which an inner {capture.kind} binds "
                                        f"(at {_line_column(doc, capture.name_node.start_byte)}): it would refer to "
                                        "that instead")
            return None
        edits.append(Edit(node.start_byte, node.end_byte, new.encode(), why))
    for node, bound in inside_new:
        scope = bound.scope
        if bound.lexical and scope is not None and scope != container and _inside(scope, container):
            continue  # bound further in: keeps meaning what it meant
        meant = {"free": f"Nix's builtin {new}" if is_nix_global(new) else "nothing in this file (free)",
                 "with": "a name from a `with`"}.get(bound.kind, f"the {bound.kind} binding at "
                                                   f"{_line_column(doc, bound.name_node.start_byte)}"
                                                   if bound.name_node is not None else "an outer binding")
        out.refuse(node.start_byte, f"{new} here means {meant}; renaming {name} to {new} in this "
                                    f"{_what(container)} would make it mean the renamed binding")
        return None
    if container.type != "let_expression":
        out.note(binder.names[0].start_byte, f"{name} is also an attribute of this {_what(container)}: whatever "
                                             f"selects it from outside must say {new}")
    return edits


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    edits: list[Edit] = []
    binders = _binders(doc, params, out)
    uses = _Uses.of(doc, {b.name for b in binders} | {b.new for b in binders}) if binders else None
    by_new: dict[str, dict] = {}
    for binder in binders:
        by_new.setdefault(binder.new, {})[binder.container.id] = binder
    inside = {new: uses.enclosed(new, containers) for new, containers in by_new.items()}
    for binder in binders:
        renamed = _rename(doc, binder, uses, inside[binder.new].get(binder.container.id, []), out)
        if renamed is None:
            return out
        edits.extend(renamed)
    if not out.refusals:
        seen = set()
        for edit in sorted(edits, key=lambda e: (e.start, e.end)):
            if (edit.start, edit.end) not in seen:
                seen.add((edit.start, edit.end))
                out.edits.append(edit)
    return out


def _line_column(doc, offset: int) -> str:
    """`3:5`: a place in the file a message is about (its path is the message's own; a report groups by it)."""
    line, column = doc.position(offset)
    return f"{line}:{column}"
