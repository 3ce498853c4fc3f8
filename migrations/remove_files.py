"""remove-files — remove the recipe files a branch no longer builds.

What it changes: every file the step's `files` globs and `select` both select is removed,
whatever its kind (Nix or not, symlinks included). The report lists each removed path;
the commit records the deletions.

References: a file that another file keeps referring to (`import ./x.nix`, `callPackage ./x.nix
{ }`, a bare `./x.nix`) is not removed silently. `references` says what to do:
  "refuse"          (default) the step is refused before anything is written (exit 1), naming
                    the removed file and the place that refers to it;
  "remove-too"      every file that refers to a removed one is removed too, and the files that
                    refer to those, and so on (each noted: `removed with the file it imports`);
                    one outside the recipe's files is refused instead;
  "allow-dangling"  the files are removed and each reference left naming nothing is a warning
                    (`--strict` fails on it): for a recipe whose later step rewrites them.
Text that names a removed file outside Nix (a README row) is noted, never changed; so is an
import of a computed path (`import (./. + "/x.nix")`), which pinshift cannot follow.

What it never touches: any other file. A file that is already gone is simply not there
to select, so a second run changes nothing.

Later steps of the recipe no longer see the removed files; a later step whose `files`
(or `select`) glob names only paths removed here is a recipe error (exit 2), so a recipe
cannot silently edit a file it has just deleted.

Parameters:
  select      list of str, required. Globs of the files to remove (matched like `files`).
  references  "refuse" (default), "remove-too" or "allow-dangling": files still referring to a
              removed one (above).

Example recipe step:
    [[steps]]
    kind = "remove-files"
    title = "Drop the SM61 (Pascal) variants"
    [steps.params]
    select = [".flox/pkgs/*-sm61-*.nix"]

  removed: .flox/pkgs/pytorch-python313-cuda12_9-sm61-avx.nix (and the other SM61 variants)

The same without git: pinshift apply remove-files --set 'select=["**/*-sm61-*.nix"]' .flox/pkgs
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pinshift.files import fileops
from pinshift.errors import ParamError
from pinshift.files.globs import matches
from pinshift.migrations._references import computed_references, text_mentions, unread
from pinshift.steps.kind import ReferencePlan, StepContext, StepOutput

NAME = "remove-files"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): removed recipes are removed; every other recipe builds what it built.
BUILD_CHANGES = ()
LANGUAGES = ()  # no file is parsed: any selected file is removed


@dataclass(frozen=True)
class Params:
    select: tuple[str, ...]
    references: Literal["refuse", "remove-too", "allow-dangling"] = "refuse"

    def __post_init__(self) -> None:
        if not self.select or any(not glob for glob in self.select):
            raise ParamError("select", f"'select' must list globs of the files to remove, not {list(self.select)!r}")


def plan_paths(paths, params: Params) -> list[fileops.FileOp]:
    return [fileops.remove(path) for path in paths if matches(path, params.select)]


def plan_references(graph, params: Params, ops, selected) -> ReferencePlan:
    """What happens to the files still referring to a removed one (see `references` in the docstring)."""
    found = ReferencePlan()
    removed = {op.path for op in ops if op.action == "remove"}
    if params.references == "remove-too":
        gone, fresh = set(removed), set(removed)
        while fresh:
            added = set()
            for source, reference, target in graph.referrers(fresh):
                if source in gone or source in added:
                    continue
                if not graph.editable(source):
                    found.refusals.append(f"cannot remove {target}: {source}:{reference.line}:{reference.column} "
                                          f"{reference.verb} it ({reference.literal}), and {source} is not one of the "
                                          "recipe's files, which remove-too removes")
                    continue
                added.add(source)
                found.remove[source] = f"removed with the file it {reference.verb} (references = \"remove-too\")"
            gone |= added
            fresh = added
        removed = gone
    else:
        for source, reference, target in graph.referrers(removed):
            if source in removed:
                continue
            if params.references == "allow-dangling":
                found.dangling.add((source, target))
                found.warnings.append((source, reference.line, reference.column,
                                       f"{reference.verb} {reference.literal}, which this step removes: left naming "
                                       "no file (references = \"allow-dangling\")"))
            else:
                found.refusals.append(f"cannot remove {target}: {source}:{reference.line}:{reference.column} "
                                      f"{reference.verb} it ({reference.literal}); remove that file too (set "
                                      "references = \"remove-too\"), or set references = \"allow-dangling\" to leave "
                                      "the reference naming no file")
    found.warnings.extend(unread(graph, "removes"))
    if removed:
        found.notes.extend(text_mentions(graph, sorted(removed), "removed"))
        found.notes.extend(computed_references(graph, "removes"))
    return found


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    return StepOutput()  # removals have no content to plan
