"""After planning a migration: what each recipe builds, step by step, against the stand-in nixpkgs.

The start commit and the tree after each planned step are written to a private directory
(pinshift.checks.snapshots) and every recipe of each (pinshift.checks.recipe_set.build_recipe_paths: `.flox/pkgs/NAME.nix` and `.flox/pkgs/NAME/default.nix`, no
`lib/` helper; a file a recipe imports is evaluated through it; a tree with no recipe is not evaluated at all, and the report says so in
one line) is evaluated (pinshift.checks.evaluation; a file
whose bytes and imports a step did not change is looked up, not evaluated again). Then, per step, each
recipe's summary after it is compared with the one before it:

  - a recipe that evaluated before the step and does not after it is *broken by the step*: the step gets
    a refused file naming the recipe and Nix's message, so migrate makes no branch (exit 1), unless
    `--allow-broken` (then it is a warning on the step, and the report says so);
  - a changed attribute the step's kind does not declare (`BUILD_CHANGES`, a module-level tuple in each
    step kind; docs/writing-steps.md) is a warning on the step, one message per recipe, so that the report
    groups the recipes changed the same way ("237 files: …").

The "What the recipes build" section compares the start with the last tree (git's renames of the planned
steps followed). Without nix-instantiate on PATH nothing is evaluated and the section is one note.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pinshift.checks.build_changes import Change, RecipeDiff, change_words, compare, normal_changes
from pinshift.checks.build_diff import EvaluationStats, evaluate_snapshots
from pinshift.checks.evaluation import Evaluation, find_nix
from pinshift.checks.snapshots import Scratch, Snapshot
from pinshift.checks.summary_memo import SummaryMemo
from pinshift.checks.recipe_set import FLOX_RECIPE_FILES, build_recipe_paths
from pinshift.planning.plan import FileChange, Outcome, Plan, StepPlan, Warning, iter_tree_changes

SKIPPED = ("what the recipes build was not checked: nix-instantiate is not on PATH (install Nix, Debian: "
           "apt-get install nix-bin, to evaluate each step's recipes offline)")
SLOW_SECONDS = 20.0  # an evaluation this long is worth a word on how to avoid it
# What the check evaluates: the Flox recipes (what builds; a file they import is evaluated through them, so a
# step changing it is seen in their summaries). Kept to this one selection so that it can follow the definition
# of a recipe status and lint use (pinshift.checks.collect).
RECIPE_FILES = FLOX_RECIPE_FILES  # one definition: pinshift.checks.recipe_set
NO_RECIPES = ("what the recipes build was not checked: no file here is a Flox recipe (.flox/pkgs/**/*.nix), "
              "so nothing builds to evaluate")
TURNED_OFF = ("what the recipes build was not checked (--no-build-check): a step that breaks a recipe's evaluation "
              "or changes more than its kind intends is not caught")


@dataclass
class BuildsCheck:
    """What migrate's check found, as its report shows it (`Plan.builds`)."""

    checked: bool
    recipes: list[RecipeDiff] = field(default_factory=list)  # the start commit -> the last step's tree
    keys: dict[str, tuple] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    allow_broken: bool = False
    broken: dict[int, list[RecipeDiff]] = field(default_factory=dict)  # step index -> the recipes it broke
    stats: EvaluationStats = field(default_factory=EvaluationStats)
    # the start and the last tree at the real pins (--nixpkgs: pinshift.checks.real_check); None: not checked
    real: list | None = None


# --- what a step kind intends ---------------------------------------------------------------------------------------


def intended(module: Any, params: Any) -> tuple[str, ...] | None:
    """The attribute patterns a step kind declares it changes (`BUILD_CHANGES`), its `{param}`s filled from the
    step's parameters (a pattern naming a parameter the step has not set is left out); None: it declares nothing."""
    declared = getattr(module, "BUILD_CHANGES", None)
    if declared is None:
        return None
    found = []
    for pattern in declared:
        names = re.findall(r"\{([a-z_]+)\}", pattern)
        values = {name: getattr(params, name, None) for name in names}
        if any(not isinstance(value, str) or not value for value in values.values()):
            continue
        for name, value in values.items():
            pattern = pattern.replace(f"{{{name}}}", value)
        found.append(pattern)
    return tuple(found)


_RENAME = re.compile(r"«(.+)→(.+)»")
_NAMES = re.compile(r"^overrides\[\d+\]\.[A-Za-z]+$")


def _matches(attribute: str, patterns: Sequence[str]) -> bool:
    return any(not _RENAME.fullmatch(p) and fnmatch.fnmatchcase(attribute, p) for p in patterns)


def _renamed(value: Any, old: str, new: str) -> Any:
    """`value` with the path segment `old` of every symbolic path («a.old.b») and package path written `new`."""
    if isinstance(value, str):
        def segment(match: re.Match) -> str:
            return "«" + ".".join(new if part == old else part for part in match.group(1).split(".")) + "»"
        value = re.sub(r"«([^»]*)»", segment, value)
        if re.fullmatch(r"[A-Za-z0-9_.'-]+", value):
            value = ".".join(new if part == old else part for part in value.split("."))
        return value
    if isinstance(value, list):
        return [_renamed(item, old, new) for item in value]
    if isinstance(value, dict):
        return {new if key == old else key: _renamed(item, old, new) for key, item in value.items()}
    return value


