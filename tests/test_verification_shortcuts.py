"""The shortcuts that make the checks of every edit cheaper decide exactly what the full checks decide (issue 46).

- `newly_unbound` does not look up a name no reference of which can be free (the file's own function or
  top `let` binds it around every place the bytes spell it), nor a Nix global the file did not spell
  before the edits; given every name of both files instead, it must report the same references, on
  home-manager-shaped modules where those shortcuts apply and where they must not (a plain `inherit
  cfg;` in the top `let`, a formal's default or a comment outside it, a `with`, a name bound inside).
- `_TopScopes.never_free(name)` holds only when every reference spelling `name` resolves to a binder.
- `attribute_duplicates` decides without Nix's addAttr model when the entries sharing a first name are
  bindings with static names, no attrset literal as value, and no path another's or the start of
  another: it must find the duplicates the model finds, for every binding set generated.
"""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pinshift.edits import Edit, apply_edits, normalize_edits
from pinshift.syntax import duplicates
from pinshift.syntax.document import parse_document
from pinshift.syntax.queries import walk
from pinshift.syntax.scopes import _TopScopes, newly_unbound, referenced_names, references_to
from pinshift.syntax.stackless import run

HEADS = ["{ config, lib, pkgs, ... }:\n", "{ lib ? cfg, pkgs, ... }:\n", "args@{ lib, ... }:\n", "final: prev:\n",
         "cfg: { lib, ... }:\n", ""]
ABOVE = ["", "# cfg toString builtins lib\n", "/* flags */ "]
LET_ENTRIES = ["cfg = config.programs.x;", "inherit cfg;", "inherit (lib) mkIf optional;", "toString = x: x;",
               "builtins = { };", '"fl\\ags" = 1;', "flags = cfg: lib.optional cfg.verbose 1;", "lib = pkgs.lib;",
               "port = toString cfg.port;"]
BODY_ENTRIES = ["a = cfg.x;", "b = toString cfg.port;", "c = lib.optional cfg.y 1;", "d = x: with lib; cfg;",
                "e = let cfg = 1; in cfg;", 'f = "${toString cfg} toString";', "g = rec { cfg = 1; h = cfg; };",
                "inherit cfg;", "i = flags cfg.settings;", "j = builtins.toString 1;", "k = with lib; optional 1;",
                "l = lib.mkIf cfg.enable ({ home.x = toString 1; home.y = cfg; });"]
NAMES = [b"cfg", b"lib", b"toString", b"builtins", b"flags", b"config", b"pkgs", b"x", b"optional", b"port"]


@st.composite
def module(draw) -> bytes:
    head = draw(st.sampled_from(HEADS))
    lets = draw(st.lists(st.sampled_from(LET_ENTRIES), max_size=5, unique=True))
    body = draw(st.lists(st.sampled_from(BODY_ENTRIES), min_size=1, max_size=6, unique=True))
    let = ("let\n" + "".join(f"  {entry}\n" for entry in lets) + "in\n") if lets else ""
    with_lib = draw(st.sampled_from(["", "with lib; "]))
    return (draw(st.sampled_from(ABOVE)) + head + let + with_lib + "{\n" + "".join(f"  {e}\n" for e in body)
            + "}\n").encode()


def _edit(draw, doc, node) -> Edit | None:
    """An edit a step could make: `builtins.` before a name (the `rewrite` of issue 46), a rename, a binding or
    formal dropped or repeated, a scope added or taken away."""
    data, kind = doc.data, node.type
    if kind == "variable_expression":
        choice = draw(st.sampled_from(["builtins", "with", "rename"]))
        if choice == "builtins":
            return Edit(node.start_byte, node.start_byte, b"builtins.", "qualify")
        if choice == "with":
            return Edit(node.start_byte, node.start_byte, b"with lib; ", "with")
        return Edit(node.start_byte, node.end_byte, draw(st.sampled_from(NAMES)), "rename")
    if kind == "identifier":
        return Edit(node.start_byte, node.end_byte, draw(st.sampled_from(NAMES)), "rename")
    if kind in ("binding", "inherit", "inherit_from", "formal"):
        if draw(st.booleans()):
            return Edit(node.start_byte, node.end_byte, b"", "drop")
        text = data[node.start_byte : node.end_byte]
        return Edit(node.end_byte, node.end_byte, (b", " if kind == "formal" else b" ") + text, "repeat")
    if kind == "rec_attrset_expression":
        return Edit(node.start_byte, node.start_byte + 3, b"", "unrec")
    if kind == "with_expression":
        return Edit(node.start_byte, node.child_by_field_name("body").start_byte, b"", "unwith")
    if kind == "let_expression":
        return Edit(node.start_byte, node.child_by_field_name("body").start_byte, b"", "unlet")
    return None


EDITED = ("variable_expression", "identifier", "binding", "inherit", "inherit_from", "formal", "rec_attrset_expression",
          "with_expression", "let_expression")


@st.composite
def edited_module(draw):
    source = draw(module())
    doc = parse_document(source, "m.nix")
    nodes = [n for n in walk(doc.root) if n.type in EDITED]
    edits = []
    for node in draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=4, unique_by=lambda n: n.id)):
        edit = _edit(draw, doc, node)
        if edit is not None and not any(edit.overlaps(e) or (edit.start, edit.end) == (e.start, e.end) for e in edits):
            edits.append(edit)
    return source, normalize_edits(edits)


def _spelled(doc) -> set[str]:
    return referenced_names(doc, doc.root) | {n.decode() for n in NAMES}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(edited_module())
