"""Trying a candidate step: plan it with the runner on the current state and keep it only if it is TARGET's.

A candidate is planned exactly as `pinshift migrate` would plan it (the recipe validator,
then `runner.plan_step` over the state's WorkingSet). It is kept when it changes at least
one file, refuses none, and every byte it changes is a change TARGET made
(`hunks.overreach`): a rename or clone must produce a path TARGET has, a removal must
take away a path TARGET does not have. Run on the recipe's files it may reach files its
evidence did not come from; it is then tried again with `files` restricted to globs of
that group, then to the paths themselves. A candidate that fails every way is dropped,
and the first reason is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from pinshift.errors import PinshiftError
from pinshift.globs import matches
from pinshift.infer.candidates import Candidate, Setting, draft_message
from pinshift.infer.groups import exact_globs, group_globs
from pinshift.infer.hunks import overreach
from pinshift.infer.state import State
from pinshift.plan import FileChange, StepPlan
from pinshift.recipes import Recipe, RecipeStep, validate_recipe
from pinshift.runner import plan_step

RECIPE_NAME = "inferred"


@dataclass
class Accepted:
    """A candidate kept, with the `files` it runs on (None: the recipe's) and what it did."""

    candidate: Candidate
    files: tuple[str, ...] | None
    plan: StepPlan


@dataclass
class Dropped:
    candidate: Candidate
    reason: str


def recipe_step(candidate: Candidate, files: tuple[str, ...] | None) -> RecipeStep:
    return RecipeStep(kind=candidate.kind, title=candidate.title, params=dict(candidate.params),
                      message=draft_message(candidate.title, candidate.detail), files=files)


def file_options(state: State, candidate: Candidate, setting: Setting) -> list[tuple[str, ...] | None]:
    """The `files` a candidate is tried with, broadest first."""
    if candidate.files is not None:
        return [candidate.files]
    intended = sorted(set(candidate.intended))
    options: list[tuple[str, ...] | None] = []
    if all(matches(p, setting.recipe_files) for p in intended) and not candidate.narrow_only:
        options.append(None)
    universe = set(state.paths()) | set(state.comparison.target_paths())
    globs = group_globs(intended, universe - set(intended))
    if globs is not None:
        options.append(globs)
    exact = exact_globs(intended)
    if exact not in options:
        options.append(exact)
    return options


def attempt(state: State, candidate: Candidate, setting: Setting, kinds) -> Accepted | Dropped:
    """Plan `candidate` on `state`; keep its changes there and return Accepted, or leave `state` as it was.

    The broadest `files` that works wins, unless it makes the step warn about files its evidence did
    not come from (pin-nixpkgs leaving a file it cannot convert): then a narrower one that works
    without those warnings is preferred.
    """
    first: str | None = None
    fallback = None
    options = file_options(state, candidate, setting)
    for position, files in enumerate(options):
        snapshot = state.snapshot()
        try:
            planned = plan_candidate(state, candidate, files, setting, kinds)
            problem = check_step(state, planned)
        except PinshiftError as error:
            planned, problem = None, str(error).splitlines()[0] if str(error) else type(error).__name__
        if problem is None and position + 1 < len(options) and stray_warnings(planned, candidate):
            fallback = fallback or files
            problem = "warns about files TARGET does not change"
        if problem is None:
            state.moved()
            return Accepted(candidate, files, planned)
        state.restore(snapshot)
        first = first or problem
    if fallback is not None:
        return attempt_with(state, candidate, fallback, setting, kinds)
    return Dropped(candidate, first or "no files to run on")


def attempt_with(state: State, candidate: Candidate, files, setting: Setting, kinds) -> Accepted:
    planned = plan_candidate(state, candidate, files, setting, kinds)
    state.moved()
    return Accepted(candidate, files, planned)


def stray_warnings(planned: StepPlan, candidate: Candidate) -> bool:
    intended = set(candidate.intended)
    return any(change.warnings and change.path not in intended for change in planned.files)


def plan_candidate(state: State, candidate: Candidate, files, setting: Setting, kinds) -> StepPlan:
    recipe = Recipe(name=RECIPE_NAME, description="", base="", target="", files=setting.recipe_files,
                    steps=(recipe_step(candidate, files),), source="the inferred recipe")
    [(step, kind, params)] = validate_recipe(recipe, kinds, setting.branches)
    return plan_step(state.files, kind, params, recipe.files_for(step), title=step.title, message=step.message,
                     recipe=RECIPE_NAME, raw_params=step.params)


def check_step(state: State, planned: StepPlan) -> str | None:
    """Why the planned step is not TARGET's (None: every change it makes is one TARGET made)."""
    if planned.refused:
        change = planned.refused[0]
        return f"refuses {change.path}: {change.reason}" if not change.reason.startswith(change.path) else \
            f"refuses {change.reason}"
    if not planned.changed:
        return "changes nothing"
    for change in planned.changed:
        problem = check_change(state, change)
        if problem is not None:
            return problem
    return None


def check_change(state: State, change: FileChange) -> str | None:
    comparison = state.comparison
    in_target = comparison.target_tree.mode(change.path) is not None
    if change.removed:
        return f"removes {change.path}, which TARGET keeps" if in_target else None
    if (change.old_path is not None or change.source is not None) and not in_target:
        made = "renames" if change.old_path is not None else "copies"
        return f"{made} {change.old_path or change.source} to {change.path}, which TARGET does not have"
    if change.old_path is not None and comparison.target_tree.mode(change.old_path) is not None:
        return f"renames {change.old_path}, which TARGET keeps"
    target_path = change.path if in_target else target_of(state, change.path)
    if target_path is None:
        return None  # a file TARGET removes: editing it first changes nothing TARGET keeps
    target = comparison.target_read(target_path)
    if target is None or change.before is None or change.after is None:
        return None
    found = overreach(change.before, change.after, target)
    if not found:
        return None
    first = found[0]
    line = change.before.count(b"\n", 0, first.start) + 1
    return (f"would change {change.path}:{line} ({_shown(first.before)} -> {_shown(first.after)}) where TARGET has "
            f"{_shown(first.target)}")


def target_of(state: State, path: str) -> str | None:
    """The TARGET path a current path stands for when the names differ (a rename not made yet)."""
    for target_path, origin in state.comparison.renamed.items():
        if origin == path:
            return target_path
    return None


def _shown(data: bytes, limit: int = 40) -> str:
    text = data.decode("utf-8", "replace")
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(text)
