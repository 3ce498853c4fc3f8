"""Targeted lookups (byte search + climb) find exactly what a visit of every node finds.

fetcher_calls and metadata-rev's marker strings no longer walk whole trees; the
reference here is the plain definition (every apply_expression / every string),
checked on every Nix fixture, the demo recipes and hand-made corner cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pinshift.demo.matrix import OLD_REV, render_recipe, variants
from pinshift.migrations import metadata_rev
from pinshift.syntax.document import parse_document
from pinshift.syntax.queries import (
    FETCHER_NAMES, STRING_TYPES, _function_name, fetcher_calls, walk,
)

FIXTURES = Path(__file__).parent / "fixtures"

CORNERS = {
    "quoted-and-parenthesized": b'{ a = (builtins."fetchTarball") { url = "u"; }; b = (fetchurl) "x"; }\n',
    "curried-and-argument": b'{ a = fetchurl { url = "u"; } extra; b = map fetchurl [ "x" ]; c = f fetchzip; }\n',
    "lookalikes": b'{ a = fetchurlBoot { url = "u"; }; b = my.fetchTarballX "x"; /* fetchgit { } */ c = "fetchGit"; }\n',
    "select-on-application": b'{ a = (import ./x.nix { }).fetchFromGitHub { owner = "o"; repo = "r"; rev = "v"; }; }\n',
    "nested-fetchers": b'fetchTarball { url = fetchurl { url = "inner"; }; }\n',
    "markers": (
        b'{ postInstall = "echo 1 > $out/.metadata-rev"; a = \'\'\n  echo 2 > $out/.metadata-rev\n\'\';\n'
        b'  b = "${"echo 3 > $out/.metadata-rev"}"; c = "${x} > $out/.metadata-rev";\n'
        b'  # echo 4 > $out/.metadata-rev\n  d = "not .metadata-rev-ish"; }\n'
    ),
    "broken": b'{ a = fetchurl { url = "u"; ; b = "echo 1 > $out/.metadata-rev" }\n',
}


def _reference_fetchers(doc):
    out = []
    for node in walk(doc.root, "apply_expression"):
        name = _function_name(doc, node.child_by_field_name("function"))
        if name is not None and name.rsplit(".", 1)[-1] in FETCHER_NAMES:
            out.append(node)
    return out


def _sources() -> dict[str, bytes]:
    sources = {name: data for name, data in CORNERS.items()}
    for path in sorted(FIXTURES.rglob("*.nix")):
        sources[str(path.relative_to(FIXTURES))] = path.read_bytes()
    for variant in variants()[:12]:
        sources[variant.filename] = render_recipe(variant, OLD_REV).encode()
    return sources


SOURCES = _sources()


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_fetcher_calls_match_a_full_walk(name):
    doc = parse_document(SOURCES[name], name)
    expected = [n.id for n in _reference_fetchers(doc) if _argument_kind(n) in ("url", "attrset")]
    assert [call.node.id for call in fetcher_calls(doc)] == expected


def _argument_kind(node):
    argument = node.child_by_field_name("argument")
    while argument is not None and argument.type == "parenthesized_expression":
        argument = argument.child_by_field_name("expression")
    if argument is None:
        return None
    if argument.type in STRING_TYPES:
        return "url"
    return "attrset" if argument.type in ("attrset_expression", "rec_attrset_expression") else None


def test_corner_cases_find_what_they_should():
    names = {name: [c.function for c in fetcher_calls(parse_document(CORNERS[name], name))] for name in CORNERS}
    assert names["quoted-and-parenthesized"] == ["builtins.fetchTarball", "fetchurl"]
    assert names["curried-and-argument"] == ["fetchurl"]
    assert names["lookalikes"] == []
    assert names["select-on-application"] == ["<expr>.fetchFromGitHub"]
    assert names["nested-fetchers"] == ["fetchTarball", "fetchurl"]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_marker_strings_match_a_full_walk(name):
    doc = parse_document(SOURCES[name], name)
    reference = [n.id for n in walk(doc.root, *STRING_TYPES) if metadata_rev.MARKER in doc.text(n)
                 and any(metadata_rev.MARKER in doc.text(c) for c in n.named_children if c.type == "string_fragment")]
    assert [n.id for n in metadata_rev._strings_naming_marker(doc)] == reference


def test_markers_in_comments_and_interpolated_builds_are_not_bumped():
    doc = parse_document(CORNERS["markers"], "markers.nix")
    out = metadata_rev.StepOutput()
    numbers = [m.group(1) for _, m in metadata_rev._markers(doc, out)]
    assert numbers == [b"1", b"2", b"3"]
    assert [w.message for w in out.warnings] == ["metadata-rev marker built with ${...}: left alone"]
