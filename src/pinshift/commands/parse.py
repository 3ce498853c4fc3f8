"""`pinshift parse PATH...`: report syntax problems like a linter (exit 1 if any).

Each problem is `path:line:col: message` and, indented below it, its source line (a long line cut to the
screen's width around the column, pinshift.languages.fit). Problems of one file that say the same thing (numbers aside, as
every report groups findings) are shown once, with the count of the rest; `--verbose` lists every one.

A file holding a NUL byte, which every other command skips, is parsed the way Nix reads it (a NUL
between tokens ends the file, syntax/reading.py): its verdict is Nix's, and a note on stderr says
where Nix stops reading when that is before the end.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import click

from pinshift.report.display import echo_fitted, printable, width_for
from pinshift.files.tree import DEFAULT_MAX_BYTES, NulFile, SkippedFile, display_path, nix_files
from pinshift.syntax.document import parse_document
from pinshift.git.repo import listed_files


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
@click.option("--quiet", "-q", is_flag=True, help="Print only problems, no summary line.")
@click.option("--verbose", "-v", is_flag=True, help="List every problem, also those that repeat one shown.")
def parse(paths: tuple[str, ...], max_bytes: int, quiet: bool, verbose: bool) -> None:
    """Parse Nix files and print each syntax problem as path:line:col: message."""
    problems = skipped = checked = 0
    for tree, relative in nix_files(paths, max_bytes, listed_files):
        shown = display_path(tree, relative)
        try:
            data = tree.read(relative)
        except NulFile as held:
            data = held.data
        except SkippedFile as reason:
            skipped += 1
            echo_fitted(printable(f"{shown}: {str(reason).split(': ', 1)[-1]}"), err=True, keep_tokens=verbose)
            continue
        checked += 1
        doc = parse_document(data, shown)
        found = doc.problems
        problems += len(found)
        if doc.end < len(data) and not any(problem.offset == doc.end for problem in found):
            rest = len(data) - doc.end
            echo_fitted(printable(f"{doc.location(doc.end)}: note: a NUL byte, where Nix stops reading "
                                  f"(the {rest} bytes from it on are not Nix)"), err=True, keep_tokens=verbose)
        for problem, repeats in _grouped(found, verbose):
            line = printable(problem.source_line.strip())
            echo_fitted(printable(str(problem)), keep_tokens=verbose)
            if line:
                click.echo(f"    {_fitted_source(line, doc, problem, width_for() - 4)}")
            if repeats:
                echo_fitted(f"    (and {repeats} more like this in {printable(shown)}; --verbose lists all)",
                            keep_tokens=verbose)
    if not quiet:
        echo_fitted(f"{checked} files parsed, {problems} problems, {skipped} skipped", err=True)
    if problems:
        raise click.exceptions.Exit(1)


def _grouped(found, verbose: bool) -> list[tuple[object, int]]:
    """(problem, how many more say the same) in source order; every problem with `verbose` (none more)."""
    if verbose:
        return [(problem, 0) for problem in found]
    groups: dict[str, list] = {}
    for problem in found:
        groups.setdefault(problem.group_key, [problem, 0])[1] += 1
    return [(first, count - 1) for first, count in groups.values()]


def _fitted_source(line: str, doc, problem, room: int) -> str:
    """The problem's source line as shown (stripped), or when wider than `room` cells the part around its column."""
    from pinshift.languages.fit import cells, cut_end

    if cells(line) <= room:
        return line
    return cut_end(printable(doc.line_text(problem.offset, max(room - 2, 8)).strip()), room)
