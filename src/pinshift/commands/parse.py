"""`pinshift parse PATH...`: report syntax problems like a linter (exit 1 if any).

Each problem is `path:line:col: message` and, indented below it, its source line (a long line cut to the
screen's width around the column, pinshift.languages.fit). Problems of one file that say the same thing (numbers aside, as
every report groups findings) are shown once, with the count of the rest; `--verbose` lists every one.

A file holding a NUL byte, which every other command skips, is parsed the way Nix reads it (a NUL
between tokens ends the file, syntax/reading.py): its verdict is Nix's, and a note on stderr says
where Nix stops reading when that is before the end.

`--nix` confirms each file tree-sitter accepts with `nix-instantiate --parse` itself (run in pinshift's Nix
sandbox, sandbox/nix_process.py; nothing is evaluated): a rejection is a problem at the place Nix names.
`--format github` prints GitHub workflow commands and `--format sarif` a SARIF 2.1.0 log (lint/annotations.py),
each problem with the code `syntax` (`nix` for one only Nix found).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from contextlib import ExitStack

import click

from pinshift.report.display import echo_fitted, printable, width_for
from pinshift.files.tree import DEFAULT_MAX_BYTES, NulFile, SkippedFile, display_path, nix_files
from pinshift.syntax.document import parse_document
from pinshift.git.repo import listed_files
from pinshift.commands import counted
from pinshift.errors import UsageError


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
@click.option("--quiet", "-q", is_flag=True, help="Print only problems, no summary line.")
@click.option("--verbose", "-v", is_flag=True, help="List every problem, also those that repeat one shown.")
@click.option("--nix", "confirm", is_flag=True,
              help="Also ask nix-instantiate --parse (sandboxed, nothing evaluated) about each file tree-sitter accepts.")
@click.option("--format", "fmt", type=click.Choice(["text", "github", "sarif"]), default="text", show_default=True,
              help="github: workflow commands (::error file=…); sarif: SARIF 2.1.0 for code scanning.")
def parse(paths: tuple[str, ...], max_bytes: int, quiet: bool, verbose: bool, confirm: bool, fmt: str) -> None:
    """Parse Nix files and print each syntax problem as path:line:col: message."""
    with ExitStack() as stack:
        nix = _nix_sandbox(stack) if confirm else None
        problems, checked, skipped, annotations = _parse_files(paths, max_bytes, verbose, fmt, nix)
    if fmt != "text":
        from pinshift.lint.annotations import render_annotations

        click.echo(render_annotations(annotations, fmt, "parse", RULES), nl=False)
    if not quiet:
        echo_fitted(f"{counted(checked, 'file')} parsed, {counted(problems, 'problem')}, {skipped} skipped", err=True)
    if problems:
        raise click.exceptions.Exit(1)


RULES = {"syntax": "Nix cannot parse the file (tree-sitter-nix, as nix-instantiate --parse)",
         "nix": "nix-instantiate --parse rejects a file tree-sitter-nix accepts (--nix)"}


def _nix_sandbox(stack: ExitStack):
    """(sandbox, nix-instantiate) for --nix; a UsageError when Nix is not installed."""
    import shutil

    from pinshift.sandbox.nix_process import NixSandbox

    found = shutil.which("nix-instantiate")
    if found is None:
        raise UsageError("--nix: nix-instantiate is not on PATH; install Nix (Debian: nix-bin) or leave out --nix")
    return stack.enter_context(NixSandbox()), found


def _parse_files(paths, max_bytes: int, verbose: bool, fmt: str, nix) -> tuple[int, int, int, list]:
    """(problems, files parsed, files skipped, findings for --format github|sarif); text is printed as it comes."""
    from pinshift.lint.findings import Finding

    problems = skipped = checked = 0
    annotations = []
    for tree, relative in nix_files(paths, max_bytes, listed_files):
        shown = display_path(tree, relative)
        try:
            data = tree.read(relative)
        except NulFile as held:
            data = held.data
        except SkippedFile as reason:
            skipped += 1
            _say(f"{shown}: {str(reason).split(': ', 1)[-1]}", fmt)
            continue
        checked += 1
        doc = parse_document(data, shown)
        found = doc.problems
        problems += len(found)
        if doc.end < len(data) and not any(problem.offset == doc.end for problem in found):
            rest = len(data) - doc.end
            _say(f"{doc.location(doc.end)}: note: a NUL byte, where Nix stops reading "
                 f"(the {rest} bytes from it on are not Nix)", fmt)
        if nix is not None and not found:
            from pinshift.sandbox.nix_process import nix_parse_verdict

            rejected = nix_parse_verdict(*nix, data)
            if rejected is not None:
                problems += 1
                line, column, message = rejected
                annotations.append(Finding(shown, line, column, "nix", f"nix-instantiate --parse: {message}"))
                if fmt == "text":
                    echo_fitted(printable(f"{shown}:{line}:{column}: nix-instantiate --parse: {message}"))
        if fmt != "text":
            annotations += [Finding(shown, p.line, p.column, "syntax", p.message + p.detail) for p in found]
            continue
        for problem, repeats in _grouped(found, verbose):
            line = printable(problem.source_line.strip())
            echo_fitted(printable(str(problem)), keep_tokens=verbose)
            if line:
                click.echo(f"    {_fitted_source(line, doc, problem, width_for() - 4)}")
            if repeats:
                echo_fitted(f"    (and {repeats} more like this in {printable(shown)}; --verbose lists all)",
                            keep_tokens=verbose)
    return problems, checked, skipped, annotations


def _say(line: str, fmt: str) -> None:
    """A line for stderr, printable and fitted; outside text output it starts with `pinshift: `, so a file name at its
    start (`::error::x.nix`) cannot make it a workflow command GitHub's runner would obey."""
    echo_fitted(printable(line if fmt == "text" else f"pinshift: {line}"), err=True)


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
