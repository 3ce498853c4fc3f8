"""`pinshift verify PATH...`: would the recipes evaluate on their pin? (exit 1 on any error finding)"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

import click

from pinshift.report.display import echo_fitted, printable
from pinshift.files.tree import DEFAULT_MAX_BYTES


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--nixpkgs", type=click.Path(file_okay=False, path_type=Path), envvar="PINSHIFT_NIXPKGS",
              help="A local nixpkgs git clone (read at the pinned revision; its work tree is not touched). "
                   "Default: $PINSHIFT_NIXPKGS.")
@click.option("--rev", metavar="REV", help="Check against this nixpkgs revision instead of each recipe's pin.")
@click.option("--eval", "evaluate", is_flag=True,
              help="Also evaluate pname and version with nix-instantiate, offline, against the clone.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json", "github", "sarif"]), default="text",
              show_default=True, help="github: workflow commands (::error file=…); sarif: SARIF 2.1.0 for code "
                                      "scanning (notes on stderr).")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
def verify(paths, nixpkgs, rev, evaluate, fmt, max_bytes) -> None:
    """Check that recipes parse, that their package set and attribute exist at the pin, and that every
    .override argument is still a parameter of the package function (see docs/verify.md)."""
    from pinshift.facts.collect import read_recipes
    from pinshift.verify.verify import VerifyOptions
    from pinshift.verify.verify import verify as verify_recipes
    from pinshift.commands import counted

    from pinshift.report.progress import progress_bar, updater

    with progress_bar(enabled=fmt == "text") as bar:
        recipes, skipped = read_recipes(paths or (".",), max_bytes, progress=updater(bar))
    for reason in skipped:
        echo_fitted(f"skipped: {printable(reason)}", err=True)
    on_disk = {r.path: Path(r.path).resolve() for r in recipes}
    result = verify_recipes(recipes, VerifyOptions(nixpkgs, rev, evaluate), on_disk)
    text = printable(render_verification(result, fmt), keep_newlines=True)
    echo_fitted(text, nl=False) if fmt == "text" else click.echo(text, nl=False)
    if fmt in ("text", "github", "sarif"):
        for note in result.notes:
            echo_fitted(f"note: {printable(note)}", err=True)
        errors = sum(f.severity == "error" for f in result.findings)
        evaluated = f", {len(result.evaluations)} evaluated" if evaluate else ""
        warnings = len(result.findings) - errors
        echo_fitted(f"{counted(len(recipes), 'file')} verified{evaluated}, {errors} error{'s' if errors != 1 else ''}, "
                   f"{warnings} warning{'s' if warnings != 1 else ''}", err=True)
    if any(f.severity == "error" for f in result.findings):
        raise click.exceptions.Exit(1)


def render_verification(result, fmt: str) -> str:
    """Findings as lint prints them; JSON and Markdown add the evaluated pname/version and the notes."""
    from pinshift.lint.annotations import ANNOTATION_FORMATS, render_annotations
    from pinshift.lint.findings import render_findings
    from pinshift.verify.verify import RULES
    from pinshift.languages.markdown_escape import cell, code, text as markdown_text

    if fmt in ANNOTATION_FORMATS:
        return render_annotations(result.findings, fmt, "verify", RULES)
    text = render_findings(result.findings, fmt, "pinshift verify", result.to_json() if fmt == "json" else None)
    if fmt == "markdown":
        if result.evaluations:
            text += "\n| recipe | pname | version |\n|---|---|---|\n" + "".join(
                f"| {code(path, table=True)} | {cell(str(value.get('pname')))} | {cell(str(value.get('version')))} |\n"
                for path, value in sorted(result.evaluations.items()))
        text += "".join(f"\n> {markdown_text(note)}\n" for note in result.notes)
    return text
