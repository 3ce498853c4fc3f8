"""`pinshift migrate`: a recipe run onto a new branch, one commit per changing step.

Everything is checked and planned before anything is created: the repository's
state, the recipe and its parameters, the base, the target, the remote, and the
whole Plan (read from the start commit's objects, so the user's checkout is
never read or touched). Only then does a temporary, detached `git worktree`
outside the user's working tree receive the planned bytes step by step, each
committed through git; the target branch is set once at the end (atomically,
against the value it had), so a failure or Ctrl-C leaves no branch at all
unless --keep-partial asks to keep the steps that completed.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from dataclasses import dataclass, field
import shlex
import signal
from pathlib import Path
from typing import Any

from pinshift.errors import GitError, IncompleteRun, StepFailed, UsageError
from pinshift.git.commit import open_committer, remove_stale_index_dirs, remove_stale_worktrees
from pinshift.git.repo import Repository
from pinshift.git.worktree import remove_own_worktrees
from pinshift.branches.resume import ResumePoint, check_base, resume_point
from pinshift.interrupts import deferred
from pinshift.recipes.placeholders import base_name, migration_branches
from pinshift.planning.plan import Plan, StepPlan, iter_tree_changes
from pinshift.recipes.recipe import Recipe, RecipeStep, find_recipe, validate_recipe
from pinshift.planning.jobs import RunOptions
from pinshift.planning.runner import plan_recipe
from pinshift.branches.doc_facts import plan_with_facts
from pinshift.steps.registry import available_kinds
from pinshift.steps.kind import StepKind
from pinshift.steps.trust import Consent

LISTED_FILES = 10  # a commit body lists the changed files when there are at most this many


@dataclass(frozen=True)
class MigrateOptions:
    """Every `pinshift migrate` option, built once by the command and passed down."""

    recipe: str
    repo: Path = Path(".")
    base: str | None = None
    bases: tuple[str, ...] = ()  # every --from (fan-out when several, or globs; see pinshift.branches.fanout)
    branch: str | None = None
    target: str | None = None  # the target already named (a fan-out names every base's first): not a template
    dry_run: bool = False
    resume: bool = False
    force: bool = False
    keep_partial: bool = False
    push: str | None = None
    no_verify: bool = False
    strict: bool = False
    migrations: Path | None = None
    trust_repo: bool = False  # consent to import the repository's .pinshift/migrations/ kinds a step needs
    nixpkgs: Path | None = None  # a local nixpkgs clone for steps that ask one (pinshift.facts.pin_inputs)
    allow_broken: bool = False  # commit steps after which a recipe no longer evaluates (pinshift.evaluation.build_check)
    build_check: bool = True  # evaluate what the recipes build after each step (--no-build-check: not, and say so)
    run: RunOptions = field(default_factory=RunOptions)


@dataclass
class Migration:
    """A validated migration: where it starts, where it goes, and what it runs."""

    options: MigrateOptions
    repository: Repository
    recipe: Recipe
    steps: list[tuple[RecipeStep, StepKind, Any]]
    base: str
    base_commit: str
    target: str
    target_commit: str | None  # the branch's commit now (resume/force), None when it does not exist
    start_commit: str  # where planning and the first commit start from
    first_step: int = 1  # 1-based; later than 1 when resuming
    notes: dict[int, list[str]] = field(default_factory=dict)  # step index -> what its params were filled with
    provenance: dict[int, list[str]] = field(default_factory=dict)  # step index -> lines for its commit message
    resumed: ResumePoint | None = None  # --resume: where the branch stands (pinshift.branches.resume)


@dataclass
class Result:
    """What a run did: the plan with each committed step's commit id filled in."""

    migration: Migration
    plan: Plan
    nothing_to_do: bool = False
    nothing_to_change: bool = False  # the recipe changes nothing on this base: no branch was made
    pushed: str | None = None
    interrupted: str | None = None  # a signal that arrived once the branch was complete (SIGINT, SIGTERM...)

    @property
    def committed(self) -> list[StepPlan]:
        return [s for s in self.plan.steps if s.commit]


