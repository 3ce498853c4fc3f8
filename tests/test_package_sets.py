"""syntax.package_sets: which attrsets define attributes of the set an expression denotes."""

from __future__ import annotations

from pinshift.syntax.document import parse_document
from pinshift.syntax.package_sets import PackageSets, definition_read
from pinshift.syntax.queries import selects

SOURCE = b"""let
  overlay = final: prev: { python3Packages = prev.python3Packages; };
  pinned = import ./n.nix {
    config.packageOverrides = pkgs: { cudaPackages = pkgs.cudaPackages_12_9; };
    overlays = [ overlay (import ./more.nix) ];
  };
  merged = pinned // { extra = 1; };
  plain = import ./n.nix { };
in [ merged.python3Packages plain.python3Packages pinned.lib ]
"""


def _doc():
    return parse_document(SOURCE, "x.nix")


def _base(doc, dotted: str):
    return next(s.base for s in selects(doc) if s.dotted == dotted)


def _text(doc, node) -> str:
    return doc.text(node).decode()


def test_layers_follow_lets_merges_overlays_and_package_overrides():
    doc = _doc()
    sets = PackageSets(doc)
    layers = sets.layers(_base(doc, "merged.python3Packages"))
    assert [(layer.kind, _text(doc, layer.node)) for layer in layers] == [
        ("attrset", "{ extra = 1; }"),
        ("overlay", "{ python3Packages = prev.python3Packages; }"),
        ("packageOverrides", "{ cudaPackages = pkgs.cudaPackages_12_9; }"),
    ]
    assert not any(layer.elsewhere for layer in layers)
    assert sets.layers(_base(doc, "plain.python3Packages")) == []


def test_definitions_name_the_binding_and_its_kind():
    doc = _doc()
    sets = PackageSets(doc)
    [definition] = sets.definitions(_base(doc, "merged.python3Packages"), "python3Packages")
    assert (doc.position(definition.name_node.start_byte), definition.described) == ((2, 28), "in an overlay")
    assert sets.definitions(_base(doc, "merged.python3Packages"), "python313Packages") == []


def test_overlay_and_override_arguments_denote_the_set_being_built():
    doc = _doc()
    sets = PackageSets(doc)
    prev = _base(doc, "prev.python3Packages")
    assert sets.is_set_argument(prev)
    assert [d.described for d in sets.definitions(prev, "python3Packages")] == ["in an overlay"]
    assert sets.is_set_argument(_base(doc, "pkgs.cudaPackages_12_9"))
    assert not sets.is_set_argument(_base(doc, "pinned.lib"))


def test_overlays_the_file_does_not_show_are_listed():
    doc = _doc()
    sets = PackageSets(doc)
    assert [_text(doc, n) for n in sets.opaque(_base(doc, "merged.python3Packages"))] == ["import ./more.nix"]
    assert sets.opaque(_base(doc, "plain.python3Packages")) == []


def test_an_overlay_file_defines_for_a_set_built_elsewhere():
    doc = parse_document(b"self: super: { python3Packages = super.python3Packages; }\n", "overlay.nix")
    [definition] = PackageSets(doc).definitions(_base(doc, "super.python3Packages"), "python3Packages")
    assert definition.layer.elsewhere


def test_definition_read_is_the_first_select_reaching_one():
    doc = _doc()
    node, definition = definition_read(doc, "python3Packages")
    assert doc.position(node.start_byte) == (2, 51)  # prev.python3Packages, first in source order
    assert definition_read(doc, "cudaPackages_12_9") is None
    assert definition_read(parse_document(b"pkgs.python3Packages.torch\n", "y.nix"), "python3Packages") is None


def test_an_overlay_returning_its_argument_shows_its_result_and_cycles_end():
    doc = parse_document(b"let p = import ./n.nix { overlays = [ (final: prev: prev)\n"
                         b"  (final: prev: final // { python3Packages = 1; }) ]; };\n"
                         b"  a = b; b = a;\nin [ p.python3Packages a.python3Packages ]\n", "x.nix")
    sets = PackageSets(doc)
    assert sets.opaque(_base(doc, "p.python3Packages")) == []
    assert [d.described for d in sets.definitions(_base(doc, "p.python3Packages"), "python3Packages")] == ["in an overlay"]
    assert sets.layers(_base(doc, "a.python3Packages")) == []
