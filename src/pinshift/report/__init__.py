"""Rendering a Plan for people and machines: text (terminal), Markdown (PR comment), JSON.

Commands that plan steps (`migrate`, `apply`) decorate themselves with
`report_options` and call `emit(plan, options)`; the report is always a
rendering of the same Plan the files and commits were made from. Renderers are
imported only when a report is written, so `pinshift --help` stays fast. `display.printable` is the
rule for everything printed that comes from a file; `fanout` renders a run onto several bases; `builds` renders
what the recipes build (`pinshift diff`, and migrate's "What the recipes build"), grouped by pinshift.evaluation.build_changes.

May import: pinshift.errors, pinshift.languages, pinshift.files, pinshift.planning, pinshift.evaluation.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from pinshift.languages.display import visible_bytes
from pinshift.report.display import printable
from pinshift.report.markdown_fit import LIMIT
from pinshift.errors import UsageError
from pinshift.planning.plan import Plan

DEFAULT_MARKDOWN_LIMIT = LIMIT  # GitHub rejects comments over 65,536 characters
_LIMIT_KEY = "pinshift.report.markdown_limit"
_VERBOSE_KEY = "pinshift.report.verbose"


@dataclass(frozen=True)
class ReportOptions:
    format: str | None = None  # text | markdown | json; None = text
    output: str | None = None  # write the report to this file (atomically) instead of stdout
    color: bool | None = None  # None = decide from the terminal and NO_COLOR
    check: bool = False  # exit 1 when the plan would still change something
    markdown_limit: int = DEFAULT_MARKDOWN_LIMIT  # characters; diffs are left out (largest first) to fit
    verbose: bool = False  # text: list every file of a group and every repeated warning, not one line per group


def check_markdown_limit(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """The --markdown-limit callback: at least 1000 characters."""
    if value is not None and value < 1000:
        raise click.BadParameter("must be at least 1000 characters")
    return value


def _remember_limit(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    # Stored on the context rather than passed to the command, so commands keep their signatures.
    if check_markdown_limit(ctx, param, value) is not None:
        ctx.meta[_LIMIT_KEY] = value
    return value


def _remember_verbose(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    ctx.meta[_VERBOSE_KEY] = bool(value)
    return value


def report_options(command):
    """The shared report flags: --format, --output, --no-color, --check (and --markdown-limit, --verbose)."""
    options = [
        click.option("--format", "report_format", type=click.Choice(["text", "markdown", "json"]), default=None,
                     help="Report format (default: text)."),
        click.option("--output", "report_output", type=click.Path(dir_okay=False), default=None,
                     help="Write the report to FILE instead of stdout."),
        click.option("--no-color", "no_color", is_flag=True, help="Never colour the text report."),
        click.option("--check", is_flag=True, help="Exit 1 if anything would still change (for CI)."),
        click.option("--markdown-limit", type=int, default=None, expose_value=False, callback=_remember_limit,
                     metavar="CHARS", help=f"Longest Markdown report; larger diffs are left out "
                                           f"(default: {DEFAULT_MARKDOWN_LIMIT})."),
        click.option("--verbose", "-v", is_flag=True, expose_value=False, callback=_remember_verbose,
                     help="List every file of each group of identical edits and every repeated warning, note, "
                          "skipped and refused file (text output; Markdown and JSON always list them)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def options_from(report_format, report_output, no_color, check, directory_ok: bool = False) -> ReportOptions:
    """ReportOptions from the flags; a bad --output fails here, before anything is planned or written.

    `directory_ok`: --output may also be a directory (a fan-out run writes one report per branch
    there); the command then checks the one it gets with `check_output_path` or `check_output_directory`.
    """
    if report_output and not (directory_ok and output_is_directory(report_output)):
        check_output_path(report_output)
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    limit = meta.get(_LIMIT_KEY, DEFAULT_MARKDOWN_LIMIT)
    return ReportOptions(report_format, report_output, False if no_color else None, check, limit,
                         meta.get(_VERBOSE_KEY, False))


def use_color(options: ReportOptions, stream) -> bool:
    """Colour only for a terminal, never with --no-color, NO_COLOR (any value) or --output."""
    if options.color is not None:
        return options.color
    if options.output or "NO_COLOR" in os.environ:
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def link_base(plan: Plan) -> str | None:
    """Where warning links point: the plan's repository URL, else the GitHub Actions repository."""
    if plan.repository.startswith(("https://", "http://")):
        return plan.repository.removesuffix(".git")
    server, repository = os.environ.get("GITHUB_SERVER_URL"), os.environ.get("GITHUB_REPOSITORY")
    if server and repository:
        return f"{server.rstrip('/')}/{repository}"
    return None


