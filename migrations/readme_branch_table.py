"""readme-branch-table — add (or update) the target branch's row in a README's branch tables.

A README's cross-branch tables list every branch with its own pin, so a blind
replace corrupts them. This step works on Markdown tables that have a branch
column (header `Branch`, case-insensitive, or `branch-column`):

- the row of `base` is cloned right below itself as the row of `target`, with
  `columns` overriding cells by header text (case-insensitive); formatting
  around a value (bold, code, a link) is kept, and a link whose address holds
  the old revision is rebuilt for `revision` (the full new revision);
- if the row of `target` already exists it is updated in place instead
  (running the step twice changes nothing the second time);
- when the base row carries the "this branch" marker (bold, an arrow such as
  ⬅️, a "This branch" cell) the marker moves to the target row and the base
  row is left plain;
- a "You are on the `base` branch" banner names `target` instead, and
  `Header old-value` pairs in it (`PyTorch 2.9.1`) take the overrides.

Every other row and every other byte stays identical. Tables without a branch
column, branch tables without a base row and a README without any branch
table are left alone and reported as warnings.

Parameters:
    base           branch the new branch starts from (its row is the template)
    target         the new branch
    columns        table of header = new cell value, e.g. PyTorch = "2.10.0"
    revision       optional full revision for rebuilt pin links
    branch-column  header of the branch column (default "Branch")

Example:
    [[steps]]
    kind = "readme-branch-table"
    files = ["README.md"]
    [steps.params]
    base = "pytorch-2.9"
    target = "pytorch-2.10-cuda12_9"
    revision = "0182a361324364ae3f436a63005877674cf45efb"
    [steps.params.columns]
    PyTorch = "2.10.0"
    "Nixpkgs Pin" = "0182a36"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pinshift.edits import Edit, apply_edits
from pinshift.errors import ParamError
from pinshift.languages.markdown import MarkdownDocument, Row, Table, plain_text
from pinshift.steps import StepContext, StepOutput

NAME = "readme-branch-table"
LANGUAGES = ("markdown",)

_ARROWS = ("⬅️", "⬅", "←", "👈", "◀️", "◀", "<-")
_MARKER = re.compile(
    r"\s*(?:" + "|".join(re.escape(a) for a in _ARROWS) + r"|\((?:this|current) branch\))", re.IGNORECASE
)
_HEX = re.compile(rb"[0-9a-fA-F]{7,40}")
_URL = re.compile(rb"\]\(([^)]*)\)|<(https?://[^>]*)>")
_BANNER = re.compile(rb"You are on the\s+(?:\*\*|__)?`?([^`*\s]+?)`?(?:\*\*|__)?\s+branch", re.IGNORECASE)


@dataclass(frozen=True)
class Params:
    base: str
    target: str
    columns: dict[str, str] = field(default_factory=dict)
    revision: str | None = None
    branch_column: str = "Branch"

    def __post_init__(self):
        for key in ("base", "target"):
            if not getattr(self, key).strip():
                raise ParamError(key, f"'{key}' must name a branch")
        if self.base == self.target:
            raise ParamError("target", "'target' must differ from 'base'")
        for header, value in self.columns.items():
            if not isinstance(value, str):
                raise ParamError("columns", f"columns.{header} must be a string (quote it: \"{value}\")")
        if self.revision is not None and not _HEX.fullmatch(self.revision.encode()):
            raise ParamError("revision", "'revision' must be a hexadecimal git revision")


def needles(params: Params) -> tuple[bytes, ...]:
    return (params.base.encode(), params.target.encode())


# --- cells -----------------------------------------------------------------------------------


def branch_name(raw: bytes) -> str:
    """The branch a branch-column cell names: `**`main`** ⬅️` -> "main"."""
    return _MARKER.sub("", plain_text(raw)).strip()


def rename_branch(raw: bytes, params: Params) -> bytes:
    """The branch cell naming `target`: every whole `base` (link text and address alike) replaced."""
    pattern = re.compile(rb"(?<![\w.\-])" + re.escape(params.base.encode()) + rb"(?![\w.\-])")
    return pattern.sub(params.target.encode().replace(b"\\", b"\\\\"), raw)


def _is_this_branch_cell(raw: bytes) -> bool:
    return plain_text(raw).strip(" ✅✓").lower() == "this branch"


def strip_marker(raw: bytes) -> bytes:
    """The cell without "this branch" marks: arrows removed, outer bold unwrapped, a "This branch" cell emptied."""
    if _is_this_branch_cell(raw):
        return b""
    text = raw.decode("utf-8", "surrogateescape")
    text = _MARKER.sub("", text).rstrip()
    for mark in ("**", "__"):
        if len(text) > 4 and text.startswith(mark) and text.endswith(mark):
            text = text[2:-2]
    return text.encode("utf-8", "surrogateescape")


def _relink(raw: bytes, old: str, new: str, revision: str | None) -> tuple[bytes, bool]:
    """Rebuild link addresses that hold revision `old` for `new`; (cell, True if a link could not be rebuilt)."""
    if not _HEX.fullmatch(old.encode()):
        return raw, False
    stale = False

    def fix_url(match: re.Match) -> bytes:
        nonlocal stale

        def fix_hex(token: re.Match) -> bytes:
            nonlocal stale
            value = token.group(0).decode()
            if not value.startswith(old):
                return token.group(0)
            if len(value) == len(old):
                return new.encode()
            if revision and revision.startswith(new):
                return revision.encode()
            stale = True
            return token.group(0)

        return _HEX.sub(fix_hex, match.group(0))

    return _URL.sub(fix_url, raw), stale


def set_value(raw: bytes, new: str, revision: str | None) -> tuple[bytes, bool]:
    """`raw` showing `new` instead of its current value, decorations kept; (cell, stale link?)."""
    old = _MARKER.sub("", plain_text(raw)).strip()
    if old == new:
        return raw, False
    old_bytes = old.encode("utf-8", "surrogateescape")
    at = raw.find(old_bytes) if old else -1
    if at < 0:
        return new.encode(), False
    replaced = raw[:at] + new.encode() + raw[at + len(old_bytes):]
    return _relink(replaced, old, new, revision)


# --- rows ------------------------------------------------------------------------------------


def _overrides(table: Table, params: Params) -> dict[int, str]:
    out = {}
    for header, value in params.columns.items():
        index = table.column(header)
        if index is not None:
            out[index] = value
    return out


def _cell_edits(doc: MarkdownDocument, row: Row, new_cells: dict[int, bytes], reason: str) -> list[Edit]:
    return [
        Edit(row.cells[i].start, row.cells[i].end, value, reason)
        for i, value in sorted(new_cells.items())
        if i < len(row.cells) and doc.cell_text(row.cells[i]) != value
    ]


def _new_row(doc: MarkdownDocument, table: Table, base: Row, branch: int, params: Params, out: StepOutput) -> bytes:
    """The base row's line with the target branch name and the column overrides."""
    cells: dict[int, bytes] = {}
    raw_branch = doc.cell_text(base.cells[branch])
    cells[branch] = rename_branch(raw_branch, params)
    for index, value in _overrides(table, params).items():
        if index < len(base.cells) and index != branch:
            cells[index], stale = set_value(doc.cell_text(base.cells[index]), value, params.revision)
            if stale:
                out.warn(base.cells[index].start, f"link in '{table.headers[index]}' still points to the old revision; set 'revision' to rebuild it")
    edits = _cell_edits(doc, base, cells, "")
    shifted = [Edit(e.start - base.start, e.end - base.start, e.replacement) for e in edits]
    return apply_edits(doc.data[base.start : base.end], shifted)


