"""Turn a recipe (or one step) into a Plan, entirely in memory.

Steps run in order; each step reads the files as the previous step left them,
so the Plan holds exactly the bytes each commit will contain. Per file, per
step: read, prefilter on the step's needles, parse, plan edits, apply in one
pass, re-parse, and record an outcome (changed / unchanged / skipped / refused).
Nothing here writes files, runs git or prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pinshift import languages
from pinshift.edits import apply_to_document, normalize_edits
from pinshift.errors import EditConflict, EditRefused
from pinshift.files import SkippedFile, SourceTree
from pinshift.globs import matches
from pinshift.plan import AppliedEdit, FileChange, Outcome, Plan, StepPlan, Warning
from pinshift.recipes import Recipe, RecipeStep
from pinshift.steps import StepContext, StepKind


@dataclass(frozen=True)
class RunOptions:
    """Options shared by every command that plans steps."""

    strict: bool = False
    progress: Callable[[int, int], None] | None = None


class WorkingSet:
    """The files of a tree as the steps so far have left them (an overlay of changed bytes)."""

    def __init__(self, tree: SourceTree):
        self.tree = tree
        self.changed: dict[str, bytes] = {}

    def paths(self) -> list[str]:
        return self.tree.paths()

    def read(self, path: str) -> bytes:
        if path in self.changed:
            return self.changed[path]
        return self.tree.read(path)


def _applied(doc: Any, edits) -> list[AppliedEdit]:
    out = []
    for edit in edits:
        line, column = doc.position(edit.start)
        out.append(AppliedEdit(doc.path, line, column, doc.data[edit.start : edit.end], edit.replacement, edit.reason))
    return out


def _warnings(doc: Any, output) -> list[Warning]:
    out = []
    for warning in output.warnings:
        line, column = doc.position(warning.offset) if warning.offset >= 0 else (0, 0)
        out.append(Warning(doc.path, line, column, warning.message))
    return out


def plan_step(
    files: WorkingSet,
    kind: StepKind,
    params: Any,
    globs: Sequence[str],
    index: int = 1,
    total: int = 1,
    title: str = "",
    message: str = "",
    recipe: str = "",
    raw_params: Mapping[str, Any] | None = None,
    options: RunOptions = RunOptions(),
) -> StepPlan:
    """Plan one step over the files matching `globs`, and record its results in `files`."""
    step = StepPlan(
        index=index, total=total, kind=kind.name, title=title or kind.name,
        params=dict(raw_params or {}), message=message,
    )
    if kind.origin != "bundled":
        step.notes.append(f"step kind '{kind.name}' loaded from {kind.origin}")
    needles = kind.needles(params)
    candidates = [p for p in files.paths() if matches(p, globs)]
    docs = []
    for number, path in enumerate(candidates, 1):
        if options.progress:
            options.progress(number, len(candidates))
        language = languages.language_for(path)
        if language is None or language not in kind.languages:
            continue
        try:
            data = files.read(path)
        except SkippedFile as skipped:
            step.files.append(FileChange(path, Outcome.SKIPPED, language, reason=str(skipped)))
            continue
        if needles and not any(n in data for n in needles):
            step.files.append(FileChange(path, Outcome.UNCHANGED, language))
            continue
        doc = languages.parse(language, data, path)
        if doc.problems:
            first = doc.problems[0]
            step.files.append(
                FileChange(path, Outcome.REFUSED, language, reason=f"{first}; fix the file or exclude it from the step's files")
            )
            continue
        docs.append((language, doc))
    params = kind.prepare(params, [doc for _, doc in docs])
    for language, doc in docs:
        context = StepContext(path=doc.path, recipe=recipe, step_index=index)
        output = kind.plan(doc, params, context)
        change = FileChange(doc.path, Outcome.UNCHANGED, language, warnings=_warnings(doc, output))
        try:
            edits = normalize_edits(output.edits, doc)
            result = apply_to_document(doc, edits)
        except (EditConflict, EditRefused) as error:
            change.outcome = Outcome.REFUSED
            change.reason = str(error)
            step.files.append(change)
            continue
        if result.data != doc.data:
            change.outcome = Outcome.CHANGED
            change.before, change.after = doc.data, result.data
            change.edits = _applied(doc, edits)
            files.changed[doc.path] = result.data
        step.files.append(change)
    step.files.sort(key=lambda f: f.path)
    return step


def plan_recipe(
    tree: SourceTree,
    recipe: Recipe,
    resolved: Sequence[tuple[RecipeStep, StepKind, Any]],
    options: RunOptions = RunOptions(),
    start: int = 1,
) -> Plan:
    """Plan every step of `recipe` from step `start` on, each on the output of the one before."""
    files = WorkingSet(tree)
    plan = Plan(recipe=recipe.name, steps=[])
    total = len(resolved)
    for index, (step, kind, params) in enumerate(resolved, 1):
        if index < start:
            continue
        plan.steps.append(
            plan_step(
                files, kind, params, recipe.files_for(step), index=index, total=total,
                title=step.title, message=step.message, recipe=recipe.name,
                raw_params=step.params, options=options,
            )
        )
    return plan
