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
- the "this branch" marker moves whole from the base row to the target row: an arrow (⬅️),
  `(this branch)`, the words `**This branch** — ` with their separator, a cell saying only
  "This branch", and bold around a cell's content or inside its link text (`[**`6a030d5`**](…)`);
  bold is a mark only where it sets the row apart (no other row's cell in that column is bold);
  another marked row is left alone and reported;
- with several rows for `base`, the new row is cloned from the marked one and inserted after
  the last of them (none marked: the first, with a warning);
- a "You are on the `base` branch" banner names `target` instead, and
  `Header old-value` pairs in it (`PyTorch 2.9.1`) take the overrides; every "this branch:
  `base`" self-reference in a heading or paragraph names `target`.

`base` and `target` are usually `{base}` and `{target}`: the migration's actual branches.
A cell's value (and `revision`) may be a fact, `{facts.version}`, `{facts.pin}`, `{facts.revision}`,
`{facts.python}`, `{facts.cuda}`, `{facts.gpus}`, `{facts.variants}`: what the branch's recipes say after the
steps, filled by migrate (`?` when nothing states it). A typed value in a column whose header names a fact
(`Nixpkgs Pin`, `Python`, `CUDA`, `GPU`, `Variants`, `Version`) or a package (`PyTorch`: its version), and a
typed `revision`, are checked against the facts: contradicted, no branch is made; not checkable (`Min
Driver`), the report names it unchecked (docs/doc-steps.md).

A branch name or a value is written for where it stands (pinshift.languages.markdown_escape): inside a code
span the span is rebuilt with a backtick run longer than any inside, in a link address it is percent-encoded,
elsewhere its Markdown punctuation is escaped; `|` becomes `\\|` in every cell (git allows `|` in branch
names), so a row keeps its number of cells. Every other row and every other byte stays identical. A table without a branch
column is left alone with a note; a branch table without a base row and a
README without any branch table are left alone and reported as warnings.

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
    base = "{base}"
    target = "{target}"
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
from urllib.parse import quote

from pinshift.languages import markdown_escape
from pinshift.languages.markdown import MarkdownDocument, Row, Table, plain_text
from pinshift.steps.kind import Claim, StepContext, StepOutput

NAME = "readme-branch-table"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): Markdown only: no recipe builds anything else.
BUILD_CHANGES = ()
LANGUAGES = ("markdown",)
# A README that already has the row, or none of the tables, is no reason to stop a migration (docs/recipes.md).
OPTIONAL = True

_ARROWS = ("⬅️", "⬅", "←", "👈", "◀️", "◀", "<-")
_MARKER = re.compile(
    r"\s*(?:" + "|".join(re.escape(a) for a in _ARROWS) + r"|\((?:this|current) branch\))", re.IGNORECASE
)
_ARROW = "|".join(re.escape(a) for a in _ARROWS)
_LEAD_ARROW = re.compile(r"(?:" + _ARROW + r")\s*")
_THIS_BRANCH = re.compile(  # `**This branch** — `, `This branch: ` at the start of a cell
    r"(?:(\*\*|__)(?:this|current) branch\1|(?:this|current) branch(?=\s*(?:[—–:|]|--?\s)))"
    r"\s*(?:[—–:|]|--?(?=\s))?\s*", re.IGNORECASE)
_TRAIL = re.compile(r"(?:\s*(?:" + _ARROW + r"|\((?:this|current) branch\)))+\s*\Z", re.IGNORECASE)
_LINK = re.compile(r"(?P<open>!?\[)(?P<text>[^\]]*)(?P<close>\]\([^)]*\))")
_BOLD_LINK = re.compile(r"(?P<open>!?\[)(?P<mark>\*\*|__)(?P<text>[^\]]*?)(?P=mark)(?P<close>\]\([^)]*\))")
_SELF_REFERENCE = re.compile(rb"(?i)\bthis branch:\s*(?:\*\*|__)?`?([^`*\s)\]]+)")
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


# a column's header (lower case, without `**` and backticks) -> the fact of the branch's recipes its cell states
_FACT_COLUMNS = {
    "nixpkgs pin": "pin", "nixpkgs": "pin", "pin": "pin", "nixpkgs revision": "pin",
    "python": "python", "python version": "python",
    "cuda": "cuda", "cuda version": "cuda",
    "gpu": "gpus", "gpus": "gpus", "gpu targets": "gpus", "gpu architectures": "gpus", "architectures": "gpus",
    "variants": "variants",
    "version": "version",
}
_PACKAGE_COLUMNS = ("pytorch", "torch", "vllm", "onnxruntime", "comfyui", "torchvision", "torchaudio", "triton")


