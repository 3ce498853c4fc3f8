"""`pinshift parse PATH...`: report syntax problems like a linter (exit 1 if any)."""

from __future__ import annotations

import click

from pinshift.display import printable
from pinshift.files import DEFAULT_MAX_BYTES, SkippedFile, display_path, nix_files
from pinshift.syntax.document import parse_document


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
@click.option("--quiet", "-q", is_flag=True, help="Print only problems, no summary line.")
def parse(paths: tuple[str, ...], max_bytes: int, quiet: bool) -> None:
    """Parse Nix files and print each syntax problem as path:line:col: message."""
    problems = skipped = checked = 0
    for tree, relative in nix_files(paths, max_bytes):
        shown = display_path(tree, relative)
        try:
            data = tree.read(relative)
        except SkippedFile as reason:
            skipped += 1
            click.echo(printable(f"{shown}: {str(reason).split(': ', 1)[-1]}"), err=True)
            continue
        checked += 1
        for problem in parse_document(data, shown).problems:
            problems += 1
            line = printable(problem.source_line.strip())
            click.echo(f"{printable(str(problem))}\n    {line}" if line else printable(str(problem)))
    if not quiet:
        click.echo(f"{checked} files parsed, {problems} problems, {skipped} skipped", err=True)
    if problems:
        raise click.exceptions.Exit(1)