def test_unbound_references_with_the_shortcuts_equal_a_lookup_of_every_name(case):
    source, edits = case
    before = parse_document(source, "m.nix")
    if before.problems:
        event("the generated module does not parse")
        return
    after = before.reparse(apply_edits(source, edits), edits)
    if after.problems:
        event("syntax problem")
        return  # refused before references are looked at
    found = newly_unbound(before, after, edits)
    assert found == newly_unbound(before, after, edits, names=_spelled(before) | _spelled(after))
    event("unbound" if found else "all bound")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(module())
def test_a_name_never_free_has_no_free_reference(source):
    doc = parse_document(source, "m.nix")
    if doc.problems:
        return
    top = _TopScopes(doc)
    for name in sorted(_spelled(doc)):
        if top.never_free(name):
            assert not any(reference.free for reference in references_to(doc, name)), (name, source.decode())
            event(f"never free: {name}")


def test_the_shortcut_steps_aside_where_a_name_escapes_the_top_scope():
    """`let inherit cfg; in` reads `cfg` from around the `let`; a default of a formal lies before it."""
    for source, name in ((b"let inherit cfg; in cfg\n", "cfg"), (b"{ lib ? cfg }: let cfg = 1; in cfg\n", "cfg"),
                         (b"# cfg\nlet cfg = 1; in cfg\n", "cfg")):
        doc = parse_document(source, "m.nix")
        assert not _TopScopes(doc).never_free(name), source
    doc = parse_document(b"{ config, lib, ... }:\nlet cfg = config.x; in { a = cfg; b = lib; }\n", "m.nix")
    assert _TopScopes(doc).never_free("cfg") and _TopScopes(doc).never_free("lib")
    assert _TopScopes(doc).never_free("absent")


# --- duplicates decided without the model ------------------------------------------------------------------

SEGMENTS = ["a", "b", '"a"', '${"a"}', "${x}", '"b\\n"']
APART = ["a", "b", "c", "d", "e", '"c"', '${"d"}', "${x}"]  # more names: paths that rarely meet
VALUES = ["1", "{ x = 1; }", "({ y = 2; })", "rec { x = 1; }", "let in { }", "f { }", "{ }"]
PLAIN = ["1", "f { }", "x", "[ { } ]", "a // { }"]  # no attrset literal


@st.composite
def binding_set(draw) -> bytes:
    """Bindings of one attrset, rec, let or `let { }`: any names and values, or (the shape of home-manager's
    `home.packages = …; home.file.x.text = …;`) paths sharing their first name with plain values."""
    segments, values, inherits, shared = draw(st.sampled_from([
        (SEGMENTS, VALUES, True, False), (APART, PLAIN + VALUES[1:2], True, True), (APART[:-1], PLAIN, False, True)]))
    entries = []
    for _ in range(draw(st.integers(1, 6))):
        if inherits and draw(st.integers(0, 7)) == 0:
            entries.append(draw(st.sampled_from(["inherit a;", "inherit (s) a b;", "inherit b;"])))
            continue
        path = ".".join(([draw(st.sampled_from(["a", '"a"', '${"a"}']))] if shared else [])
                        + draw(st.lists(st.sampled_from(segments), min_size=1, max_size=3)))
        entries.append(f"{path} = {draw(st.sampled_from(values))};")
    opening = draw(st.sampled_from(["{ ", "rec { ", "let ", "let { "]))
    closing = {"{ ": "}", "rec { ": "}", "let ": "in 1", "let { ": "body = 1; }"}[opening]
    return (opening + " ".join(entries) + " " + closing + "\n").encode()


def _model_only(data: bytes, container) -> list:
    binding_set = duplicates._binding_set(container)
    names = [n for e in duplicates._entries(binding_set) for n in duplicates._first_name(data, e)] if binding_set else []
    repeated = {n for n in names if names.count(n) > 1}
    found: list = []
    if repeated:
        run(duplicates._Model(data, found, {}).build(container, repeated))
    return found


def _key(found: list) -> list:
    return [(d.node.start_byte, d.first.start_byte, d.path) for d in found]


@settings(max_examples=500, deadline=None)
@given(binding_set())
def test_duplicates_without_the_model_are_those_the_model_finds(source):
    doc = parse_document(source, "d.nix")
    for container in walk(doc.root, *duplicates.CONTAINERS):
        expected = _model_only(source, container)
        assert _key(duplicates.attribute_duplicates(source, container)) == _key(expected), source.decode()
        entries = duplicates._binding_set(container)
        if entries is not None:
            names = [n for e in duplicates._entries(entries) for n in duplicates._first_name(source, e)]
            repeated = {n for n in names if names.count(n) > 1}
            if repeated and duplicates._paths_apart(source, entries, repeated):
                assert expected == [], source.decode()
                event("decided without the model")


# --- references found from whole words ---------------------------------------------------------------------

WORDS = ["v", "cfg", "lib", "toString", "or", "in", "a", "x", "_", "a-b", "x'"]
PIECES = [" ", "v", "cfg", "lib.v", "1v", "1-v", "''s''v", "a-v", "x'v", "{ v = 1; }", "inherit v;", "(v)",
          "let v = 1; in v", "v: v", "[ v vv v1 v' ]", '"v${v}v"', "# v\n", "cfg.verbose", "_v", "v_", "a.v"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8))
def test_references_found_from_whole_words_are_those_of_every_place(pieces):
    """`references_by_name` skips the places a name's bytes lie inside a longer word (in a tree without errors);
    `references_to` looks at every place: both must give the same references."""
    source = ("[ " + " ".join(pieces) + " ]\n").encode()
    doc = parse_document(source, "w.nix")
    from pinshift.syntax.scopes import references_by_name

    found = references_by_name(doc, WORDS)
    for name in WORDS:
        assert [r.node.id for r in found[name]] == [r.node.id for r in references_to(doc, name)], (name, source)
    event("errors" if doc.root.has_error else "no errors")
