"""Rendering a Plan for people and machines: text (terminal), Markdown (PR comment), JSON.

Commands that plan steps (`migrate`, `apply`) decorate themselves with
`report_options` and call `emit(plan, options)`; the report is always a
rendering of the same Plan the files and commits were made from.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

from pinshift.plan import Plan


@dataclass(frozen=True)
class ReportOptions:
    format: str | None = None  # text | markdown | json; None = text
    output: str | None = None  # write the report to this file (atomically) instead of stdout
    color: bool | None = None  # None = decide from the terminal and NO_COLOR
    check: bool = False  # exit 1 when the plan would still change something


def report_options(command):
    """The shared report flags: --format, --output, --no-color, --check."""
    options = [
        click.option("--format", "report_format", type=click.Choice(["text", "markdown", "json"]), default=None,
                     help="Report format (default: text)."),
        click.option("--output", "report_output", type=click.Path(dir_okay=False), default=None,
                     help="Write the report to FILE instead of stdout."),
        click.option("--no-color", "no_color", is_flag=True, help="Never colour the text report."),
        click.option("--check", is_flag=True, help="Exit 1 if anything would still change (for CI)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def options_from(report_format, report_output, no_color, check) -> ReportOptions:
    return ReportOptions(report_format, report_output, False if no_color else None, check)


def emit(plan: Plan, options: ReportOptions) -> int:
    """Write the report of `plan` where `options` say; return the exit code `--check` asks for.

    Placeholder until the reports issue: plain text summary and diffs on stdout.
    """
    from pinshift.report.text import render_text

    text = render_text(plan, color=False)
    click.echo(text, nl=False)
    return 1 if options.check and plan.would_change else 0
