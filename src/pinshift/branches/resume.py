"""`--resume`: where an existing branch stands, read from its commits and checked against the recipe.

A branch's history is input nobody vetted: anyone can write `Pinshift-Step: 7/3 rename-attr` in a commit
message. So every commit between the base and the branch's tip is read (git's own trailer parsing) and held
to what this recipe would have made, oldest first:

- the commits carrying Pinshift trailers form one unbroken chain (each the only parent of the next), with
  no commit without them in between and none after the last;
- each has exactly one `Pinshift-Recipe` (this recipe's name) and one `Pinshift-Step: n/N kind`, written
  exactly so: `n` and `N` in ASCII digits without a leading zero, `N` the recipe's step count, `1 <= n <= N`,
  `kind` the kind of the recipe's step `n`, and the commit's subject the step's (its message's first line,
  else its title);
- the step numbers rise: no step twice, none out of order.

A step that changed nothing made no commit, so the steps missing between two recorded ones (or before the
first) are not known to have run: `gaps` lists them, and migrate plans each again on the commit it would
have run on; one that changes something there means the branch was not made by this recipe.

The commit the first step was made on (its parent; the branch's tip when no step completed) is the base
the branch is on. When that is no longer the base's commit, resuming would continue on a base the user no
longer has: `check_base` stops, saying both commits, the rebase that keeps the steps and the fresh run.
Every refusal is a GitError (one line, exit 2), raised before anything is created.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from pinshift.errors import GitError
from pinshift.git.repo import Repository, StepRecord
from pinshift.recipes.recipe import RecipeStep
from pinshift.steps.kind import StepKind

# ASCII digits only (`\d` would take "٣"), no leading zero, at most six of them; the kind is one word
STEP_TRAILER = re.compile(r"(?P<step>[1-9][0-9]{0,5})/(?P<total>[1-9][0-9]{0,5}) (?P<kind>[^\s]{1,200})", re.ASCII)
SHOWN = 80  # characters of a trailer value or subject quoted in a message


@dataclass(frozen=True)
class Gap:
    """Steps `first`..`last` have no commit on the branch: planned again from `commit`, they must change
    nothing."""

    commit: str
    first: int
    last: int


@dataclass(frozen=True)
class ResumePoint:
    """Where `--resume` continues: at `first_step`, on the branch made from base commit `fork`."""

    first_step: int
    fork: str
    gaps: tuple[Gap, ...] = ()


def expected_subject(step: RecipeStep) -> str:
    """The subject pinshift gives a step's commit: its message's first line, else its title
    (pinshift.branches.migrate.commit_message)."""
    return (step.message.strip() or step.title).partition("\n")[0].strip()


def resume_point(repository: Repository, recipe: str, steps: Sequence[tuple[RecipeStep, StepKind, Any]],
                 base_commit: str, target: str, tip: str) -> ResumePoint:
    """The resume state of branch `target` (at `tip`), checked against `recipe`'s `steps`; a GitError naming
    the commit and what disagrees when the branch was not made by this recipe, or not all of it."""
    if tip == base_commit:
        return ResumePoint(1, base_commit)
    records = list(reversed(repository.step_records(base_commit, tip)))  # oldest first
    if not records:  # the tip is an ancestor of the base: kept with no step complete, the base moved on since
        return ResumePoint(1, tip)
    ours = [index for index, record in enumerate(records) if record.has_trailers]
    if not ours:
        raise GitError(f"branch '{target}' has commits that recipe {recipe} did not make; "
                       "use --force to recreate it or --branch to choose another name")
    last = ours[-1]
    if last != len(records) - 1:
        foreign = repository.short(records[-1].commit)
        raise GitError(f"branch '{target}' has commits after pinshift's last step (newest: {foreign}); "
                       "cannot resume over them: use --force to recreate it or --branch to choose another name")
    chain = records[ours[0]:]
    fork = chain[0].parents[0] if chain[0].parents else ""
    if len(chain[0].parents) != 1:
        _refuse(repository, chain[0], "is a merge or a root commit, which pinshift never makes", recipe, target)
    previous: tuple[int, StepRecord] | None = None
    gaps: list[Gap] = []
    total = len(steps)
    for record in chain:
        if not record.has_trailers:
            _refuse(repository, record, "has no Pinshift trailers but sits between pinshift's steps",
                    recipe, target)
        if previous is not None and record.parents != (previous[1].commit,):
            _refuse(repository, record, f"is not made on {repository.short(previous[1].commit)}, the step "
                                        "before it (a merge, or not one chain)", recipe, target)
        number = _check_record(repository, record, recipe, steps, target)
        done = previous[0] if previous is not None else 0
        if previous is not None and number == done:
            _refuse(repository, record, f"says step {number}/{total} again (also "
                                        f"{repository.short(previous[1].commit)})", recipe, target)
        if number < done:
            _refuse(repository, record, f"says step {number}/{total} after step {done}/{total} "
                                        f"({repository.short(previous[1].commit)}): out of order", recipe, target)
        if number > done + 1:
            gaps.append(Gap(previous[1].commit if previous is not None else fork, done + 1, number - 1))
        previous = (number, record)
    assert previous is not None
    return ResumePoint(previous[0] + 1, fork, tuple(gaps))


def check_base(repository: Repository, point: ResumePoint, base: str, base_commit: str, target: str) -> None:
    """Stop when the branch was made on another commit than the base's now: say both, and the two ways on."""
    if point.fork == base_commit:
        return
    old, new = repository.short(point.fork), repository.short(base_commit)
    how = "moved on" if repository.is_ancestor(point.fork, base_commit) else "was rewritten"
    raise GitError(f"branch '{target}' is on {base} at {old}, but {base} {how} to {new}; resuming would leave "
                   f"out what changed since: keep its steps with `git rebase --onto {new} {old} {target}` "
                   f"(replays their edits; files {base} gained are not migrated) and --resume again, or "
                   f"recreate it from {new} with --force (plans every step again)")


