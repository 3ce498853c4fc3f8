"""Shell documents: whole-word, textual matches only."""

from __future__ import annotations

from pathlib import Path

from pinshift import languages
from pinshift.languages.shell import parse_document

DOCS = Path(__file__).parent / "fixtures" / "docs"


def test_registered_by_suffix():
    assert languages.language_for("scripts/prefetch.sh") == "shell"
    assert languages.language_for("scripts/prefetch.bash") == "shell"
    assert languages.language_for("scripts/prefetch") is None


def test_whole_words_only():
    doc = parse_document(b"REV=6a030d5 x6a030d5 6a030d5ff 6a030d5_x (6a030d5)\n")
    assert [(s.start, s.end) for s in doc.word_matches(b"6a030d5")] == [(4, 11), (42, 49)]


def test_pin_occurrences_are_textual():
    doc = parse_document((DOCS / "prefetch.sh").read_bytes(), "prefetch.sh")
    found = languages.occurrences(doc, "shell", b"6a030d5")
    assert [(doc.position(o.start)[0], o.where, o.parser, o.editable) for o in found] == [
        (2, "word", "text", True), (6, "word", "text", True),
    ]
    assert doc.problems == () and doc.location(found[0].start) == "prefetch.sh:2:32"
