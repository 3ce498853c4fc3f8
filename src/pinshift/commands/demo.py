"""`pinshift demo`: build a seed-shaped recipe repository and migrate it exactly as a user would."""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import tempfile
from pathlib import Path

import click


@click.command()
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Build the demo repository here (new or empty; default: a new temporary directory).")
@click.option("--python312", is_flag=True,
              help="Build a pytorch-2.9-python312 branch (67 variants) instead and make pytorch-2.9-python311 from "
                   "it: files renamed, package set, description.")
@click.option("--flox-args", is_flag=True,
              help="Also give main Flox function-argument recipes and run flox-args-to-pinned on main instead.")
def demo(directory: Path | None, python312: bool, flox_args: bool) -> None:
    """Build a `pytorch-2.9` recipe branch (66 variants) and run `pinshift migrate pytorch-2.10-cuda12_9` on it."""
    from pinshift.commands.migrate import run_migration
    from pinshift.git.repo import Repository, one_line_log
    from pinshift.branches.migrate import MigrateOptions
    from pinshift.report import ReportOptions
    from pinshift.report.display import echo_fitted, printable

    if python312 and flox_args:
        from pinshift.errors import UsageError

        raise UsageError("--python312 and --flox-args are two different demos: choose one")
    where = directory if directory is not None else Path(tempfile.mkdtemp(prefix="pinshift-demo-"))
    if python312:
        from pinshift.demo.python_branch import BRANCH as BASE, RECIPE, RECIPE_FILE, build_python312_demo

        root = build_python312_demo(where)
        echo_fitted(f"demo repository: {root} (branch {BASE}: 67 recipes, README.md, .flox/env/manifest.toml)")
        echo_fitted(f"$ pinshift migrate {RECIPE_FILE.name}\n")
        options, base, target = MigrateOptions(recipe=str(RECIPE_FILE), repo=root), BASE, RECIPE
    else:
        from pinshift.demo.build import BASE, RECIPE, build_demo

        root = build_demo(where, flox_args=flox_args)
        echo_fitted(f"demo repository: {root} (branch {BASE}: 66 recipes, README.md, .flox/env/manifest.toml)")
        options, command, base, target = MigrateOptions(recipe=RECIPE, repo=root), RECIPE, BASE, RECIPE
        if flox_args:
            from pinshift.demo.flox_args import BRANCH, RECIPE as FLOX_RECIPE, TARGET, flox_variants

            echo_fitted(f"                 (branch {BRANCH}: {len(flox_variants())} recipes taking Flox function arguments)")
            options = MigrateOptions(recipe=FLOX_RECIPE, repo=root, base=BRANCH, branch=TARGET)
            command, base, target = f"{FLOX_RECIPE} --from {BRANCH} --branch {TARGET}", BRANCH, TARGET
        echo_fitted(f"$ pinshift migrate {command}\n")
    code = run_migration(options, ReportOptions())
    repository = Repository.open(root)
    click.echo("\ncommits:")
    for line in one_line_log(repository, base, target):
        echo_fitted(printable(f"  {line}"))
    echo_fitted(f"\nlook around: cd {root} && git log --stat {base}..{target}", keep_tokens=True)  # to type: whole
    if code:
        raise click.exceptions.Exit(code)