def claims(params: Params) -> list[Claim]:
    """The typed values (no `{facts.…}` in them) that state a fact of the branch: a column whose header names a
    fact (`Nixpkgs Pin`, `Python`, `CUDA`, `GPU`, `Variants`, `Version`) or a package (`PyTorch`: its version),
    `revision`; any other column (`Min Driver`) is a claim no fact checks."""
    found = []
    for header, value in params.columns.items():
        if "{facts." in value:
            continue
        name = re.sub(r"[*`_]", "", header).strip().lower()
        if name in _PACKAGE_COLUMNS:
            found.append(Claim(f"columns.{header}", value, "version", name))
        else:
            found.append(Claim(f"columns.{header}", value, _FACT_COLUMNS.get(name)))
    if params.revision is not None and "{facts." not in params.revision:
        found.append(Claim("revision", params.revision, "revision"))
    return found


def needles(params: Params) -> tuple[bytes, ...]:
    return (params.base.encode(), params.target.encode())


# --- cells -----------------------------------------------------------------------------------


def branch_name(raw: bytes) -> str:
    """The branch a branch-column cell names: `**`main`** ⬅️` -> "main"."""
    return _MARKER.sub("", plain_text(raw)).strip()


_CODE_SPAN = re.compile(rb"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_DESTINATION = re.compile(rb"\]\(([^)]*)\)")


def _segments(raw: bytes) -> list[tuple[str, bytes]]:
    """A cell cut into ("code", a whole code span), ("address", a link's address) and ("text", the rest)."""
    out: list[tuple[str, bytes]] = []

    def text_and_addresses(part: bytes) -> None:
        at = 0
        for found in _DESTINATION.finditer(part):
            out.extend([("text", part[at:found.start(1)]), ("address", found.group(1))])
            at = found.end(1)
        out.append(("text", part[at:]))

    at = 0
    for found in _CODE_SPAN.finditer(raw):
        text_and_addresses(raw[at:found.start()])
        out.append(("code", found.group(0)))
        at = found.end()
    text_and_addresses(raw[at:])
    return [(kind, part) for kind, part in out if part]


def replace_in_cell(raw: bytes, pattern: re.Pattern[bytes], new: str, count: int = 0) -> bytes:
    """`raw` (a table cell) with the matches of `pattern` (the first `count`; 0: all) replaced by `new`, written
    for where each stands: a code span rebuilt (`markdown_escape.code`, `|` escaped), a link address
    percent-encoded, other text escaped (`markdown_escape.text`). Segments without a match keep their bytes."""
    left = count or -1
    out = []
    for kind, part in _segments(raw):
        if kind == "code":
            ticks = len(part) - len(part.lstrip(b"`"))
            inner = part[ticks:-ticks]
            if inner.startswith(b" ") and inner.endswith(b" ") and inner.strip(b" "):
                inner = inner[1:-1]
            value = inner.replace(b"\\|", b"|")  # GFM reads `\|` in a table's code span as `|`
            if left and pattern.search(value):
                replaced, n = pattern.subn(lambda _: _encode(new), value, count=max(left, 0))
                left -= n
                part = _encode(markdown_escape.code(_decode(replaced), table=True))
            out.append(part)
            continue
        written = (_encode(quote(new, safe="/:@-._~#?=&%+")) if kind == "address"
                   else _encode(markdown_escape.text(new, line_start=False)))
        if left:
            part, n = pattern.subn(lambda _: written, part, count=max(left, 0))
            left -= n
        out.append(part)
    return b"".join(out)


def rename_branch(raw: bytes, params: Params) -> bytes:
    """The branch cell naming `target`: every whole `base` (link text and address alike) replaced, escaped."""
    pattern = re.compile(rb"(?<![\w.\-])" + re.escape(params.base.encode()) + rb"(?![\w.\-])")
    return replace_in_cell(raw, pattern, params.target)


def _is_this_branch_cell(raw: bytes) -> bool:
    return plain_text(raw).strip(" ✅✓").lower() == "this branch"


