"""rewrite — replace what a Nix pattern matches by a replacement reusing what it captured, scope-aware.

The pattern is Nix syntax with metavariables, as ast-grep writes them: `$X` is one expression (or one
attribute name or formal), `$$$XS` a run of list items, call arguments, formals or bindings (possibly
empty); `$_` matches anything without being remembered. A metavariable used twice must match the same
tokens both times. A pattern that is not an expression is read as one binding (`default = false;`).
Matching is on the syntax tree: kinds of nodes and their tokens, never whitespace or comments, so
`lib.optional  cond # why\n x` matches `lib.optional $C $X`. The replacement is Nix source too; each
metavariable in it is replaced by the bytes it captured, as written (comments inside them included).
A capture that is not a single term (`f x`, `a + b`) is put in parentheses where the replacement uses
it as an operand (`[ $X ]` with `$X` = `f x` writes `[ (f x) ]`); elsewhere it is written as is.

Scope-aware:
  - a name the pattern reads (`toString`, `lib` in `lib.optional`) matches only a reference bound as
    at the top of the file. A name Nix itself binds (`toString`, `builtins`, `map`) must be Nix's
    builtin: free, or under a `with` (Nix's builtins are never shadowed by one); any `let`, `rec` or
    function binding of it, even at the top, is something else. Any other name must be an argument of
    the file's own function (`{ config, lib, ... }:`, `final: prev:`), a binding of the `let … in` around
    the file's body (`{ pkgs, ... }: let lib = pkgs.lib; in …`), or free. An inner `let lib = …;`, a
    `rec` binding, an inner function's argument of that name (`cfg: … cfg.enable`), or a name only a
    `with` supplies is something else: that place is left alone (a note says where);
  - a name the replacement brings in (`builtins` in `builtins.toString $X`) must mean the same at the
    place of the edit: when a `let`, `rec` or inner function binds it there, the file is refused with
    `path:line:col: the replacement's `builtins` would be the let binding at L:C here, not the top-level
    builtins`, and no file is written (`pinshift apply --skip-refused` writes the others).

Text is text: a match is made of code, never of a string's text, an escaped `''${` or a comment. The
expressions inside an interpolation (`"${toString x}"`) are code and are matched. A match whose tokens
have a comment between them that no metavariable captures is left alone, with a warning (rewriting it
would drop the comment). A match inside another match's capture is left for a second run (a note
says so), so every edit of one run is independent.

Constraints (each a list of binding-path globs, or one glob):
  inside      the match must lie in the value of a binding whose path matches one of them. Paths are
              dotted, counted through nested attrsets (`options.programs.x.enable`); the value includes
              the attrset given to a call there (`enable = mkOption { default = false; };`). `*` is
              any run of characters, dots included; a leading `*.` also matches nothing
              (`*.enableMcpIntegration` matches `enableMcpIntegration` and `a.b.enableMcpIntegration`).
  not-inside  the match must lie in no such value.

Every written file is re-parsed (a syntax problem or a reference left unbound refuses the file) and the
bytes outside each matched node never change.

Parameters:
  pattern      str, required. Nix source with metavariables, e.g. 'lib.optional $C $X'.
  replacement  str, required. Nix source, e.g. 'lib.optionals $C [ $X ]'.
  inside       list, optional. Binding-path globs the match must lie in the value of (see above).
  not-inside   list, optional. Binding-path globs the match must lie in no value of.

Example recipe steps:
    [[steps]]
    kind = "rewrite"
    title = "Call toString by its full name"
    [steps.params]
    pattern = "toString $X"
    replacement = "builtins.toString $X"

    [[steps]]
    kind = "rewrite"
    title = "Enable the MCP integration by default"
    [steps.params]
    pattern = "default = false;"
    replacement = "default = true;"
    inside = ["*.enableMcpIntegration"]
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pinshift.edits import Edit
from pinshift.errors import ParamError
from pinshift.migrations import _pattern
from pinshift.steps.kind import StepContext, StepOutput
from pinshift.syntax.queries import bindings, unwrap
from pinshift.syntax.scopes import is_nix_global, resolve, binder_of

NAME = "rewrite"
# What it intends to change in what a recipe builds: anything its pattern matches.
BUILD_CHANGES = ("*",)


@dataclass(frozen=True)
class Params:
    pattern: str
    replacement: str
    inside: tuple[str, ...] = ()
    not_inside: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for key, globs in (("inside", self.inside), ("not-inside", self.not_inside)):
            for glob in globs:
                if not glob.strip() or any(c.isspace() for c in glob):
                    raise ParamError(key, f"'{key}' globs are dotted binding paths such as '*.enable', not {glob!r}")
        compiled(self.pattern, self.replacement)

    @property
    def compiled(self) -> tuple:
        return compiled(self.pattern, self.replacement)


@functools.lru_cache(maxsize=32)
def compiled(pattern: str, replacement: str) -> tuple:
    """(Pattern, Template) for the parameters, compiled once per process."""
    found = _pattern.compile_pattern(pattern, "pattern")
    return found, _pattern.compile_template(replacement, found)


def needles(params: Params) -> tuple[bytes, ...]:
    """What every match's file spells: the longest literal part of each `inside` glob (a match lies in a binding
    whose path one of them matches, so its file spells that part of the name), else the pattern's anchor;
    none when the pattern spells no name or string text."""
    literals = [max(re.split(r"[*.]", glob), key=len) for glob in params.inside]
    if params.inside and all(literals):
        return tuple(dict.fromkeys(literal.encode() for literal in literals))
    pattern, _ = params.compiled
    return (pattern.anchor,) if pattern.anchor else ()


class _Enclosing:
    """Whether a node lies in the value of a binding whose path a glob matches; each node's answer found once."""

    def __init__(self, doc, regex: re.Pattern):
        self.doc = doc
        self.flags = {b.node.id for b in bindings(doc) if None not in b.path and regex.fullmatch(b.dotted)}
        self.known: dict[int, bool] = {}

    def holds(self, node) -> bool:
        passed, current, answer = [], self.doc.ancestry.parent(node), False
        while current is not None:
            if current.id in self.known:
                answer = self.known[current.id]
                break
            passed.append(current.id)
            if current.id in self.flags:
                answer = True
                break
            current = self.doc.ancestry.parent(current)
        for key in passed:
            self.known[key] = answer
        return answer


