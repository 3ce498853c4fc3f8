"""set-binding — set or insert `path = <Nix expression>;` in the attrset a recipe returns.

Where: in the attrset `overrideAttrs (oldAttrs: { ... })` returns, or in the attrset bound
at `at` (a dotted binding path such as `passthru`), or with `at = "."` in the file's top-level
attrset (its value, through function headers, `let … in`, `with`, `assert` and parentheses: a
module's `{ config, lib, ... }: { … }`). When the file's value is an attrset that binds the first
name of `at` (`options.programs.foo = { … };` for `at = "options"`), `at` is that top-level path:
the step sets `at.path` there (into `options = { … }` if it exists, else as a dotted binding beside
the other `options.…` ones), never in a submodule's own `options = { … }` nested inside. Otherwise
every attrset bound at `at` is a target, the outermost only (none nested inside another). An `at`
with a `*` (`*.options`, `*` any run of characters, dots included) is a glob: every attrset bound at a
matching path, nested ones included. Which `overrideAttrs` is `where`'s choice:
  - "result" (default): the outermost one that makes the file's value, followed through
    function bodies, `let … in`, `with`, `assert`, both branches of an `if`, parentheses and
    variables bound by a `let` (`(torchvision.override { … }).overrideAttrs (…)`), never one
    nested inside something else. A companion recipe that builds its own PyTorch inline
    (`customPytorch = (torch.override { … }).overrideAttrs (…);`) keeps that build as it is: a
    binding such as `propagatedBuildInputs = … ++ [ customPytorch.out ];` inserted there would
    make customPytorch depend on itself (infinite recursion when Nix evaluates it);
  - a name (`where = "customPytorch"`): the outermost overrideAttrs making the value of the
    `let` (or `rec`) binding of that name;
  - "every": every overrideAttrs attrset in the file, nested ones included.

What it changes: when `path` is already bound there (directly, dotted, or inside a
nested or `//`-merged attrset, e.g. `meta = oldAttrs.meta // { platforms = ...; }`),
only its value; otherwise it inserts `rest = value;` after the last binding of the
deepest attrset that already holds part of the path (so `meta.platforms` goes into an
existing `meta = { ... }`), on its own line with the indentation of its neighbours and
the file's line endings, or on the same line in a one-line attrset. With `after`, the
new binding goes right after that binding instead of after the last one (a blank line
separates it when one separates `after` from the binding that follows it); with
`comment`, a `# comment` line indented like the new binding goes above it. An existing
binding keeps its place and its comments: only its value changes. `blank-line` overrides
the file's habit for an inserted binding: "before" puts a blank line above it, "none" none
(it joins the binding before it, as `propagatedBuildInputs` right under `pname`). Running it
twice changes nothing the second time. With `only-missing = true` an existing binding keeps its
value: the binding is only inserted where it is missing (`meta.maintainers = [ ];` in every module
that has none).

Every file is parsed: a file without an overrideAttrs (or the `at` binding) gets the warning
below, never silence (there is no text prefilter).

The value is Nix source, parsed before anything runs: a value that does not parse is
a parameter error. Bytes are written as given.

Reported as warnings: no target attrset in the file (`at = "."` on a file whose value is not an
attrset: "the file's value is not an attrset"; no overrideAttrs at all, or none that
makes the file's value or the named binding's: the warning says how many there are); a part of the path bound to
something that is not an attrset (`meta = oldAttrs.meta;`: setting `meta.x` would
need a rewrite by hand); an empty target attrset; an `after` binding the attrset does
not have (the binding is then inserted after the last one); a `comment` for a
binding inserted into a one-line attrset (the binding is inserted, the comment is not:
a `#` comment would swallow the rest of the line).

Parameters:
  path     str, required. Dotted binding path, relative to the target attrset.
  value    str, required. A Nix expression, e.g. '[ "x86_64-linux" ]' or '"12.9"'.
  at       str, optional. Dotted path of the binding whose attrset is the target; "." for the
           file's top-level attrset; a glob with `*` for every match (see above).
  where    str, default "result". Which overrideAttrs (without `at`): "result", "every", or
           the name of a `let` binding whose value it makes (see above).
  after    str, optional. Insert after this binding (its dotted path as written in the
           attrset the new binding goes into, e.g. "pname") instead of after the last.
  comment  str, optional. One line of text written as a `# comment` above an inserted
           binding (a leading `#` is kept, else `# ` is added).
  blank-line  "auto" (default), "before" or "none". A blank line above an inserted binding:
           as the attrset separates its bindings, always, or never.
  only-missing  bool, default false. Insert where missing; never change an existing value.

Example recipe step:
    [[steps]]
    kind = "set-binding"
    title = "Restrict platforms"
    [steps.params]
    path = "meta.platforms"
    value = '[ "x86_64-linux" ]'

    [[steps]]
    kind = "set-binding"
    title = "Limit build parallelism"
    [steps.params]
    path = "ninjaFlags"
    value = '[ "-j32" ]'
    after = "pname"
    comment = "Limit build parallelism to prevent memory saturation"

    [[steps]]
    kind = "set-binding"
    title = "Every module names its maintainers"
    [steps.params]
    at = "."
    path = "meta.maintainers"
    value = "[ ]"
    only-missing = true

    [[steps]]
    kind = "set-binding"
    title = "Propagate the linked PyTorch build"
    files = [".flox/pkgs/torchvision-*.nix"]
    [steps.params]
    path = "propagatedBuildInputs"
    value = "(oldAttrs.propagatedBuildInputs or []) ++ [ customPytorch.out ]"
    after = "pname"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pinshift.errors import ParamError
from pinshift.edits import Edit
from pinshift.steps.kind import StepContext, StepOutput
from pinshift.steps import layout
from pinshift.syntax.document import parse_document
from pinshift.migrations._pattern import glob_regex
from pinshift.migrations._results import binding_overrides, result_overrides
from pinshift.syntax.queries import ATTRSET_TYPES, bindings, find_bindings, name_of, override_attrs, unwrap

NAME = "set-binding"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): the binding `path` sets, wherever the overrideAttrs is.
BUILD_CHANGES = ("{path}*", "*.{path}*", "{at}.{path}*", "*.{at}.{path}*")

_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_'-]*\Z")
WHERE = ("result", "every")
TOP = "."  # `at = "."`: the file's top-level attrset


@dataclass(frozen=True)
class Params:
    path: str
    value: str
    at: str | None = None
    after: str | None = None
    comment: str | None = None
    where: str = "result"
    blank_line: Literal["auto", "before", "none"] = "auto"
    only_missing: bool = False

    def __post_init__(self) -> None:
        if self.where not in WHERE and not _SEGMENT.match(self.where):
            raise ParamError("where", f"'where' must be \"result\", \"every\" or the name of a let binding, "
                                      f"not {self.where!r}")
        if self.at is not None and self.where != "result":
            raise ParamError("where", "'where' chooses an overrideAttrs; with 'at' the attrset is the one bound "
                                      "there: give one of them")
        dotted_keys = (("path", self.path), ("at", self.at), ("after", self.after))
        for key, dotted in ((k, v) for k, v in dotted_keys if v is not None and not (k == "at" and v == TOP)):
            if not all(_SEGMENT.match(part) or (key == "at" and part == "*") for part in dotted.split(".")):
                raise ParamError(key, f"'{key}' must be a dotted path of plain names, not {dotted!r}")
        parsed = parse_document(self.value.encode(), "value")
        if parsed.problems or not self.value.strip():
            where = parsed.problems[0].message if parsed.problems and self.value.strip() else "it is empty"
            raise ParamError("value", f"'value' is not a Nix expression ({where}): {self.value!r}")
        if self.comment is not None and (not self.comment.strip() or any(c in self.comment for c in "\r\n")):
            raise ParamError("comment", f"'comment' must be one non-empty line of text, not {self.comment!r}")

    @property
    def comment_line(self) -> bytes:
        """The comment as written above the binding: `# text` (empty without a comment)."""
        if self.comment is None:
            return b""
        text = self.comment.strip().encode()
        return text if text.startswith(b"#") else b"# " + text


def needles(params: Params) -> tuple[bytes, ...]:
    """No prefilter: a file without an overrideAttrs (or without the `at` binding) gets the step's warning
    that it found no target, which a byte search would silence (issue 46)."""
    return ()


def top_attrset(doc):
    """The attrset the file's value is, through function headers, `let … in`, `with`, `assert` and parentheses."""
    node = unwrap(next((c for c in doc.root.named_children if c.type != "comment"), None))
    while node is not None and node.type in ("function_expression", "let_expression", "with_expression",
                                             "assert_expression"):
        node = unwrap(node.child_by_field_name("body"))
    return node if node is not None and node.type in ATTRSET_TYPES else None


