"""`pinshift demo`: build a seed-shaped recipe repository and migrate it exactly as a user would."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click


@click.command()
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Build the demo repository here (new or empty; default: a new temporary directory).")
def demo(directory: Path | None) -> None:
    """Build a `pytorch-2.9` recipe branch (66 variants) and run `pinshift migrate pytorch-2.10-cuda12_9` on it."""
    from pinshift.commands.migrate import run_migration
    from pinshift.demo.build import BASE, RECIPE, build_demo
    from pinshift.gitrepo import Repository, one_line_log
    from pinshift.migrate import MigrateOptions
    from pinshift.report import ReportOptions

    root = build_demo(directory if directory is not None else Path(tempfile.mkdtemp(prefix="pinshift-demo-")))
    click.echo(f"demo repository: {root} (branch {BASE}: 66 recipes, README.md, .flox/env/manifest.toml)")
    click.echo(f"$ pinshift migrate {RECIPE}\n")
    options = MigrateOptions(recipe=RECIPE, repo=root)
    code = run_migration(options, ReportOptions())
    repository = Repository.open(root)
    click.echo("\ncommits:")
    for line in one_line_log(repository, BASE, RECIPE):
        click.echo(f"  {line}")
    click.echo(f"\nlook around: cd {root} && git log --stat {BASE}..{RECIPE}")
    if code:
        raise click.exceptions.Exit(code)
