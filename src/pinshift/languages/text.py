"""The byte-faithful base of every non-Nix document: original bytes, lines, positions.

Markdown, Python, TOML and shell parsers need text to parse, but pinshift never
writes decoded text back: each parser decodes a copy only to find structure and
reports what it found as byte ranges into `TextDocument.data`. Positions,
locations and line texts are the Nix Document's own methods, so every message
looks the same whatever the language.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from pinshift.syntax.document import Document as _NixDocument
from pinshift.syntax.problems import Problem


@dataclass(frozen=True)
class Span:
    """A byte range of one kind ("string", "comment", "code", "link", "prose", "value", "word")."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Occurrence:
    """One whole-word occurrence of a needle: where, what it sits in, and whether a step may edit it.

    `parser` names what decided (`libcst`, `tomlkit`, `markdown-it`, `text`), for reports.
    """

    start: int
    end: int
    where: str
    editable: bool
    parser: str
    reason: str = ""


def word_matches(data: bytes, needle: bytes) -> list[Span]:
    """Every occurrence of `needle` not glued to a letter, digit or `_` on either side.

    A revision inside a longer one (`6a030d5` in `6a030d535...`) is not a match.
    """
    if not needle:
        return []
    pattern = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(needle) + rb"(?![A-Za-z0-9_])")
    return [Span(m.start(), m.end(), "word") for m in pattern.finditer(data)]


def innermost(spans, start: int, end: int) -> Span | None:
    """The narrowest span holding bytes [start, end)."""
    holding = [s for s in spans if s.start <= start and end <= s.end]
    return min(holding, key=lambda s: s.end - s.start) if holding else None


@dataclass
class TextDocument:
    """A parsed non-Nix file; subclasses add the spans their steps need."""

    path: str
    data: bytes
    problems: tuple[Problem, ...] = field(default=(), repr=False)

    position = _NixDocument.position
    line_text = _NixDocument.line_text
    location = _NixDocument.location

    # Set by each language module: how to parse bytes again after edits.
    parser: Callable[[bytes, str], TextDocument] | None = field(default=None, repr=False, compare=False)

    def reparse(self, data: bytes, edits=()) -> TextDocument:
        """A fresh parse of `data` (non-Nix parsers have no incremental mode)."""
        return self.parser(data, self.path)

    @cached_property
    def lines(self) -> list[tuple[int, int]]:
        """(start, end) byte offsets of each line, end before its `\\r\\n` or `\\n`."""
        out = []
        start = 0
        data = self.data
        while start <= len(data):
            end = data.find(b"\n", start)
            if end < 0:
                if start < len(data):
                    out.append((start, len(data)))
                break
            stop = end - 1 if end > start and data[end - 1 : end] == b"\r" else end
            out.append((start, stop))
            start = end + 1
        return out

    def problem(self, offset: int, message: str) -> Problem:
        """A syntax problem at `offset`, shaped like the Nix parser's."""
        line, column = self.position(offset)
        return Problem(self.path, offset, line, column, message, self.line_text(offset))


def decode(data: bytes) -> str:
    """Text for a parser to read; undecodable bytes become lone surrogates and keep their count."""
    return data.decode("utf-8", "surrogateescape")


def char_to_byte_offsets(line: str, encoding: str = "utf-8") -> list[int]:
    """Byte offset of each character of `line` (plus its end), as encoded back to the original bytes.

    libcst and markdown-it count characters; pinshift edits bytes. `é` is one
    character but two bytes, so column 3 of `"é1"` is byte 4.
    """
    offsets = [0]
    total = 0
    for char in line:
        total += len(char.encode(encoding, "surrogateescape"))
        offsets.append(total)
    return offsets
