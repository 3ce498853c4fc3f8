"""TOML files through tomlkit: the byte ranges of string values (never keys, comments or table names).

tomlkit validates the file and says which strings are values, but keeps no
offsets. A small scanner finds every string token's bytes and whether it sits
in key or value position; the values it finds must be exactly the string
values tomlkit parsed (as raw text, quotes included), otherwise the file is
refused rather than edited on a guess.

Examples:
    `url = "https://x/6a030d5.tar.gz"  # 6a030d5` gives one "value" span, the
    text between the quotes; the comment and the key are not spans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import tomlkit
from tomlkit import container, items
from tomlkit.exceptions import ParseError

from pinshift.languages.text import Occurrence, Span, TextDocument, decode, innermost, word_matches

_SPACE = b" \t\r"
_BARE_END = b" \t\r\n,]}#=\"'"


@dataclass
class TomlDocument(TextDocument):
    """A TOML file with the content ranges of its string values."""

    spans: tuple[Span, ...] = ()

    def strings(self) -> list[Span]:
        return list(self.spans)


def _string_end(data: bytes, start: int) -> int:
    """Offset just past the string token starting at `start` (basic, literal, multi-line)."""
    quote = data[start : start + 1]
    if data.startswith(quote * 3, start):
        close = data.find(quote * 3, start + 3)
        while quote == b'"' and close > 0 and _escaped(data, close, start + 3):
            close = data.find(quote * 3, close + 1)
        if close < 0:
            return len(data)
        end = close + 3
        while end < len(data) and data[end : end + 1] == quote and end - close < 5:
            end += 1
        return end
    index = start + 1
    while index < len(data) and data[index : index + 1] not in (quote, b"\n"):
        index += 2 if quote == b'"' and data[index : index + 1] == b"\\" else 1
    return index + 1


def _escaped(data: bytes, at: int, floor: int) -> bool:
    backslashes = 0
    while at - 1 - backslashes >= floor and data[at - 1 - backslashes : at - backslashes] == b"\\":
        backslashes += 1
    return backslashes % 2 == 1


def scan_strings(data: bytes) -> list[tuple[int, int, bool]]:
    """(token start, token end, is_value) of every string token, in source order."""
    found = []
    stack: list[bytes] = []  # b"[" array, b"{" inline table
    expect_value = False
    i = 0
    while i < len(data):
        c = data[i : i + 1]
        in_value = expect_value or (stack and stack[-1] == b"[")
        if c in _SPACE:
            i += 1
        elif c == b"\n":
            expect_value = expect_value and bool(stack)
            i += 1
        elif c == b"#":
            end = data.find(b"\n", i)
            i = len(data) if end < 0 else end
        elif c in (b'"', b"'"):
            end = _string_end(data, i)
            found.append((i, end, bool(in_value)))
            if in_value and (not stack or stack[-1] == b"{"):
                expect_value = False
            i = end
        elif c == b"=":
            expect_value = True
            i += 1
        elif c in (b"[", b"{") and in_value:
            stack.append(c)
            expect_value = False
            i += 1
        elif c == b"[":  # a table header: quoted parts are keys
            i += 1
            while i < len(data) and data[i : i + 1] not in (b"]", b"\n"):
                if data[i : i + 1] in (b'"', b"'"):
                    end = _string_end(data, i)
                    found.append((i, end, False))
                    i = end
                else:
                    i += 1
        elif c in (b"]", b"}") and stack:
            stack.pop()
            expect_value = False
            i += 1
        elif c == b",":
            expect_value = False
            i += 1
        else:  # bare key, number, boolean, date (or a stray `]`: always advance)
            i += 1
            while i < len(data) and data[i : i + 1] not in _BARE_END:
                i += 1
            if in_value and (not stack or stack[-1] == b"{"):
                expect_value = False
    return found


def _tomlkit_strings(item) -> Iterator[str]:
    if isinstance(item, items.String):
        yield item.as_string()
    elif isinstance(item, container.Container):
        for _, value in item.body:
            yield from _tomlkit_strings(value)
    elif isinstance(item, (items.Table, items.InlineTable)):
        yield from _tomlkit_strings(item.value)
    elif isinstance(item, items.AoT):
        for table in item.body:
            yield from _tomlkit_strings(table)
    elif isinstance(item, items.Array):
        for value in item:
            yield from _tomlkit_strings(value)


def _content(data: bytes, start: int, end: int) -> Span:
    """The bytes between the quotes (`""""x""""`: extra closing quotes belong to the content)."""
    quote = 3 if data[start : start + 3] in (b'"""', b"'''") else 1
    return Span(start + quote, max(start + quote, end - quote), "value")


def occurrences(doc: TomlDocument, needle: bytes, include_comments: bool = False) -> list[Occurrence]:
    """Whole-word occurrences: editable inside string values only (never keys, table names, comments)."""
    found = []
    for match in word_matches(doc.data, needle):
        if innermost(doc.spans, match.start, match.end) is not None:
            found.append(Occurrence(match.start, match.end, "string value", True, "tomlkit"))
        else:
            found.append(Occurrence(match.start, match.end, "other", False, "tomlkit", "not inside a string value"))
    return found


def parse_document(data: bytes, path: str = "<memory>") -> TomlDocument:
    """Parse TOML bytes; invalid TOML (or strings pinshift cannot locate) becomes a problem."""
    doc = TomlDocument(path=path, data=data, parser=parse_document)
    try:
        parsed = tomlkit.parse(decode(data))
    except ParseError as error:
        line = min(max(error.line, 1), max(len(doc.lines), 1))
        offset = doc.lines[line - 1][0] + max(error.col - 1, 0) if doc.lines else 0
        doc.problems = (doc.problem(min(offset, len(data)), f"invalid TOML: {error.args[0] if error.args else error}"),)
        return doc
    tokens = [(s, e) for s, e, is_value in scan_strings(data) if is_value]
    expected = Counter(_tomlkit_strings(parsed))
    seen = Counter(decode(data[s:e]) for s, e in tokens)
    if seen != expected:
        doc.problems = (doc.problem(0, "pinshift cannot locate this file's TOML string values exactly; not edited"),)
        return doc
    doc.spans = tuple(_content(data, s, e) for s, e in tokens)
    return doc
