"""metadata-rev — bump the catalog marker `echo N > $out/.metadata-rev` of a recipe.

What it changes: the number N of every `echo N > $out/.metadata-rev` found in the
literal text of a string (normally the `postInstall` of the attrset `overrideAttrs`
returns): N becomes N + 1, or `value` when given. Only the digits change.

What it never touches: comments; a marker whose number is built with `${...}` (that
is reported as a warning with its location); anything else in the file.

Files without a marker, by `missing`:
  "skip"    leave the file and warn "no .metadata-rev marker" (default);
  "insert"  add the marker to the attrset `overrideAttrs` returns: appended as a new
            line at the end of an existing indented-string `postInstall`, or as a new
            `postInstall = (oldAttrs.postInstall or "") + '' ... '';` binding after the
            last binding, indented like the surrounding bindings, with the file's line
            endings; where neither fits, it warns instead of guessing;
  "error"   stop the run with an error naming the file (nothing is written).

Idempotence: with `value` the step is a no-op on its own output. An increment is
relative to the branch the migration starts from (pinshift migrate always plans from
the base branch, so re-running a migration gives the same markers); applying an
increment by hand twice with `pinshift apply` bumps twice, as asked.

Parameters:
  value     int, optional (default: none = increment by one). The number to write.
  missing   "skip" | "insert" | "error", default "skip". What to do without a marker.
  start     int, default 1. The number an inserted marker gets when `value` is not given.

Example recipe step:
    [[steps]]
    kind = "metadata-rev"
    title = "Bump .metadata-rev"
    [steps.params]
    missing = "skip"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pinshift.edits import Edit
from pinshift.errors import ParamError, StepFailed
from pinshift.steps.kind import StepContext, StepOutput
from pinshift.steps import layout
from pinshift.migrations._results import result_overrides
from pinshift.syntax.queries import STRING_TYPES, as_string, nodes_spelling, override_attrs, unwrap, walk

NAME = "metadata-rev"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): the marker lives in postInstall.
BUILD_CHANGES = ("postInstall", "*.postInstall")
LANGUAGES = ("nix",)
# Recipes without a catalog marker are no reason to stop a migration (docs/recipes.md).
OPTIONAL = True

MARKER = b".metadata-rev"
_MARKER = re.compile(rb"echo[ \t]+(\d+)[ \t]*>[ \t]*\$out/\.metadata-rev")
_DYNAMIC = re.compile(rb"[ \t]*>[ \t]*\$out/\.metadata-rev")


@dataclass(frozen=True)
class Params:
    value: int | None = None
    missing: Literal["skip", "insert", "error"] = "skip"
    start: int = 1

    def __post_init__(self) -> None:
        if self.value is not None and self.value < 0:
            raise ParamError("value", f"'value' must be zero or more, not {self.value}")
        if self.start < 0:
            raise ParamError("start", f"'start' must be zero or more, not {self.start}")


def needles(params: Params) -> tuple[bytes, ...]:
    """Without `missing = "insert"`/"error", only files naming the marker can change or warn."""
    return () if params.missing != "skip" else (MARKER, b"overrideAttrs")


def _strings_naming_marker(doc) -> list:
    """The strings whose bytes spell the marker (both patterns do), outermost first, in source order."""
    strings = {}
    for node in nodes_spelling(doc, MARKER):
        while node is not None and node.type not in STRING_TYPES:
            node = node.parent
        if node is not None:
            strings[node.id] = node
    return sorted(strings.values(), key=lambda n: (n.start_byte, -n.end_byte))


def _markers(doc, out: StepOutput) -> list[tuple[int, re.Match]]:
    """(fragment start, match) of each literal marker; warns about interpolated ones."""
    found = []
    for node in _strings_naming_marker(doc):
        string = as_string(node)
        for index, part in enumerate(string.parts):
            if part.kind != "literal":
                continue
            text = doc.text(part.node)
            found.extend((part.node.start_byte, m) for m in _MARKER.finditer(text))
            if index and string.parts[index - 1].kind == "interpolation" and _DYNAMIC.match(text):
                out.warn(string.parts[index - 1].node.start_byte, "metadata-rev marker built with ${...}: left alone")
    return found


def _append_to_string(doc, string_node, line: bytes) -> Edit | None:
    """Insert `line` as the last line of an indented string whose closing `''` is on its own line."""
    close = string_node.end_byte - 2
    line_start = doc.data.rfind(b"\n", 0, close) + 1
    if doc.data[line_start:close].strip(b" \t") or line_start <= string_node.start_byte:
        return None
    body = doc.data[string_node.start_byte + 2 : line_start]
    lines = [l for l in body.splitlines() if l.strip()]
    indent = (lines[-1][: len(lines[-1]) - len(lines[-1].lstrip(b" \t"))] if lines
              else layout.indent_at(doc.data, close) + layout.indent_step(layout.indent_at(doc.data, close)))
    return Edit(line_start, line_start, indent + line + layout.eol(doc.data), "metadata-rev: insert marker")


def _insert(doc, number: int, out: StepOutput) -> None:
    calls = result_overrides(doc) or override_attrs(doc)  # the file's own build, not one nested in a let
    if not calls:
        out.warn(-1, "no .metadata-rev marker and no overrideAttrs attrset to insert one into")
        return
    target = calls[0]
    line = b"echo %d > $out/.metadata-rev" % number
    bindings = [b for b in walk(target.attrset, "binding") if b.parent.parent == target.attrset]
    for binding in bindings:
        name = binding.child_by_field_name("attrpath")
        if doc.text(name) != b"postInstall":
            continue
        value = unwrap(binding.child_by_field_name("expression"))
        last = value
        while last is not None and last.type == "binary_expression":
            last = unwrap(last.child_by_field_name("right"))
        edit = _append_to_string(doc, last, line) if last is not None and last.type == "indented_string_expression" else None
        if edit is None:
            out.warn(binding.start_byte, "postInstall does not end with a multi-line ''...'' string: add the marker by hand")
        else:
            out.edits.append(edit)
        return
    if not bindings or target.old_name is None:
        out.warn(target.node.start_byte, "cannot insert a .metadata-rev marker here (no old-attrs argument or no bindings)")
        return
    anchor = bindings[-1].end_byte
    line_end = doc.data.find(b"\n", anchor)
    rest = doc.data[anchor : len(doc.data) if line_end < 0 else line_end].rstrip(b"\r").strip(b" \t")
    if rest and not rest.startswith(b"#"):
        out.warn(anchor, "cannot insert a .metadata-rev marker: the attrset does not end its bindings on separate lines")
        return
    indent, eol = layout.indent_at(doc.data, bindings[-1].start_byte), layout.eol(doc.data)
    old = target.old_name.encode()
    text = (b"postInstall = (" + old + b'.postInstall or "") + \'\'' + eol
            + indent + layout.indent_step(indent) + line + eol + indent + b"'';")
    out.edits.append(layout.insert_after_binding(doc.data, bindings, text, "metadata-rev: insert postInstall marker"))


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    markers = _markers(doc, out)
    for fragment_start, match in markers:
        number = params.value if params.value is not None else int(match.group(1)) + 1
        start = fragment_start + match.start(1)
        out.edits.append(Edit(start, fragment_start + match.end(1), str(number).encode(), "metadata-rev: bump"))
    if markers or out.warnings:
        return out
    if params.missing == "skip":
        if override_attrs(doc):  # only a build it could mark is worth a warning (what `needles` lets through)
            out.warn(-1, "no .metadata-rev marker: skipped")
    elif params.missing == "error":
        raise StepFailed(f'{doc.path}: no .metadata-rev marker (missing = "error"); add one or use missing = "insert"')
    else:
        _insert(doc, params.value if params.value is not None else params.start, out)
    return out