def _targets(doc, params: Params) -> list[tuple]:
    """(attrset, the binding path leading to it, whether that path is counted from the file's top-level attrset)
    for each place the step sets its path."""
    if params.at is None:
        if params.where == "every":
            calls = override_attrs(doc)
        elif params.where == "result":
            calls = result_overrides(doc)
        else:
            calls = binding_overrides(doc, params.where)
        return [(call.attrset, (), False) for call in calls]
    top = top_attrset(doc)
    if params.at == TOP:
        return [(top, (), True)] if top is not None else []
    wanted = tuple(params.at.split("."))
    if "*" not in wanted and top is not None and any(
            b.root == top and b.path[:1] == wanted[:1] for b in bindings(doc)):
        return [(top, wanted, True)]  # the top-level path: `options.x = …;` and `options = { … };` alike
    if "*" in wanted:
        regex = glob_regex((params.at,))
        matched = [b for b in bindings(doc) if None not in b.path and regex.fullmatch(b.dotted)]
    else:
        matched = find_bindings(doc, params.at)
    found = []
    for binding in matched:
        value = unwrap(binding.value)
        if value is None or value.type not in ATTRSET_TYPES:
            continue
        if "*" not in wanted and found and found[-1][0].start_byte <= value.start_byte < found[-1][0].end_byte:
            continue  # nested in the one before (a submodule's own `options`): the outermost only
        found.append((value, binding.path, False))
    return found


