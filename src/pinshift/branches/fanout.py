"""Fan-out: one recipe onto several base branches in one run (`migrate --from A --from B`, recipe `bases`).

A loop around one migration, not a second git layer: each base becomes the MigrateOptions
of a single-base run and goes through `pinshift.branches.migrate` exactly as alone — prepared,
planned, committed — in a worker process of its own (up to the CPU count; pinshift.branches.workers),
so a base that fails (missing, a refused file, a `--strict` warning, an existing target
without `--force`) leaves no branch for that base and does not stop the others. What comes
back is a value per base (`BaseOutcome`): created, nothing to change, planned (dry run),
skipped (a step the recipe needs changes nothing there: no branch, the reason) or failed with the reason.

Every base's target is named before any worker starts (`plan_targets`): `{base}` in the
template is the name the user gave (`pinshift.recipes.placeholders.base_name`: a tag's name, a commit
id as typed, `origin/x` as `x`, `HEAD` as its branch). Usage errors found then stop the whole
run with one line and exit 2, before any work: a template without `{base}` for several bases,
a glob that matches no branch, two bases that make one branch, a target that is one of the
bases, two targets git cannot hold together (`r/a` and `r/a/b`), a name git cannot store.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import fnmatch
import os
import signal
from dataclasses import dataclass, field, replace

from pinshift.errors import GitError, PinshiftError, UsageError
from pinshift.planning.plan import Plan

GLOB_CHARACTERS = "*?["


@dataclass
class StepLine:
    """One step of a base's run as the summary table shows it."""

    index: int
    title: str
    commit: str | None
    files: int
    edits: int
    warnings: int


@dataclass
class BaseOutcome:
    """What happened to one base: `status` is created, nothing to change, planned (dry run), skipped (a needed
    step changes nothing there, `migrate.needless`: no branch, `reason` says why) or failed."""

    base: str
    target: str
    status: str
    reason: str = ""
    exit_code: int = 0
    base_commit: str = ""
    target_commit: str = ""
    pushed: str | None = None
    steps: list[StepLine] = field(default_factory=list)
    plan: Plan | None = None  # kept for reports (dry run, --format)

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"

    @property
    def warnings(self) -> int:
        return sum(s.warnings for s in self.steps)

    @property
    def files(self) -> int:
        return len(self.plan.changed_paths) if self.plan is not None else 0


# --- which bases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseTarget:
    """One base of a fan-out as the user gave it, and the branch it makes (named before any work)."""

    base: str
    target: str


def bases_of(options) -> list[BaseTarget] | None:
    """The bases of a fan-out run and their targets, or None for a single-base run (at most one --from;
    no recipe `bases`). Raises UsageError/GitError (exit 2) for what would stop the run (`plan_targets`)."""
    from pinshift.git.repo import Repository
    from pinshift.recipes.recipe import find_recipe

    repository = Repository.open(options.repo)
    recipe = find_recipe(options.recipe, repository.root)
    given = options.bases
    if len(given) <= 1 and (given or not recipe.bases) and not any(c in "".join(given) for c in GLOB_CHARACTERS):
        return None
    bases = expand_bases(given, recipe.bases, [name for name, _ in repository.local_branches()])
    template = options.branch or recipe.target or recipe.name
    check_template(template, bases)
    return plan_targets(repository, template, bases)


def expand_bases(given: tuple[str, ...], recipe_bases: tuple[str, ...], local_branches: list[str]) -> list[str]:
    """The bases a run covers: `--from` values (else the recipe's `bases`), globs matched against local branches.

    A glob that matches nothing is a usage error; a plain name is kept as it is (a missing
    one is that base's failure, not the run's). Duplicates are dropped, order kept.

    Examples:
        >>> expand_bases(("pytorch-2.9-*", "main"), (), ["main", "pytorch-2.9-a", "pytorch-2.9-b", "x"])
        ['pytorch-2.9-a', 'pytorch-2.9-b', 'main']
    """
    names = given or recipe_bases
    out: list[str] = []
    for name in names:
        if any(c in name for c in GLOB_CHARACTERS):
            matched = sorted(b for b in local_branches if fnmatch.fnmatchcase(b, name))
            if not matched:
                raise UsageError(f"--from {name}: matches no local branch (branches: "
                                 f"{', '.join(local_branches[:10]) or 'none'})")
            out.extend(matched)
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def check_template(template: str, bases: list[str]) -> None:
    if len(bases) > 1 and "{base}" not in template:
        raise UsageError(f"target '{template}' names no {{base}}: with {len(bases)} bases every base would make the "
                         "same branch; use --branch '{base}-SUFFIX' (or a recipe target with {base})")


