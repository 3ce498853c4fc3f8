"""Reports of a fan-out run: one summary of every base, and each branch's own report.

- text: a table `base → target | result | per step | files | warnings`, failed and skipped bases with their reason;
- Markdown: the same table, then one section per branch holding that branch's pull-request
  report (pinshift.report.markdown), fit for one combined comment; with `--output DIR`, one
  file per branch plus `index.md` linking them (one comment per branch);
- JSON, schema `pinshift.fanout/1` (docs/report-schema.md): a list of branches, each with its
  status, reason and its `pinshift.report/1` report (null when it failed before planning).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import hashlib
import json
import re
from pathlib import Path

from pinshift.languages.markdown_escape import cell, code, link, text as markdown_text
from pinshift.languages.display import visible_bytes
from pinshift.report.display import printable
from pinshift.languages.fit import cells, cut_middle, fit_table, fit_text
from pinshift.report.totals import plural, short

SCHEMA = "pinshift.fanout/1"


def _steps(outcome) -> str:
    """`1:66 2:66 3:66 4:1` — files changed per step (a dash for a step that changes nothing)."""
    return " ".join(f"{s.index}:{s.files if s.files else '-'}" for s in outcome.steps) or "-"


def _result(outcome) -> str:
    if outcome.status == "created":
        pushed = f", pushed to {outcome.pushed}" if outcome.pushed else ""
        return f"created {short(outcome.target_commit)}{pushed}"
    if outcome.status in ("failed", "skipped"):
        return f"{outcome.status}: {outcome.reason}"
    return outcome.status


def render_table(outcomes, dry_run: bool, width: int | None = None) -> str:
    """One line per base and a count line; the reasons of failed and skipped bases in full; fitted to `width`
    columns when given (pinshift.languages.fit: the table in blocks of columns, the other lines wrapped)."""
    header = ("base → target", "result", "files per step", "files", "warnings")
    shown = {"failed": "FAILED", "skipped": "skipped"}
    rows = [(printable(f"{o.base} → {o.target or '?'}"), shown.get(o.status) or printable(_result(o)),
             _steps(o), str(o.files), str(o.warnings)) for o in outcomes]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    if width is not None and max(cells(line) for line in lines) > width:
        room = width - 2 - max(widths[1:])  # base → target beside the widest other column
        if widths[0] > room:  # each name cut in the middle, the arrow kept
            half = max((room - 3) // 2, 4)
            rows = [(printable(f"{cut_middle(o.base, half)} → {cut_middle(o.target or '?', half)}"), *row[1:])
                    for o, row in zip(outcomes, rows)]
        lines = fit_table([list(header)] + [list(row) for row in rows], width, keep=1)
    lines += [f"{o.status}: {o.base}: {o.reason}" for o in outcomes if o.status in shown]
    counts = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    verb = "planned" if dry_run else "done"
    lines.append(f"{plural(len(outcomes), 'base')} {verb}: " + ", ".join(f"{n} {status}" for status, n in counts.items()))
    text = printable("\n".join(lines), keep_newlines=True)
    return (fit_text(text, width) if width is not None else text) + "\n"


def _markdown_table(outcomes, links: dict[str, str] | None = None) -> list[str]:
    lines = ["| base | branch | result | files per step | files | warnings |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        branch = code(o.target or "?", table=True)
        if links and o.target in links:
            branch = link(branch, links[o.target])
        lines.append(f"| {code(o.base, table=True)} | {branch} | {cell(_result(o))} | {cell(_steps(o))} | {o.files} "
                     f"| {o.warnings} |")
    return lines


def _demoted(markdown: str) -> str:
    """A branch's report two heading levels down (`## …` becomes `#### …`), to sit under its `###` section."""
    return re.sub(r"^(#{1,4}) ", r"##\1 ", markdown, flags=re.M)