def _segment_renamed(attribute: str, old: str, new: str) -> str:
    return re.sub(rf"(^|\.){re.escape(old)}(?=$|[.\[])", lambda m: m.group(1) + new, attribute)


def unintended(changes: Sequence[Change], patterns: Sequence[str] | None) -> list[Change]:
    """The changes the patterns do not cover (None: a kind that declares nothing is not checked). A list of the
    names an override set (`overrides[1].overrideAttrs`) is covered when every name added or removed is;
    `«from→to»` covers a value that differs by that path segment only, and an attribute that moved from a name with
    the segment to the name without it, its value renamed alike (an overlay renamed with its uses)."""
    if patterns is None or "*" in patterns:
        return []
    renames = [_RENAME.fullmatch(p).groups() for p in patterns if _RENAME.fullmatch(p)]
    moved: set[int] = set()
    by_attribute = {change.attribute: number for number, change in enumerate(changes)}
    for number, change in enumerate(changes):
        for old, new in renames:
            other = by_attribute.get(_segment_renamed(change.attribute, old, new))
            if other is None or other == number or change.after is not None or changes[other].before is not None:
                continue
            if _renamed(change.before, old, new) == changes[other].after:
                moved.update((number, other))
    left = []
    for number, change in enumerate(changes):
        if number in moved:
            continue
        if _matches(change.attribute, patterns):
            continue
        if _NAMES.match(change.attribute) and isinstance(change.before, list) and isinstance(change.after, list):
            moved = set(change.before) ^ set(change.after)
            if moved and all(_matches(str(name), patterns) for name in moved):
                continue
        if any(_renamed(change.before, old, new) == change.after for old, new in renames):
            continue
        left.append(change)
    return left


def beyond_words(kind: str, changes: Sequence[Change], every: Sequence[Change] = ()) -> str:
    """The warning for `changes` a step kind does not intend (of `every` change the step made); the overrides a
    package set gave the package, lost to a rename, said as such."""
    lost = [c for c in changes if c.attribute.startswith("package_set") and c.after is None]
    package = next((c for c in [*changes, *every] if c.attribute == "package"), None)
    rest = [c for c in changes if not c.attribute.startswith("package_set")] if lost else list(changes)
    rest.sort(key=lambda c: {"version": 0, "src": 1}.get(c.attribute, 2))  # what a lost override set, first
    words = "; ".join(change_words(c) for c in rest) or "; ".join(change_words(c) for c in changes)
    if lost:
        names = sorted({name for c in lost if isinstance(c.before, dict) for name in c.before if name != "//"})
        what = ", ".join(names) or "its packages"
        where = ""
        if package is not None and isinstance(package.before, str) and "." in package.before:
            where = f" on {package.before.rpartition('.')[0]}"
        return (f"the package set's override of {what} (an overlay or packageOverrides{where}) no longer applies "
                f"after this {kind} step: {words}")
    return f"what it builds changes beyond what {kind} intends: {words}"


# --- the check ------------------------------------------------------------------------------------------------------