def plan_targets(repository, template: str, bases: list[str]) -> list[BaseTarget]:
    """Each base's target, every one checked before the first commit of any; the first problem raises.

    A base that is no branch or commit keeps its own failure for its worker (named as typed). Each
    other target must be a name git can store (`Repository.check_branch_name`), made by no other base,
    not one of the bases' branches (a run never moves a base), and not a directory of another target
    or under one (git cannot hold `r/a` and `r/a/b` together). An existing target is left to each base:
    without --force or --resume it fails that base alone; with --force it is replaced (it can be the
    target of one base only).
    """
    from pinshift.branches.migrate import target_name
    from pinshift.recipes.placeholders import base_name

    planned: list[tuple[BaseTarget, str]] = []  # each base that resolves, and what {base} is for it
    named = []
    for base in bases:
        if base.startswith("-") or repository.commit_of(base) is None:
            named.append(BaseTarget(base, target_name(template, base)))  # its worker says it is missing
            continue
        name = base_name(repository, base)
        item = BaseTarget(base, target_name(template, name))
        try:
            repository.check_branch_name(item.target)
        except GitError as error:
            raise GitError(f"--from {base}: {error}") from None
        planned.append((item, name))
        named.append(item)
    made: dict[str, BaseTarget] = {}
    for item, name in planned:
        if item.target in made:
            raise UsageError(f"--from {made[item.target].base} and --from {item.base} both make branch "
                             f"'{item.target}' ({{base}} is '{name}' for both); run them separately or name the "
                             "branches with --branch")
        made[item.target] = item
    read_from = {branch: item.base for item, _ in planned if (branch := repository.local_branch_of(item.base))}
    for item, _ in planned:
        if item.target in read_from:
            raise UsageError(f"--from {item.base} would make branch '{item.target}', which is the base --from "
                             f"{read_from[item.target]}; a run never moves a base: name the branches with --branch")
    for target, item in made.items():
        parts = target.split("/")
        for prefix in ("/".join(parts[:cut]) for cut in range(1, len(parts))):
            if prefix in made:
                raise UsageError(f"--from {made[prefix].base} and --from {item.base} would make branches '{prefix}' "
                                 f"and '{target}', which git cannot hold together; name the branches with --branch")
    return named


# --- one base, in a worker --------------------------------------------------------------------------


def _steps(plan: Plan) -> list[StepLine]:
    return [StepLine(s.index, s.title, s.commit, len(s.changed), s.edit_count, len(s.warnings)) for s in plan.steps]


def run_base(options, item: BaseTarget, verify=None) -> BaseOutcome:
    """One base as a single-base `pinshift migrate` would run it, onto the target `plan_targets` named;
    every PinshiftError becomes its failure."""
    from pinshift.branches.migrate import clean_stale_worktrees, failure, needless, plan, prepare, run

    base, target = item.base, item.target
    try:
        migration = prepare(replace(options, base=base, target=target))
        planned = plan(migration)
        if options.run is not None and options.run.memo is not None:
            options.run.memo.save()
        outcome = BaseOutcome(base, target, "planned", base_commit=migration.base_commit, plan=planned)
        if verify is not None:
            from pinshift.verify.verify import verify_plan

            verification = verify_plan(migration.repository.tree(migration.start_commit), planned, verify)
            errors = [f for f in verification.findings if f.severity == "error"]
            if errors:
                return BaseOutcome(base, target, "failed", f"--verify: {errors[0]}", 1, migration.base_commit,
                                   steps=_steps(planned), plan=planned)
        outcome.steps = _steps(planned)
        if options.dry_run:
            problem = next((failure(s, options.strict) for s in planned.steps if failure(s, options.strict)), None)
            reason = needless(migration, planned)
            if problem:
                outcome.status, outcome.reason, outcome.exit_code = "failed", problem, 1
            elif reason is not None:  # a dry run keeps the report's exit code (docs/recipes.md)
                outcome.status, outcome.reason = "skipped", f"{reason}; a run would make no branch"
            return outcome
        reason = needless(migration, planned)
        if reason is not None:
            left = "no branch made" if migration.target_commit is None else f"branch {target} unchanged"
            outcome.status, outcome.reason, outcome.exit_code = "skipped", f"{reason}; {left}", 1
            return outcome
        clean_stale_worktrees(migration)
        result = run(migration, planned)
    except PinshiftError as error:
        return BaseOutcome(base, target, "failed", str(error), error.exit_code)
    if result.nothing_to_change:
        return BaseOutcome(base, target, "nothing to change", base_commit=migration.base_commit,
                           steps=_steps(planned), plan=planned)
    status = "nothing to do" if result.nothing_to_do else "created"
    return BaseOutcome(base, target, status, base_commit=migration.base_commit,
                       target_commit=planned.target_commit, pushed=result.pushed, steps=_steps(planned), plan=planned)


