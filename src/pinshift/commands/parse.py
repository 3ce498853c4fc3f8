"""`pinshift parse PATH...`: report syntax problems like a linter (exit 1 if any)."""

from __future__ import annotations

from pathlib import Path

import click

from pinshift.errors import UsageError
from pinshift.files import DEFAULT_MAX_BYTES, DirectoryTree, SkippedFile
from pinshift.syntax.document import parse_document


def nix_files(paths: tuple[str, ...], max_bytes: int) -> list[tuple[DirectoryTree, str]]:
    """(tree, relative path) of every .nix file named or found under a directory (honouring .gitignore)."""
    found = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            tree = DirectoryTree(path, max_bytes)
            found.extend((tree, p) for p in tree.paths() if p.endswith(".nix"))
        elif path.exists() or path.is_symlink():
            found.append((DirectoryTree(path.parent, max_bytes, use_git=False), path.name))
        else:
            raise UsageError(f"{raw}: no such file or directory")
    return found


def display_path(tree: DirectoryTree, relative: str) -> str:
    full = tree.root / relative
    try:
        return str(full.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(full)


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
            click.echo(f"{shown}: {str(reason).split(': ', 1)[-1]}", err=True)
            continue
        checked += 1
        for problem in parse_document(data, shown).problems:
            problems += 1
            line = problem.source_line.strip()
            click.echo(f"{problem}\n    {line}" if line else str(problem))
    if not quiet:
        click.echo(f"{checked} files parsed, {problems} problems, {skipped} skipped", err=True)
    if problems:
        raise click.exceptions.Exit(1)