def check_plan(tree, plan: Plan, intents: dict[int, tuple[str, ...] | None], allow_broken: bool = False,
               note: Callable[[str], None] | None = None, nix: str | None = None, enabled: bool = True,
               nixpkgs=None, progress: Callable[[str, int, int], None] | None = None) -> BuildsCheck:
    """Evaluate the start tree and the tree after each step of `plan`; refuse or warn on `plan`'s steps (new
    FileChanges appended, nothing else of the plan touched); the result is also `plan.builds`. `enabled` False
    (--no-build-check): nothing evaluated, and the result says so. `nixpkgs` (a clone's folder): the start and the
    last tree also at the real pins (pinshift.checks.real_check)."""
    if not enabled:
        result = BuildsCheck(False, notes=[TURNED_OFF], allow_broken=allow_broken)
        plan.builds = result
        return result
    nix = nix or find_nix()
    if nix is None:
        result = BuildsCheck(False, notes=[SKIPPED], allow_broken=allow_broken)
        plan.builds = result
        return result
    if not any(recipe_paths(tree.paths())) and not any(
            recipe_paths([c.path for step in plan.steps for c in step.changed])):
        result = BuildsCheck(False, notes=[NO_RECIPES], allow_broken=allow_broken)
        plan.builds = result
        return result
    result = BuildsCheck(True, allow_broken=allow_broken)
    memo = SummaryMemo.open(nix, note)
    with Scratch(files=len(tree.paths()) * (1 + len(plan.steps))) as scratch:
        states = [scratch.commit("start", tree)]
        for step in plan.steps:
            writes = {change.path: change.data for change in iter_tree_changes(step)}
            states.append(scratch.after(f"step {step.index}", states[-1], writes) if writes else states[-1])
        wanted = [(state, recipe_paths(state.nix_paths())) for state in _distinct(states)]
        evaluations = evaluate_snapshots(nix, memo, scratch, wanted, result.stats, progress)
        real = None
        if nixpkgs is not None:
            from pinshift.checks.real_build import evaluate_snapshots_real

            real, _ = evaluate_snapshots_real(nixpkgs, nix, [(states[0], recipe_paths(states[0].nix_paths())),
                                                             (states[-1], recipe_paths(states[-1].nix_paths()))])
    memo.save()
    origin: dict[str, str] = {path: path for path in recipe_paths(states[0].nix_paths())}
    for number, step in enumerate(plan.steps):
        before, after = states[number], states[number + 1]
        renamed = {c.path: c.old_path for c in step.changed if c.old_path is not None}
        if before is not after:
            _check_step(step, before, after, renamed, evaluations, intents.get(step.index), result)
        for new, old in renamed.items():
            if old in origin:
                origin[new] = origin.pop(old)
        for change in step.changed:
            if change.removed:
                origin.pop(change.path, None)
    _overall(states[0], states[-1], origin, evaluations, result)
    if real is not None:
        from pinshift.checks.real_check import real_diffs, refuse_real_breaks

        result.real = real_diffs(result.recipes, states[0].name, states[-1].name, real)
        broken = refuse_real_breaks(plan, result.real, allow_broken)
        if broken and allow_broken:
            result.notes.append(f"--allow-broken: {len(broken)} recipe{'s' if len(broken) != 1 else ''} no longer "
                                "evaluate at their real pins")
    for step in plan.steps:
        if intents.get(step.index) is None and step.changed:
            result.notes.append(f"step {step.index} ({step.kind}) declares no BUILD_CHANGES: what it changes in the "
                                "recipes is not checked against an intent (docs/writing-steps.md)")
    if result.stats.seconds >= SLOW_SECONDS:
        result.notes.append(f"evaluating {result.stats.evaluated:,} recipe states took {result.stats.seconds:.0f} s "
                            "(a run with the same files remembers them; --no-build-check skips the check)")
    if result.broken and allow_broken:
        count = sum(len(found) for found in result.broken.values())
        steps = ", ".join(str(index) for index in sorted(result.broken))
        result.notes.append(f"--allow-broken: {count} recipe{'s' if count != 1 else ''} no longer evaluate "
                            f"(broken by step {steps})")
    plan.builds = result
    return result


def recipe_paths(paths: Sequence[str]) -> list[str]:
    """The paths among `paths` that are recipes (RECIPE_FILES): what the check evaluates."""
    return build_recipe_paths(paths)


def _distinct(states: Sequence[Snapshot]) -> list[Snapshot]:
    seen: list[Snapshot] = []
    for state in states:
        if not any(state is other for other in seen):
            seen.append(state)
    return seen


def _evaluation(evaluations: dict, state: Snapshot, path: str | None) -> Evaluation | None:
    if path is None or path not in state.files:
        return None
    return evaluations.get((state.name, path))


def _check_step(step: StepPlan, before: Snapshot, after: Snapshot, renamed: dict[str, str], evaluations: dict,
                patterns: tuple[str, ...] | None, result: BuildsCheck) -> None:
    kind = step.kind
    for path in recipe_paths(after.nix_paths()):
        old = renamed.get(path, path)
        left, right = _evaluation(evaluations, before, old), _evaluation(evaluations, after, path)
        if left is None or right is None or left is right:
            continue
        diff = compare(path, left, right, old if old != path else None)
        if diff.status == "broken":
            result.broken.setdefault(step.index, []).append(diff)
            if result.allow_broken:
                _warn(step, path, f"no longer evaluates after this step (--allow-broken): {diff.error}")
            else:
                step.files.append(FileChange(path, Outcome.REFUSED, "nix", reason=(
                    f"{path}: no longer evaluates after this step: {diff.error} (pinshift migrate --allow-broken "
                    "commits it anyway)")))
        elif diff.status == "changed":
            left_over = unintended(diff.changes, patterns)
            if left_over:
                _warn(step, path, beyond_words(kind, left_over, diff.changes))


def _warn(step: StepPlan, path: str, message: str) -> None:
    step.files.append(FileChange(path, Outcome.UNCHANGED, "nix", warnings=[Warning(path, 0, 0, message)]))


def _overall(start: Snapshot, last: Snapshot, origin: dict[str, str], evaluations: dict,
             result: BuildsCheck) -> None:
    came_from = {new: old for new, old in origin.items()}
    gone = set(recipe_paths(start.nix_paths())) - set(came_from.values())
    for path in recipe_paths(last.nix_paths()):
        old = came_from.get(path)
        left = _evaluation(evaluations, start, old)
        right = _evaluation(evaluations, last, path)
        diff = compare(path, left, right, old if old and old != path else None)
        result.recipes.append(diff)
        if diff.status == "changed":
            result.keys[path] = normal_changes(diff, left.summary, right.summary)
    for path in sorted(gone):
        result.recipes.append(compare(path, _evaluation(evaluations, start, path), None))
    result.recipes.sort(key=lambda r: r.path)
