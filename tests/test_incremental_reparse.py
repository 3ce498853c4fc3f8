"""Incremental re-parsing after edits must give exactly the tree a fresh parse gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pinshift.demo.matrix import OLD_REV, render_recipe, variants
from pinshift.edits import Edit, apply_edits, apply_to_document, normalize_edits
from pinshift.syntax.document import parse_document

SOURCE = render_recipe(variants()[3], OLD_REV).encode()
CRLF = SOURCE.replace(b"\n", b"\r\n")


def _shape(node) -> list:
    """Every node's type, byte range and point range, depth first."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append((n.type, n.start_byte, n.end_byte, n.start_point, n.end_point, n.is_missing))
        stack.extend(reversed(n.children))
    return out


replacements = st.sampled_from([b"", b"x", b"\n", b"\r\n  ", b"foo.bar", b'"s"', b"''\n  a\n''", b"{", b";", b"\xe9"])


@st.composite
def edit_sets(draw, data: bytes):
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), min_size=2, max_size=8, unique=True)))
    edits = []
    for start, end in zip(cuts[::2], cuts[1::2]):
        end = min(end, start + draw(st.integers(0, 12)))
        edits.append(Edit(start, end, draw(replacements), "random"))
    return edits


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_incremental_tree_equals_fresh_parse(data):
    source = data.draw(st.sampled_from([SOURCE, CRLF]))
    edits = normalize_edits(data.draw(edit_sets(source)))
    doc = parse_document(source, "r.nix")
    new = apply_edits(source, edits)
    incremental = doc.reparse(new, edits)
    fresh = parse_document(new, "r.nix")
    assert incremental.data == new
    assert _shape(incremental.root) == _shape(fresh.root)
    assert [p.key for p in incremental.problems] == [p.key for p in fresh.problems]
    # the original document is untouched by the incremental edit
    assert _shape(doc.root) == _shape(parse_document(source, "r.nix").root)


def test_apply_to_document_reports_new_positions():
    doc = parse_document(b'{ a = "x";\n  b = 1; }\n', "f.nix")
    edits = [Edit(7, 8, b"longer\nvalue", "grow")]
    result = apply_to_document(doc, edits)
    b_node = result.root.children[0].named_children[0].named_children[1]
    assert result.text(b_node).startswith(b"b = 1")
    assert b_node.start_point == (2, 2)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_many_edits_told_as_one_still_give_the_fresh_tree(data):
    """Beyond EXACT_EDITS edits the tree is told of one edit spanning them (each told alone costs a walk to it)."""
    from pinshift.syntax.document import EXACT_EDITS

    source = data.draw(st.sampled_from([SOURCE, CRLF]))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(source)), min_size=2 * EXACT_EDITS + 2,
                                     max_size=4 * EXACT_EDITS, unique=True)))
    edits = normalize_edits([Edit(start, min(end, start + 6), data.draw(replacements), "random")
                             for start, end in zip(cuts[::2], cuts[1::2])])
    assert len(edits) > EXACT_EDITS
    doc = parse_document(source, "r.nix")
    doc.problems  # known: the re-parsed document checks Nix's rules only where it changed
    new = apply_edits(source, edits)
    incremental = doc.reparse(new, edits)
    fresh = parse_document(new, "r.nix")
    assert _shape(incremental.root) == _shape(fresh.root)
    assert [str(p) for p in incremental.problems] == [str(p) for p in fresh.problems]
