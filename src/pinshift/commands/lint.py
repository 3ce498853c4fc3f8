"""`pinshift lint PATH...`: recipe names checked against their contents (exit 1 on any finding)."""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import click

from pinshift.report.display import echo_fitted, printable
from pinshift.files.tree import DEFAULT_MAX_BYTES

SCHEMA = "pinshift.lint/1"  # lint --format json, docs/lint-schema.json


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json", "github", "sarif"]), default="text",
              show_default=True, help="json: schema pinshift.lint/1 (docs/lint-schema.json); github: workflow "
                                      "commands (::error file=…); sarif: SARIF 2.1.0 for code scanning.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Only these rules (comma-separated codes or prefixes, ALL; repeatable); replaces the config's.")
@click.option("--ignore", multiple=True, metavar="CODES",
              help="Not these rules (comma-separated codes or prefixes; repeatable); adds to the config's.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of each finding.")
@click.option("--verbose", "-v", is_flag=True, help="List every note instead of one line per group.")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
def lint(paths: tuple[str, ...], fmt: str, select: tuple[str, ...], ignore: tuple[str, ...], statistics: bool,
         verbose: bool, max_bytes: int) -> None:
    """Check each recipe's file name (pytorch-python313-cuda12_9-sm90-avx512) against its pname, package set,
    CUDA overlay, GPU target, CPU flags and platforms, and each reference between files (an import naming no
    file, a call passing what its callee does not take); one finding per line `path:line:col: code message`.

    Rules are chosen by --select/--ignore, the [lint] table of the repository's .pinshift/config.toml
    (select, ignore, per-file-ignores) and `# pinshift: noqa[: L001, ...]` comments on a finding's line.
    """
    from pinshift.facts.collect import read_recipes
    from pinshift.lint.findings import render_findings, render_notes, render_statistics
    from pinshift.lint.lint import RULES, apply_selection
    from pinshift.lint.lint import lint as lint_recipes
    from pinshift.lint.lint_config import find_root, load_selection, split_codes
    from pinshift.lint.annotations import ANNOTATION_FORMATS, render_annotations
    from pinshift.commands import counted

    if statistics and fmt in ANNOTATION_FORMATS:
        raise click.UsageError(f"--statistics counts findings per rule; use it with --format text, markdown or json, "
                               f"not {fmt}")
    paths = paths or (".",)
    selection = load_selection(find_root(paths), RULES, split_codes(select), split_codes(ignore))
    from pinshift.report.progress import progress_bar, updater

    with progress_bar(enabled=fmt == "text") as bar:
        recipes, skipped = read_recipes(paths, max_bytes, progress=updater(bar))
    for reason in skipped:
        echo_fitted(f"skipped: {printable(reason)}", err=True, keep_tokens=verbose)
    from pinshift.lint.lint_references import reference_findings

    kept, suppressed = apply_selection(lint_recipes(recipes) + reference_findings(paths, max_bytes, recipes), recipes,
                                       selection)
    findings = [f for f in kept if f.severity != "note"]
    notes = [f for f in kept if f.severity == "note"]
    if statistics:
        text = render_statistics(findings, RULES, fmt, SCHEMA)
        echo_fitted(text, nl=False) if fmt == "text" else click.echo(text, nl=False)
    elif fmt in ANNOTATION_FORMATS:
        click.echo(render_annotations(findings, fmt, "lint", RULES), nl=False)
    else:
        extra = {"schema": SCHEMA, "notes": [n.to_json() for n in notes], "suppressed": suppressed}
        text = printable(render_findings(findings, fmt, "pinshift lint", extra, notes, verbose), keep_newlines=True)
        echo_fitted(text, nl=False, keep_tokens=verbose) if fmt == "text" else click.echo(text, nl=False)
    if fmt in ("text", *ANNOTATION_FORMATS):  # stderr: the workflow commands or the log stay alone on stdout
        echo_fitted(printable(render_notes(notes, verbose), keep_newlines=True), nl=False, err=True, keep_tokens=verbose)
        tail = "".join(f", {n} {word}" for n, word in ((len(notes), "notes" if len(notes) != 1 else "note"),
                                                      (suppressed, "suppressed by noqa")) if n)
        echo_fitted(f"{counted(len(recipes), 'file')} linted, {counted(len(findings), 'finding')}{tail}", err=True)
    if findings:
        raise click.exceptions.Exit(1)
