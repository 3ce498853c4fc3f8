"""Findings of lint and verify: one per line as `path:line:col: code message`, or JSON, or Markdown.

A finding that concerns several recipes (a parameter renamed on the pin breaks
every GPU variant) is reported once, at the first recipe, naming all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pinshift.languages import markdown_escape as md_escape
from pinshift.languages.display import printable, visible_data

SHOWN_FILES = 5  # a text finding names this many affected files, then "and N more"


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    column: int
    code: str
    message: str
    severity: str = "error"  # error | warning
    files: tuple[str, ...] = field(default=())  # every recipe affected, when more than `path`

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}{self._others()}"

    def _others(self) -> str:
        others = [f for f in self.files if f != self.path]
        if not others:
            return ""
        shown = ", ".join(others[:SHOWN_FILES])
        more = f" and {len(others) - SHOWN_FILES} more" if len(others) > SHOWN_FILES else ""
        return f" (also in {shown}{more})"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "code": self.code,
                "severity": self.severity, "message": self.message, "files": list(self.files or (self.path,))}


def finding_at(recipe, offset: int, code: str, message: str, severity: str = "error", files=()) -> Finding:
    """A finding located at a byte offset of a recipe (see collect.Recipe)."""
    line, column = recipe.doc.position(offset)
    return Finding(recipe.path, line, column, code, message, severity, tuple(files))


def render_findings(findings: list[Finding], fmt: str, title: str, extra: dict | None = None,
                    notes: list[Finding] = (), verbose: bool = False) -> str:
    """The findings in text (one per line), JSON ({"findings": [...], ...extra}) or Markdown (a table).

    Notes (not findings: they never fail a run) go in Markdown's own section; text prints them with
    `render_notes`, JSON through `extra`.
    """
    if fmt == "json":
        extra = dict(extra or {})
        schema = {"schema": extra.pop("schema")} if "schema" in extra else {}
        document = {**schema, "findings": [f.to_json() for f in findings], **extra}
        return json.dumps(visible_data(document), indent=2) + "\n"  # a byte that is not UTF-8 reads `\\xff`
    if fmt == "markdown":
        lines = [f"## {title}", ""]
        if not findings:
            lines += ["No findings.", ""]
        else:
            lines += ["| location | code | severity | message |", "|---|---|---|---|"]
            for f in findings:
                lines.append(f"| {md_escape.code(f'{f.path}:{f.line}:{f.column}', table=True)} | {md_escape.cell(f.code)} "
                             f"| {f.severity} | {md_escape.cell(f.message + f._others())} |")
        if notes:
            lines += ([""] if findings else []) + ["### Notes", ""]
            lines += [f"- {md_escape.text(group)}" for group in _note_groups(notes, verbose)]
        return "\n".join(lines) + "\n"
    return "".join(f"{printable(str(f))}\n" for f in findings)  # one line each, whatever a name holds


def _note_groups(notes: list[Finding], verbose: bool) -> list[str]:
    """One line per (code, message): the count and the first place; each note with `verbose`."""
    if verbose:
        return [f"{n.path}:{n.line}:{n.column}: {n.code} {n.message}" for n in notes]
    groups: dict[tuple[str, str], list[Finding]] = {}
    for note in notes:
        groups.setdefault((note.code, note.message), []).append(note)
    lines = []
    for (code, message), members in groups.items():
        first = members[0]
        where = f"{first.path}:{first.line}:{first.column}"
        if len(members) == 1:
            lines.append(f"{where}: {code} {message}")
        else:
            lines.append(f"{code} {len(members)} files: {message} (first: {where}; --verbose lists all)")
    return lines


def render_notes(notes: list[Finding], verbose: bool = False) -> str:
    """Text notes, grouped by code and message (`note: L004 24 files: ... (first: path:line:col; ...)`)."""
    return "".join(f"note: {printable(line)}\n" for line in _note_groups(notes, verbose))


def render_statistics(findings: list[Finding], rules: dict[str, str], fmt: str, schema: str | None = None) -> str:
    """Findings counted per code, most first: `  24  L005  error    the SM in the name differs ...`."""
    counts: dict[str, list[Finding]] = {}
    for finding in findings:
        counts.setdefault(finding.code, []).append(finding)
    ordered = sorted(counts.items(), key=lambda item: (-len(item[1]), item[0]))
    rows = [(len(found), code, found[0].severity, rules.get(code, "")) for code, found in ordered]
    if fmt == "json":
        counted = [{"code": c, "count": n, "severity": sev, "rule": r} for n, c, sev, r in rows]
        return json.dumps({**({"schema": schema} if schema else {}), "statistics": counted}, indent=2) + "\n"
    if fmt == "markdown":
        lines = ["## pinshift lint statistics", "", "| count | code | severity | rule |", "|---|---|---|---|"]
        return "\n".join(lines + [f"| {n} | {md_escape.cell(c)} | {sev} | {md_escape.cell(r)} |"
                                  for n, c, sev, r in rows]) + "\n"
    width = max((len(str(n)) for n, *_ in rows), default=1)
    return "".join(f"{str(n).rjust(width)}  {c}  {sev:<7}  {r}\n" for n, c, sev, r in rows)
