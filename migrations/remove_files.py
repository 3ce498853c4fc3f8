"""remove-files — remove the recipe files a branch no longer builds.

What it changes: every file the step's `files` globs and `select` both select is removed,
whatever its kind (Nix or not, symlinks included). The report lists each removed path;
the commit records the deletions.

What it never touches: any other file. A file that is already gone is simply not there
to select, so a second run changes nothing.

Later steps of the recipe no longer see the removed files; a later step whose `files`
(or `select`) glob names only paths removed here is a recipe error (exit 2), so a recipe
cannot silently edit a file it has just deleted.

Parameters:
  select  list of str, required. Globs of the files to remove (matched like `files`).

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

from pinshift.files import fileops
from pinshift.errors import ParamError
from pinshift.files.globs import matches
from pinshift.steps.kind import StepContext, StepOutput

NAME = "remove-files"
# What it intends to change in what a recipe builds (pinshift.checks.build_check; docs/writing-steps.md): removed recipes are removed; every other recipe builds what it built.
BUILD_CHANGES = ()
LANGUAGES = ()  # no file is parsed: any selected file is removed


@dataclass(frozen=True)
class Params:
    select: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.select or any(not glob for glob in self.select):
            raise ParamError("select", f"'select' must list globs of the files to remove, not {list(self.select)!r}")


def plan_paths(paths, params: Params) -> list[fileops.FileOp]:
    return [fileops.remove(path) for path in paths if matches(path, params.select)]


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    return StepOutput()  # removals have no content to plan
