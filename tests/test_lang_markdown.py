"""Markdown documents: table cells as byte ranges, spans, positions, and which pin occurrences are editable."""

from __future__ import annotations

from pathlib import Path

from pinshift import languages
from pinshift.languages.markdown import parse_document, plain_text

DOCS = Path(__file__).parent / "fixtures" / "docs"


def test_registered_by_suffix():
    assert languages.language_for("docs/README.md") == "markdown"
    assert languages.language_for("notes.markdown") == "markdown"


def test_table_cells_are_exact_byte_ranges_with_crlf_and_no_final_newline():
    doc = parse_document((DOCS / "README-crlf.md").read_bytes(), "README.md")
    (table,) = doc.tables
    assert table.headers == ("branch", "pytorch", "nixpkgs pin")
    assert table.column("Nixpkgs Pin") == 2 and table.column("CUDA") is None
    cells = [[doc.cell_text(c) for c in row.cells] for row in table.rows]
    assert cells == [
        [b"`main` \xe2\xac\x85\xef\xb8\x8f", b"2.8.0", b"fe5e41d"],
        [b"`pytorch-2.9`", b"2.9.1", b"[6a030d5](https://github.com/NixOS/nixpkgs/tree/6a030d5)"],
    ]
    last = table.rows[-1]
    assert last.end == len(doc.data) and doc.data[last.start : last.end].startswith(b"| `pytorch-2.9`")


def test_escaped_pipe_stays_inside_its_cell():
    doc = parse_document(b"| a | b |\n|---|---|\n| x \\| y | `z` |\n")
    (table,) = doc.tables
    assert [doc.cell_text(c) for c in table.rows[0].cells] == [b"x \\| y", b"`z`"]


def test_tables_of_the_seed_shaped_readme():
    doc = parse_document((DOCS / "README.md").read_bytes(), "README.md")
    assert [t.headers[0] for t in doc.tables] == ["branch", "branch", "gpu architecture"]
    assert [len(t.rows) for t in doc.tables] == [6, 6, 2]
    assert doc.position(doc.tables[1].start) == (29, 1)


def test_plain_text_keeps_underscores_inside_words():
    assert plain_text(b"**`pytorch-2.10-cuda12_9`** \xe2\xac\x85\xef\xb8\x8f") == "pytorch-2.10-cuda12_9 ⬅️"
    assert plain_text(b"[`6a030d5`](https://x/6a030d5)") == "6a030d5"
    assert plain_text(b"__bold__") == "bold"


def test_spans_code_link_prose():
    data = b"# T\n\nsee [x](https://h/abc) now\n\n```sh\necho abc\n```\n\n| a |\n|---|\n| abc |\n"
    doc = parse_document(data)
    kinds = [(s.kind, data[s.start : s.end]) for s in doc.spans]
    assert kinds == [
        ("prose", b"# T"),
        ("prose", b"see [x](https://h/abc) now"),
        ("link", b"https://h/abc"),
        ("code", b"echo abc"),
    ]


def test_pin_occurrences_skip_rows_of_branch_tables():
    doc = parse_document((DOCS / "README.md").read_bytes(), "README.md")
    found = languages.occurrences(doc, "markdown", b"6a030d5")
    assert [(doc.position(o.start)[0], o.where, o.editable) for o in found] == [
        (13, "branch description", False),
        (21, "branch table", False),
        (32, "branch table", False),
        (33, "branch table", False),
        (47, "prose", True),
    ]
    assert found[0].reason == "describes branch 'pytorch-2.9' (named in a branch table)"
    assert found[1].reason == "row of branch 'pytorch-2.9-legacy' in a branch table (readme-branch-table updates those)"
    assert found[2].reason.startswith("row of branch 'pytorch-2.9' ")


def test_table_without_branch_column_is_editable():
    doc = parse_document(b"| Tool | Pin |\n|---|---|\n| nix | 6a030d5 |\n")
    (occurrence,) = languages.occurrences(doc, "markdown", b"6a030d5")
    assert occurrence.editable and occurrence.where == "table"


def test_reparse_after_edit_gives_a_markdown_document():
    doc = parse_document(b"| Branch |\n|---|\n| `a` |\n", "R.md")
    again = doc.reparse(b"| Branch |\n|---|\n| `a` |\n| `b` |\n")
    assert type(again) is type(doc) and len(again.tables[0].rows) == 2 and again.path == "R.md"
    assert doc.location(11) == "R.md:2:1" and doc.line_text(11) == "|---|"
