"""The one-pass edit engine: splice, collapse duplicates, name both sides of an overlap, refuse new problems."""

from __future__ import annotations

import keyword
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from pinshift.edits import Edit, apply_edits, apply_to_document, normalize_edits
from pinshift.errors import EditConflict, EditRefused
from pinshift.syntax.document import parse_document
from pinshift.syntax.queries import strings, walk
from pinshift.syntax.scopes import inherited_binder, references

SYNTAX = FIXTURES / "syntax"


def test_many_edits_apply_in_one_pass_against_original_offsets():
    data = b"{ a = 1; b = 2; }\n"
    edits = [Edit(13, 14, b"20", "b"), Edit(2, 3, b"alpha", "rename a"), Edit(17, 17, b" # end", "insert")]
    assert apply_edits(data, edits) == b"{ alpha = 1; b = 20; } # end\n"


def test_identical_duplicates_collapse():
    data = b"x = 1;"
    edit = Edit(4, 5, b"2", "bump")
    assert apply_edits(data, [edit, edit, Edit(4, 5, b"2", "same bytes, other step")]) == b"x = 2;"
    assert len(normalize_edits([edit, edit])) == 1


def test_insertion_at_the_start_of_a_replacement_is_not_an_overlap():
    assert apply_edits(b"abcd", [Edit(1, 3, b"X", "replace"), Edit(1, 1, b"+", "insert")]) == b"a+Xd"


def test_overlapping_edits_name_both_with_location_and_reason():
    doc = parse_document(b"{\n  version = \"2.9.1\";\n}\n", "pkgs/torch.nix")
    first = Edit(15, 20, b"2.10.0", "metadata: version bump")
    second = Edit(17, 20, b"x", "replace-in-strings: 9.1")
    with pytest.raises(EditConflict) as caught:
        apply_to_document(doc, [second, first])
    message = str(caught.value)
    assert message == (
        "overlapping edits: pkgs/torch.nix:2:14 (metadata: version bump) "
        "and pkgs/torch.nix:2:16 (replace-in-strings: 9.1)"
    )
    assert caught.value.exit_code == 1


def test_two_different_insertions_at_one_point_conflict():
    with pytest.raises(EditConflict, match=r"byte 3 \(one\) and byte 3 \(two\)"):
        apply_edits(b"abcdef", [Edit(3, 3, b"1", "one"), Edit(3, 3, b"2", "two")])


def test_edit_past_the_end_is_an_error():
    with pytest.raises(EditConflict, match="past end of file"):
        apply_edits(b"abc", [Edit(2, 9, b"x", "too far")])


def test_backwards_range_is_rejected():
    with pytest.raises(ValueError):
        Edit(5, 4, b"")


def test_new_problem_refuses_the_whole_change_and_leaves_the_input_unchanged():
    data = b'{ a = "x"; b = 1; }\n'
    doc = parse_document(data, "r.nix")
    good = Edit(15, 16, b"2", "fine on its own")
    breaking = Edit(9, 10, b"", "drops a semicolon")
    with pytest.raises(EditRefused) as caught:
        apply_to_document(doc, [good, breaking])
    assert str(caught.value).startswith("r.nix:1:")
    assert "file left unchanged" in str(caught.value)
    assert doc.data == data and doc.problems == ()


def test_existing_problems_do_not_block_an_unrelated_edit():
    doc = parse_document(b"{ a = 1; }\n{ b = ; }\n", "old.nix")
    assert len(doc.problems) == 1
    result = apply_to_document(doc, [Edit(6, 7, b"2", "bump")])
    assert result.data == b"{ a = 2; }\n{ b = ; }\n"


def test_no_edits_returns_the_same_document():
    doc = parse_document(b"1\n")
    assert apply_to_document(doc, []) is doc


# --- property: random edits to identifiers and string fragments --------------------------

NIX_KEYWORDS = {"if", "then", "else", "assert", "with", "let", "in", "rec", "inherit", "or"}
FIXTURE_FILES = sorted((SYNTAX / "valid").glob("*.nix")) + [SYNTAX / "invalid" / "bom.nix"]
IDENTIFIER = st.from_regex(r"\A[a-z_][a-zA-Z0-9_]{0,8}\Z").filter(
    lambda name: name not in NIX_KEYWORDS and not keyword.iskeyword(name)
)
# no `"`, `\`, `$` or `'`: whatever these spell, the string stays one literal fragment
FRAGMENT = st.text(st.characters(blacklist_characters="\"\\$'\r\0", blacklist_categories=("Cs",)), max_size=12)


def editable_nodes(doc):
    """Identifiers and literal string fragments: the tokens migration steps rewrite."""
    nodes = list(walk(doc.root, "identifier")) + [f for s in strings(doc) for f in s.literals()]
    return sorted((n for n in nodes if n.end_byte > n.start_byte), key=lambda n: n.start_byte)


@st.composite
def edited_fixture(draw):
    path = draw(st.sampled_from(FIXTURE_FILES))
    doc = parse_document(path.read_bytes(), path.name)
    nodes = editable_nodes(doc) or [doc.root.child(0) or doc.root]
    chosen = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=6, unique_by=lambda n: n.start_byte))
    edits = []
    for node in chosen:
        if node.type not in ("identifier", "string_fragment"):
            continue  # a fixture with nothing to edit (`{ }: { }`): no edits at all
        text = draw(IDENTIFIER if node.type == "identifier" else FRAGMENT)
        edits.append(Edit(node.start_byte, node.end_byte, text.encode(), f"random {node.type}"))
    return doc, edits


def _refusal_is_justified(doc, edits, refusal: EditRefused) -> bool:
    """A refusal names a problem the edited bytes really have: a new syntax problem (by a fresh
    parse), or a reference that a full resolution of the file finds free after and bound before."""
    fresh = parse_document(apply_edits(doc.data, edits), doc.path)
    if Counter(p.key for p in fresh.problems) - Counter(p.key for p in doc.problems):
        return True
    name = str(refusal).split("'")[1]
    return _free_uses(fresh, name) > _free_uses(doc, name)


def _free_uses(doc, name: str) -> int:
    """References to `name` no binder reaches, by a walk of every variable and `inherit`."""
    count = sum(b.kind == "free" for _, b in references(doc, name))
    for inherit in walk(doc.root, "inherit"):
        for attr in inherit.child_by_field_name("attrs").children_by_field_name("attr"):
            if doc.text(attr) == name.encode() and inherited_binder(doc, inherit, attr).kind == "free":
                count += 1
    return count


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_fixture())
def test_random_token_edits_keep_every_other_byte_and_reparse(case):
    doc, edits = case
    try:
        result = apply_to_document(doc, edits)  # raises EditRefused if the result gained a problem
    except EditRefused as refusal:  # a renamed binder (`a` -> `b` beside a `b`) can make a duplicate
        assert _refusal_is_justified(doc, edits, refusal), refusal
        return
    out = result.data
    cursor_in = cursor_out = 0
    for edit in sorted(edits):
        kept = doc.data[cursor_in : edit.start]
        assert out[cursor_out : cursor_out + len(kept)] == kept
        cursor_out += len(kept)
        assert out[cursor_out : cursor_out + len(edit.replacement)] == edit.replacement
        cursor_out += len(edit.replacement)
        cursor_in = edit.end
    assert out[cursor_out:] == doc.data[cursor_in:]
    fresh = parse_document(out, doc.path)
    assert str(fresh.root) == str(result.root)  # the incremental re-parse is the fresh parse
    assert [p.key for p in fresh.problems] == [p.key for p in doc.problems]
