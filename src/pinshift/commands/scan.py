"""`pinshift scan PATH...`: what the recipes pin, use and target, and the variant matrix they form."""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import click

from pinshift.report.display import echo_fitted, printable, width_for
from pinshift.files.tree import DEFAULT_MAX_BYTES


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--verbose", "-v", is_flag=True, help="List each recipe's facts and every file of each drift group.")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
def scan(paths: tuple[str, ...], fmt: str, verbose: bool, max_bytes: int) -> None:
    """The variant matrix of each package (GPU target x CUDA version x CPU ISA), pin drift grouped by
    revision, package-set drift; with --verbose, each recipe's pins, package set, .override arguments,
    GPU target, CUDA overlay, CPU flags, pname, platforms and metadata-rev (PATH defaults to .)."""
    from pinshift.facts.collect import read_recipes
    from pinshift.facts.matrix import aggregate
    from pinshift.status.scan_report import render_scan

    from pinshift.report.progress import progress_bar, updater

    with progress_bar(enabled=fmt == "text") as bar:
        recipes, skipped = read_recipes(paths or (".",), max_bytes, progress=updater(bar))
    for reason in skipped:
        echo_fitted(f"skipped: {printable(reason)}", err=True, keep_tokens=verbose)
    facts = [r.facts for r in recipes]
    width = width_for() if fmt == "text" else None
    click.echo(printable(render_scan(facts, aggregate(facts), fmt, verbose, width), keep_newlines=True), nl=False)
