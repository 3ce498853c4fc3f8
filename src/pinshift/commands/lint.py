"""`pinshift lint PATH...`: recipe names checked against their contents (exit 1 on any finding)."""

from __future__ import annotations

import click

from pinshift.display import printable
from pinshift.files import DEFAULT_MAX_BYTES


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
def lint(paths: tuple[str, ...], fmt: str, max_bytes: int) -> None:
    """Check each recipe's file name (pytorch-python313-cuda12_9-sm90-avx512) against its pname, package set,
    CUDA overlay, GPU target, CPU flags and platforms; one finding per line `path:line:col: code message`."""
    from pinshift.checks.collect import read_recipes
    from pinshift.checks.findings import render_findings
    from pinshift.checks.lint import lint as lint_recipes

    recipes, skipped = read_recipes(paths or (".",), max_bytes)
    for reason in skipped:
        click.echo(f"skipped: {printable(reason)}", err=True)
    findings = lint_recipes(recipes)
    click.echo(printable(render_findings(findings, fmt, "pinshift lint"), keep_newlines=True), nl=False)
    if fmt == "text":
        click.echo(f"{len(recipes)} files linted, {len(findings)} findings", err=True)
    if findings:
        raise click.exceptions.Exit(1)