# --- validation -----------------------------------------------------------------------------


def prepare(options: MigrateOptions) -> Migration:
    """Check everything the run needs, in the order a user would fix it; create nothing."""
    if options.resume and options.force:
        raise UsageError("--resume and --force exclude each other: continue the branch or recreate it, not both")
    repository = Repository.open(options.repo)
    recipe = find_recipe(options.recipe, repository.root)
    kinds = available_kinds(repository.root, options.migrations, Consent(options.trust_repo, options.migrations))
    if not (recipe.base or recipe.target) and not (options.base and options.branch):
        missing = " and ".join(flag for flag, given in (("--from BASE", options.base), ("--branch NAME", options.branch))
                               if not given)
        raise UsageError(f"recipe {recipe.name} names no base or target branch (it converts whichever branch you "
                         f"name): give {missing}, e.g. --from main --branch main-pinned")
    base = options.base or recipe.base or _current_branch(repository)
    base_commit = repository.resolve_base(base)
    target = options.target or target_name(options.branch or recipe.target or recipe.name, base_name(repository, base))
    repository.check_branch_name(target)
    if target in (base, repository.local_branch_of(base)):
        raise UsageError(f"the target branch '{target}' is the base itself; name a new branch with --branch")
    steps = validate_recipe(recipe, kinds, branches=migration_branches(repository, base, target, recipe.base))
    target_commit = repository.branch_commit(target)
    migration = Migration(options, repository, recipe, steps, base, base_commit, target, target_commit, base_commit)
    if target_commit is not None:
        _existing_target(migration)
    if options.push and options.push not in repository.remotes():
        known = ", ".join(repository.remotes()) or "none"
        raise GitError(f"--push {options.push}: no such remote (remotes: {known}); add it with git remote add")
    if not options.dry_run:
        repository.check_identity()
        repository.check_signing()
        if options.push:
            repository.check_push(options.push, base_commit, target, force=options.force or options.resume)
    _fill_from_nixpkgs(migration)
    return migration


def target_name(template: str, base: str) -> str:
    """The branch a migration from `base` (`placeholders.base_name`) creates: `template` with `{base}` filled in.

    Examples:
        >>> target_name("{base}-pin0182a36", "pytorch-2.9")
        'pytorch-2.9-pin0182a36'
    """
    return template.replace("{base}", base)


def _fill_from_nixpkgs(migration: Migration) -> None:
    """Steps that need a nixpkgs clone (a branch name for `new`, `hash = "compute"`) get it now, last of all
    checks because hashing an uncached revision takes seconds; the steps themselves never run git."""
    from pinshift.facts.pin_inputs import fill

    source = migration.recipe.source
    gaps = migration.resumed.gaps if migration.resumed is not None else ()
    first = min([migration.first_step, *(gap.first for gap in gaps)])  # --resume plans those again (check_gaps)
    todo = [(number, entry) for number, entry in enumerate(migration.steps, 1) if number >= first]
    filled = fill([(f"{source}: step {number} ({kind.name})", kind, params) for number, (_, kind, params) in todo],
                  migration.options.nixpkgs, migration.repository.root)
    for (number, (step, kind, _)), result in zip(todo, filled):
        migration.steps[number - 1] = (step, kind, result.params)
        if result.notes:
            migration.notes[number] = result.notes
        if result.provenance:
            migration.provenance[number] = result.provenance


def _current_branch(repository: Repository) -> str:
    branch = repository.current_branch()
    if branch is None:
        raise GitError("HEAD is detached and the recipe names no base branch; name the base with --from BRANCH")
    return branch


