"""replace-in-strings — replace text inside the strings bound at given binding paths (and, if asked, in comments).

What it changes: the literal text of the strings that are the value of a binding at
one of `paths` (e.g. `meta.longDescription`, however it is written: nested attrsets,
`meta = oldAttrs.meta // { ... }`, or dotted `meta.longDescription = ...`). A value
may be one string or strings joined with `+` (`(oldAttrs.postInstall or "") + ''...''`).
Each literal fragment is searched on its own: a match never spans an escape sequence
or a `${...}`.

With `comments = true`, the text of every comment of the file is searched too (`# vLLM
0.15.1 for NVIDIA Hopper` in a header, `/* ... */`), so a version bump's header comments follow
its strings in one step; `paths = []` then means comments only. The `#` or `/* */` around a
comment is never part of a match. A replacement that would end a `#` comment early (a line
break) or a `/* */` comment (`*/`) is not made; the step warns instead.

What it never touches: interpolations `${...}` and anything inside them, comments (unless
`comments = true`), attribute names, and every binding not at one of `paths`. A replacement that would
change the string's meaning in Nix (it contains `${`, or a quote/backslash in a
"..." string, or `''` in a ''...'' string) is not made; the step warns instead. A
binding found at a path whose value is not a string is reported as a warning.

Idempotence: a second run finds nothing to replace, since `new` may not contain
`old` (literal mode). With `regex = true` write a pattern that no longer matches its
own output (e.g. `CUDA: 12\\.8` -> `CUDA: 12.9`).

Parameters:
  paths   list of str, required. Binding paths, dotted (`meta.longDescription`); may be
          empty with `comments = true`.
  old     str, required. The text to find (a Python regular expression with `regex`).
  new     str, required. Its replacement (`\\1` and `\\g<name>` refer to groups with `regex`).
  regex   bool, default false. Treat `old` as a regular expression.
  comments  bool, default false. Also replace in every comment of the file.

Example recipe step:
    [[steps]]
    kind = "replace-in-strings"
    title = "Say CUDA 12.9 in the long description"
    [steps.params]
    paths = ["meta.longDescription"]
    old = "CUDA: 12.8"
    new = "CUDA: 12.9"

    [[steps]]
    kind = "replace-in-strings"
    title = "Say vLLM 0.16.0 instead of vLLM 0.15.1 in comments and meta.description"
    [steps.params]
    paths = ["meta.description"]
    old = "vLLM 0.15.1"
    new = "vLLM 0.16.0"
    comments = true
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from pinshift.edits import Edit
from pinshift.errors import ParamError
from pinshift.steps.kind import StepContext, StepOutput
from pinshift.syntax.queries import as_string, find_bindings, unwrap, walk

NAME = "replace-in-strings"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): the strings at `paths` (and comments): any attribute.
BUILD_CHANGES = ("*",)
LANGUAGES = ("nix",)


@dataclass(frozen=True)
class Params:
    paths: tuple[str, ...]
    old: str
    new: str
    regex: bool = False
    comments: bool = False

    def __post_init__(self) -> None:
        if (not self.paths and not self.comments) or any(not p or "" in p.split(".") for p in self.paths):
            raise ParamError("paths", f"'paths' must list dotted binding paths like 'meta.longDescription', not {list(self.paths)!r}")
        if not self.old:
            raise ParamError("old", "'old' must not be empty")
        if self.regex:
            try:
                pattern = re.compile(self.old.encode())
            except re.error as error:
                raise ParamError("old", f"'old' is not a valid regular expression: {error}") from None
            try:
                pattern.sub(self.new.encode(), b"")  # checks the group references in `new`
            except (re.error, IndexError) as error:
                raise ParamError("new", f"'new' refers to a group 'old' does not have: {error}") from None
        elif self.old in self.new:
            raise ParamError("new", f"'new' contains 'old' ({self.old!r}): a second run would replace again")

    def pattern(self) -> re.Pattern:
        return re.compile(self.old.encode() if self.regex else re.escape(self.old.encode()))


def needles(params: Params) -> tuple[bytes, ...]:
    """A file holding none of the path's last names has no binding to look at (nor, with comments, a comment)."""
    if params.comments and not params.regex:
        return (params.old.encode(),)  # nothing to replace in a file without it
    found = {p.rsplit(".", 1)[-1].encode() for p in params.paths}
    if params.comments:
        found |= {b"#", b"/*"}
    return tuple(sorted(found))


def bound_strings(value) -> Iterator:
    """The strings a binding's value is made of: one string, or strings joined with `+`, in source order.

    With a list for a stack: `"a" + "b" + …` nests as deep as it is long (one recursion per `+` ended
    pinshift at about 1,000 of them, issue 36).
    """
    pending = [value]
    while pending:
        value = unwrap(pending.pop())
        if value is None:
            continue
        string = as_string(value)
        if string is not None:
            yield string
        elif value.type == "binary_expression":
            operator = value.child_by_field_name("operator")
            if operator is not None and operator.type == "+":
                pending += [value.child_by_field_name("right"), value.child_by_field_name("left")]


def _unsafe(replacement: bytes, indented: bool) -> str | None:
    if b"${" in replacement:
        return "it would contain ${ (an interpolation)"
    if indented and b"''" in replacement:
        return "it would contain '' (the end of the string)"
    if not indented and (b'"' in replacement or b"\\" in replacement):
        return 'it would contain a quote or backslash'
    return None


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    pattern, new = params.pattern(), params.new.encode()
    for path in params.paths:
        for binding in find_bindings(doc, path):
            strings = list(bound_strings(binding.value))
            if not strings:
                out.warn(binding.value.start_byte, f"{path} is not a string literal: left alone")
            for string in strings:
                for fragment in string.literals():
                    text = doc.text(fragment)
                    for match in pattern.finditer(text):
                        replacement = match.expand(new) if params.regex else new
                        problem = _unsafe(replacement, string.indented)
                        start = fragment.start_byte + match.start()
                        if problem:
                            out.warn(start, f"{path}: not replacing {match.group(0).decode('utf-8', 'replace')!r}: {problem}")
                            continue
                        out.edits.append(Edit(start, fragment.start_byte + match.end(), replacement,
                                              f"replace-in-strings: {path}"))
    if params.comments:
        _replace_in_comments(doc, params, pattern, new, out)
    return out


def _replace_in_comments(doc, params: Params, pattern: re.Pattern, new: bytes, out: StepOutput) -> None:
    for comment in walk(doc.root, "comment"):
        text = doc.text(comment)
        block = text.startswith(b"/*")
        start, end = (2, len(text) - 2) if block else (1, len(text))
        edits = []
        for match in pattern.finditer(text, start, end):
            replacement = match.expand(new) if params.regex else new
            edits.append(Edit(comment.start_byte + match.start(), comment.start_byte + match.end(), replacement,
                              "replace-in-strings: a comment"))
        if not edits:
            continue
        body, last = b"", start
        for edit in edits:
            body += text[last : edit.start - comment.start_byte] + edit.replacement
            last = edit.end - comment.start_byte
        body += text[last:end]
        if (b"*/" in body) if block else (b"\n" in body or b"\r" in body):
            what = "contain */ (the end of the comment)" if block else "break the line (the rest would be code)"
            found = doc.data[edits[0].start : edits[0].end].decode("utf-8", "replace")
            out.warn(edits[0].start, f"comment: not replacing {found!r}: it would {what}")
            continue
        out.edits.extend(edits)
