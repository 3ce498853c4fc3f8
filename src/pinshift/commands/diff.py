"""`pinshift diff BASE TARGET [PATHS…]`: what each recipe builds on two commits, offline (exit 1 when one broke)."""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

import click

from pinshift.commands.completion import complete_branches
from pinshift.report import DEFAULT_MARKDOWN_LIMIT, check_markdown_limit
from pinshift.report.display import echo_fitted, printable

NO_NIX = ("pinshift diff evaluates recipes with nix-instantiate, which is not on PATH: install Nix (Debian: "
          "apt-get install nix-bin); nothing was evaluated")


@click.command()
@click.argument("base", shell_complete=complete_branches)
@click.argument("target", shell_complete=complete_branches)
@click.argument("paths", nargs=-1)
@click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="The recipe repository (default: the current directory).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write the report to FILE instead of stdout.")
@click.option("--verbose", "-v", is_flag=True, help="List every recipe of each group (text; Markdown and JSON always do), "
              "and say when Nix could not be given a network namespace of its own.")
@click.option("--nixpkgs", type=click.Path(file_okay=False, path_type=Path), envvar="PINSHIFT_NIXPKGS",
              help="A local nixpkgs clone (default: $PINSHIFT_NIXPKGS): also evaluate each recipe at its real pin, "
                   "exported from the clone, offline: the version it builds and whether its derivation changes.")
@click.option("--markdown-limit", type=int, default=DEFAULT_MARKDOWN_LIMIT, metavar="CHARS", show_default=True,
              callback=check_markdown_limit, help="Longest Markdown report; recipe lists, then groups of recipes "
                                                  "are left out to fit, and the report says how many.")
def diff(base, target, paths, repo, fmt, output, verbose, nixpkgs, markdown_limit) -> None:
    """Evaluate the recipes of BASE and TARGET (read from git, nothing checked out) against pinshift's stand-in
    nixpkgs, offline, and show what each builds differently: same, changed (each attribute, before → after),
    changed but the stand-in cannot tell how (its files changed in meaning, it evaluates alike), cannot tell (the
    stand-in cannot evaluate it: a fetched source), broken (evaluated on BASE, fails on TARGET: exit 1), fixed,
    failing (on both), added, removed. With --nixpkgs, also at each recipe's real pin: rebuild or not (its .drv
    path), the versions, broken with Nix's message, or cannot tell. PATHS (paths, directories or globs relative to
    the repository root) limit the recipes shown. See docs/diff.md."""
    from pinshift.evaluation.build_diff import diff_commits
    from pinshift.evaluation.evaluation import find_nix
    from pinshift.errors import UsageError
    from pinshift.git.repo import Repository
    from pinshift.report import check_output_path, echo_report, write_report
    from pinshift.report.builds import count_line, render

    if output:
        check_output_path(output)
    nix = find_nix()
    if nix is None:
        raise UsageError(NO_NIX)
    repository = Repository.open_to_read(repo, f"--repo {repo}")
    if nixpkgs is not None:
        from pinshift.nixpkgs.checkout import NixpkgsCheckout

        NixpkgsCheckout(nixpkgs)  # a folder that is not a clone: one line, before anything is evaluated
    from pinshift.report.progress import progress_bar, updater

    with progress_bar(enabled=fmt != "json") as bar:
        result = diff_commits(repository, base, target, paths, nix,
                              note=lambda line: echo_fitted(printable(line), err=True), nixpkgs=nixpkgs,
                              progress=updater(bar))
    if verbose:
        from pinshift.sandbox.nix_process import network_note

        if network_note():
            echo_fitted(printable(f"pinshift: note: {network_note()}"), err=True)
    from pinshift.languages.fit import output_width

    text = render(result, fmt, verbose, markdown_limit, output_width(False if output else None))
    if output:
        write_report(output, text)
        echo_fitted(printable(f"pinshift: {count_line(result.recipes)}; report written to {output}"), err=True)
    else:
        echo_report(text)
    if result.broken or result.real_broken:
        raise click.exceptions.Exit(1)
