"""Document.retokened: the proof re-parse is skipped only where a fresh parse would give the same tree.

For edits that keep every token's kind (plain text inside a string value, a select's attribute
segment renamed), the tree is only moved (`tree.edit`); these tests check, on the demo's recipes
and random edits, that it equals a fresh parse node for node and that the result has no problem,
and that edits which could change the structure still go through the re-parse and are refused.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pinshift.demo.matrix import OLD_REV, render_recipe, variants
from pinshift.edits import Edit, apply_edits, apply_to_document
from pinshift.errors import EditRefused
from pinshift.syntax.document import parse_document

RECIPES = [render_recipe(v, OLD_REV).encode() for v in variants()[:12]]
PLAIN = st.text(alphabet="abcXYZ0189 ._/:+=@,%-", max_size=6).map(str.encode)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_'-]{0,8}", fullmatch=True).map(str.encode)


def shape(node) -> list[tuple[str, int, int]]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append((current.type, current.start_byte, current.end_byte))
        stack.extend(reversed(current.children))
    return out


def leaves(doc, kind: str) -> list:
    return [n for n in _all(doc.root) if n.type == kind and not n.child_count]


def _all(node):
    yield node
    for child in node.children:
        yield from _all(child)


def checked(doc, edits):
    assert doc.problems == ()
    result = doc.retokened(apply_edits(doc.data, edits), edits)
    if result is not None:
        fresh = parse_document(result.data, doc.path)
        assert shape(result.root) == shape(fresh.root)
        assert fresh.problems == ()
    return result


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(RECIPES))), st.data())
def test_plain_text_in_string_values_keeps_the_tree(index, data):
    doc = parse_document(RECIPES[index], "r.nix")
    assert doc.problems == ()
    fragment = data.draw(st.sampled_from(leaves(doc, "string_fragment")))
    start = data.draw(st.integers(fragment.start_byte, fragment.end_byte))
    end = data.draw(st.integers(start, fragment.end_byte))
    checked(doc, [Edit(start, end, data.draw(PLAIN), "test")])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(RECIPES))), st.data())
def test_renamed_select_segments_keep_the_tree(index, data):
    doc = parse_document(RECIPES[index], "r.nix")
    identifier = data.draw(st.sampled_from(leaves(doc, "identifier")))
    edit = Edit(identifier.start_byte, identifier.end_byte, data.draw(NAMES), "test")
    checked(doc, [edit])


def test_the_seed_steps_edits_are_all_retokened():
    doc = parse_document(RECIPES[0], "r.nix")
    revision = doc.data.index(OLD_REV.encode())
    select = doc.data.index(b"python3Packages")
    marker = doc.data.index(b"echo 1 > $out/.metadata-rev") + len(b"echo ")
    edits = [Edit(revision, revision + 40, b"0182a361324364ae3f436a63005877674cf45efb", "pin"),
             Edit(select, select + len(b"python3Packages"), b"python313Packages", "rename"),
             Edit(marker, marker + 1, b"2", "bump")]
    for edit in edits:
        assert checked(doc, [edit]) is not None
    assert checked(doc, edits) is not None


@pytest.mark.parametrize("before, find, replacement", [
    (b'{ a = "x"; }', b"x", b'"'),               # would end the string
    (b'{ a = "x"; }', b"x", b"${"),              # would open an interpolation
    (b"{ a = ''\n  x\n''; }", b"x", b"''"),     # would end the indented string
    (b'{ a = "x"; }', b"x", b""),                # the fragment would vanish
    (b'{ "x" = 1; }', b"x", b"y"),              # a quoted attribute name is a name
    (b"{ a = p.x; }", b"x", b"in"),             # a keyword
    (b"{ x = 1; }", b"x", b"y"),                # a binding's name (could duplicate)
    (b"{ a = x; }", b"x", b"y"),                # a variable (could unbind)
])
def test_edits_that_could_change_the_structure_are_re_parsed(before, find, replacement):
    doc = parse_document(before, "r.nix")
    assert doc.problems == ()
    start = before.index(find, 2)
    assert doc.retokened(before[:start] + replacement + before[start + len(find):],
                         [Edit(start, start + len(find), replacement, "t")]) is None


def test_a_breaking_edit_is_still_refused():
    doc = parse_document(b'{ a = "x"; }\n', "r.nix")
    doc.problems
    start = doc.data.index(b"x")
    with pytest.raises(EditRefused, match="break the file's syntax"):
        apply_to_document(doc, [Edit(start, start + 1, b'"', "t")])