def _direct_bindings(container) -> list:
    binding_set = next((c for c in container.named_children if c.type == "binding_set"), None)
    return [c for c in binding_set.named_children] if binding_set is not None else []


def _set_in(doc, target, leading: tuple, params: Params, out: StepOutput, top: bool = False) -> None:
    wanted = leading + tuple(params.path.split("."))
    value = params.value.encode()
    if top:  # `target` is the file's top-level attrset and `leading` a path from it: paths counted from there
        inside = [b for b in bindings(doc) if b.root == target]
        leading_holder: tuple = ()
    else:
        inside = [b for b in bindings(doc) if target.start_byte <= b.node.start_byte < target.end_byte
                  and b.path[: len(leading)] == leading]
        leading_holder = leading
    existing = [b for b in inside if b.path == wanted]
    if existing and params.only_missing:
        return
    for binding in existing:
        if doc.text(binding.value) != value:
            out.edits.append(Edit(binding.value.start_byte, binding.value.end_byte, value, f"{NAME}: {params.path}"))
    if existing:
        return
    holders = {leading_holder: target}  # path prefix -> the attrset whose bindings continue it
    for binding in inside:
        own = len(binding.attrpath.children_by_field_name("attr"))
        holders.setdefault(binding.path[: len(binding.path) - own], binding.container)
    for binding in inside:
        if len(binding.path) < len(wanted) and wanted[: len(binding.path)] == binding.path:
            if binding.path not in holders:
                out.warn(binding.node.start_byte, f"{binding.dotted} is not an attrset with bindings here: "
                                                  f"set {params.path} by hand")
                return
    prefix = max((p for p in holders if len(p) < len(wanted) and wanted[: len(p)] == p), key=len)
    container = holders[prefix]
    siblings = _direct_bindings(container)
    if not siblings:
        out.warn(container.start_byte, f"the attrset for {params.path} has no bindings to line up with: set it by hand")
        return
    text = ".".join(wanted[len(prefix):]).encode() + b" = " + value + b";"
    anchor = siblings[-1]
    kin = [b for b in siblings if b.type == "binding" and (_dotted(doc, b) or "").split(".")[0] == wanted[len(prefix)]]
    if kin and params.after is None:
        anchor = kin[-1]  # beside the bindings it continues (`options.b` after `options.a = …;`)
    if params.after is not None:
        named = [b for b in siblings if b.type == "binding" and _dotted(doc, b) == params.after]
        if named:
            anchor = named[0]
        else:
            out.warn(container.start_byte, f"no binding {params.after} here to insert {params.path} after: "
                                           "inserted after the last binding")
    if params.comment is not None and not layout.ends_its_line(doc.data, anchor.end_byte):
        out.warn(anchor.end_byte, f"the attrset is on one line: {params.path} inserted without its comment")
    edit = layout.insert_after_binding(doc.data, siblings, text, f"{NAME}: insert {params.path}",
                                       after=anchor, comment=params.comment_line)
    newline = layout.eol(doc.data)
    if params.blank_line != "auto" and edit.replacement.startswith(newline):
        lines = edit.replacement
        while lines.startswith(newline):
            lines = lines[len(newline):]
        lines = (newline * 2 if params.blank_line == "before" else newline) + lines
        edit = Edit(edit.start, edit.end, lines, edit.reason)
    out.edits.append(edit)


def _dotted(doc, binding) -> str | None:
    """`a.b` for a binding `a.b = ...;` (None when a segment is interpolated)."""
    names = [name_of(doc, s) for s in binding.child_by_field_name("attrpath").children_by_field_name("attr")]
    return None if None in names else ".".join(names)


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    targets = _targets(doc, params)
    if not targets:
        if params.at is not None:
            what = "the file's value is not an attrset" if params.at == TOP else f"found no attrset bound at {params.at}"
            out.warn(-1, f"{what}: {params.path} not set")
            return out
        nested = len(override_attrs(doc))
        if not nested:
            out.warn(-1, f"found no overrideAttrs attrset: {params.path} not set")
        elif params.where == "result":
            out.warn(-1, f"no overrideAttrs makes the file's value ({nested} nested in other expressions): "
                         f"{params.path} not set (where = \"every\" sets it in each, or name the let binding)")
        else:
            out.warn(-1, f"no let binding {params.where} made by overrideAttrs: {params.path} not set")
        return out
    for target, leading, top in targets:
        _set_in(doc, target, leading, params, out, top)
    return out
