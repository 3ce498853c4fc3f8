"""Fan-out: one recipe onto several base branches in one run (`migrate --from A --from B`, recipe `bases`).

A loop around one migration, not a second git layer: each base becomes the MigrateOptions
of a single-base run (`--branch`'s or the recipe's target template with `{base}` filled in)
and goes through `pinshift.migrate` exactly as alone — prepared, planned, committed — in a
worker process of its own (up to the CPU count), so a base that fails (missing, a refused
file, a `--strict` warning, an existing target without `--force`) leaves no branch for that
base and does not stop the others. What comes back is a value per base (`BaseOutcome`):
created, nothing to change, planned (dry run) or failed with the reason.

Usage errors found before any work (a template without `{base}` for several bases, a glob
that matches no branch) stop the whole run with exit 2, before any worker starts.
"""

from __future__ import annotations

import fnmatch
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from pinshift.errors import PinshiftError, UsageError
from pinshift.plan import Plan

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
    """What happened to one base: `status` is created, nothing to change, planned (dry run) or failed."""

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
    def warnings(self) -> int:
        return sum(s.warnings for s in self.steps)

    @property
    def files(self) -> int:
        return len(self.plan.changed_paths) if self.plan is not None else 0


# --- which bases ------------------------------------------------------------------------------------


def bases_of(options) -> list[str] | None:
    """The bases of a fan-out run, or None for a single-base run (at most one --from; no recipe `bases`)."""
    from pinshift.gitrepo import Repository
    from pinshift.recipes import find_recipe

    repository = Repository.open(options.repo)
    recipe = find_recipe(options.recipe, repository.root)
    given = options.bases
    if len(given) <= 1 and (given or not recipe.bases) and not any(c in "".join(given) for c in GLOB_CHARACTERS):
        return None
    bases = expand_bases(given, recipe.bases, [name for name, _ in repository.local_branches()])
    check_template(options.branch or recipe.target or recipe.name, bases)
    return bases


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


# --- one base, in a worker --------------------------------------------------------------------------


def _steps(plan: Plan) -> list[StepLine]:
    return [StepLine(s.index, s.title, s.commit, len(s.changed), s.edit_count, len(s.warnings)) for s in plan.steps]


def run_base(options, base: str, verify=None) -> BaseOutcome:
    """One base as a single-base `pinshift migrate` would run it; every PinshiftError becomes its failure."""
    from pinshift.migrate import clean_stale_worktrees, failure, plan, prepare, run, target_name

    target = target_name(options.branch, base) if options.branch else ""
    if not target:
        try:
            from pinshift.recipes import find_recipe

            recipe = find_recipe(options.recipe, options.repo)
            target = target_name(recipe.target or recipe.name, base)
        except PinshiftError:
            target = ""
    try:
        migration = prepare(replace(options, base=base))
        target = migration.target
        planned = plan(migration)
        if options.run is not None and options.run.memo is not None:
            options.run.memo.save()
        outcome = BaseOutcome(base, target, "planned", base_commit=migration.base_commit, plan=planned)
        if verify is not None:
            from pinshift.checks.verify import verify_plan

            verification = verify_plan(migration.repository.tree(migration.start_commit), planned, verify)
            errors = [f for f in verification.findings if f.severity == "error"]
            if errors:
                return BaseOutcome(base, target, "failed", f"--verify: {errors[0]}", 1, migration.base_commit,
                                   steps=_steps(planned), plan=planned)
        if options.dry_run:
            problem = next((failure(s, options.strict) for s in planned.steps if failure(s, options.strict)), None)
            if problem:
                outcome.status, outcome.reason, outcome.exit_code = "failed", problem, 1
            outcome.steps = _steps(planned)
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

_JOB: tuple[Any, Any] | None = None  # (options, verify) the forked workers run each base with


def _work(base: str) -> BaseOutcome:
    options, verify = _JOB
    return run_base(options, base, verify)


def worker_count(bases: int) -> int:
    forced = os.environ.get("PINSHIFT_JOBS", "")
    if forced.isdigit() and int(forced) > 0:
        return min(bases, int(forced))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(bases, cpus))


def run_all(options, bases: list[str], verify=None) -> list[BaseOutcome]:
    """Every base, independently and in parallel (one forked worker per CPU); outcomes in the order of `bases`.

    Each worker plans its base in one process (the pool of a single-base run is not nested).
    Ctrl-C, SIGTERM and SIGHUP reach the workers, each of which removes what it made; branches
    already complete stay (every branch is set only once its last commit exists).
    """
    global _JOB
    from pinshift.runner import RunOptions

    options = replace(options, run=replace(options.run, jobs=1, progress=None) if options.run else RunOptions(jobs=1))
    workers = worker_count(len(bases))
    if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [run_base(options, base, verify) for base in bases]
    _JOB = (options, verify)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as executor:
            futures = [executor.submit(_work, base) for base in bases]
            try:
                return [future.result() for future in futures]
            except KeyboardInterrupt as stop:
                executor.shutdown(wait=True, cancel_futures=True)
                finished = [f.result() for f in futures if f.done() and not f.cancelled() and f.exception() is None]
                raise FanoutInterrupted(finished, stop) from None
            except BaseException:
                executor.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _JOB = None


class FanoutInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, SIGHUP) during a fan-out: the bases that had finished, and the signal to end with."""

    def __init__(self, finished: list[BaseOutcome], signal: BaseException):
        super().__init__(str(signal))
        self.finished, self.signal = finished, signal
