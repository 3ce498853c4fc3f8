"""After planning a migration: what each recipe builds, step by step, against the stand-in nixpkgs.

The start commit and the tree after each planned step are written to a private directory
(pinshift.evaluation.snapshots) when something in them must be evaluated (pinshift.evaluation.evaluation; a file
whose bytes and imports are unchanged is looked up, not evaluated again). Every recipe (pinshift.facts.recipe_set.build_recipe_paths: `.flox/pkgs/NAME.nix` and
`.flox/pkgs/NAME/default.nix`, no `lib/` helper; a file a recipe imports is evaluated through it; a tree with no
recipe is not evaluated at all, and the report says so in one line) is evaluated in the
start and the last tree; the trees in between only for a recipe that several steps touched and whose last
summary fails or changes beyond what those steps' kinds declare, or does not change at all (`_blame`). Then,
per step, each recipe's summary after it is compared with the one before it:

  - a recipe that evaluated before the step and does not after it is *broken by the step*: the step gets
    a refused file naming the recipe and Nix's message, so migrate makes no branch (exit 1), unless
    `--allow-broken` (then it is a warning on the step, and the report says so);
  - a changed attribute the step's kind does not declare (`BUILD_CHANGES`, a module-level tuple in each
    step kind; docs/writing-steps.md) is a warning on the step, one message per recipe, so that the report
    groups the recipes changed the same way ("237 files: …").

What the ends alone cannot see (docs/diff.md): a recipe broken by one step and mended by a later one that also
touched it, or changed by one step in a way only another touching step declares, when its last summary changes
only as those steps declare.

The "What the recipes build" section compares the start with the last tree (git's renames of the planned
steps followed). Without nix-instantiate on PATH nothing is evaluated and the section is one note.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import fnmatch
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pinshift.evaluation.build_changes import Change, RecipeDiff, change_words, compare, normal_changes
from pinshift.evaluation.build_diff import EvaluationStats, evaluate_snapshots
from pinshift.evaluation.evaluation import Evaluation, find_nix
from pinshift.evaluation.snapshots import Scratch, Snapshot
from pinshift.evaluation.summary_memo import CheckMemo, SummaryMemo, of_the_tree, usable_name
from pinshift.facts.recipe_set import FLOX_RECIPE_FILES, build_recipe_paths
from pinshift.planning.plan import FileChange, Outcome, Plan, StepPlan, Warning, iter_tree_changes

SKIPPED = ("what the recipes build was not checked: nix-instantiate is not on PATH (install Nix, Debian: "
           "apt-get install nix-bin, to evaluate each step's recipes offline)")
SLOW_SECONDS = 20.0  # an evaluation this long is worth a word on how to avoid it
# What the check evaluates: the Flox recipes (what builds; a file they import is evaluated through them, so a
# step changing it is seen in their summaries). Kept to this one selection so that it can follow the definition
# of a recipe status and lint use (pinshift.facts.collect).
RECIPE_FILES = FLOX_RECIPE_FILES  # one definition: pinshift.facts.recipe_set
NO_RECIPES = ("what the recipes build was not checked: no file here is a Flox recipe (.flox/pkgs/**/*.nix), "
              "so nothing builds to evaluate")
# this process's whole results found remembered ("recalled") and checked afresh ("checked"), as
# pinshift.evaluation.evaluation.EVALUATED counts evaluations (tests read it)
RECALLED: Counter[str] = Counter()
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
    # the start and the last tree at the real pins (--nixpkgs: pinshift.evaluation.real_check); None: not checked
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
    last tree also at the real pins (pinshift.evaluation.real_check)."""
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
    name = usable_name(nix, note)
    remembered = CheckMemo.open(name, note) if nixpkgs is None else None
    key = check_key(tree, plan, intents, allow_broken) if remembered is not None else None
    if key is not None and _recall(remembered.lookup(key), plan, result):
        RECALLED["recalled"] += 1
        return _finish(plan, intents, result)
    RECALLED["checked"] += 1
    added = [len(step.files) for step in plan.steps]  # what the check appends to each step follows these
    memo = SummaryMemo(name)
    with Scratch(files=len(tree.paths()) * (1 + len(plan.steps))) as scratch:
        states = [scratch.commit("start", tree)]
        written: list[set[str]] = []
        for step in plan.steps:  # each step's bytes made from the plan when hashed and when written, never held
            after = scratch.after(f"step {step.index}", states[-1],
                                  lambda step=step: ((change.path, change.data) for change in iter_tree_changes(step)))
            written.append(set(after.written))
            states.append(after if after.written else states[-1])
        # the start and the last tree only; the trees in between only for the recipes `_needs_steps` names
        ends = _distinct([states[0], states[-1]])
        evaluations = evaluate_snapshots(nix, memo, scratch, [(state, recipe_paths(state.nix_paths())) for state in ends],
                                         result.stats, progress)
        lines = _lineages(plan, states)
        seen: dict = {}  # (id(before), id(after)) -> their changes: each pair of summaries compared once
        blame = {id(line): _blame(line, states, written, evaluations, intents, plan, seen) for line in lines}
        between: dict[int, list[str]] = {}
        for line in lines:
            if blame[id(line)] == "steps":
                for number in range(1, len(states) - 1):
                    if line[number] is not None and all(states[number] is not end for end in ends):
                        between.setdefault(number, []).append(line[number])
        if between:
            wanted = [(states[number], paths) for number, paths in sorted(between.items())]
            evaluations.update(evaluate_snapshots(nix, memo, scratch, wanted, result.stats, progress))
        real = None
        if nixpkgs is not None:
            from pinshift.evaluation.real_build import evaluate_snapshots_real

            real, _ = evaluate_snapshots_real(nixpkgs, nix, [(states[0], recipe_paths(states[0].nix_paths())),
                                                             (states[-1], recipe_paths(states[-1].nix_paths()))])
    memo.save()
    origin: dict[str, str] = {path: path for path in recipe_paths(states[0].nix_paths())}
    for number, step in enumerate(plan.steps):
        before, after = states[number], states[number + 1]
        renamed = {c.path: c.old_path for c in step.changed if c.old_path is not None}
        if before is not after:
            pairs = _step_pairs(number + 1, lines, blame, states, evaluations)
            _check_step(step, before, after, renamed, pairs, intents.get(step.index), result, seen)
        for new, old in renamed.items():
            if old in origin:
                origin[new] = origin.pop(old)
        for change in step.changed:
            if change.removed:
                origin.pop(change.path, None)
    _overall(states[0], states[-1], origin, evaluations, result, seen)
    if key is not None and all(of_the_tree(evaluation) for evaluation in evaluations.values()):
        remembered.remember(key, (result.recipes, result.keys, result.broken,
                                  [step.files[count:] for step, count in zip(plan.steps, added)]))
    if real is not None:
        from pinshift.evaluation.real_check import real_diffs, refuse_real_breaks

        result.real = real_diffs(result.recipes, states[0].name, states[-1].name, real)
        broken = refuse_real_breaks(plan, result.real, allow_broken)
        if broken and allow_broken:
            result.notes.append(f"--allow-broken: {len(broken)} recipe{'s' if len(broken) != 1 else ''} no longer "
                                "evaluate at their real pins")
    return _finish(plan, intents, result)


