"""Each typed query on the syntax fixtures: what a migration step sees of a recipe."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from pinshift.syntax import queries as q
from pinshift.syntax.document import parse_document

VALID = FIXTURES / "syntax" / "valid"


def load(name: str):
    return parse_document((VALID / name).read_bytes(), name)


def text(doc, node) -> bytes | None:
    return None if node is None else doc.text(node)


# --- selects ------------------------------------------------------------------------------


def test_select_segments_plain_quoted_and_interpolated():
    doc = load("select_attrpath.nix")
    found = {s.dotted: s for s in q.selects(doc)}
    torch = found["nixpkgs_pinned.python3Packages.torch.override"]
    assert torch.base_name == "nixpkgs_pinned"
    assert torch.names == ("python3Packages", "torch", "override")
    assert [text(doc, s.node) for s in torch.segments] == [b"python3Packages", b"torch", b"override"]
    assert found["pkgs.python3Packages.numpy"].segments[0].node.type == "string_expression"
    assert found["pkgs.${...}.version"].names == (None, "version")
    assert found["pkgs.python3Packages.${...}.src"].names == ("python3Packages", None, "src")


def test_select_or_default():
    doc = load("select_or_default.nix")
    defaults = {s.dotted: text(doc, s.default) for s in q.selects(doc)}
    assert defaults["pkgs.config.cudaSupport"] == b"false"
    assert defaults["pkgs.stdenv.hostPlatform.gcc.arch"] == b'"x86-64"'
    assert defaults["<expr>.version"] == b'"unknown"'  # base is a parenthesized expression


# --- bindings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        ("bindings_nested.nix", {"pname", "meta", "meta.description", "meta.license", "meta.platforms", "meta.platforms.linux"}),
        ("bindings_dotted.nix", {"meta.description", "meta.maintainers", "passthru.tests.import", "quoted key.value"}),
        ("bindings_merged.nix", {"meta", "meta.description", "passthru", "passthru.extra", "passthru.more"}),
        ("bindings_rec.nix", {"version", "name", "meta", "meta.description"}),
        ("bindings_function_body.nix", {"pname", "version", "meta.homepage"}),
        ("override_attrs.nix", {"pname", "meta", "meta.description", "meta.longDescription", "passthru.gpu"}),
    ],
)
def test_binding_paths_through_nested_dotted_and_merged_attrsets(name, expected):
    assert {b.dotted for b in q.bindings(load(name))} == expected


def test_nested_and_dotted_spellings_give_the_same_path():
    nested = q.find_bindings(load("bindings_nested.nix"), "meta.description")
    dotted = q.find_bindings(load("bindings_dotted.nix"), "meta.description")
    merged = q.find_bindings(load("bindings_merged.nix"), "meta.description")
    assert [b.path for b in nested + dotted + merged] == [("meta", "description")] * 3
    doc = load("bindings_dotted.nix")
    (binding,) = q.find_bindings(doc, "meta.description")
    assert doc.text(binding.attrpath) == b"meta.description" and doc.text(binding.value) == b'"dotted"'


def test_let_bindings_are_rooted_in_the_let():
    doc = load("bindings_let.nix")
    kinds = {b.dotted: b.root_kind for b in q.bindings(doc)}
    assert kinds == {"version": "let", "src": "let", "src.rev": "let", "src.url.scheme": "let", "rev": "attrset"}
    assert {b.root_kind for b in q.bindings(load("let_attrset_legacy.nix"))} == {"let"}
    assert {b.root_kind for b in q.bindings(load("bindings_rec.nix"))} == {"rec"}


def test_find_bindings_within_the_override_attrs_attrset():
    doc = load("seed_recipe_shape.nix")
    (override,) = q.override_attrs(doc)
    assert override.old_name == "oldAttrs"
    inside = q.find_bindings(doc, "meta.description", within=override.attrset)
    assert [doc.text(b.value) for b in inside] == [b'"PyTorch for H100 with AVX-512"']
    assert q.find_bindings(doc, "pname", within=override.attrset)
    assert q.find_bindings(doc, "config.cudaSupport", within=override.attrset) == []
    assert len(q.find_bindings(doc, "config.cudaSupport")) == 1


def test_override_attrs_with_two_parameters_names_the_previous_attrs():
    doc = load("override_attrs_final_prev.nix")
    (override,) = q.override_attrs(doc)
    assert override.old_name == "previousAttrs"
    assert [b.dotted for b in q.bindings(doc)] == ["version", "meta.description"]


# --- functions, inherit, with -------------------------------------------------------------


@pytest.mark.parametrize(
    "name, names, ellipsis, at_name",
    [
        ("formals_defaults.nix", ("a", "b", "c", "d"), False, None),
        ("formals_ellipsis.nix", ("stdenv", "lib"), True, None),
        ("formals_at_before.nix", ("a", "b", "args"), True, "args"),
        ("formals_at_after.nix", ("a", "b", "args"), True, "args"),
        ("trailing_comma_formals.nix", ("a", "b"), False, None),
        ("trailing_comma_at.nix", ("a", "b", "args"), False, "args"),
        ("trailing_comma_at_after.nix", ("a", "b", "args"), False, "args"),
        ("trailing_comma_multiline.nix", ("stdenv", "lib", "fetchFromGitHub", "python3"), False, None),
        ("formals_empty.nix", (), False, None),
    ],
)
def test_function_formals(name, names, ellipsis, at_name):
    (function,) = q.functions(load(name))
    assert function.has_formals
    assert (function.names, function.ellipsis, function.at_name) == (names, ellipsis, at_name)


def test_formal_defaults_and_simple_lambdas():
    doc = load("formals_defaults.nix")
    (function,) = q.functions(doc)
    assert [text(doc, f.default) for f in function.formals] == [None, b"2", b"{ x = 1; }", b"a + b"]
    assert doc.text(function.body) == b"a + b"
    lambdas = q.functions(load("lambda_simple.nix"))
    assert [(f.has_formals, f.at_name) for f in lambdas] == [(False, "x"), (False, "y")]


def test_inherit_and_inherit_from():
    doc = load("inherit_forms.nix")
    found = [(text(doc, i.source), [s.name for s in i.names]) for i in q.inherits(doc)]
    assert found == [
        (None, ["version", "lib"]),
        (b"pkgs", ["stdenv", "fetchurl"]),
        (b"pkgs.python3Packages", ["torch", "numpy"]),  # `"numpy"` is a quoted name
    ]


def test_with_expressions():
    doc = load("with_expression.nix")
    found = q.withs(doc)
    assert [doc.text(w.environment) for w in found] == [b"pkgs", b"lib"]
    assert found[1].body.type == "attrset_expression"


# --- strings ------------------------------------------------------------------------------


def parts(doc, string):
    return [(p.kind, doc.text(p.node)) for p in string.parts]


def test_double_quoted_escapes_and_dollar_escape():
    doc = load("strings_escapes.nix")
    newline, dollar, plain = q.strings(doc)
    assert parts(doc, newline) == [
        ("literal", b"a"), ("escape", b"\\n"), ("literal", b"b"), ("escape", b"\\t"),
        ("literal", b"c"), ("escape", b'\\"'), ("literal", b"d"), ("escape", b"\\\\"), ("literal", b"e"),
    ]
    assert parts(doc, dollar) == [
        ("literal", b"price: "), ("escape", b"\\"), ("escape", b"$"), ("literal", b"{not interpolated} and $$x"),
    ]
    assert [doc.text(n) for n in dollar.literals()] == [b"price: ", b"{not interpolated} and $$x"]
    assert q.string_value(doc, plain.node) == b"plain string"
    assert q.string_value(doc, newline.node) is None


def test_interpolations_including_nested_strings():
    doc = load("strings_interpolation.nix")
    found = q.strings(doc)
    assert parts(doc, found[0]) == [("literal", b"torch-"), ("interpolation", b"${version}")]
    nested = [s for s in found if s.node.parent.type != "binding"]
    assert [doc.text(s.node) for s in nested] == [b'"b"', b'"${version}"']
    assert parts(doc, found[-1]) == [("interpolation", b"${pkgs.hello}"), ("literal", b"/bin/hello")]
    outer = q.strings(doc, within=found[1].node)
    assert len(outer) == 3  # `within` includes the string itself and the strings inside it


def test_indented_string_escapes():
    doc = load("indented_strings.nix")
    long_description, empty = q.strings(doc)
    assert long_description.indented and empty.indented
    escapes = [doc.text(p.node) for p in long_description.parts if p.kind == "escape"]
    assert escapes == [b"''", b"$", b"'''", b"''\\n", b"''\\t"]
    assert [p.kind for p in long_description.parts].count("interpolation") == 1
    assert b"Literal dollar: " in b"".join(doc.text(n) for n in long_description.literals())
    assert q.string_value(doc, empty.node) == b""


def test_name_of_quoted_segments_with_escapes_is_none():
    doc = parse_document(b'{ "a\\nb".c = 1; "plain".d = 2; }')
    assert [b.path for b in q.bindings(doc)] == [(None, "c"), ("plain", "d")]


# --- fetchers -----------------------------------------------------------------------------


def fetchers(name):
    doc = load(name)
    return doc, q.fetcher_calls(doc)


def test_fetch_tarball_attrset_form():
    doc, (call,) = fetchers("fetch_tarball_attrset.nix")
    assert (call.function, call.form) == ("builtins.fetchTarball", "attrset")
    assert doc.text(call.url).startswith(b'"https://github.com/NixOS/nixpkgs/archive/6a030d5')
    assert set(call.hashes) == {"sha256"} and call.rev is None


def test_fetch_tarball_bare_url_forms():
    doc, calls = fetchers("fetch_tarball_url.nix")
    assert [(c.function, c.form) for c in calls] == [("builtins.fetchTarball", "url"), ("fetchTarball", "url")]
    assert doc.text(calls[1].url) == b'"https://example.org/x.tar.gz"'
    assert calls[0].args == {"url": calls[0].url} and calls[0].hashes == {}


def test_fetchurl_forms():
    doc, calls = fetchers("fetchurl_forms.nix")
    assert [(c.function, c.form) for c in calls] == [
        ("fetchurl", "attrset"), ("pkgs.fetchurl", "url"), ("builtins.fetchurl", "url")
    ]
    assert doc.text(calls[0].hashes["hash"]).startswith(b'"sha256-AAAA')


def test_fetchzip_forms():
    doc, calls = fetchers("fetchzip_forms.nix")
    assert [(c.function, c.form) for c in calls] == [("fetchzip", "attrset"), ("fetchzip", "url")]
    assert sorted(calls[0].args) == ["sha256", "stripRoot", "url"]


def test_fetch_from_github_exposes_rev_and_hash():
    doc, (call,) = fetchers("fetch_from_github.nix")
    assert (call.function, call.form, call.url) == ("fetchFromGitHub", "attrset", None)
    assert doc.text(call.rev) == b'"v2.10.0"'
    assert set(call.hashes) == {"hash"}


def test_fetchgit_and_builtins_fetch_git():
    doc, calls = fetchers("fetchgit_forms.nix")
    assert [(c.function, c.form) for c in calls] == [
        ("fetchgit", "attrset"), ("builtins.fetchGit", "attrset"), ("builtins.fetchGit", "url")
    ]
    assert doc.text(calls[0].rev) == doc.text(calls[1].rev) == b'"0182a361324364ae3f436a63005877674cf45efb"'
    assert set(calls[0].hashes) == {"sha256"} and calls[1].hashes == {}
    assert doc.text(calls[2].url) == b'"https://github.com/NixOS/patchelf"'


def test_seed_recipe_shape():
    doc, (call,) = fetchers("seed_recipe_shape.nix")
    assert (call.function, call.form) == ("builtins.fetchTarball", "url")
    assert b"6a030d535719c5190187c4cec156f335e95e3211" in doc.text(call.url)
    names = {s.dotted for s in q.selects(doc)}
    assert "nixpkgs_pinned.python3Packages.torch.override" in names
    assert "oldAttrs.meta" in names


def test_fetcher_names_in_strings_or_comments_are_not_calls():
    doc = parse_document(b'# fetchurl { url = "x"; }\n{ note = "fetchTarball is used"; fetchurl = 1; }\n')
    assert q.fetcher_calls(doc) == []


def test_every_fetcher_in_the_bare_url_form():
    doc, calls = fetchers("fetchers_bare_url_all.nix")
    assert [c.function for c in calls] == [
        "builtins.fetchTarball", "fetchTarball", "fetchurl", "fetchzip",
        "fetchFromGitHub", "fetchgit", "builtins.fetchGit", "pkgs.fetchurl",
    ]
    assert {c.form for c in calls} == {"url"}
    assert [doc.text(c.url)[-4:] for c in calls][-1] == b"/8''"  # an indented string is a URL too
    assert all(c.rev is None and c.hashes == {} for c in calls)
