"""`pinshift migrate RECIPE`: options and output; the work is in pinshift.branches.migrate."""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import click

from pinshift.commands.completion import complete_branches, complete_recipes
from pinshift.report.display import echo_fitted, printable, width_for
from pinshift.report import emit, options_from, report_options
from pinshift.report.progress import progress_bar, updater


def summary(result, verbose: bool = False, width: int | None = None) -> str:
    """Branch, base, one line per step (commit id and counts), warnings, and how to inspect the result.

    Repeated warnings and skipped files are one line per step and finding (`--verbose`: each one). Every line
    fits `width` columns when given (pinshift.languages.fit).
    """
    from pinshift.report.display import fit_text
    from pinshift.report.builds import builds_lines
    from pinshift.report.groups import group_lines, note_groups, skipped_groups, warning_groups
    from pinshift.report.totals import plural, short

    migration, plan = result.migration, result.plan
    head = plan.target_commit or migration.start_commit
    lines = []
    if result.nothing_to_change:
        lines.append(f"nothing to change: recipe {migration.recipe.name} changes nothing on {migration.base} "
                     f"({short(migration.base_commit)}); no branch created")
        for step in plan.steps:
            lines.extend(f"note: {line}" for line in group_lines(note_groups(step), verbose, with_step=True))
        text = printable("\n".join(lines), keep_newlines=True)
        return (fit_text(text, width, keep_tokens=verbose) if width else text) + "\n"
    if result.nothing_to_do:
        lines.append(f"nothing to do: branch {migration.target} already has every step of recipe "
                     f"{migration.recipe.name}")
    lines.append(f"branch  {migration.target} ({short(head)})")
    lines.append(f"base    {migration.base} ({short(migration.base_commit)})")
    if migration.resumed is not None:  # --resume stops when the branch is on another commit than the base's
        lines.append(f"resumed after step {migration.first_step - 1}, on {migration.base} "
                     f"({short(migration.resumed.fork)})")
    lines.append(f"recipe  {migration.recipe.name}")
    for step in plan.steps:
        commit = short(step.commit) if step.commit else "-" * 7
        operations = f" ({step.operation_counts})" if step.operation_counts else ""
        counts = (f"{plural(len(step.changed), 'file')}{operations}, {plural(step.edit_count, 'edit')}"
                  if step.changed else "no change, no commit")
        if step.warnings:
            counts += f", {plural(len(step.warnings), 'warning')}"
        if step.skipped:
            counts += f", {len(step.skipped)} skipped"
        lines.append(f"  {step.index}/{step.total} {commit} {step.title} — {counts}")
    lines.extend(f"builds  {line}" for line in builds_lines(plan.builds, verbose))
    for index, notes in sorted(migration.notes.items()):
        lines.extend(f"note: step {index}: {note}" for note in notes)
    for step in plan.steps:
        lines.extend(f"warning: {line}" for line in group_lines(warning_groups(step), verbose, with_step=True))
    for step in plan.steps:
        lines.extend(f"skipped: {line}" for line in group_lines(skipped_groups(step), verbose, with_step=True))
    if result.pushed:
        lines.append(f"pushed  {migration.target} to {result.pushed}")
    if result.interrupted:
        lines.append(f"note: {result.interrupted} arrived after the branch was complete; the run finished")
    lines.append(f"inspect: git log --stat {migration.base}..{migration.target}")
    text = printable("\n".join(lines), keep_newlines=True)
    return (fit_text(text, width, keep_tokens=verbose) if width else text) + "\n"


def verify_failed(migration, planned, verify) -> bool:
    """`--verify`: report findings on the planned result (stderr); True when one is an error (nothing is committed)."""
    from pinshift.verify.verify import verify_plan

    verification = verify_plan(migration.repository.tree(migration.start_commit), planned, verify)
    for line in [str(f) for f in verification.findings] + [f"note: {n}" for n in verification.notes]:
        echo_fitted(f"verify: {printable(line)}", err=True)
    errors = [f for f in verification.findings if f.severity == "error"]
    if errors:
        echo_fitted(f"verify: {len(errors)} error{'s' if len(errors) != 1 else ''} on the migrated recipes; nothing committed "
                   f"(fix the recipe or the pin, or run without --verify)", err=True)
    else:
        echo_fitted(f"verify: migrated recipes verified, {len(verification.findings)} warning{'s' if len(verification.findings) != 1 else ''}",
                   err=True)
    return bool(errors)