def _finish(plan: Plan, intents: dict[int, tuple[str, ...] | None], result: BuildsCheck) -> BuildsCheck:
    """The check's notes (a run that found its result remembered evaluated nothing, so it has no slow note)."""
    for step in plan.steps:
        if intents.get(step.index) is None and step.changed:
            result.notes.append(f"step {step.index} ({step.kind}) declares no BUILD_CHANGES: what it changes in the "
                                "recipes is not checked against an intent (docs/writing-steps.md)")
    if result.stats.seconds >= SLOW_SECONDS:
        result.notes.append(f"evaluating {result.stats.evaluated:,} recipe states took {result.stats.seconds:.0f} s "
                            "(a run with the same files remembers them; --no-build-check skips the check)")
    if result.broken and result.allow_broken:
        count = sum(len(found) for found in result.broken.values())
        steps = ", ".join(str(index) for index in sorted(result.broken))
        result.notes.append(f"--allow-broken: {count} recipe{'s' if count != 1 else ''} no longer evaluate "
                            f"(broken by step {steps})")
    plan.builds = result
    return result


# --- the whole result, remembered (pinshift.evaluation.summary_memo.CheckMemo) -----------------------------------------


def check_key(tree, plan: Plan, intents: dict[int, tuple[str, ...] | None], allow_broken: bool) -> bytes:
    """A digest of everything the check's result depends on but the code, the stand-in and Nix (the store's name
    holds those): the start tree's entries (path, git mode, blob id) and size limit; per step its index, kind,
    intent, the files it changed (path, where it came from, removed) and the bytes it writes (blob ids); and
    --allow-broken. Two plans with one key write the same trees and are judged by the same intents."""
    from pinshift.planning.memo import blob_id

    digest = hashlib.sha256(b"pinshift-check/1\0%d\0%d\0" % (bool(allow_broken), len(plan.steps)))
    digest.update(repr(getattr(tree, "max_bytes", None)).encode() + b"\0")
    for path in tree.paths():
        digest.update(f"{path}\0{tree.mode(path)}\0{tree.blob_id(path)}\n".encode("utf-8", "surrogateescape"))
    for step in plan.steps:
        declared = intents.get(step.index)
        head = (step.index, step.kind, None if declared is None else list(declared))
        digest.update(b"\1" + json.dumps(head, ensure_ascii=False).encode("utf-8", "surrogateescape"))
        parts = []  # each field ends with a NUL, which no path holds (git's); None is told apart by its tag
        for change in step.changed:
            parts.append(f"\2{change.path}\0{_maybe(change.old_path)}\0{_maybe(change.source)}\0{change.removed:d}\0")
        for change in iter_tree_changes(step):
            written = "-" if change.data is None else blob_id(change.data)
            parts.append(f"\3{change.path}\0{written}\0{_maybe(change.mode)}\0")
        digest.update("".join(parts).encode("utf-8", "surrogateescape"))
    return digest.digest()[:20]


