"""Shell scripts, matched textually: whole-word occurrences, with no parse to lean on.

Shell quoting and expansion are too dynamic to parse faithfully here, so a
script is plain bytes and a match must stand as a whole word (the bytes on
either side are not letters, digits or `_`). Steps say in their report that
such a change was textual.

Examples:
    In `REV=6a030d5 # 6a030d5abc`, `word_matches(doc, b"6a030d5")` finds the
    first occurrence only; `6a030d5abc` is a different word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pinshift.languages.text import Span, TextDocument


@dataclass
class ShellDocument(TextDocument):
    """A shell script: bytes and lines; matching is by whole word."""

    def word_matches(self, needle: bytes) -> list[Span]:
        return word_matches(self.data, needle)


def word_matches(data: bytes, needle: bytes) -> list[Span]:
    """Every occurrence of `needle` in `data` not glued to a letter, digit or `_` on either side."""
    if not needle:
        return []
    pattern = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(needle) + rb"(?![A-Za-z0-9_])")
    return [Span(m.start(), m.end(), "word") for m in pattern.finditer(data)]


def parse_document(data: bytes, path: str = "<memory>") -> ShellDocument:
    """A shell document; there is no syntax check, so `problems` is always empty."""
    return ShellDocument(path=path, data=data, parser=parse_document)