def run_fanout(options, bases, report, verify=None) -> int:
    """Several bases (pinshift.branches.fanout, each a `BaseTarget`): the summary table, each branch's report where
    asked; 1 if any base failed, or was skipped by a run (a needed step changes nothing there: no branch)."""
    from pinshift.branches.fanout import FanoutInterrupted, run_all
    from pinshift.interrupts import Interrupted
    from pinshift.report import fanout as fanout_report
    from pinshift.report import output_is_directory

    echo_fitted(printable(f"pinshift: {options.recipe} onto {len(bases)} bases: "
                          f"{', '.join(b.base for b in bases)}"), err=True)
    try:
        with progress_bar(enabled=report.format != "json") as progress:
            outcomes = run_all(replace(options, run=replace(options.run, phases=updater(progress))), bases, verify)
    except FanoutInterrupted as stop:
        for label, done in (("finished before the interrupt", stop.finished),
                            ("completed while stopping", stop.completed)):
            if done:
                echo_fitted(printable(f"pinshift: {label}: " + ", ".join(
                    f"{o.base} → {o.target} ({o.status})" for o in done)), err=True)
        raise Interrupted(stop.signum) from None
    recipe = _recipe_name(outcomes, options)
    fmt = report.format or ("text" if report.output else None)
    table_to_stderr = fmt is not None and not report.output and not output_is_directory(report.output or "")
    table = fanout_report.render_table(outcomes, options.dry_run, width_for(table_to_stderr))
    created = [o.target for o in outcomes if o.status == "created"]
    with report_after_commits(f"branches {', '.join(created)} were created" if created else None):
        _write_fanout_reports(outcomes, report, fmt, recipe, options, table)
    code = 1 if any(o.failed or (o.skipped and not options.dry_run) for o in outcomes) else 0
    if report.check and any(o.plan is not None and o.plan.would_change for o in outcomes):
        code = 1
    return code


def _write_fanout_reports(outcomes, report, fmt, recipe, options, table) -> None:
    from pinshift.report import check_output_directory, output_is_directory, render
    from pinshift.report import fanout as fanout_report

    if report.output and output_is_directory(report.output):
        directory = check_output_directory(report.output)
        written = fanout_report.write_directory(outcomes, directory, fmt, recipe, options.dry_run,
                                                report.markdown_limit)
        click.echo(table, nl=False)
        branches, index = written[:-1], written[-1]
        echo_fitted(printable(f"pinshift: {plural_reports(len(branches), 'branch report')} and {index.name} written "
                             f"to {directory}"), err=True)
    elif fmt is not None:
        if fmt == "json":
            text = fanout_report.render_json(outcomes, recipe, options.dry_run)
        elif fmt == "markdown":
            text = fanout_report.render_markdown(outcomes, recipe, report.markdown_limit, None)
        else:
            text = "\n".join(f"== {printable(o.base)} → {printable(o.target)}\n{render(o.plan, report)}"
                             for o in outcomes if o.plan)
        if report.output:
            from pinshift.report import write_report

            write_report(report.output, text)
            click.echo(table, nl=False)
            echo_fitted(f"pinshift: report written to {report.output}", err=True)
        else:
            from pinshift.report import echo_report

            echo_report(text)
            click.echo(table, nl=False, err=True)
    else:
        if options.dry_run:
            for outcome in outcomes:
                if outcome.plan is not None:
                    echo_fitted(printable(f"== {outcome.base} → {outcome.target}"))
                    click.echo(render(outcome.plan, report), nl=False)
        click.echo(table, nl=False)


def network_note() -> None:
    """--verbose: say when Nix (the build check) ran without a network namespace of its own."""
    from pinshift.sandbox.nix_process import network_note as note

    if note():
        echo_fitted(printable(f"pinshift: note: {note()}"), err=True)


def _recipe_name(outcomes, options) -> str:
    planned = next((o.plan for o in outcomes if o.plan is not None), None)
    return planned.recipe if planned is not None else options.recipe


def plural_reports(count: int, what: str = "report") -> str:
    return f"{count} {what}{'s' if count != 1 else ''}"


def run_migration(options, report, verify=None) -> int:
    """Plan, (`verify`: check the result against the VerifyOptions,) then either report (--dry-run) or commit.

    Several bases (`--from` given more than once or as a glob, or a recipe's `bases`) run as a fan-out.
    """
    from pinshift.branches.fanout import bases_of
    from pinshift.branches.migrate import clean_stale_worktrees, failure, needless, prepare, plan, run
    from pinshift.report import check_output_directory, check_output_path, output_is_directory

    from pinshift.planning.memo import PlanMemo

    memo = PlanMemo.open(note=lambda line: echo_fitted(printable(line), err=True))
    options = replace(options, run=replace(options.run, memo=memo))
    bases = bases_of(options)
    if report.output:  # before any work: a report that cannot be written is found now, not after the commits
        if bases is not None and output_is_directory(report.output):
            check_output_directory(report.output)
        else:
            check_output_path(report.output)
    if bases is not None:
        return run_fanout(options, bases, report, verify)

    with progress_bar(enabled=report.format != "json") as progress:
        options = replace(options, run=replace(options.run, strict=options.strict, progress=progress,
                                               phases=updater(progress)))
        migration = prepare(options)
        planned = plan(migration)
    if report.verbose:
        network_note()
    if options.run.memo is not None:
        options.run.memo.save()
        if report.verbose and options.run.memo.hits:
            echo_fitted(f"pinshift: {options.run.memo.summary()}", err=True)
    if verify is not None and verify_failed(migration, planned, verify):
        return 1
    if options.dry_run:
        code = emit(planned, report)
        if any(failure(step, options.strict) for step in planned.steps):
            code = max(code, 1)
        reason = needless(migration, planned)
        if reason is not None:  # what the run would stop on; the exit code stays the report's (docs/recipes.md)
            echo_fitted(printable(f"pinshift: note: {reason}; a run would make no branch"), err=True)
        return code
    for line in clean_stale_worktrees(migration):
        echo_fitted(f"pinshift: {line}", err=True)
    result = run(migration, planned)
    if result.nothing_to_change:
        click.echo(summary(result, width=width_for()), nl=False)
        return 0
    if report.format or report.output:
        click.echo(summary(result, report.verbose, width_for(err=True)), err=True, nl=False)
        with report_after_commits(f"branch {migration.target} was created"):
            return emit(planned, report)
    click.echo(summary(result, report.verbose, width_for()), nl=False)
    return 0