# --- many bases ---------------------------------------------------------------------------------------


def worker_count(bases: int) -> int:
    forced = os.environ.get("PINSHIFT_JOBS", "")
    if forced.isdigit() and int(forced) > 0:
        return min(bases, int(forced))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(bases, cpus))


def run_all(options, bases: list[BaseTarget], verify=None) -> list[BaseOutcome]:
    """Every base, independently and in parallel (one forked worker per CPU, pinshift.branches.workers); outcomes
    in the order of `bases`.

    Each worker plans its base in one process (the pool of a single-base run is not nested).
    Ctrl-C, SIGTERM or SIGHUP — to the process group or to this process alone — stops every worker:
    none starts a base after it, each removes what it made, and branches already complete stay (a
    branch is set only once its last commit exists). `FanoutInterrupted` then says which bases had
    finished before the signal and which finished while the workers stopped.
    """
    from pinshift.planning.jobs import RunOptions
    from pinshift.branches import workers

    progress = options.run.phases if options.run else None  # the bases done; a worker draws nothing itself
    options = replace(options, run=replace(options.run, jobs=1, progress=None, phases=None) if options.run
                      else RunOptions(jobs=1))
    processes = worker_count(len(bases))
    if processes == 1 or not hasattr(os, "fork"):
        outcomes = []
        try:
            for number, item in enumerate(bases):
                if progress:
                    progress(f"bases ({item.base})", number, len(bases))
                outcomes.append(run_base(options, item, verify))
        except KeyboardInterrupt as stop:
            raise FanoutInterrupted(outcomes, [], getattr(stop, "signum", signal.SIGINT)) from None
        return outcomes

    def lost(index: int, reason: str) -> BaseOutcome:
        return BaseOutcome(bases[index].base, bases[index].target, "failed", f"{reason}; no branch was set", 1)

    def finished(index: int, count: int) -> None:
        if progress:
            progress(f"bases ({bases[index].base} done)", count, len(bases))

    if progress:
        progress("bases", 0, len(bases))
    try:
        return workers.run(bases, lambda item: _in_worker(options, item, verify), processes, lost, finished)
    except workers.Stopped as stop:
        done = [stop.during[index] for index in sorted(stop.during) if not stop.during[index].failed]
        raise FanoutInterrupted([stop.before[index] for index in sorted(stop.before)], done, stop.signum) from None
    finally:
        _remove_workers_worktrees(options)


def _in_worker(options, item: BaseTarget, verify) -> BaseOutcome:
    """`run_base` in a fan-out's worker, then whatever scratch worktree of this worker is left (one a stop left
    between `git worktree add` and the `try` that removes it); the main process removes any still left."""
    from pinshift.git.worktree import remove_own_worktrees

    try:
        return run_base(options, item, verify)
    finally:
        remove_own_worktrees()


def _remove_workers_worktrees(options) -> None:
    """Once every worker has exited: remove the scratch worktrees whose lock names a pinshift process that is gone —
    a worker killed (SIGKILL, or after STOP_GRACE) or stopped in the instant before its own cleanup held signals,
    and any earlier killed run's, which the workers remove too (`clean_stale_worktrees`). A live run's worktree, and
    every worktree pinshift did not make, stay (`remove_stale_worktrees`)."""
    from pinshift.git.repo import Repository
    from pinshift.git.worktree import remove_stale_worktrees
    from pinshift.interrupts import deferred

    with deferred() as late:
        try:
            remove_stale_worktrees(Repository.open(options.repo))
        except PinshiftError:
            pass
        late.take()


class FanoutInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, SIGHUP) during a fan-out: the bases that had `finished` before the signal, those
    `completed` while the workers stopped (a branch set as the signal came), and the signal to end with."""

    def __init__(self, finished: list[BaseOutcome], completed: list[BaseOutcome], signum: int):
        super().__init__(signal.Signals(signum).name)
        self.finished, self.completed, self.signum = finished, completed, signum