def _existing_target(migration: Migration) -> None:
    """--resume or --force decide what happens to an existing target; without them it is an error."""
    options, target = migration.options, migration.target
    if not (options.resume or options.force):
        raise GitError(f"branch '{target}' already exists; continue it with --resume, recreate it from "
                       f"{migration.base} with --force, or choose another name with --branch")
    where = migration.repository.checked_out_at(target)
    if where is not None and not options.dry_run:
        raise GitError(f"branch '{target}' is checked out in {where}; switch that checkout to another branch "
                       "first (pinshift never moves a checked-out branch)")
    if options.resume:
        repository = migration.repository
        point = resume_point(repository, migration.recipe.name, migration.steps, migration.base_commit, target,
                             migration.target_commit)
        check_base(repository, point, migration.base, migration.base_commit, target)
        migration.resumed = point
        migration.first_step = point.first_step
        migration.start_commit = migration.target_commit


# --- planning -------------------------------------------------------------------------------


def plan(migration: Migration) -> Plan:
    """The Plan of the remaining steps, read from the start commit's objects (nothing written)."""
    repository = migration.repository
    check_gaps(migration)
    tree = repository.tree(migration.start_commit)
    if migration.first_step > len(migration.steps):
        result = Plan(recipe=migration.recipe.name, steps=[])
    else:
        result = plan_with_facts(migration, tree)  # plan_recipe, with `{facts.…}` filled and typed values checked
    result.repository = str(repository.root)
    result.base, result.base_commit = migration.base, migration.base_commit
    result.target = migration.target
    result.dry_run = migration.options.dry_run
    if migration.first_step > 1:
        result.notes.append(f"resuming {migration.target} after step {migration.first_step - 1}, on "
                            f"{migration.base} ({repository.short(migration.base_commit)})")
    for step in result.steps:
        step.notes[:0] = migration.notes.get(step.index, [])
    if result.steps:
        check_builds(migration, result)
    reason = needless(migration, result)
    if reason is not None and migration.options.dry_run:  # the report says what the run would stop on
        result.notes.append(f"{reason}; a run would make no branch")
    return result


def check_gaps(migration: Migration) -> None:
    """--resume: the steps before the resume point that have no commit on the branch are planned again on the
    commit they would have run on; a step that changes something (or is refused) there would have made a
    commit, so the branch was not made by this recipe: a GitError, before anything is created."""
    if migration.resumed is None:
        return
    repository, total = migration.repository, len(migration.steps)
    for gap in migration.resumed.gaps:
        tree = repository.tree(gap.commit)
        replanned = plan_recipe(tree, migration.recipe, migration.steps[:gap.last], migration.options.run, gap.first)
        for step in replanned.steps:
            if step.changed or step.refused:
                what = (f"changes {len(step.changed)} file{'s' if len(step.changed) != 1 else ''}"
                        if step.changed else "is refused")
                raise GitError(f"branch '{migration.target}' has no commit for step {step.index}/{total} "
                               f"({step.kind}), but that step {what} on {repository.short(gap.commit)}, where it "
                               f"would have run; the branch was not made by this recipe ({migration.recipe.name}): "
                               "delete it or run without --resume (--force recreates it)")


def check_builds(migration: Migration, planned: Plan) -> None:
    """What the recipes build after each planned step, against the stand-in nixpkgs (pinshift.evaluation.build_check):
    a step that breaks a recipe's evaluation gets a refused file (no branch unless --allow-broken), a change its
    kind does not declare a warning; `planned.builds` holds the "What the recipes build" section."""
    from pinshift.evaluation.build_check import check_plan, intended

    intents = {number: intended(kind.module, params) for number, (_, kind, params) in enumerate(migration.steps, 1)}
    notes: list[str] = []
    check_plan(migration.repository.tree(migration.start_commit), planned, intents, migration.options.allow_broken,
               note=lambda line: notes.append(line.removeprefix("pinshift: note: ")),
               enabled=migration.options.build_check, nixpkgs=migration.options.nixpkgs,
               progress=migration.options.run.phases)
    planned.builds.notes.extend(notes)


def failure(step: StepPlan, strict: bool) -> str | None:
    """Why a planned step cannot be committed (a refused file, a warning under --strict), or None."""
    if step.refused:
        first = step.refused[0]
        more = f" (and {len(step.refused) - 1} more)" if len(step.refused) > 1 else ""
        return f"{first.reason if first.reason.startswith(first.path) else f'{first.path}: {first.reason}'}{more}"
    if strict and step.warnings:
        more = f" (and {len(step.warnings) - 1} more)" if len(step.warnings) > 1 else ""
        return f"warning under --strict: {step.warnings[0]}{more}"
    return None