def header_scopes(doc) -> set[int]:
    """The ids of the file's top scopes: its own functions (`{ lib, ... }:`, `final: prev:`) and the `let … in`
    around their body (`let lib = pkgs.lib; in …`), followed from the top expression down."""
    found = set()
    node = unwrap(next((c for c in doc.root.named_children if c.type != "comment"), None))
    while node is not None and node.type in ("function_expression", "let_expression"):
        found.add(node.id)
        node = unwrap(node.child_by_field_name("body"))
    return found


def _as_at_top(binder, name: str, headers: set[int]) -> bool:
    """Whether a reference bound by `binder` means what `name` means at the top of the file."""
    if binder.kind == "free":
        return True
    if binder.kind == "with":
        return is_nix_global(name)  # Nix's builtins are lexical: a `with` never shadows them
    if is_nix_global(name):
        return False  # `toString`, `builtins`: the builtin only; any binding of the name shadows it
    return binder.kind in ("formal", "argument", "let") and binder.scope.id in headers


def _describe(doc, binder) -> str:
    what = {"formal": "function argument", "argument": "function argument", "with": "name from a `with`"}
    node = binder.name_node if binder.name_node is not None else binder.scope
    line, column = doc.position(node.start_byte)
    return f"{what.get(binder.kind, binder.kind + ' binding')} at {line}:{column}"


def _narrowed(data: bytes, start: int, end: int, replacement: bytes, reason: str) -> Edit:
    """The edit writing `replacement` over [start, end), without the bytes both already share at either end
    (`toString x` -> `builtins.toString x` inserts `builtins.`): the same result, checked where it changes."""
    old = data[start:end]
    limit = min(len(old), len(replacement))
    head = _shared(limit, lambda n: old[:n] == replacement[:n])
    tail = _shared(limit - head, lambda n: old[len(old) - n:] == replacement[len(replacement) - n:])
    return Edit(start + head, end - tail, replacement[head: len(replacement) - tail], reason)


def _shared(limit: int, same) -> int:
    """The largest n <= limit with same(n), for a `same` true up to some n and false beyond (a binary search:
    each comparison of byte strings is made in C)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if same(middle):
            low = middle
        else:
            high = middle - 1
    return low


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    pattern, template = params.compiled
    found = [m for m in (_pattern.match(pattern, doc, node) for node in _pattern.candidates(pattern, doc)) if m]
    if not found:
        return out
    inside = _Enclosing(doc, _pattern.glob_regex(params.inside)) if params.inside else None
    outside = _Enclosing(doc, _pattern.glob_regex(params.not_inside)) if params.not_inside else None
    headers = header_scopes(doc)
    taken: list = []
    for match in sorted(found, key=lambda m: (m.node.start_byte, -m.node.end_byte)):
        node = match.node
        if (inside is not None and not inside.holds(node)) or (outside is not None and outside.holds(node)):
            continue
        shadowed = next(((name, variable) for name, variable in match.reads
                         if not _as_at_top(binder_of(doc, variable), name, headers)), None)
        if shadowed is not None:
            name, variable = shadowed
            out.note(variable.start_byte, f"{name} here is the {_describe(doc, binder_of(doc, variable))}, "
                                          f"not the top-level {name}: left alone")
            continue
        if taken and node.start_byte < taken[-1].node.end_byte:
            out.note(node.start_byte, "a match inside another match: left for a second run")
            continue
        if match.dropped:
            out.warn(match.dropped[0].start_byte, "a comment inside this match would be lost by the rewrite: "
                                                  "left alone (move the comment, or rewrite it by hand)")
            continue
        captured = next(((name, resolve(doc, name, node)) for name in template.names
                         if not _as_at_top(resolve(doc, name, node), name, headers)), None)
        if captured is not None:
            name, binder = captured
            out.refuse(node.start_byte, f"the replacement's `{name}` would be the {_describe(doc, binder)} here, "
                                        f"not the top-level {name}: not rewritten (rename that binding first)")
            continue
        taken.append(match)
        written = _pattern.render(template, doc, match.captures)
        if written != doc.text(node):  # a rule whose replacement is what it matched changes nothing
            out.edits.append(_narrowed(doc.data, node.start_byte, node.end_byte, written, f"{NAME}: {params.pattern}"))
    return out
