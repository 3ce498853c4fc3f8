"""Python documents via libcst: string/f-string/comment spans as byte offsets, including non-ASCII lines."""

from __future__ import annotations

from pathlib import Path

from pinshift import languages
from pinshift.languages.python import parse_document

DOCS = Path(__file__).parent / "fixtures" / "docs"


def texts(doc, kind):
    return [doc.data[s.start : s.end] for s in doc.spans if s.kind == kind]


def test_registered_by_suffix():
    assert languages.language_for("scripts/fetch_pin.py") == "python"


def test_non_ascii_characters_before_a_string_shift_byte_offsets():
    data = 'é = "ü1"  # ç ok\ny = f"a{b}é-{c!r}z"\n'.encode()
    doc = parse_document(data)
    assert texts(doc, "string") == ["ü1".encode(), b"a", "é-".encode(), b"z"]
    assert texts(doc, "comment") == ["# ç ok".encode()]
    first = doc.spans[0]
    assert (first.start, first.end) == (6, 9)  # characters 5..7, bytes 6..9: `é` and `ü` are two bytes each


def test_string_prefixes_and_triple_quotes_are_excluded_from_contents():
    doc = parse_document(b"a = rb'x'\nb = '''y\nz'''\nc = U\"w\"\n")
    assert texts(doc, "string") == [b"x", b"y\nz", b"w"]


def test_bom_and_encoding_cookie():
    assert texts(parse_document(b"\xef\xbb\xbfx = '\xc3\xa9abc'\n"), "string") == [b"\xc3\xa9abc"]
    latin = parse_document(b"# -*- coding: latin-1 -*-\nx = '\xe9\xe9abc'\n")
    assert texts(latin, "string") == [b"\xe9\xe9abc"]


def test_crlf_lines():
    doc = parse_document(b"x = 'a'\r\ny = 'b'  # c\r\n")
    assert texts(doc, "string") == [b"a", b"b"] and texts(doc, "comment") == [b"# c"]


def test_syntax_error_is_a_problem_not_an_exception():
    doc = parse_document(b"x = 1\ndef broken(:\n", "bad.py")
    (problem,) = doc.problems
    assert str(problem).startswith("bad.py:2:1: Python syntax error")
    assert doc.spans == ()


def test_pin_occurrences_strings_yes_comments_only_when_asked_code_never():
    doc = parse_document((DOCS / "fetch_pin.py").read_bytes(), "fetch_pin.py")
    found = languages.occurrences(doc, "python", b"6a030d5")
    assert [(doc.position(o.start)[0], o.where, o.editable) for o in found] == [
        (8, "string", True),
        (8, "comment", False),
    ]
    full = b"6a030d535719c5190187c4cec156f335e95e3211"
    assert [(doc.position(o.start)[0], o.where) for o in languages.occurrences(doc, "python", full) if o.editable] == [
        (5, "string"), (7, "string"),
    ]
    with_comments = languages.occurrences(doc, "python", full, include_comments=True)
    assert [(doc.position(o.start)[0], o.editable) for o in with_comments] == [(4, True), (5, True), (7, True)]
