"""`pinshift status` output: one row per repository × branch as a text table, a Markdown table, or JSON.

Text and Markdown show the figures a reader compares across branches (the seed's "Current State"
table): pins with their recipe counts when a branch mixes them, PyTorch at each pin, CUDA, Python,
package sets, the recipe pattern, variants, drift and, with a target, alignment. What does not fit
in a cell (a branch's syntax problems, files skipped, a branch git could not read) follows the table,
one line per branch. JSON (schema `pinshift.status/1`, docs/status-schema.json) carries every count.
"""

from __future__ import annotations

import json

from pinshift.checks.status import CALLER, UNPINNED, BranchStatus, _REVISION, _version_key

SCHEMA = "pinshift.status/1"
NONE = "–"
COLUMNS = ("Repo", "Branch", "Nixpkgs Pin", "PyTorch", "CUDA", "Python", "Package Set", "Recipe Pattern",
           "Variants", "Drift")


def _short(value: str) -> str:
    return value[:7] if _REVISION.match(value) else value


def _plural(count: int, word: str, plural: str = "") -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


# --- cells ---------------------------------------------------------------------------------------


def _pin_entries(row: BranchStatus, code) -> list[tuple[str, int]]:
    entries = [(code(_short(value)), count) for value, count in row.pins]
    entries += [(CALLER, row.caller)] if row.caller else []
    entries += [(UNPINNED, row.unpinned)] if row.unpinned else []
    return entries


def _with_counts(entries: list[tuple[str, int]]) -> str:
    """`a` alone; `a (40) / b (26)` when mixed; `–` when empty."""
    if not entries:
        return NONE
    if len(entries) == 1:
        return entries[0][0]
    return " / ".join(f"{value} ({count})" for value, count in entries)


def _by_version(counted) -> str:
    values = sorted((value for value, _ in counted), key=_version_key)
    return " / ".join(values) if values else NONE


def _pytorch(row: BranchStatus) -> str:
    if not row.pytorch:
        return NONE
    versions = [row.pytorch.get(value) for value, _ in row.pins if _REVISION.match(value)]
    shown = [version or "?" for version in versions]
    return " / ".join(shown) if shown else NONE


def _drift(row: BranchStatus) -> str:
    markers = list(row.drift)
    if not row.files:
        markers.append("no recipe files")
    if row.problems:
        markers.append(f"{_plural(len(row.problems), 'unparsable file')}")
    if row.skipped:
        markers.append(f"{len(row.skipped)} skipped")
    return ", ".join(markers) or NONE


def _aligned(row: BranchStatus) -> str:
    alignment = row.alignment
    if alignment is None:
        return NONE
    if alignment.aligned:
        return "yes"
    if alignment.state == "partly":
        return f"partly ({alignment.on_target} of {alignment.total})"
    if row.caller and not row.pins:
        return f"no ({CALLER})"
    return "no" if alignment.total else NONE


def _cells(row: BranchStatus, markdown: bool, aligning: bool) -> list[str]:
    code = (lambda text: f"`{text}`") if markdown else (lambda text: text)
    if row.error:
        cells = [code(row.repository), code(row.branch)] + ["?"] * 7 + ["unreadable"]
    else:
        cells = [
            code(row.repository), code(row.branch),
            _with_counts(_pin_entries(row, code)),
            _pytorch(row),
            _by_version(row.cuda),
            _by_version(row.python),
            " / ".join(code(name) for name, _ in sorted(row.package_sets)) or NONE,
            _with_counts(list(row.patterns)),
            str(row.variants),
            _drift(row),
        ]
    if aligning:
        cells.append("?" if row.error else _aligned(row))
    return cells


def _footnotes(rows: list[BranchStatus], markdown: bool, verbose: bool) -> list[str]:
    """What did not fit in a cell: a branch git could not read, its unparsable files, skipped files."""
    lines = []
    for row in rows:
        label = f"`{row.label}`" if markdown else row.label
        if row.error:
            lines.append(f"{label}: cannot be read: {row.error}")
        if row.problems:
            shown = row.problems if verbose else row.problems[:1]
            more = "" if verbose or len(row.problems) == 1 else f" (and {len(row.problems) - 1} more; --verbose lists them)"
            lines.append(f"{label}: {_plural(len(row.problems), 'recipe file')} with syntax problems, not counted: "
                         f"{'; '.join(shown)}{more}")
        if row.skipped:
            shown = row.skipped if verbose else row.skipped[:1]
            more = "" if verbose or len(row.skipped) == 1 else f" (and {len(row.skipped) - 1} more)"
            lines.append(f"{label}: {_plural(len(row.skipped), 'file')} skipped: {'; '.join(shown)}{more}")
    return lines


