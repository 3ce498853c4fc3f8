"""Findings where CI shows them: GitHub workflow commands (`--format github`) and SARIF 2.1.0 (`--format sarif`).

Both carry text nobody vetted: a file name or a message can hold newlines, `::`, `%`, `,` or terminal escapes.
A workflow command is one line that starts with `::`, so every value is escaped the way GitHub's runner
unescapes it (`%` -> `%25`, CR -> `%0D`, LF -> `%0A`; in a property also `:` -> `%3A` and `,` -> `%2C`) and
every other control character is made a visible escape (`\\x1b`, languages/display.py): a value can neither end
the line nor start a second command, nor close its property early, nor move the log's cursor.

SARIF is JSON: `json.dumps` escapes what JSON must; a name's bytes go into the artifact URI percent-encoded
(any byte, UTF-8 or not, is kept exactly), and the message shows a byte that is not UTF-8 as `\\xff`, as
every other JSON output does (languages/display.py).

Columns count bytes from 1, as every pinshift location does; on a line that is all ASCII (a recipe's usual
line) that is the character column GitHub and SARIF viewers expect.

Examples:
    >>> github_data("50% done\\nnext")
    '50%25 done%0Anext'
    >>> github_property("a:b,c")
    'a%3Ab%2Cc'
"""

from __future__ import annotations

import json
import os
from urllib.parse import quote

from pinshift import __version__
from pinshift.lint.findings import Finding
from pinshift.languages.display import printable, visible_data

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "note": "note"}  # SARIF levels by severity
COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}  # GitHub workflow commands by severity


ANNOTATION_FORMATS = ("github", "sarif")


def render_annotations(findings: list[Finding], fmt: str, command: str, rules: dict[str, str]) -> str:
    """`--format github` or `--format sarif` of `pinshift COMMAND`'s findings."""
    if fmt == "github":
        return render_github(findings, f"pinshift {command}")
    return render_sarif(findings, "pinshift", __version__, rules)


def github_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped as GitHub's runner unescapes them (a name holding a
    newline is named exactly), then every other control character made a visible escape (`printable`)."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def github_property(text: str) -> str:
    """A workflow command's property value: as `github_data`, and `:` and `,` escaped too."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(findings: list[Finding], tool: str) -> str:
    """One `::error file=…,line=…,col=…,title=…::message` line per finding (`::warning`, `::notice`)."""
    lines = []
    for f in findings:
        properties = ",".join(f"{key}={github_property(value)}" for key, value in (
            ("file", f.path), ("line", str(f.line)), ("col", str(f.column)), ("title", f"{tool} {f.code}")))
        lines.append(f"::{COMMANDS.get(f.severity, 'error')} {properties}::{github_data(f.message + f._others())}\n")
    return "".join(lines)


def artifact_uri(path: str) -> str:
    """The SARIF artifact URI of a shown path: relative to the working folder when inside it, percent-encoded
    byte for byte (a name that is not UTF-8 keeps its bytes); a path outside it is a `file://` URI.

    Examples:
        >>> artifact_uri("./pkgs/a b.nix")
        'pkgs/a%20b.nix'
    """
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return "file://" + quote(absolute, safe="/", errors="surrogateescape")
    return quote(relative.replace(os.sep, "/"), safe="/", errors="surrogateescape")


def _artifact(path: str) -> dict:
    uri = artifact_uri(path)
    return {"uri": uri} if uri.startswith("file://") else {"uri": uri, "uriBaseId": "%SRCROOT%"}


def render_sarif(findings: list[Finding], tool: str, version: str, rules: dict[str, str]) -> str:
    """A SARIF 2.1.0 log with one run: the driver, its rules (every known code, and any other a finding
    carries) and one result per finding located by artifact URI, start line and start column."""
    codes = dict(rules)
    for f in findings:
        codes.setdefault(f.code, f.code)
    rule_list = [{"id": code, "name": code, "shortDescription": {"text": text}} for code, text in codes.items()]
    index = {code: n for n, code in enumerate(codes)}
    results = [{
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVELS.get(f.severity, "error"),
        "message": {"text": f.message + f._others()},
        "locations": [{"physicalLocation": {
            "artifactLocation": _artifact(f.path),
            "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)}}}],
    } for f in findings]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": tool, "version": version, "semanticVersion": version, "rules": rule_list}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(visible_data(log), indent=2) + "\n"
