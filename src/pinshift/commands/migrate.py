"""`pinshift migrate RECIPE`: options and output; the work is in pinshift.migrate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from pinshift.display import printable
from pinshift.report import emit, options_from, progress_bar, report_options


def summary(result, verbose: bool = False) -> str:
    """Branch, base, one line per step (commit id and counts), warnings, and how to inspect the result.

    Repeated warnings and skipped files are one line per step and finding (`--verbose`: each one).
    """
    from pinshift.report.groups import group_lines, skipped_groups, warning_groups
    from pinshift.report.totals import plural, short

    migration, plan = result.migration, result.plan
    head = plan.target_commit or migration.start_commit
    lines = []
    if result.nothing_to_do:
        lines.append(f"nothing to do: branch {migration.target} already has every step of recipe "
                     f"{migration.recipe.name}")
    lines.append(f"branch  {migration.target} ({short(head)})")
    lines.append(f"base    {migration.base} ({short(migration.base_commit)})")
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
    return printable("\n".join(lines), keep_newlines=True) + "\n"


def verify_failed(migration, planned, verify) -> bool:
    """`--verify`: report findings on the planned result (stderr); True when one is an error (nothing is committed)."""
    from pinshift.checks.verify import verify_plan

    verification = verify_plan(migration.repository.tree(migration.start_commit), planned, verify)
    for line in [str(f) for f in verification.findings] + [f"note: {n}" for n in verification.notes]:
        click.echo(f"verify: {printable(line)}", err=True)
    errors = [f for f in verification.findings if f.severity == "error"]
    if errors:
        click.echo(f"verify: {len(errors)} error{'s' if len(errors) != 1 else ''} on the migrated recipes; nothing committed "
                   f"(fix the recipe or the pin, or run without --verify)", err=True)
    else:
        click.echo(f"verify: migrated recipes verified, {len(verification.findings)} warning{'s' if len(verification.findings) != 1 else ''}",
                   err=True)
    return bool(errors)


def run_migration(options, report, verify=None) -> int:
    """Plan, (`verify`: check the result against the VerifyOptions,) then either report (--dry-run) or commit."""
    from pinshift.migrate import clean_stale_worktrees, failure, prepare, plan, run

    with progress_bar() as progress:
        options = replace(options, run=replace(options.run, strict=options.strict, progress=progress))
        migration = prepare(options)
        planned = plan(migration)
    if verify is not None and verify_failed(migration, planned, verify):
        return 1
    if options.dry_run:
        code = emit(planned, report)
        if any(failure(step, options.strict) for step in planned.steps):
            code = max(code, 1)
        return code
    for line in clean_stale_worktrees(migration):
        click.echo(f"pinshift: {line}", err=True)
    result = run(migration, planned)
    if report.format or report.output:
        click.echo(summary(result, report.verbose), err=True, nl=False)
        return emit(planned, report)
    click.echo(summary(result, report.verbose), nl=False)
    return 0


@click.command()
@click.argument("recipe")
@click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="The recipe repository (default: the current directory).")
@click.option("--from", "base", metavar="BASE", help="Branch or commit to start from (default: the recipe's base).")
@click.option("--branch", metavar="NAME", help="Branch to create (default: the recipe's target).")
@click.option("--dry-run", is_flag=True, help="Plan and report; create no branch, commit or file.")
@click.option("--resume", is_flag=True, help="Continue an existing branch after its last recorded step.")
@click.option("--force", is_flag=True, help="Recreate an existing branch from the base.")
@click.option("--keep-partial", is_flag=True, help="On failure, keep the branch at the last complete step.")
@click.option("--push", metavar="REMOTE", help="Push the new branch to REMOTE.")
@click.option("--no-verify", is_flag=True, help="Skip git's pre-commit and commit-msg hooks.")
@click.option("--strict", is_flag=True, help="Fail a step that raises any warning.")
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
def migrate(recipe, repo, base, branch, dry_run, resume, force, keep_partial, push, no_verify, strict, migrations,
            trust_repo, verify, nixpkgs, report_format, report_output, no_color, check) -> None:
    """Run RECIPE onto a new branch from its base, one commit per step that changes something.

    Works in a temporary git worktree: your current branch, working tree, index
    and stash are left exactly as they are.
    """
    from pinshift.migrate import MigrateOptions

    report = options_from(report_format, report_output, no_color, check)
    options = MigrateOptions(recipe=recipe, repo=repo, base=base, branch=branch, dry_run=dry_run, resume=resume,
                             force=force, keep_partial=keep_partial, push=push, no_verify=no_verify, strict=strict,
                             migrations=migrations, trust_repo=trust_repo, nixpkgs=nixpkgs)
    verify_options = None
    if verify:
        from pinshift.checks.verify import VerifyOptions

        verify_options = VerifyOptions(nixpkgs=nixpkgs)
    code = run_migration(options, report, verify_options)
    if code:
        raise click.exceptions.Exit(code)