@contextmanager
def report_after_commits(done: str | None):
    """A report that fails to be written: exit 1 saying what exists when `done` says branches were made
    (exit 2 means nothing changed), else one line and exit 2."""
    from pinshift.errors import IncompleteRun, PinshiftError

    try:
        yield
    except (OSError, PinshiftError) as error:
        reason = f"{error.strerror or error}" if isinstance(error, OSError) else str(error)
        if done is None:
            raise PinshiftError(f"the report could not be written: {reason}; no branch was created") from None
        raise IncompleteRun(f"{done}, but the report could not be written: {reason}") from None


@click.command()
@click.argument("recipe", shell_complete=complete_recipes)
@click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="The recipe repository (default: the current directory).")
@click.option("--from", "bases", metavar="BASE", multiple=True, shell_complete=complete_branches,
              help="Branch or commit to start from (default: the recipe's base or bases); repeat it, or give a glob "
                   "('pytorch-2.9-*'), to migrate several branches in one run.")
@click.option("--branch", metavar="NAME", help="Branch to create (default: the recipe's target); with several bases "
                                               "a template with {base} ('{base}-pin0182a36').")
@click.option("--dry-run", is_flag=True, help="Plan and report; create no branch or commit and write nothing in the repository "
                                         "(the plans are remembered in ~/.cache/pinshift; PINSHIFT_CACHE=off).")
@click.option("--resume", is_flag=True, help="Continue an existing branch after its last recorded step.")
@click.option("--force", is_flag=True, help="Recreate an existing branch from the base.")
@click.option("--keep-partial", is_flag=True, help="On failure, keep the branch at the last complete step.")
@click.option("--push", metavar="REMOTE", help="Push the new branch to REMOTE.")
@click.option("--no-verify", is_flag=True, help="Skip git's pre-commit and commit-msg hooks.")
@click.option("--strict", is_flag=True, help="Fail a step that raises any warning.")
@click.option("--allow-broken", is_flag=True,
              help="Commit a step after which a recipe that evaluated no longer does (the report says so; "
                   "docs/diff.md).")
@click.option("--no-build-check", "no_build_check", is_flag=True,
              help="Do not evaluate what the recipes build after each step (faster on thousands of recipes; the "
                   "report says it was not checked).")
@click.option("--migrations", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Load extra step kinds from the *.py files of DIR (naming DIR consents to running them).")
@click.option("--trust-repo", is_flag=True,
              help="Allow the repository's own step kinds (.pinshift/migrations/*.py) that the recipe needs to run.")
@click.option("--verify", "verify", is_flag=True,
              help="Verify the migrated recipes before committing; an error commits nothing (docs/verify.md).")
@click.option("--nixpkgs", type=click.Path(file_okay=False, path_type=Path), envvar="PINSHIFT_NIXPKGS",
              help="A local nixpkgs clone (default: $PINSHIFT_NIXPKGS), read offline: for pin-swap's "
                   "hash = \"compute\" and a branch or tag as `new`; with --verify, to check package sets, "
                   "attributes and .override arguments at the new pin.")
@report_options
def migrate(recipe, repo, bases, branch, dry_run, resume, force, keep_partial, push, no_verify, strict, allow_broken,
            no_build_check, migrations, trust_repo, verify, nixpkgs, report_format, report_output, no_color, check) -> None:
    """Run RECIPE onto a new branch from its base, one commit per step that changes something.

    Works in a temporary git worktree: your current branch, working tree, index
    and stash are left exactly as they are.
    """
    from pinshift.branches.migrate import MigrateOptions

    report = options_from(report_format, report_output, no_color, check, directory_ok=True)
    options = MigrateOptions(recipe=recipe, repo=repo, base=bases[0] if len(bases) == 1 else None, bases=bases,
                             branch=branch, dry_run=dry_run, resume=resume,
                             force=force, keep_partial=keep_partial, push=push, no_verify=no_verify, strict=strict,
                             migrations=migrations, trust_repo=trust_repo, nixpkgs=nixpkgs, allow_broken=allow_broken,
                             build_check=not no_build_check)
    verify_options = None
    if verify:
        from pinshift.verify.verify import VerifyOptions

        verify_options = VerifyOptions(nixpkgs=nixpkgs)
    code = run_migration(options, report, verify_options)
    if code:
        raise click.exceptions.Exit(code)