@dataclass(frozen=True)
class Marks:
    """The "this branch" marks of one cell, as written: what `strip_marks` took off and `mark` puts back.

    `lead`: `**This branch** — ` or an arrow before the content; `trail`: ` ⬅️` after it;
    `bold`: `**`/`__` that wrapped the content (`link`: inside a link's text, `[**`6a030d5`**](...)`);
    `whole`: the cell said nothing but "This branch".
    """

    lead: str = ""
    trail: str = ""
    bold: str = ""
    link: bool = False
    whole: bool = False

    @property
    def signal(self) -> bool:
        """Marks that say "this branch" on their own (bold alone only does when it sets the row apart)."""
        return bool(self.lead or self.trail or self.whole)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def strip_marks(raw: bytes, bold_marks: bool = True) -> tuple[bytes, Marks]:
    """(the cell without its "this branch" marks, the marks); bold counts only when `bold_marks`."""
    if _is_this_branch_cell(raw):
        return b"", Marks(lead=_decode(raw), whole=True)
    text, lead, trail = _decode(raw), "", ""
    while found := (_LEAD_ARROW.match(text) or _THIS_BRANCH.match(text)):
        lead, text = lead + found.group(0), text[found.end():]
    if found := _TRAIL.search(text):
        trail, text = found.group(0), text[: found.start()]
    if _MARKER.search(text):  # an arrow inside the cell: dropped, it comes back as a trailing one
        text, trail = _MARKER.sub("", text), trail or " " + _MARKER.search(text).group(0).strip()
    bold, link = "", False
    if bold_marks:
        if found := _BOLD_LINK.fullmatch(text):
            bold, link = found.group("mark"), True
            text = found.group("open") + found.group("text") + found.group("close")
        else:
            for candidate in ("**", "__"):
                inner = text[2:-2]
                if len(text) > 4 and text.startswith(candidate) and text.endswith(candidate) and candidate not in inner:
                    bold, text = candidate, inner
                    break
    return _encode(text), Marks(lead, trail, bold, link)


def mark(raw: bytes, marks: Marks) -> bytes:
    """`raw` (a cell without marks) carrying `marks`: the inverse of `strip_marks`."""
    if marks.whole:
        return _encode(marks.lead)
    text = _decode(raw)
    if marks.bold:
        found = _LINK.fullmatch(text) if marks.link else None
        if found:
            text = found.group("open") + marks.bold + found.group("text") + marks.bold + found.group("close")
        else:
            text = marks.bold + text + marks.bold
    return _encode(marks.lead + text + marks.trail)


def strip_marker(raw: bytes) -> bytes:
    """The cell without "this branch" marks: arrows removed, outer bold unwrapped, a "This branch" cell emptied."""
    return strip_marks(raw)[0]


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
        return _encode(markdown_escape.cell(new)), False
    replaced = replace_in_cell(raw, re.compile(re.escape(old_bytes)), new, count=1)
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


CellMarks = list[tuple[bytes, Marks]]  # per cell: (the cell without marks, its marks)


def _new_row(doc: MarkdownDocument, table: Table, template: Row, marks: CellMarks, branch: int, params: Params,
             out: StepOutput) -> bytes:
    """The template row's line with the target branch name and the column overrides, marks kept."""
    cells: dict[int, bytes] = {branch: rename_branch(doc.cell_text(template.cells[branch]), params)}
    for index, value in _overrides(table, params).items():
        if index < len(template.cells) and index != branch:
            plain, own = marks[index]
            new, stale = set_value(plain, value, params.revision)
            cells[index] = mark(new, own)
            if stale:
                out.warn(template.cells[index].start, f"link in '{table.headers[index]}' still points to the old revision; set 'revision' to rebuild it")
    edits = _cell_edits(doc, template, cells, "")
    shifted = [Edit(e.start - template.start, e.end - template.start, e.replacement) for e in edits]
    return apply_edits(doc.data[template.start : template.end], shifted)


def _insert_after(doc: MarkdownDocument, row: Row, line: bytes, reason: str) -> Edit:
    eol = b"\r\n" if doc.data[row.end : row.end + 2] == b"\r\n" else b"\n"
    if doc.data[row.end : row.end + len(eol)] == eol:
        return Edit(row.end + len(eol), row.end + len(eol), line + eol, reason)
    return Edit(row.end, row.end, eol + line, reason)


def _is_marked(marks: CellMarks, branch: int) -> bool:
    """A row says "this branch" with an arrow or the words anywhere, or with a bold branch name of its own."""
    return any(m.signal for _, m in marks) or (branch < len(marks) and bool(marks[branch][1].bold))


