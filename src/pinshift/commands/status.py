"""`pinshift status`: where every branch of every recipe repository stands, read from the commits."""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import os
import shlex
from pathlib import Path

import click

from pinshift.commands.completion import complete_branches
from pinshift.report.display import echo_fitted, printable
from pinshift.errors import UsageError
from pinshift.files.tree import DEFAULT_MAX_BYTES

DEFAULT_FILES = (".flox/pkgs/**/*.nix",)  # pinshift.recipes.recipe.DEFAULT_FILES, without importing it


@click.command()
@click.option("--repo", "repos", multiple=True, type=click.Path(path_type=Path), metavar="DIR",
              help="A recipe repository (a local clone; repeat for several). Default: the current one.")
@click.option("--branches", multiple=True, metavar="GLOB", shell_complete=complete_branches,
              help="Only local branches matching GLOB (fnmatch, repeatable). Default: every local branch.")
@click.option("--files", multiple=True, metavar="GLOB",
              help="The recipe files of each branch (repeatable). Default: .flox/pkgs/**/*.nix.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--nixpkgs", type=click.Path(file_okay=False, path_type=Path), envvar="PINSHIFT_NIXPKGS",
              help="A local nixpkgs clone (default: $PINSHIFT_NIXPKGS): show the PyTorch version each pin "
                   "provides, read from the clone at that pin.")
@click.option("--align-to", "align_to", metavar="DIR@BRANCH",
              help="Mark each branch aligned or not with the single nixpkgs pin of BRANCH of the clone DIR "
                   "(e.g. ../build-vllm@main).")
@click.option("--pick", type=click.Choice(["single", "majority"]), default="single", show_default=True,
              help="With --align-to: a target branch with several pins is an error (single) or gives its "
                   "most common pin (majority).")
@click.option("--recipe", "recipe_for", metavar="BRANCH", shell_complete=complete_branches,
              help="With --align-to: print only the recipe (TOML) that aligns BRANCH (or REPO@BRANCH), "
                   "to save under .pinshift/recipes/ and run with pinshift migrate.")
@click.option("--check", is_flag=True,
              help="Exit 1 when a branch cannot be read or has unparsable recipes, or (--align-to) is not aligned.")
@click.option("--wide", is_flag=True, help="Text: every column in full, however wide (default: fit $COLUMNS, else "
                                           "the terminal, else 100 columns).")
@click.option("--verbose", "-v", is_flag=True, help="List every unparsable and skipped file, not only the first.")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
@click.option("--jobs", "-j", type=int, default=None, help="Worker processes for parsing (default: one per CPU "
                                                            "for many files).")
def status(repos, branches, files, fmt, nixpkgs, align_to, pick, recipe_for, check, wide, verbose, max_bytes,
           jobs) -> None:
    """One row per repository x branch: nixpkgs pin(s), package and version, CUDA, Python, GPU targets, package
    set(s), recipe pattern, variants, drift; read from each branch's commit (nothing is checked out or written)."""
    from pinshift.status.status import StatusOptions, gather_status
    from pinshift.status.status_report import render_json, render_markdown, render_text
    from pinshift.files.globs import glob_problem

    for glob in files:
        if problem := glob_problem(glob):
            raise UsageError(f"--files {glob}: invalid glob ({problem})")
    if recipe_for is not None and align_to is None:
        raise UsageError("--recipe BRANCH needs --align-to DIR@BRANCH: the recipe moves BRANCH onto that pin")
    if pick == "majority" and align_to is None:
        raise UsageError("--pick needs --align-to DIR@BRANCH: it says which pin of the target branch counts")
    options = StatusOptions(repos=tuple(repos) or (Path("."),), branches=tuple(branches),
                            files=tuple(files) or DEFAULT_FILES, nixpkgs=nixpkgs, align_to=align_to,
                            majority=pick == "majority", max_bytes=max_bytes, jobs=jobs)
    from pinshift.report.progress import progress_bar, updater

    with progress_bar(enabled=fmt != "json" and recipe_for is None) as bar:
        result = gather_status(options, updater(bar))
    for note in result.cache_notes:
        echo_fitted(printable(note), err=True)
    if recipe_for is not None:
        click.echo(printable(_recipe(result, options, recipe_for), keep_newlines=True), nl=False)
        return
    if fmt == "json":
        text = render_json(result.rows, result.target, result.notes, nixpkgs, result.real)
    elif fmt == "markdown":
        text = render_markdown(result.rows, result.target, result.notes, verbose)
    else:
        text = render_text(result.rows, result.target, result.notes, verbose, _width(), wide)
    click.echo(printable(text, keep_newlines=True), nl=False)
    if check and _failing(result):
        raise click.exceptions.Exit(1)


def _width() -> int:
    """The text table's width: $COLUMNS, else the terminal's when stdout is one, else 100."""
    from pinshift.status.status_report import DEFAULT_WIDTH

    import sys

    given = os.environ.get("COLUMNS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else DEFAULT_WIDTH
    except (OSError, ValueError, AttributeError):
        return DEFAULT_WIDTH


def _failing(result) -> bool:
    rows = result.rows
    return any(row.error or row.problems or (row.alignment is not None and not row.alignment.aligned) for row in rows)


def _chosen_row(rows, wanted: str):
    """The row `wanted` names: `REPO@BRANCH`, or a branch name only one repository has."""
    exact = [row for row in rows if row.label == wanted]
    if exact:
        return exact[0]
    named = [row for row in rows if row.branch == wanted]
    if len(named) == 1:
        return named[0]
    if named:
        raise UsageError(f"--recipe {wanted}: several repositories have that branch "
                         f"({', '.join(row.label for row in named)}); name one as REPO@BRANCH")
    known = ", ".join(row.label for row in rows[:10])
    raise UsageError(f"--recipe {wanted}: no such branch among the rows ({known}); check --repo and --branches")


def _recipe(result, options, wanted: str) -> str:
    """The aligning recipe's TOML; a line on stderr says where to save it and how to run it."""
    from pinshift.facts.alignment import split_align_to
    from pinshift.status.status import align_recipe

    row = _chosen_row(result.rows, wanted)
    target_path, _ = split_align_to(options.align_to)
    target_path = Path(target_path).expanduser()
    if target_path.is_absolute():
        repo_path = str(Path(result.target.root).resolve())
    else:
        repo_path = os.path.relpath(Path(result.target.root).resolve(), Path(row.root).resolve())
    command = "pinshift status " + " ".join(shlex.quote(a) for a in (
        ["--align-to", options.align_to] + (["--pick", "majority"] if options.majority else [])
        + [f"--files={g}" for g in options.files if options.files != DEFAULT_FILES] + ["--recipe", wanted]))
    name, text = align_recipe(row, result.target, repo_path, options.files, options.majority, command,
                              hashes=bool(row.hashed))
    echo_fitted(f"pinshift: recipe {name}: {row.label} onto {result.target.revision[:7]}, {result.target.origin}; "
               f"save it as {Path(row.root) / '.pinshift' / 'recipes' / (name + '.toml')} and run: "
               f"pinshift migrate {name}", err=True, keep_tokens=True)  # a path to type: whole
    return text
