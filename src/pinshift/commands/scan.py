"""`pinshift scan PATH...`: what the recipes pin, use and target, and the variant matrix they form."""

from __future__ import annotations

import click

from pinshift.display import printable
from pinshift.files import DEFAULT_MAX_BYTES


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
def scan(paths: tuple[str, ...], fmt: str, max_bytes: int) -> None:
    """Per recipe: pins, package set and attribute, .override arguments, GPU target, CPU flags, pname,
    platforms, metadata-rev; then the variant matrix, pin drift and package-set drift (PATH defaults to .)."""
    from pinshift.checks.collect import read_recipes
    from pinshift.checks.matrix import aggregate
    from pinshift.checks.scan_report import render_scan

    recipes, skipped = read_recipes(paths or (".",), max_bytes)
    for reason in skipped:
        click.echo(f"skipped: {printable(reason)}", err=True)
    facts = [r.facts for r in recipes]
    click.echo(printable(render_scan(facts, aggregate(facts), fmt), keep_newlines=True), nl=False)
