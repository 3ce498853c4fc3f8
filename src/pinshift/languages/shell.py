"""Shell scripts, matched textually: whole-word occurrences, with no parse to lean on.

Shell quoting and expansion are too dynamic to parse faithfully here, so a
script is plain bytes and a match must stand as a whole word (the bytes on
either side are not letters, digits or `_`). Steps say in their report that
such a change was textual.

Examples:
    In `REV=6a030d5 # 6a030d5abc`, `doc.word_matches(b"6a030d5")` finds the
    first occurrence only; `6a030d5abc` is a different word.
"""

from __future__ import annotations

from dataclasses import dataclass

from pinshift.languages.text import Occurrence, Span, TextDocument, word_matches


@dataclass
class ShellDocument(TextDocument):
    """A shell script: bytes and lines; matching is by whole word."""

    def word_matches(self, needle: bytes) -> list[Span]:
        return word_matches(self.data, needle)


def occurrences(doc: ShellDocument, needle: bytes, include_comments: bool = False) -> list[Occurrence]:
    """Every whole-word occurrence, editable, reported as a textual match."""
    return [Occurrence(s.start, s.end, "word", True, "text") for s in word_matches(doc.data, needle)]


def parse_document(data: bytes, path: str = "<memory>") -> ShellDocument:
    """A shell document; there is no syntax check, so `problems` is always empty."""
    return ShellDocument(path=path, data=data, parser=parse_document)
