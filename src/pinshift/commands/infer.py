"""`pinshift infer BASE TARGET`: options and output; the work is in pinshift.infer."""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

import click

from pinshift.commands.completion import complete_branches
from pinshift.report.display import printable, width_for

SHOWN = 10  # residue hunks and dropped candidates listed without --verbose


@click.command()
@click.argument("base", shell_complete=complete_branches)
@click.argument("target", shell_complete=complete_branches)
@click.option("--files", "files", multiple=True, metavar="GLOB",
              help="Compare only files matching GLOB (repeatable); the recipe's files become these globs.")
@click.option("--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the recipe to FILE (default: print it on stdout, the summary on stderr).")
@click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="The recipe repository (default: the current directory).")
@click.option("--verbose", "-v", is_flag=True, help="List every residue hunk, dropped candidate and reproduced file.")
def infer(base: str, target: str, files: tuple[str, ...], output: str | None, repo: Path, verbose: bool) -> None:
    """Learn a recipe that turns commit BASE into commit TARGET, and prove it.

    Reads both commits from git's objects (your checkout is not touched), infers steps of the
    bundled kinds from their differences, plans the recipe from BASE in memory as `pinshift
    migrate --dry-run` does and compares every file with TARGET. When no step explains every file,
    the recipe holds the steps that explain what they can and lists the files still to edit by hand
    (in its comment block and the summary). Exit 0 when every changed file is reproduced byte for
    byte, 1 when files remain to edit by hand (listed, with the residue), 2 on usage errors.
    """
    from pinshift.infer.engine import InferOptions, infer as run
    from pinshift.infer.report import recipe_text, summary

    if output:
        from pinshift.report import check_output_path

        check_output_path(output)
    inference = run(InferOptions(base=base, target=target, files=tuple(files), repo=repo))
    text = recipe_text(inference) if inference.steps else None
    lines = summary(inference, verbose, SHOWN)
    if text is not None and output:
        _write(output, text)
        lines.append(f"recipe written to {output}")
    elif text is not None:
        click.echo(text, nl=False)
    else:  # a recipe needs a step: the files to edit by hand are listed above
        lines.append("no step reproduces a change byte for byte (each candidate changes what TARGET does not): no "
                     "recipe written; every changed file is to edit by hand")
    # a newline in a name stays escaped; the recipe is content (TOML to save), the summary is fitted, its lines
    # quoted from files (Excerpt) cut at their end
    from pinshift.languages.fit import Excerpt, fit_lines

    shown = [Excerpt(printable(line)) if isinstance(line, Excerpt) else printable(line) for line in lines]
    click.echo("\n".join(fit_lines(shown, width_for(err=not output), keep_tokens=verbose)), err=not output)
    if not inference.complete:
        raise click.exceptions.Exit(1)


def _write(output: str, text: str) -> None:
    from pinshift.report import write_report

    write_report(output, text)
