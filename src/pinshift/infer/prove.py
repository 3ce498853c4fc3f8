"""Trying a candidate step: plan it with the runner on the current state and keep it only if it is TARGET's.

A candidate is planned exactly as `pinshift migrate` would plan it (the recipe validator,
then `runner.plan_step` over the state's WorkingSet). It is kept when it changes at least
one file, refuses none, and every byte it changes is a change TARGET made
(`hunks.overreach`): a rename or clone must produce a path TARGET has, a removal must
take away a path TARGET does not have. Run on the recipe's files it may reach files its
evidence did not come from, or change some files otherwise than TARGET: those files are
left out and it is tried again on the rest, with `files` restricted to a few globs of
them (or a short list). A candidate that fails every way is dropped, and the first
reason is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from pinshift.errors import PinshiftError
from pinshift.files.globs import matches
from pinshift.infer.candidates import Candidate, Setting, draft_message
from pinshift.infer.group_globs import describe
from pinshift.infer.token_hunks import overreach
from pinshift.infer.state import State
from pinshift.planning.plan import FileChange, StepPlan
from pinshift.recipes.recipe import Recipe, RecipeStep, validate_recipe
from pinshift.planning.runner import plan_step

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


def first_files(state: State, candidate: Candidate, setting: Setting) -> tuple[str, ...] | None | bool:
    """The `files` a candidate is tried with first: its own, the recipe's, or globs of its group (False: none)."""
    if candidate.files is not None:
        return candidate.files
    intended = sorted(set(candidate.intended))
    if all(matches(p, setting.recipe_files) for p in intended) and not candidate.narrow_only:
        return None
    return narrowed(state, intended)


def narrowed(state: State, keep) -> tuple[str, ...] | bool:
    """`files` for exactly the paths `keep` (False when no few globs or short list says them)."""
    universe = set(state.paths()) | set(state.comparison.target_paths())
    found = describe(keep, universe - set(keep))
    return False if found is None else found


def attempt(state: State, candidate: Candidate, setting: Setting, kinds) -> Accepted | Dropped:
    """Plan `candidate` on `state`; keep its changes there and return Accepted, or leave `state` as it was.

    Tried first on the recipe's files (or its group's); every file where its change is not TARGET's
    (or that it refuses) is then left out, and it is tried again on the rest, described by a few
    globs (`groups.describe`), until it changes only what TARGET changed: the files left out are
    residue, not a reason to lose the step everywhere. A step that works but warns about files its
    evidence did not come from (pin-nixpkgs leaving a file it cannot convert) is narrowed too when
    that removes the warnings, and kept with them otherwise.
    """
    first: str | None = None
    fallback = None
    tried: list = []
    files = first_files(state, candidate, setting)
    while files is not False and files not in tried and len(tried) < MAX_ROUNDS:
        tried.append(files)
        snapshot = state.snapshot()
        try:
            planned = plan_candidate(state, candidate, files, setting, kinds)
        except PinshiftError as error:
            state.restore(snapshot)
            first = first or (str(error).splitlines()[0] if str(error) else type(error).__name__)
            files = narrowed(state, candidate.intended) if files is None and candidate.files is None else False
            continue
        wrong = wrong_files(state, planned)
        stray = stray_warnings(planned, candidate) if not wrong and fallback is None else set()
        if planned.changed and not wrong and not stray:
            state.moved()
            return Accepted(candidate, files, planned)
        state.restore(snapshot)
        if not planned.changed:
            first = first or "changes nothing"
            break
        if stray:
            fallback = files
        first = first or next(iter(wrong.values()), None)
        keep = touched(planned) - set(wrong) - stray
        if not keep:
            break
        files = narrowed(state, sorted(keep))
        if files is False:
            first = (f"{first}; " if first else "") + (f"no few globs say the {len(keep)} files where it "
                                                        "is right without the others")
    if fallback is not None:
        return attempt_with(state, candidate, fallback, setting, kinds)
    return Dropped(candidate, first or "no files to run on")


MAX_ROUNDS = 4


def touched(planned: StepPlan) -> set[str]:
    """Every path a planned step reads or writes: edited, renamed (both names), cloned (source and copy)."""
    found = set()
    for change in planned.changed:
        found.add(change.path)
        found.update(p for p in (change.old_path, change.source) if p is not None)
    return found


def wrong_files(state: State, planned: StepPlan) -> dict[str, str]:
    """Path -> why, for each file the step refuses or changes otherwise than TARGET (a clone or rename: both names)."""
    found: dict[str, str] = {}
    for change in planned.refused:
        found[change.path] = (f"refuses {change.path}: {change.reason}" if not change.reason.startswith(change.path)
                              else f"refuses {change.reason}")
    for change in planned.changed:
        problem = check_change(state, change)
        if problem is not None:
            for path in (change.path, change.old_path, change.source):
                if path is not None:
                    found.setdefault(path, problem)
    return found


def attempt_with(state: State, candidate: Candidate, files, setting: Setting, kinds) -> Accepted:
    planned = plan_candidate(state, candidate, files, setting, kinds)
    state.moved()
    return Accepted(candidate, files, planned)


def stray_warnings(planned: StepPlan, candidate: Candidate) -> set[str]:
    intended = set(candidate.intended)
    return {change.path for change in planned.files if change.warnings and change.path not in intended}


def plan_candidate(state: State, candidate: Candidate, files, setting: Setting, kinds) -> StepPlan:
    recipe = Recipe(name=RECIPE_NAME, description="", base="", target="", files=setting.recipe_files,
                    steps=(recipe_step(candidate, files),), source="the inferred recipe")
    [(step, kind, params)] = validate_recipe(recipe, kinds, setting.branches)
    return plan_step(state.files, kind, params, recipe.files_for(step), title=step.title, message=step.message,
                     recipe=RECIPE_NAME, raw_params=step.params)


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