def _maybe(text: str | None) -> str:
    return "n" if text is None else "s" + text


def _recall(value: Any, plan: Plan, result: BuildsCheck) -> bool:
    """Put a remembered result (`CheckMemo.lookup`) into `result` and `plan`'s steps; False (nothing touched) when
    there is none or it is not of this plan's shape."""
    if not isinstance(value, tuple) or len(value) != 4:
        return False
    recipes, keys, broken, files = value
    if not (isinstance(recipes, list) and all(isinstance(r, RecipeDiff) for r in recipes)
            and isinstance(keys, dict) and all(isinstance(k, str) and isinstance(v, tuple) for k, v in keys.items())
            and isinstance(broken, dict) and all(isinstance(k, int) and isinstance(v, list)
                                                  and all(isinstance(r, RecipeDiff) for r in v)
                                                  for k, v in broken.items())
            and isinstance(files, list) and len(files) == len(plan.steps)
            and all(isinstance(f, list) and all(isinstance(c, FileChange) for c in f) for f in files)):
        return False
    result.recipes, result.keys, result.broken = recipes, keys, broken
    for step, appended in zip(plan.steps, files):
        step.files.extend(appended)
    return True


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


def _check_step(step: StepPlan, before: Snapshot, after: Snapshot, renamed: dict[str, str],
                pairs: dict[str, tuple[Evaluation, Evaluation]], patterns: tuple[str, ...] | None,
                result: BuildsCheck, seen: dict) -> None:
    """Refuse or warn on `step` for each recipe whose evaluation before and after it `pairs` holds (path after the
    step -> the two Evaluations)."""
    kind = step.kind
    for path in recipe_paths(after.nix_paths()):
        if path not in pairs:
            continue
        old = renamed.get(path, path)
        left, right = pairs[path]
        diff = _compare(seen, path, left, right, old if old != path else None)
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


# --- which step did it: the trees in between, only where the ends cannot tell ---------------------------------------
#
# A recipe is followed through the planned steps (its path in each tree, renames followed: a *lineage*). A step
# *touched* it when the step wrote or removed the recipe's file or a file its start or last evaluation read (or,
# when either read what a blob id cannot stand for, any step that wrote anything). Then:
#   - touched by no step: the same bytes everywhere, nothing to say;
#   - touched by one step: the trees before that step hold the start's inputs and the trees after it the last
#     tree's, so the start and the last evaluation are exactly that step's before and after;
#   - touched by several: when the last tree evaluates, the start did too, and every change is one that a step that
#     touched it declares (BUILD_CHANGES; a kind declaring nothing covers nothing here), nothing is said ("covered");
#     otherwise the recipe is evaluated in every tree in between, and each step it touched is checked as before
#     ("steps"), so the report names the step that broke or changed it.

Lineage = list  # the recipe's path in states[0..n] (None: not in that tree)


