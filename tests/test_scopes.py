"""Lexical scope resolution: which binder each reference of a name refers to."""

from __future__ import annotations

import pytest

from pinshift.syntax.document import parse_document
from pinshift.syntax.queries import walk
from pinshift.syntax.scopes import inherited_binder, referenced_names, references, references_to


def kinds(source: str, name: str = "p") -> list[str]:
    """The binder kind of every reference to `name`, in source order."""
    doc = parse_document(source.encode())
    return [binder.kind for _, binder in references(doc, name)]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("{ p, q }: p", ["formal"]),
        ("{ q ? p, p }: q", ["formal"]),  # a default sees the other formals
        ("p: p", ["argument"]),
        ("p@{ q }: p", ["argument"]),
        ("let p = 1; in p", ["let"]),
        ("let p.x = 1; in p", ["let"]),  # a dotted binding binds its first segment
        ("let inherit (x) p; in p", ["let"]),
        ("rec { p = 1; q = p; }", ["rec"]),
        ("{ p = 1; q = p; }", ["free"]),  # a plain attrset binds nothing
        ("with x; p", ["with"]),
        ("{ p }: with x; p", ["formal"]),  # lexical bindings win over with
        ("with p; q", ["free"]),  # the environment is outside the with
        ("p", ["free"]),
        ("{ p }: let p = 1; in p", ["let"]),  # the nearest binder shadows
        ("{ p }: [ (p: p) p ]", ["argument", "formal"]),
        ("let f = { p ? p }: p; in f", ["formal", "formal"]),
    ],
)
def test_each_reference_finds_its_binder(source, expected):
    assert kinds(source) == expected


def test_binder_points_at_the_binding_identifier():
    doc = parse_document(b"{ p }: let q = p; in q")
    (variable, binder), = references(doc, "p")
    assert binder.kind == "formal" and doc.text(binder.name_node) == b"p" and binder.name_node.start_byte == 2


def test_inherit_reads_the_scope_around_its_let():
    doc = parse_document(b"{ p }: let inherit p; in p")
    inherit = next(walk(doc.root, "inherit"))
    attr = inherit.child_by_field_name("attrs").child_by_field_name("attr")
    assert inherited_binder(doc, inherit, attr).kind == "formal"
    assert [b.kind for _, b in references(doc, "p")] == ["let"]  # the body's p is the let's


def test_the_missing_name_of_an_empty_inherit_is_no_reference():
    """`inherit;` parses with a zero-width MISSING identifier; searching for its empty name never ends."""
    doc = parse_document(b"x: { inherit; a = x; }")
    assert referenced_names(doc, doc.root) == {"x"}
    assert references_to(doc, "") == []
