"""Shared by the file-level kinds: what a rename, a clone or a removal does to the references of other files.

The reference graph (pinshift.graph) says which files import, call or name a file. Each kind's
`plan_references` turns its file operations into a `ReferencePlan`: per file, the `Rewrite`s of
its path literals that its `plan` then makes (`rewrite_edits`), refusals naming both files, and
notes. Pure: the graph is read, nothing else.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from pinshift.edits import Edit
from pinshift.graph.paths import moved_literal
from pinshift.languages import language_for
from pinshift.steps.kind import ReferencePlan, StepOutput

_EDGE = rb"A-Za-z0-9_\-"
_TOKEN = re.compile(rb"[" + _EDGE + rb"]+")


@dataclass(frozen=True)
class Rewrite:
    """Replace the path literal at bytes [start, end) with `literal`; `note` says why (grouped in reports)."""

    start: int
    end: int
    literal: str
    note: str


def follows(how: str, what: str) -> str:
    """`import of a renamed recipe follows it` (by `import` or `callPackage`), `path to a renamed file follows it`."""
    if how == "path":
        return f"path to a {what} file follows it"
    return f"import of a {what} recipe follows it"


def renamed_references(graph, ops) -> ReferencePlan:
    """Every file referring to a file `ops` renames: its literal follows the new name (the file's new path
    if it moves too). A referring file the recipe does not edit is a refusal naming both files."""
    found = ReferencePlan()
    moved = {op.path: op.target for op in ops if op.action == "rename"}
    for source, reference, target in graph.referrers(moved):
        new_source = moved.get(source, source)
        if source not in moved and not graph.editable(source):
            found.refusals.append(
                f"{source}:{reference.line}:{reference.column} {reference.verb} {reference.literal}, which this step "
                f"renames to {moved[target]}, but {source} is not one of the recipe's files: add it to the recipe's "
                "files (or the step's), or rename that file too")
            continue
        literal = moved_literal(reference.literal, moved[target], new_source)
        found.files.setdefault(new_source, ())
        found.files[new_source] += (Rewrite(reference.start, reference.end, literal, follows(reference.how, "renamed")),)
    found.warnings.extend(unread(graph, "renames"))
    return found


def unread(graph, what: str) -> list[tuple[str, int, int, str]]:
    """A warning for each file that spells the name of a file this step moves or removes but has syntax problems:
    its references cannot be read, so they are neither followed nor checked."""
    return [(path, 0, 0, f"names a file this step {what}, but has syntax problems: its references cannot be read "
                         "or followed; fix the file") for path in sorted(graph.unread)]


def cloned_references(graph, ops) -> ReferencePlan:
    """In each clone, a reference to a file cloned in the same step names that file's clone; a reference to a
    file not cloned stays, noted (one grouped line in reports)."""
    found = ReferencePlan()
    clones = {op.path: op.target for op in ops if op.action == "clone"}
    for source, clone in clones.items():
        facts = []
        for reference in graph.references(source):
            named = graph.target(source, reference)
            if named.path in clones and named.state == "file":
                literal = moved_literal(reference.literal, clones[named.path], clone)
                facts.append(Rewrite(reference.start, reference.end, literal, follows(reference.how, "cloned")))
            elif named.state == "file" and reference.how != "path":
                facts.append(Rewrite(reference.start, reference.end, "",
                                     "refers to a recipe this step does not clone: the clone refers to the original"))
        if facts:
            found.files[clone] = tuple(facts)
    return found


def computed_references(graph, what: str) -> list[tuple[str, int, int, str]]:
    """(path, line, column, note) for each import or callPackage of a computed path in a Nix file of the tree
    (`import (./. + "/x.nix")`): pinshift cannot tell which file it names, so a person must check it does not
    name one this step takes away. Only files spelling both `./` and a call are parsed."""
    found, paths = [], graph.nix_paths()
    graph.prefetch(paths)
    for path in paths:
        data = graph.data(path)
        if data is None or b"./" not in data or (b"import" not in data and b"callPackage" not in data):
            continue
        for reference in graph.references(path):
            if reference.computed:
                found.append((path, reference.line, reference.column,
                              f"{reference.how} of a computed path: not followed; check by hand that it names no "
                              f"file this step {what}"))
    return found


def rewrite_edits(out: StepOutput, context, reason: str) -> None:
    """The edits (and notes) of the Rewrites `plan_references` gave this file (`context.references`)."""
    for fact in context.references:
        if not isinstance(fact, Rewrite):
            continue
        if fact.literal:
            out.edits.append(Edit(fact.start, fact.end, fact.literal.encode("utf-8", "surrogateescape"),
                                  f"{reason}: {fact.note}"))
        out.note(fact.start, fact.note)


def text_mentions(graph, paths, what: str) -> list[tuple[str, int, int, str]]:
    """(path, line, column, note) for each whole-token mention of one of `paths`' names (stems) in the files of
    the tree that are not Nix but that pinshift reads (Markdown, TOML, Python, shell): a README row, a Flox
    manifest. Text, not a reference: left as it is, noted, for a later step (or a person) to change."""
    stems = {posixpath.basename(p).removesuffix(".nix").encode("utf-8", "surrogateescape") for p in paths}
    plain = {stem for stem in stems if _TOKEN.fullmatch(stem)}  # found by a set lookup per word: any number
    others = sorted(stems - plain, key=len, reverse=True)
    pattern = re.compile(rb"(?<![" + _EDGE + rb"])(?:" + b"|".join(map(re.escape, others)) + rb")(?![" + _EDGE + rb"])") \
        if others else None
    found = []
    texts = [path for path in graph.tree.paths() if language_for(path) not in (None, "nix")]
    graph.prefetch(texts)
    for path in texts:
        data = graph.data(path)
        if data is None:
            continue
        hits = [m for m in _TOKEN.finditer(data) if m.group() in plain] if plain else []
        if pattern is not None:
            hits += list(pattern.finditer(data))
        line, counted = 1, 0  # lines counted up to `counted`: each byte read once
        for match in sorted(hits, key=lambda m: m.start()):
            line += data.count(b"\n", counted, match.start())
            counted = match.start()
            column = match.start() - (data.rfind(b"\n", 0, match.start()) + 1) + 1
            found.append((path, line, column, f"mentions a {what} recipe by name (text, not a Nix reference): "
                                              "left as it is"))
    return found
