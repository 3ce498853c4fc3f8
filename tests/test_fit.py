"""pinshift.languages.fit: any line fits any width, its words kept in order; a diff's line is never touched."""

from __future__ import annotations

import doctest

from hypothesis import given, settings
from hypothesis import strategies as st

from pinshift.languages import fit
from pinshift.languages.fit import Verbatim, cells, cut_middle, fit_line, fit_table, output_width, reflow

WORDS = st.lists(st.text(alphabet=st.sampled_from("ab;,:(→…/.-_é世"), min_size=1, max_size=70), min_size=1,
                 max_size=30)


def test_the_examples_hold():
    assert doctest.testmod(fit).failed == 0


@settings(max_examples=300, deadline=None)
@given(WORDS, st.integers(min_value=1, max_value=120), st.sampled_from(["", "  ", "builds  "]))
def test_every_piece_fits_and_no_word_is_lost(words, width, lead):
    line = lead + " ".join(words)
    pieces = fit_line(line, width)
    width = max(width, fit.MIN_WIDTH)
    assert all(cells(piece) <= width for piece in pieces)
    if all(cells(word) <= width // 2 for word in words):  # no word had to be cut: the same words, in order
        assert " ".join(piece.strip() for piece in pieces).split() == line.split()


@settings(max_examples=200, deadline=None)
@given(WORDS, st.integers(min_value=20, max_value=120))
def test_keep_tokens_cuts_nothing_and_only_a_lone_token_is_wider(words, width):
    line = " ".join(words)
    pieces = fit_line(line, width, keep_tokens=True)
    assert " ".join(pieces).split() == line.split()
    assert all(cells(piece) <= width or len(piece.split()) == 1 for piece in pieces)


@given(st.text(min_size=1, max_size=200), st.integers(min_value=2, max_value=100))
def test_cut_middle_keeps_both_ends(token, width):
    cut = cut_middle(token, width)
    assert cells(cut) <= width
    if cells(token) > width:
        head, _, tail = cut.partition("…")
        assert token.startswith(head) and token.endswith(tail)


def test_a_diff_line_and_a_coloured_line():
    line = "+    url = \"https://github.com/NixOS/nixpkgs/archive/0182a361324364ae3f436a63005877674cf45efb.tar.gz\";"
    assert fit_line(Verbatim(line), 40) == [line]
    coloured = "\x1b[33mwarning: " + "x " * 40 + "\x1b[0m"
    pieces = fit_line(coloured, 30)
    assert len(pieces) > 1 and all(p.startswith("\x1b[33m") and p.endswith("\x1b[0m") for p in pieces)
    assert all(cells(p) <= 30 for p in pieces)


def test_tables_go_in_blocks_repeating_the_first_column():
    rows = [["gpu"] + [f"isa{i}" for i in range(12)]] + [[f"sm{n}"] + ["1"] * 12 for n in (61, 75, 90)]
    lines = fit_table(rows, 30)
    assert all(cells(line) <= 30 for line in lines) and "" in lines
    heads = [line.split()[0] for line in lines if line]
    assert heads.count("gpu") == len([line for line in lines if line.startswith("gpu")]) > 1


def test_prose_reflows_only_where_it_does_not_fit():
    text = ["A paragraph that is short.", "", "  - an item whose words run on", "    past the width here"]
    assert reflow(text, 80) == text
    assert reflow(text, 24) == ["A paragraph that is", "short.", "", "  - an item whose words", "    run on past the",
                                "    width here"]


def test_the_width_is_columns_else_the_terminal_else_100(monkeypatch):
    monkeypatch.setenv("COLUMNS", "72")
    assert output_width() == 72
    monkeypatch.setenv("COLUMNS", "5")
    assert output_width() == fit.MIN_WIDTH
    monkeypatch.delenv("COLUMNS")
    assert output_width(False) == 100