def _plan_table(doc: MarkdownDocument, table: Table, params: Params, out: StepOutput,
                old_values: dict[str, str]) -> bool:
    """Edits for one branch table; False when it has neither the base nor the target row.

    `old_values` collects the template row's value per overridden header (the first table's win),
    for the banner's `PyTorch 2.9.1` pairs.
    """
    branch = table.column(params.branch_column)
    named = [(branch_name(doc.cell_text(r.cells[branch])), r) for r in table.rows if branch < len(r.cells)]
    bases = [row for name, row in named if name == params.base]
    target = next((row for name, row in named if name == params.target), None)
    if not bases and target is None:
        return False
    own = {row.line for row in bases} | ({target.line} if target else set())
    others = [(name, row) for name, row in named if row.line not in own]

    def bold_marks(index: int) -> bool:
        """Bold in this column marks "this branch" only when no other row's cell there is all bold."""
        return not any(index < len(row.cells) and strip_marks(doc.cell_text(row.cells[index]))[1].bold
                       for _, row in others)

    marks = {row.line: [strip_marks(doc.cell_text(c), bold_marks(i)) for i, c in enumerate(row.cells)] for row in bases}
    marked = [row for row in bases if _is_marked(marks[row.line], branch)]
    reason = f"{NAME}: {params.target}"
    for row in marked:
        plain = {i: cell for i, (cell, _) in enumerate(marks[row.line])}
        out.edits.extend(_cell_edits(doc, row, plain, f"{NAME}: marker moves to {params.target}"))
    if marked:
        for name, row in others:
            if any(strip_marks(doc.cell_text(c), False)[1].signal for c in row.cells):
                out.warn(row.start, f"row '{name}' is marked as this branch too; left alone")
    template = marked[0] if marked else (bases[0] if bases else None)
    for header in params.columns:
        index = table.column(header)
        if template is not None and index is not None and index < len(template.cells):
            old_values.setdefault(header, plain_text(marks[template.line][index][0]).strip())
    if target is None:
        if len(bases) > 1 and not marked:
            out.warn(bases[0].start, f"{len(bases)} rows for '{params.base}' and none is marked as this branch; "
                                     f"the new row copies the first (line {bases[0].line + 1}): check it")
        line = _new_row(doc, table, template, marks[template.line], branch, params, out)
        out.edits.append(_insert_after(doc, bases[-1], line, reason))
        return True
    overrides = _overrides(table, params)
    cells: dict[int, bytes] = {}
    for index, cell in enumerate(target.cells):
        raw = doc.cell_text(cell)
        if not marked:  # the marker stays where it is: only overridden cells change
            if index in overrides and index != branch:
                cells[index], _ = set_value(raw, overrides[index], params.revision)
            continue
        plain, _ = strip_marks(raw, bold_marks(index))
        if index in overrides and index != branch:
            plain, _ = set_value(plain, overrides[index], params.revision)
        wanted = marks[template.line][index][1] if index < len(marks[template.line]) else Marks()
        cells[index] = mark(plain, wanted)
    out.edits.extend(_cell_edits(doc, target, cells, reason))
    return True


# --- the banner ------------------------------------------------------------------------------


def _name_edit(data: bytes, start: int, end: int, target: str, reason: str) -> Edit:
    """The edit that names `target` at data[start:end]: in its code span (`` `base` ``) the span rebuilt, else text."""
    if data[start - 1:start] == b"`" and data[end:end + 1] == b"`":
        return Edit(start - 1, end + 1, _encode(markdown_escape.code(target)), reason)
    return Edit(start, end, _encode(markdown_escape.text(target, line_start=False)), reason)


def _plan_banner(doc: MarkdownDocument, params: Params, old_values: dict[str, str], out: StepOutput) -> None:
    for span in doc.spans:
        if span.kind != "prose":
            continue
        for match in _SELF_REFERENCE.finditer(doc.data, span.start, span.end):
            if match.group(1).decode("utf-8", "surrogateescape") == params.base:
                out.edits.append(_name_edit(doc.data, match.start(1), match.end(1), params.target, f"{NAME}: this branch"))
        for match in _BANNER.finditer(doc.data, span.start, span.end):
            if match.group(1).decode("utf-8", "surrogateescape") != params.base:
                continue
            out.edits.append(_name_edit(doc.data, match.start(1), match.end(1), params.target, f"{NAME}: banner"))
            for header, new in params.columns.items():
                old = old_values.get(header)
                if not old or old == new:
                    continue
                pattern = re.compile(rb"(?i)\b" + re.escape(header.encode()) + rb"\s+(" + re.escape(old.encode()) + rb")(?![\w.])")
                for pair in pattern.finditer(doc.data, match.end(), span.end):
                    out.edits.append(Edit(pair.start(1), pair.end(1), _encode(markdown_escape.text(new, line_start=False)),
                                          f"{NAME}: banner {header}"))


def plan(doc: MarkdownDocument, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    branch_tables = [t for t in doc.tables if t.column(params.branch_column) is not None]
    if not branch_tables:
        if not any(needle in doc.data for needle in needles(params)):
            return out  # names neither branch: not the README of these branches (what `needles` skips)
        out.warn(0, f"no branch table (no table with a '{params.branch_column}' column); file left alone")
        return out
    for table in doc.tables:
        if table.column(params.branch_column) is None:
            out.note(table.start, f"table has no '{params.branch_column}' column; left alone")
    old_values: dict[str, str] = {}
    matched_headers: set[str] = set()
    for table in branch_tables:
        matched_headers.update(h for h in params.columns if table.column(h) is not None)
        if not _plan_table(doc, table, params, out, old_values):
            out.warn(table.start, f"branch table has no row for '{params.base}' or '{params.target}'; left alone")
    for header in params.columns:
        if header not in matched_headers:
            out.warn(0, f"no branch table has a '{header}' column; that override was not used")
    _plan_banner(doc, params, old_values, out)
    return out
