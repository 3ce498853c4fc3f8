"""TOML documents: only string values are spans; tomlkit's own view of the values is the check."""

from __future__ import annotations

from pathlib import Path

from pinshift import languages
from pinshift.languages.tomlfile import parse_document, scan_strings

DOCS = Path(__file__).parent / "fixtures" / "docs"


def values(doc):
    return [doc.data[s.start : s.end] for s in doc.spans]


def test_registered_by_suffix():
    assert languages.language_for("manifest.toml") == "toml"


def test_string_values_in_tables_arrays_inline_tables_and_multiline():
    doc = parse_document((DOCS / "manifest.toml").read_bytes(), "manifest.toml")
    assert doc.problems == ()
    assert values(doc) == [
        b"6a030d535719c5190187c4cec156f335e95e3211",
        b"https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz",
        b"6a030d5",
        b"\nBuilt against nixpkgs 6a030d5.\n",
        b"cuda12_9",
        b"6a030d5",
    ]


def test_keys_table_names_and_comments_are_not_values():
    data = b'"k" = "v"  # "c"\n[t."q"]\na.\'b\' = \'w\'\nesc = "x\\"y"\nq = """z""""\n'
    assert [(data[s:e], v) for s, e, v in scan_strings(data)] == [
        (b'"k"', False), (b'"v"', True), (b'"q"', False), (b"'b'", False), (b"'w'", True),
        (b'"x\\"y"', True), (b'"""z""""', True),
    ]
    assert values(parse_document(data)) == [b"v", b"w", b'x\\"y', b'z"']


def test_invalid_toml_is_a_problem():
    doc = parse_document(b"a = \n", "bad.toml")
    (problem,) = doc.problems
    assert str(problem).startswith("bad.toml:1:4: invalid TOML")
    assert doc.spans == ()


def test_pin_occurrences_only_in_values():
    doc = parse_document((DOCS / "manifest.toml").read_bytes(), "manifest.toml")
    found = languages.occurrences(doc, "toml", b"6a030d5")
    assert [(doc.position(o.start)[0], o.editable) for o in found] == [
        (1, False), (5, True), (7, False), (9, True), (11, True),
    ]