def essential(step: RecipeStep, kind: StepKind) -> bool:
    """A step that must change something for a branch to be made: every step, unless the recipe says
    `optional = true` or its kind is optional by default (README, metadata: StepKind.optional)."""
    return not (step.optional if step.optional is not None else kind.optional)


def needless(migration: Migration, planned: Plan) -> str | None:
    """Why no branch may be made although some steps change files: the first essential step that changes
    nothing on this base (with the first note it left, which says why: `pins 46336d4, not '6a030d5'`), or None.
    A recipe that changes nothing at all is `nothing to change`/`nothing to do` instead, never this."""
    if not planned.would_change:
        return None
    for step in planned.steps:
        recipe_step, kind, _ = migration.steps[step.index - 1]
        if step.changed or step.refused or not essential(recipe_step, kind):
            continue
        notes = [note for change in step.files for note in change.notes]
        why = f" ({notes[0]})" if notes else ""
        short = migration.repository.short(migration.base_commit)
        return (f"{migration.base} ({short}): step {step.index}/{step.total} {step.kind} changes nothing{why}, "
                f"and the recipe needs it (not optional = true)")
    return None


# --- committing -----------------------------------------------------------------------------


def commit_message(step: StepPlan, recipe: str, provenance: list[str] | None = None) -> str:
    """Subject (the step's message, else its title), where its values came from (`provenance`: the pin
    of another repository's branch), counts, short file list, Pinshift trailers."""
    text = step.message.strip() or step.title
    subject, _, body = text.partition("\n")
    paragraphs = [subject.strip()]
    if body.strip():
        paragraphs.append(body.strip())
    if provenance:
        paragraphs.append("\n".join(provenance))
    changed = step.changed
    operations = step.operation_counts
    counts = f"{len(changed)} file{'s' if len(changed) != 1 else ''} changed" \
             f"{f' ({operations})' if operations else ''}, " \
             f"{step.edit_count} edit{'s' if step.edit_count != 1 else ''}"
    if step.warnings:
        counts += f", {len(step.warnings)} warning{'s' if len(step.warnings) != 1 else ''}"
    if len(changed) <= LISTED_FILES:
        counts += ":\n" + "\n".join(f"  {c.label}" for c in changed)
    paragraphs.append(counts)
    paragraphs.append(f"Pinshift-Recipe: {recipe}\nPinshift-Step: {step.index}/{step.total} {step.kind}")
    return "\n\n".join(paragraphs) + "\n"