# --- formats -------------------------------------------------------------------------------------


def _header(target) -> list[str]:
    columns = list(COLUMNS)
    if target is not None:
        columns.append(f"Aligned to {target.label} ({target.revision[:7]})")
    return columns


def _escape(cell: str) -> str:
    return cell.replace("\\", "\\\\").replace("|", "\\|")


def render_markdown(rows: list[BranchStatus], target=None, notes=(), verbose: bool = False) -> str:
    header = _header(target)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_escape(c) for c in _cells(row, True, target is not None)) + " |" for row in rows]
    extra = [f"- {line}" for line in _footnotes(rows, True, verbose)]
    if target is not None:
        extra.append(f"- target: `{target.revision[:7]}`, {target.origin} ({_target_counts(target)})")
    extra += [f"- note: {note}" for note in notes]
    return "\n".join(lines + ([""] + extra if extra else [])) + "\n"


def render_text(rows: list[BranchStatus], target=None, notes=(), verbose: bool = False) -> str:
    """A summary line, then the table with one heading line per repository and its branches below it
    (no Repo column), "self-contained" left out of the pattern; notes and footnotes after it."""
    header = _header(target)[1:]
    if target is not None:
        header[-1] = "Aligned"
    body = []
    for row in rows:
        cells = _cells(row, False, target is not None)[1:]
        cells[0] = "  " + cells[0]
        cells[6] = cells[6].replace("self-contained ", "")
        body.append((row, cells))
    widths = [max(len(r[i]) for r in [header, *(cells for _, cells in body)]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()

    repositories = len({row.root for row in rows})
    lines = [f"{_plural(len(rows), 'branch', 'branches')} in {_plural(repositories, 'repository', 'repositories')}"
             + (f"; target: {target.revision[:7]}, {target.origin} ({_target_counts(target)})"
                if target is not None else ""), "", line(header)]
    shown = None
    for row, cells in body:
        if row.root != shown:
            shown = row.root
            lines.append(row.repository)
        lines.append(line(cells))
    extra = _footnotes(rows, False, verbose) + [f"note: {note}" for note in notes]
    return "\n".join(lines + ([""] + extra if extra else [])) + "\n"


def _target_counts(target) -> str:
    counted = _plural(target.count, "recipe")
    if target.others:
        counted = f"majority: {target.count} of {target.total} recipes"
    return f"{target.commit[:7]}, {counted}"


def render_json(rows: list[BranchStatus], target=None, notes=(), nixpkgs=None) -> str:
    document = {
        "schema": SCHEMA,
        "nixpkgs": str(nixpkgs) if nixpkgs is not None else None,
        "align_to": None if target is None else {
            "label": target.label, "path": target.root, "commit": target.commit, "revision": target.revision,
            "recipes": target.count, "pinned_recipes": target.total,
            "others": [{"revision": value, "recipes": count} for value, count in target.others],
        },
        "branches": [_row_json(row) for row in rows],
        "notes": list(notes),
    }
    return json.dumps(document, indent=2) + "\n"  # ASCII: every escape is JSON's own, nothing left for printable


def _row_json(row: BranchStatus) -> dict:
    literal = lambda value: bool(_REVISION.match(value))  # noqa: E731
    return {
        "repository": row.repository,
        "path": row.root,
        "branch": row.branch,
        "commit": row.commit,
        "files": row.files,
        "variants": row.variants,
        "pins": [{"revision": value if literal(value) else None, "expression": None if literal(value) else value,
                  "recipes": count, "pytorch": row.pytorch.get(value)} for value, count in row.pins],
        "uses_caller_nixpkgs": row.caller,
        "unpinned": row.unpinned,
        "hashed_pins": row.hashed,
        "package_sets": [{"name": name, "recipes": count} for name, count in row.package_sets],
        "cuda": [{"version": version, "recipes": count} for version, count in row.cuda],
        "python": [{"version": version, "recipes": count} for version, count in row.python],
        "patterns": [{"pattern": name, "recipes": count} for name, count in row.patterns],
        "packages": [{"package": name, "recipes": count} for name, count in row.packages],
        "drift": row.drift,
        "problems": list(row.problems),
        "skipped": list(row.skipped),
        "error": row.error,
        "alignment": None if row.alignment is None else {
            "state": row.alignment.state, "aligned": row.alignment.aligned,
            "recipes_on_target": row.alignment.on_target, "recipes": row.alignment.total,
        },
    }
