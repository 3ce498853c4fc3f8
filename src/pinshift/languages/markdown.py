"""Markdown documents: tables with byte ranges of every cell, code blocks, links and prose.

markdown-it-py (CommonMark + GFM tables) decides what is a table, a code block
or a paragraph; its line map says which source lines each one covers. Cells,
link destinations and code lines are then located in the original bytes, so a
step can rewrite one cell of one row and leave every other byte alone.

Examples:
    `| **`main`** ⬅️ | 2.8.0 |` is a Row whose first Cell spans `**`main`** ⬅️`
    (padding excluded); `cell_text` gives the same bytes, `plain_text` gives `main ⬅️`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from markdown_it import MarkdownIt

from pinshift.languages.text import Occurrence, Span, TextDocument, decode, innermost, word_matches

_MD = MarkdownIt("commonmark").enable("table")
_DECORATION = re.compile(r"[*`~]|(?<!\w)_+|_+(?!\w)")  # `_` inside a word (cuda12_9) is text
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_LINK_DESTINATION = re.compile(rb"\]\(\s*<?([^)\s>]+)|<(https?://[^>\s]+)>")


@dataclass(frozen=True)
class Cell:
    """One table cell: `start`/`end` bound its content without the padding around it."""

    start: int
    end: int


@dataclass(frozen=True)
class Row:
    """One table line: its 0-based line number, byte range (without newline) and cells."""

    line: int
    start: int
    end: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    """A GFM table: the header row, the delimiter row and the body rows, in source order."""

    header: Row
    delimiter: Row
    rows: tuple[Row, ...]
    headers: tuple[str, ...]

    @property
    def start(self) -> int:
        return self.header.start

    @property
    def end(self) -> int:
        return (self.rows[-1] if self.rows else self.delimiter).end

    def column(self, name: str) -> int | None:
        """Index of the column whose header reads `name` (case-insensitive, decoration ignored)."""
        wanted = normalize(name)
        for index, header in enumerate(self.headers):
            if header == wanted:
                return index
        return None


def normalize(text: str) -> str:
    """Header or cell text for comparison: link text kept, emphasis/code marks dropped, lower case."""
    text = _LINK.sub(r"\1", text)
    return " ".join(_DECORATION.sub("", text).split()).lower()


def plain_text(raw: bytes) -> str:
    """What a reader sees in a cell: markdown marks and link targets removed, case kept."""
    text = _LINK.sub(r"\1", decode(raw))
    return " ".join(_DECORATION.sub("", text).split())


def split_cells(data: bytes, start: int, end: int) -> tuple[Cell, ...]:
    """Cells of the table line data[start:end], split at unescaped `|` as GFM does."""
    line = data[start:end]
    position = 0
    while position < len(line) and line[position : position + 1] in (b" ", b"\t", b">"):
        position += 1
    if line[position : position + 1] == b"|":
        position += 1
    bounds = []
    cell_start = position
    index = position
    while index < len(line):
        char = line[index : index + 1]
        if char == b"\\":
            index += 2
            continue
        if char == b"|":
            bounds.append((cell_start, index))
            cell_start = index + 1
        index += 1
    if line[cell_start:].strip():
        bounds.append((cell_start, len(line)))
    cells = []
    for a, b in bounds:
        raw = line[a:b]
        lead = len(raw) - len(raw.lstrip())
        trail = len(raw) - len(raw.rstrip())
        content_start = start + a + lead
        cells.append(Cell(content_start, max(content_start, start + b - trail)))
    return tuple(cells)


@dataclass
class MarkdownDocument(TextDocument):
    """A Markdown file with its tables and the code, link and prose spans pin steps may touch."""

    @cached_property
    def _tokens(self):
        return _MD.parse(decode(self.data))

    def cell_text(self, cell: Cell) -> bytes:
        return self.data[cell.start : cell.end]

    def _row(self, line: int) -> Row:
        start, end = self.lines[line]
        return Row(line, start, end, split_cells(self.data, start, end))

    @cached_property
    def tables(self) -> tuple[Table, ...]:
        found = []
        for token in self._tokens:
            if token.type != "table_open" or not token.map:
                continue
            first, last = token.map
            header = self._row(first)
            headers = tuple(normalize(decode(self.cell_text(c))) for c in header.cells)
            rows = tuple(self._row(n) for n in range(first + 2, min(last, len(self.lines))))
            found.append(Table(header, self._row(first + 1), rows, headers))
        return tuple(found)

    @cached_property
    def spans(self) -> tuple[Span, ...]:
        """Code block contents, link destinations and prose lines (tables excluded), in order."""
        out: list[Span] = []
        for token in self._tokens:
            if not token.map:
                continue
            first, last = token.map
            last = min(last, len(self.lines))
            if token.type in ("fence", "code_block"):
                if token.type == "fence":
                    first, last = first + 1, max(first + 1, last - 1)
                if first < last:
                    out.append(Span(self.lines[first][0], self.lines[last - 1][1], "code"))
            elif token.type == "inline" and not _inside_table(token, self.tables, self.lines):
                start, end = self.lines[first][0], self.lines[last - 1][1]
                for match in _LINK_DESTINATION.finditer(self.data, start, end):
                    group = 1 if match.group(1) is not None else 2
                    out.append(Span(match.start(group), match.end(group), "link"))
                out.append(Span(start, end, "prose"))
        return tuple(sorted(out, key=lambda s: (s.start, s.end)))

    def table_at(self, offset: int) -> tuple[Table, Row] | None:
        """The table row holding `offset`, if any."""
        for table in self.tables:
            if table.start <= offset <= table.end:
                for row in (table.header, table.delimiter, *table.rows):
                    if row.start <= offset <= row.end:
                        return table, row
        return None



def _inside_table(token, tables, lines) -> bool:
    line = token.map[0]
    start = lines[line][0] if line < len(lines) else -1
    return any(t.start <= start <= t.end for t in tables)


_WHERE = {"code": "code block", "link": "link", "prose": "prose"}
_LEAD = re.compile(r"^[\s>*+\-\d.)#]*")


def branch_names(doc: MarkdownDocument) -> set[str]:
    """Names in the branch column of every branch table (arrows and marks dropped)."""
    names = set()
    for table in doc.tables:
        column = table.column("branch")
        for row in table.rows if column is not None else ():
            if column < len(row.cells):
                names.add(re.sub(r"[^\w.\-/]+$", "", plain_text(doc.cell_text(row.cells[column]))))
    return names - {""}


def _describes(doc: MarkdownDocument, span: Span, names: set[str]) -> str | None:
    """The branch a paragraph or list item is about, when it opens with a branch-table name."""
    text = _LEAD.sub("", plain_text(doc.data[span.start : span.end]))
    for name in names:
        if text.startswith(name) and not re.match(r"[\w.\-]", text[len(name) : len(name) + 1]):
            return name
    return None


def occurrences(doc: MarkdownDocument, needle: bytes, include_comments: bool = False) -> list[Occurrence]:
    """Whole-word occurrences: editable in code blocks, links, prose and tables without a branch column.

    A row of a table with a `Branch` column belongs to that branch: its pin is
    another branch's pin and is never editable here (readme-branch-table owns
    those tables). Likewise a paragraph or list item that opens with a name
    from such a column (`- **`pytorch-2.9`** — nixpkgs 6a030d5`) describes
    that branch and is left alone.
    """
    found = []
    names = branch_names(doc)
    for match in word_matches(doc.data, needle):
        held = doc.table_at(match.start)
        if held is not None:
            table, row = held
            branch = table.column("branch")
            if branch is None:
                found.append(Occurrence(match.start, match.end, "table", True, "markdown-it"))
            else:
                name = plain_text(doc.cell_text(row.cells[branch])) if branch < len(row.cells) else "?"
                name = re.sub(r"[^\w.\-/]+$", "", name)  # drop a trailing "this branch" arrow
                found.append(Occurrence(match.start, match.end, "branch table", False, "markdown-it",
                                        f"row of branch '{name}' in a branch table (readme-branch-table updates those)"))
            continue
        span = innermost(doc.spans, match.start, match.end)
        prose = innermost([s for s in doc.spans if s.kind == "prose"], match.start, match.end)
        about = _describes(doc, prose, names) if prose is not None else None
        if span is None:
            found.append(Occurrence(match.start, match.end, "other", False, "markdown-it", "not in prose, a link or a code block"))
        elif about is not None:
            found.append(Occurrence(match.start, match.end, "branch description", False, "markdown-it",
                                    f"describes branch '{about}' (named in a branch table)"))
        else:
            found.append(Occurrence(match.start, match.end, _WHERE[span.kind], True, "markdown-it"))
    return found


def parse_document(data: bytes, path: str = "<memory>") -> MarkdownDocument:
    """Parse Markdown bytes; Markdown has no syntax errors, so `problems` is always empty."""
    return MarkdownDocument(path=path, data=data, parser=parse_document)