def render_markdown(outcomes, recipe: str, limit: int, link_base: str | None = None) -> str:
    """One document: the table, then a section per branch with its own report."""
    from pinshift.report.markdown import render_markdown as branch_markdown

    lines = [f"## pinshift fan-out: recipe {code(recipe)} onto {plural(len(outcomes), 'base')}", ""]
    lines += _markdown_table(outcomes) + [""]
    for o in outcomes:
        lines.append(f"### {code(o.base)} → {code(o.target or '?')}")
        lines.append("")
        if o.plan is not None:
            lines.append(_demoted(branch_markdown(o.plan, limit, link_base)).rstrip("\n"))
        else:
            lines.append(f"Failed before planning: {markdown_text(o.reason)}")
        lines.append("")
    return "\n".join(lines)


def render_json(outcomes, recipe: str, dry_run: bool) -> str:
    from pinshift.report.json import report_data

    data = {
        "schema": SCHEMA,
        "recipe": recipe,
        "dry_run": dry_run,
        "branches": [{
            "base": o.base, "target": o.target or None, "status": o.status, "reason": o.reason or None,
            "base_commit": o.base_commit or None, "target_commit": o.target_commit or None,
            "report": report_data(o.plan) if o.plan is not None else None,
        } for o in outcomes],
    }
    return visible_bytes(json.dumps(data, indent=2, ensure_ascii=False, default=str), json=True) + "\n"


INDEX = "index"  # the index's file name before its suffix: no branch's file can have it
_KEPT = re.compile(r"[a-z0-9.-]")
_LONGEST = 200  # bytes of a file name before its suffix; longer ones end in a hash of the whole branch name


def file_name(target: str) -> str:
    """A branch name as a file name, different for every branch name (also on a case-insensitive disk).

    Lower-case letters, digits, `.` and `-` stay; every other character becomes `_` and the hex of its
    UTF-8 bytes (`/` is `_2f`, `_` is `_5f`, `A` is `_41`), so `_` always starts an escape and no two
    names meet. A branch named `index` becomes `_69ndex` (the index is `index.md`); a name over 200
    bytes keeps its first 150 and ends in `__` and 16 hex digits of its SHA-256 (`__` never occurs
    otherwise).

    Examples:
        >>> [file_name(t) for t in ("rel/one-r", "rel_one-r", "Rel", "index")]
        ['rel_2fone-r', 'rel_5fone-r', '_52el', '_69ndex']
    """
    name = "".join(char if _KEPT.fullmatch(char) else
                   "".join(f"_{byte:02x}" for byte in char.encode("utf-8", "surrogateescape")) for char in target)
    if name == INDEX:
        name = f"_{ord(INDEX[0]):02x}{INDEX[1:]}"
    if len(name) > _LONGEST:
        digest = hashlib.sha256(target.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        name = f"{name[:150]}__{digest}"
    return name or "_"


def write_directory(outcomes, directory: Path, fmt: str, recipe: str, dry_run: bool, limit: int,
                    link_base: str | None = None) -> list[Path]:
    """One report per branch (`file_name(branch)` + `.md` / `.json` / `.txt`) and an index; the files written,
    the index last."""
    from pinshift.report import render, write_report
    from pinshift.report import ReportOptions

    suffix = {"markdown": ".md", "json": ".json"}.get(fmt, ".txt")
    written, links = [], {}
    for o in outcomes:
        if o.plan is None or not o.target:
            continue
        name = file_name(o.target) + suffix
        if name in links.values():  # two outcomes of one branch: never the case after fanout.plan_targets
            raise ValueError(f"two reports would be written to {name}")
        write_report(directory / name, render(o.plan, ReportOptions(fmt, None, False, False, limit)))
        links[o.target] = name
        written.append(directory / name)
    if fmt == "json":
        text = render_json(outcomes, recipe, dry_run)
    elif fmt == "markdown":
        text = "\n".join([f"## pinshift fan-out: recipe {code(recipe)}", ""] + _markdown_table(outcomes, links)) + "\n"
    else:
        text = render_table(outcomes, dry_run)
    index = directory / f"{INDEX}{suffix}"
    write_report(index, text)
    return written + [index]
