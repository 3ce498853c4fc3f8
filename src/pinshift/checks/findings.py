"""Findings of lint and verify: one per line as `path:line:col: code message`, or JSON, or Markdown.

A finding that concerns several recipes (a parameter renamed on the pin breaks
every GPU variant) is reported once, at the first recipe, naming all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

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


def render_findings(findings: list[Finding], fmt: str, title: str, extra: dict | None = None) -> str:
    """The findings in text (one per line), JSON ({"findings": [...], ...extra}) or Markdown (a table)."""
    if fmt == "json":
        return json.dumps({"findings": [f.to_json() for f in findings], **(extra or {})}, indent=2) + "\n"
    if fmt == "markdown":
        lines = [f"## {title}", ""]
        if not findings:
            return "\n".join(lines + ["No findings.", ""])
        lines += ["| location | code | severity | message |", "|---|---|---|---|"]
        for f in findings:
            message = (f.message + f._others()).replace("|", "\\|")
            lines.append(f"| `{f.path}:{f.line}:{f.column}` | {f.code} | {f.severity} | {message} |")
        return "\n".join(lines) + "\n"
    return "".join(f"{f}\n" for f in findings)
