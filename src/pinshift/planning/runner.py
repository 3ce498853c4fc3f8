"""Turn a recipe (or one step) into a Plan, entirely in memory.

Steps run in order; each step reads the files as the previous step left them,
so the Plan holds exactly the bytes each commit will contain. Nothing here
writes files, runs git or prints.

Files flow through the steps one at a time (file-major): a file is parsed once,
each step plans edits on the current tree, the edits are applied in one pass
and the tree is re-parsed incrementally for the next step. Trees are dropped as
soon as a file is done, so memory stays flat however large the repository, and
files are independent, so a process pool can share them out (see
`pinshift.planning.pool`). The one thing that needs every file at once is a step kind's
`prepare` (pin-swap resolving an abbreviated revision): such a step starts a new
*segment*, and the files are surveyed, as the steps before it left them, before
the segment runs. Results are merged in path order, so serial and parallel runs
give identical plans.

A file-level step (rename-files, clone-files, remove-files: a kind with
`plan_paths`) also starts a segment. Its paths are planned first, from the paths
as the steps before it left them, and checked (`pinshift.files.fileops.check_file_ops`)
before any content is planned; the WorkingSet then moves them, and the segment's
content pass runs the step's `plan` on each new path (its self-references)
before the later steps, which see the new paths. A later step whose globs name
only paths taken away is a recipe error.

This module ties the stages together, in the order data flows through them:
`jobs` (a recipe step as the pipeline runs it, `RunOptions`), `working_set` (the
files as the steps so far left them), `segments` (the steps cut into segments,
one segment's files planned), `prepare` (a segment's first step: paths and
references before contents), `survey` (a `prepare` hook's look at every file,
or a guess checked against every file), `file_edits` (one file through a
segment's steps: edits planned and applied), `memo_lookup` (files looked up in
the plan memo, `memo`, before they are planned), `pool` (files shared out to
workers); the result is a `plan.Plan`, which commits and the report read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pinshift.files.tree import SourceTree
from pinshift.planning.jobs import RunOptions, StepJob
from pinshift.planning.plan import DERIVED, FileChange, Plan, StepPlan
from pinshift.planning.prepare import check_named_paths, plan_paths, settle_file_ops, with_references
from pinshift.planning.references import check_segment
from pinshift.planning.segments import run_segment, segments_of
from pinshift.planning.survey import SurveyDocuments, can_speculate, guess_params, needs_survey, segment_paths
from pinshift.planning.working_set import WorkingSet
from pinshift.recipes.recipe import Recipe, RecipeStep
from pinshift.steps.kind import StepKind


def run_jobs(files: WorkingSet, jobs: Sequence[StepJob], options: RunOptions = RunOptions()) -> list[StepPlan]:
    """Plan every job over `files` (recording changed bytes in it) and return one StepPlan per job.

    A segment's surveying step normally surveys every file first (one extra parse
    of each). When its kind offers `survey`/`resolve`, the runner instead guesses
    the prepared params from the first few files, surveys each file during the
    same pass that plans it, and checks the guess against all the surveys; a
    wrong guess (rare: only when files disagree) re-runs the segment with the
    right params, so the result is always what a full survey gives.
    """
    jobs = list(jobs)
    plans = [job.new_plan() for job in jobs]
    for positions in segments_of(jobs):
        check_named_paths(files, jobs[positions[0]])
        modes: dict[str, str] = {}
        if jobs[positions[0]].kind.plans_paths:
            jobs[positions[0]], modes = plan_paths(files, jobs[positions[0]], plans[positions[0]])
        elif jobs[positions[0]].kind.plans_references(jobs[positions[0]].params):
            jobs[positions[0]], _ = with_references(files, jobs[positions[0]], plans[positions[0]], ())
        for position in positions[1:]:
            check_named_paths(files, jobs[position])
        all_paths = files.paths()
        first = jobs[positions[0]]
        speculated = None
        if needs_survey(first):
            guess = guess_params(files, first, all_paths) if can_speculate(first) else None
            if guess is not None:
                speculated = first
                jobs[positions[0]] = replace(first, params=guess, survey_params=first.params)
            else:
                files.prefetch(segment_paths([first], all_paths))
                survey = SurveyDocuments(files, first, all_paths)
                jobs[positions[0]] = replace(first, params=first.kind.prepare(first.params, survey))
        results = run_segment(files, jobs, positions, all_paths, options)
        if speculated is not None:
            surveys = [c.survey[0] for _, changes in results if (c := changes[0]) is not None and c.survey]
            actual = speculated.kind.resolve(speculated.params, surveys)
            if actual != guess:
                jobs[positions[0]] = replace(speculated, params=actual)
                results = run_segment(files, jobs, positions, all_paths, options)
        if first.kind.plans_paths:
            settle_file_ops(files, jobs[positions[0]], results, modes)
        check_segment(files, [jobs[p] for p in positions], results, [plans[p] for p in positions])
        for path, changes in results:
            _share_held(files, path, changes)
            for position, change in zip(positions, changes):
                if change is not None:
                    change.survey = None
                    plans[position].files.append(change)
                    plans[position].notes.extend(str(note) for note in change.notes)
            final = next((c for c in reversed(changes) if c is not None and c.__dict__.get("_after") is not None), None)
            if final is not None:
                files.changed[path] = final  # its bytes are read when a later segment needs them
    for plan in plans:
        plan.files.sort(key=lambda f: f.path)
    return plans


def _share_held(files: WorkingSet, path: str, changes) -> None:
    """Derive a segment's first change of `path` from the change the last segment left, not from a copy of its bytes."""
    held = files.changed.get(path)
    if not isinstance(held, FileChange):
        return
    first = next((c for c in changes if c is not None and isinstance(c.__dict__.get("_before"), bytes)
                  and c.__dict__.get("_after") is DERIVED), None)
    if first is not None and first.__dict__["_before"] == held.after:
        first.__dict__["_before"] = held

# --- the public entry points ------------------------------------------------------------------


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
    tree_globs: Sequence[str] | None = None,
) -> StepPlan:
    """Plan one step over the files matching `globs`, and record its results in `files`.

    `tree_globs`: the files the step may edit for their references (default: `globs`)."""
    job = StepJob(
        index=index, total=total, kind=kind, params=params, globs=tuple(globs), title=title,
        message=message, recipe=recipe, raw_params=dict(raw_params or {}), needles=kind.needles(params),
        tree_globs=tuple(tree_globs if tree_globs is not None else globs),
    )
    return run_jobs(files, [job], options)[0]


def plan_recipe(
    tree: SourceTree,
    recipe: Recipe,
    resolved: Sequence[tuple[RecipeStep, StepKind, Any]],
    options: RunOptions = RunOptions(),
    start: int = 1,
) -> Plan:
    """Plan every step of `recipe` from step `start` on, each on the output of the one before."""
    total = len(resolved)
    jobs = [
        StepJob(
            index=index, total=total, kind=kind, params=params, globs=tuple(recipe.files_for(step)),
            title=step.title, message=step.message, recipe=recipe.name, raw_params=dict(step.params),
            needles=kind.needles(params), tree_globs=tuple(recipe.files),
        )
        for index, (step, kind, params) in enumerate(resolved, 1)
        if index >= start
    ]
    return Plan(recipe=recipe.name, steps=run_jobs(WorkingSet(tree), jobs, options))
