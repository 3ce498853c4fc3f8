"""`printable`, the rule for everything printed that comes from a file (pinshift.languages.display), and `fitted`,
the rule for the width of every text output (pinshift.languages.fit), here for the report modules and the
commands that print."""

from __future__ import annotations

import sys

import click

from pinshift.languages.display import printable
from pinshift.languages.fit import fit_line, fit_lines, fit_text, output_width

__all__ = ["printable", "fit_line", "fit_lines", "fit_text", "output_width", "width_for", "echo_fitted"]


def width_for(err: bool = False) -> int:
    """The width text for stdout (`err`: stderr) is fitted to: $COLUMNS, else that stream's terminal, else 100."""
    return output_width(sys.stderr if err else sys.stdout)


def echo_fitted(text: str, err: bool = False, nl: bool = True, keep_tokens: bool = False) -> None:
    """`click.echo` with every line of `text` fitted to the width of its stream (`keep_tokens`: `--verbose`)."""
    click.echo(fit_text(text, width_for(err), keep_tokens=keep_tokens), err=err, nl=nl)