def _check_record(repository: Repository, record: StepRecord, recipe: str,
                  steps: Sequence[tuple[RecipeStep, StepKind, Any]], target: str) -> int:
    """The step number `record` claims, held to the recipe; a GitError on anything else."""
    total = len(steps)
    if len(record.recipes) != 1 or len(record.steps) != 1:
        counts = f"{len(record.recipes)} Pinshift-Recipe and {len(record.steps)} Pinshift-Step trailers"
        _refuse(repository, record, f"has {counts}, where pinshift writes one of each", recipe, target)
    named, value = record.recipes[0], record.steps[0]
    if named != recipe:
        _refuse(repository, record, f"says recipe {_shown(named)}, not {recipe}", recipe, target)
    match = STEP_TRAILER.fullmatch(value)
    if match is None:
        _refuse(repository, record, f"has Pinshift-Step {_shown(value)}, which is not 'n/N kind' with "
                                    f"1 <= n <= N", recipe, target)
    number, claimed, kind = int(match["step"]), int(match["total"]), match["kind"]
    if claimed != total or number > total:
        _refuse(repository, record, f"says step {_shown(value)}, but recipe {recipe} has {total} step"
                                    f"{'s' if total != 1 else ''}", recipe, target)
    step, step_kind, _ = steps[number - 1]
    if kind != step_kind.name:
        _refuse(repository, record, f"says step {number}/{total} is {_shown(kind)}, but recipe {recipe}'s step "
                                    f"{number} is {step_kind.name}", recipe, target)
    subject = expected_subject(step)
    if record.subject.strip() != subject:
        _refuse(repository, record, f"says step {number}/{total} {kind} with subject {_shown(record.subject)}, "
                                    f"but that step's is {_shown(subject)}", recipe, target)
    return number


def _refuse(repository: Repository, record: StepRecord, what: str, recipe: str, target: str):
    raise GitError(f"commit {repository.short(record.commit)} on branch '{target}' {what}; the branch was not "
                   f"made by this recipe ({recipe}): delete it or run without --resume (--force recreates it)")


def _shown(value: str) -> str:
    """A hostile value quoted for a one-line message: cut to SHOWN characters (the CLI escapes controls)."""
    cut = value if len(value) <= SHOWN else value[:SHOWN] + "…"
    return repr(cut)