def _lineages(plan: Plan, states: Sequence[Snapshot]) -> list[Lineage]:
    lines: list[Lineage] = []
    current: dict[str, Lineage] = {}
    for path in recipe_paths(states[0].nix_paths()):
        line: Lineage = [None] * len(states)
        line[0] = path
        current[path] = line
        lines.append(line)
    for number, step in enumerate(plan.steps, start=1):
        if states[number] is states[number - 1]:
            for path, line in current.items():
                line[number] = path
            continue
        renamed = {c.path: c.old_path for c in step.changed if c.old_path is not None}
        following: dict[str, Lineage] = {}
        for path in recipe_paths(states[number].nix_paths()):
            line = current.pop(renamed.get(path, path), None)
            if line is None:
                line = [None] * len(states)
                lines.append(line)
            line[number] = path
            following[path] = line
        current = following
    return lines


def _blame(line: Lineage, states: Sequence[Snapshot], written: Sequence[set[str]], evaluations: dict,
           intents: dict[int, tuple[str, ...] | None], plan: Plan, seen: dict) -> str | int:
    """"none", the one step's number (1..), "covered" or "steps" (above)."""
    first, last = _evaluation(evaluations, states[0], line[0]), _evaluation(evaluations, states[-1], line[-1])
    known = [e for e in (first, last) if e is not None]
    inputs = {p for p in line if p is not None}
    for evaluation in known:
        inputs.update(evaluation.reads)
    everything = len(known) < 2 or not all(e.cacheable for e in known)
    touched = [number for number in range(1, len(states)) if states[number] is not states[number - 1] and (
        line[number] != line[number - 1] or (written[number - 1] and everything) or written[number - 1] & inputs)]
    if not touched:
        return "none"
    if len(touched) == 1:
        return touched[0]
    if first is None or last is None or not first.ok or not last.ok:
        return "steps"
    changes = _compare(seen, line[-1], first, last).changes
    if not changes:
        return "steps"  # changed and changed back, or broken and mended: which step did what needs the trees between
    patterns: list[str] = []
    for number in touched:
        declared = intents.get(plan.steps[number - 1].index)
        if declared is None:
            return "steps"
        patterns.extend(declared)
    return "covered" if not unintended(changes, patterns) else "steps"


def _compare(seen: dict, path: str, left: Evaluation | None, right: Evaluation | None,
             old: str | None = None) -> RecipeDiff:
    """`compare`, the changes between two summaries found once per pair of Evaluations (`seen`)."""
    if left is None or right is None or not left.ok or not right.ok:
        return compare(path, left, right, old)
    key = (id(left), id(right))
    if key not in seen:
        seen[key] = (left, right, compare(path, left, right, old).changes)  # the pair kept: its ids stay theirs
    found = seen[key][2]
    return RecipeDiff(path, "changed" if found else "same", old, list(found))


def _step_pairs(number: int, lines: Sequence[Lineage], blame: dict, states: Sequence[Snapshot],
                evaluations: dict) -> dict[str, tuple[Evaluation, Evaluation]]:
    """Path after step `number` -> the recipe's evaluation before and after it, for each recipe the step is checked
    on."""
    pairs = {}
    for line in lines:
        path, old = line[number], line[number - 1]
        if path is None or old is None:
            continue
        how = blame[id(line)]
        if how == "steps":
            left, right = _evaluation(evaluations, states[number - 1], old), _evaluation(evaluations, states[number], path)
        elif how == number:
            left, right = _evaluation(evaluations, states[0], line[0]), _evaluation(evaluations, states[-1], line[-1])
        else:
            continue
        if left is not None and right is not None and left is not right:
            pairs[path] = (left, right)
    return pairs


def _warn(step: StepPlan, path: str, message: str) -> None:
    step.files.append(FileChange(path, Outcome.UNCHANGED, "nix", warnings=[Warning(path, 0, 0, message)]))


def _overall(start: Snapshot, last: Snapshot, origin: dict[str, str], evaluations: dict,
             result: BuildsCheck, seen: dict) -> None:
    came_from = {new: old for new, old in origin.items()}
    gone = set(recipe_paths(start.nix_paths())) - set(came_from.values())
    for path in recipe_paths(last.nix_paths()):
        old = came_from.get(path)
        left = _evaluation(evaluations, start, old)
        right = _evaluation(evaluations, last, path)
        diff = _compare(seen, path, left, right, old if old and old != path else None)
        result.recipes.append(diff)
        if diff.status == "changed":
            result.keys[path] = normal_changes(diff, left.summary, right.summary)
    for path in sorted(gone):
        result.recipes.append(compare(path, _evaluation(evaluations, start, path), None))
    result.recipes.sort(key=lambda r: r.path)