def run(migration: Migration, planned: Plan) -> Result:
    """Commit each changing step, then set (and push) the branch.

    Commits are made through git's plumbing, or by `git commit` in a temporary worktree when
    the repository has commit hooks that would run (pinshift.git.commit). On any failure,
    Ctrl-C, SIGTERM and SIGHUP included, no branch is left (and no worktree), unless
    --keep-partial: then the branch keeps the steps that completed. Setting the branch and
    cleaning up are not cut in half by a signal: one that arrives there is taken after the
    branch is complete and reported as such (`Result.interrupted`).
    """
    options, repository = migration.options, migration.repository
    result = Result(migration, planned)
    if not planned.steps:
        result.nothing_to_do = True
        planned.target_commit = migration.start_commit
        return result
    if migration.first_step == 1 and not planned.would_change and not any(failure(s, options.strict)
                                                                           for s in planned.steps):
        result.nothing_to_change = True  # a branch identical to its base would only mislead
        return result
    reason = needless(migration, planned)
    if reason is not None:
        raise StepFailed(f"{reason}; no branch made" if migration.target_commit is None else
                         f"{reason}; branch {migration.target} unchanged")
    failing = next((s for s in planned.steps if failure(s, options.strict)), None)
    if failing is not None and not options.keep_partial:
        raise _step_failed(failing, failure(failing, options.strict), migration, None)
    committer = None
    head = migration.start_commit
    try:  # before the worktree is made: a signal as open_committer returns still finds it (remove_own_worktrees)
        committer = open_committer(repository, migration.start_commit, options.no_verify)
        for step in planned.steps:
            if step is failing:
                raise _step_failed(step, failure(step, options.strict), migration, head)
            if not step.changed:
                continue
            try:
                message = commit_message(step, migration.recipe.name, migration.provenance.get(step.index))
                head = step.commit = committer.commit(iter_tree_changes(step), message)
            except GitError as error:
                raise _step_failed(step, str(error), migration, head) from None
        if head == migration.start_commit and migration.first_step > 1:
            result.nothing_to_do = True
        with deferred() as late:
            repository.set_branch(migration.target, head, migration.target_commit)
            committer.close()
            stopped = late.take()
    except BaseException:
        with deferred() as late:  # a second Ctrl-C must not leave the cleanup half done
            if committer is not None:
                committer.close()
            remove_own_worktrees()
            if options.keep_partial:
                _keep(migration, head)
            late.take()
        raise
    planned.target_commit = head
    if stopped is not None:
        result.interrupted = signal.Signals(stopped).name
        if options.push:
            raise IncompleteRun(f"interrupted ({result.interrupted}) after branch {migration.target} was complete "
                                f"({repository.short(head)}); it was not pushed: git push {options.push} "
                                f"{migration.target}")
        return result
    if options.push:
        repository.push(options.push, migration.target, force=options.force)
        result.pushed = options.push
    return result


def clean_stale_worktrees(migration: Migration) -> list[str]:
    """Remove worktrees that killed pinshift runs left in this repository; what was removed, one line each."""
    return remove_stale_worktrees(migration.repository) + remove_stale_index_dirs()


def _keep(migration: Migration, head: str) -> None:
    """--keep-partial: point the branch at the last complete step (best effort: never mask the failure)."""
    if head == migration.target_commit:
        return
    try:
        migration.repository.set_branch(migration.target, head, migration.target_commit)
    except GitError:
        pass


def _step_failed(step: StepPlan, reason: str, migration: Migration, head: str | None) -> StepFailed:
    where = f"step {step.index}/{step.total} ({step.kind}) failed: {reason}"
    if migration.options.keep_partial and head is not None:
        done = "no step completed" if head == migration.start_commit and migration.first_step == 1 \
            else f"kept at {migration.repository.short(head)}"
        return StepFailed(f"{where}; branch {migration.target} {done}; fix the problem, then continue with "
                          f"`{resume_command(migration)}`")
    left = f"branch {migration.target} unchanged" if migration.target_commit else "no branch was created"
    return StepFailed(f"{where}; {left}")


def resume_command(migration: Migration) -> str:
    """The command that continues `migration`'s kept branch, to be run as printed (from the same directory).

    It names the base and the branch as this run resolved them (a fan-out's base and its filled target,
    a default base that was the current branch), and repeats every option that decides what the steps do
    or where their code comes from; `--dry-run`, `--force` and the report options are not repeated.
    """
    options = migration.options
    words = ["pinshift", "migrate", options.recipe]
    if Path(options.repo) != Path("."):
        words += ["--repo", str(options.repo)]
    words += ["--from", migration.base, "--branch", migration.target, "--resume"]
    for flag, value in (("--migrations", options.migrations), ("--nixpkgs", options.nixpkgs),
                        ("--push", options.push)):
        if value is not None:
            words += [flag, str(value)]
    words += [flag for flag, given in (("--trust-repo", options.trust_repo), ("--no-verify", options.no_verify),
                                       ("--strict", options.strict), ("--keep-partial", options.keep_partial),
                                       ("--allow-broken", options.allow_broken),
                                       ("--no-build-check", not options.build_check))
              if given]
    return " ".join(shlex.quote(word) for word in words)


def migrate(options: MigrateOptions) -> tuple[Migration, Plan]:
    """Validate and plan (the dry run); `run` the result to commit it."""
    migration = prepare(options)
    return migration, plan(migration)