def _plan_table(doc: MarkdownDocument, table: Table, params: Params, out: StepOutput) -> bool:
    """Edits for one branch table; False when it has neither the base nor the target row."""
    branch = table.column(params.branch_column)
    rows = {branch_name(doc.cell_text(r.cells[branch])): r for r in table.rows if branch < len(r.cells)}
    base, target = rows.get(params.base), rows.get(params.target)
    reason = f"{NAME}: {params.target}"
    if base is None and target is None:
        return False
    base_marked = base is not None and any(strip_marker(doc.cell_text(c)) != doc.cell_text(c) for c in base.cells)
    if base_marked:
        plain = {i: strip_marker(doc.cell_text(c)) for i, c in enumerate(base.cells)}
        out.edits.extend(_cell_edits(doc, base, plain, f"{NAME}: marker moves to {params.target}"))
    if target is None:
        line = _new_row(doc, table, base, branch, params, out)
        eol = b"\r\n" if doc.data[base.end : base.end + 2] == b"\r\n" else b"\n"
        if base.end + len(eol) <= len(doc.data) and doc.data[base.end : base.end + len(eol)] == eol:
            out.edits.append(Edit(base.end + len(eol), base.end + len(eol), line + eol, reason))
        else:
            out.edits.append(Edit(base.end, base.end, eol + line, reason))
        return True
    cells: dict[int, bytes] = {}
    for index, value in _overrides(table, params).items():
        if index < len(target.cells) and index != branch:
            cells[index], _ = set_value(doc.cell_text(target.cells[index]), value, params.revision)
    if base_marked:
        for index, cell in enumerate(base.cells):
            raw = doc.cell_text(cell)
            if index == branch and strip_marker(raw) != raw:
                cells[index] = rename_branch(raw, params)
            elif _is_this_branch_cell(raw):
                cells[index] = raw
    out.edits.extend(_cell_edits(doc, target, cells, reason))
    return True