def render(plan: Plan, options: ReportOptions, color: bool = False, width: int | None = None) -> str:
    """The report text in the chosen format; text fitted to `width` columns (default: `output_width` of stdout,
    or of a file with --output), its diffs as they are (pinshift.languages.fit)."""
    chosen = options.format or "text"
    if chosen == "json":
        from pinshift.report.json import render_json

        return render_json(plan)
    if chosen == "markdown":
        from pinshift.report.markdown import render_markdown

        return render_markdown(plan, options.markdown_limit, link_base(plan))
    from pinshift.languages.fit import output_width
    from pinshift.report.text import render_text

    width = width if width is not None else output_width(False if options.output else None)
    return render_text(plan, color=color, verbose=options.verbose, width=width)


def check_output_path(target: str | os.PathLike) -> Path:
    """Raise UsageError unless a report can be written to `target`; call it before any work.

    Checks what can be checked without writing the report: not a directory, the
    directory exists, a file can be created in it (a probe file, removed at once:
    catches permissions, read-only mounts and immutable directories alike, for root
    too), and an existing report is not read-only. A full disk shows only later.
    """
    import tempfile

    path = Path(target)
    if path.is_dir():
        raise UsageError(f"--output {target}: is a directory; give a file name")
    directory = path.parent
    if not directory.is_dir():
        raise UsageError(f"--output {target}: directory {directory} does not exist; create it first")
    if path.exists() and not path.is_file():
        raise UsageError(f"--output {target}: exists and is not a regular file; give another name")
    if path.is_file() and not os.stat(path).st_mode & 0o222:
        raise UsageError(f"--output {target}: the file is read-only; make it writable or give another name")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pinshift-probe", dir=directory)
    except OSError as error:
        raise UsageError(f"--output {target}: cannot write in {directory} ({error.strerror or error})") from None
    os.close(fd)
    os.unlink(probe)
    return path


def output_is_directory(target: str) -> bool:
    """--output names a directory: an existing one, or a path ending in `/`."""
    return str(target).endswith("/") or Path(target).is_dir()


def check_output_directory(target: str | os.PathLike) -> Path:
    """Raise UsageError unless reports can be written into directory `target` (created if missing, not its parents)."""
    import tempfile

    path = Path(target)
    if not path.is_dir():
        if not path.parent.is_dir():
            raise UsageError(f"--output {target}: directory {path.parent} does not exist; create it first")
        try:
            path.mkdir()
        except OSError as error:
            raise UsageError(f"--output {target}: cannot create it ({error.strerror or error})") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".pinshift-probe-", dir=path)
    except OSError as error:
        raise UsageError(f"--output {target}: cannot write in it ({error.strerror or error})") from None
    os.close(fd)
    os.unlink(probe)
    return path


def write_report(target: str | os.PathLike, text: str | Iterable[str]) -> None:
    """Write a report to file `target` atomically: the previous file stays whole until the new one is; a write that
    fails (full disk, `ulimit -f`, a read-only place) raises UsageError and leaves no temporary file.

    A file name that is not UTF-8 cannot reach the file raw: its bytes are shown as `\\xff` (`visible_bytes`).
    """
    from pinshift.files.tree import write_atomic

    path = check_output_path(target)
    pieces = (text,) if isinstance(text, str) else text
    try:
        write_atomic(path, (visible_bytes(piece).encode("utf-8") for piece in pieces))
    except OSError as error:
        raise UsageError(f"--output {target}: cannot write ({error.strerror or error}); "
                         "the previous file is unchanged") from None


def echo_report(text: str) -> None:
    """Print a report on stdout, a name that is not UTF-8 shown as `\\xff`."""
    click.echo(visible_bytes(text), nl=False, color=True)


def finding_lines(plan: Plan, verbose: bool = False) -> list[str]:
    """`warning: …` then `refused: …` lines for stderr, grouped per step; `step N: ` when the plan has several."""
    from pinshift.report.groups import group_lines, refused_groups, warning_groups

    several = len(plan.steps) > 1
    lines = [f"warning: {line}" for step in plan.steps
             for line in group_lines(warning_groups(step), verbose, with_step=several)]
    return lines + [f"refused: {line}" for step in plan.steps
                    for line in group_lines(refused_groups(step), verbose, with_step=several)]


def emit(plan: Plan, options: ReportOptions) -> int:
    """Write the report of `plan` where `options` say; return the exit code `--check` asks for.

    Warnings and refused files also go to stderr, so they are seen when the report
    goes to a file or a pipe: one line per group of the same finding (`--verbose`: every
    one). Returns 1 under --check when the plan would change a file.
    """
    stdout = sys.stdout
    if options.format == "json":  # streamed: a 40,000-file report is never held whole
        from pinshift.report.json import iter_json

        pieces = iter_json(plan)
    else:
        pieces = iter((render(plan, options, color=use_color(options, stdout)),))
    if options.output:
        write_report(options.output, pieces)
    else:
        for piece in pieces:
            echo_report(piece)
    from pinshift.report.display import echo_fitted

    for line in finding_lines(plan, options.verbose):
        echo_fitted(f"pinshift: {printable(line)}", err=True, keep_tokens=options.verbose)
    if options.output:
        click.echo(f"pinshift: report written to {options.output}", err=True)
    return 1 if options.check and plan.would_change else 0