# --- the banner ------------------------------------------------------------------------------


def _plan_banner(doc: MarkdownDocument, params: Params, old_values: dict[str, str], out: StepOutput) -> None:
    for span in doc.spans:
        if span.kind != "prose":
            continue
        for match in _BANNER.finditer(doc.data, span.start, span.end):
            if match.group(1).decode("utf-8", "surrogateescape") != params.base:
                continue
            out.edits.append(Edit(match.start(1), match.end(1), params.target.encode(), f"{NAME}: banner"))
            for header, new in params.columns.items():
                old = old_values.get(header)
                if not old or old == new:
                    continue
                pattern = re.compile(rb"(?i)\b" + re.escape(header.encode()) + rb"\s+(" + re.escape(old.encode()) + rb")(?![\w.])")
                for pair in pattern.finditer(doc.data, match.end(), span.end):
                    out.edits.append(Edit(pair.start(1), pair.end(1), new.encode(), f"{NAME}: banner {header}"))


def plan(doc: MarkdownDocument, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    branch_tables = [t for t in doc.tables if t.column(params.branch_column) is not None]
    if not branch_tables:
        out.warn(0, f"no branch table (no table with a '{params.branch_column}' column); file left alone")
        return out
    for table in doc.tables:
        if table.column(params.branch_column) is None:
            out.note(table.start, f"table has no '{params.branch_column}' column; left alone")
    old_values: dict[str, str] = {}
    matched_headers: set[str] = set()
    for table in branch_tables:
        branch = table.column(params.branch_column)
        for row in table.rows:
            if branch < len(row.cells) and branch_name(doc.cell_text(row.cells[branch])) == params.base:
                for header in params.columns:
                    index = table.column(header)
                    if index is not None and index < len(row.cells):
                        old_values.setdefault(header, _MARKER.sub("", plain_text(doc.cell_text(row.cells[index]))).strip())
        matched_headers.update(h for h in params.columns if table.column(h) is not None)
        if not _plan_table(doc, table, params, out):
            out.warn(table.start, f"branch table has no row for '{params.base}' or '{params.target}'; left alone")
    for header in params.columns:
        if header not in matched_headers:
            out.warn(0, f"no branch table has a '{header}' column; that override was not used")
    _plan_banner(doc, params, old_values, out)
    return out
