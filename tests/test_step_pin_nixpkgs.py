"""pin-nixpkgs: goldens (hand-written), every edge case the issue names, rev resolution, parameters, oracle."""

from __future__ import annotations

import shutil

import pytest

from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe
from pinshift.errors import ParamError
from pinshift.steps.registry import bundled_kinds
from step_golden import STEPS, expected, run_case, run_step

KIND = "pin-nixpkgs"
SRI = "sha256-3ds0d8eGdosTlU08up8dsCf0WzQFIjhCTp1mWH//Yi4="
CASES = {
    "shadowing": {"rev": NEW_REV},
    "no-let-crlf": {"rev": NEW_REV, "comment": "Pinned nixpkgs", "hash": SRI, "overlays": "[ ]"},
    "defaults": {"rev": NEW_REV},
    "at-pattern": {"rev": NEW_REV},
    "one-line": {"rev": NEW_REV, "config": "{ allowUnfree = true; }"},
    "mapped": {"rev": NEW_REV, "name": "np", "signature": "{ pkgs }:", "comment": "# pinned",
               "url": "https://example.org/nixpkgs/{rev}.tar.gz", "config": "{\n\tallowUnfree = true;\n}",
               "map": {"config": "np.config"}},
    # issue 34: a companion's calls of sibling recipes become `import ./x.nix {}`
    "companions": {"rev": NEW_REV, "companions": "import", "map": {"config": "nixpkgs_pinned.config"}},
}


def _tree(tmp_path, text: str | bytes):
    data = text.encode() if isinstance(text, str) else text
    (tmp_path / "recipe.nix").write_bytes(data)
    return tmp_path


def _run(tmp_path, text, **params):
    plan, changed = run_step(KIND, {"rev": NEW_REV, **params}, _tree(tmp_path, text))
    return plan, changed.get("recipe.nix")


def _warnings(plan) -> list[str]:
    return [str(w) for w in plan.warnings]


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    plan, _, after = run_case(KIND, case, CASES[case], tmp_path)
    assert after == expected(KIND, case)
    assert plan.warnings == [] and plan.notes == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_second_run_is_a_no_op_with_a_note(case, tmp_path):
    shutil.copyfile(STEPS / KIND / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step(KIND, CASES[case], tmp_path)
    assert changed == {} and plan.warnings == []
    name = CASES[case].get("name", "nixpkgs_pinned")
    assert [n.split(": ", 1)[1] for n in plan.notes] == [f"already pinned (its let binds {name}): left alone"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_input_and_output_parse_with_nix(case, nix_oracle):
    for name in (f"{case}.nix", f"{case}.expected.nix"):
        ok, message = nix_oracle((STEPS / KIND / name).read_bytes())
        assert ok, (name, message)


def test_an_already_pinned_seed_recipe_is_left_alone(tmp_path):
    text = render_recipe(Variant("90", "avx512"), OLD_REV)
    plan, after = _run(tmp_path, text)
    assert after is None and plan.warnings == []
    assert _warnings(plan) == [] and [str(n) for n in plan.notes] == [
        "recipe.nix:4:1: already pinned (its let binds nixpkgs_pinned): left alone"]


# --- files left as they were, with the reason at its place ------------------------------------


@pytest.mark.parametrize("text, warning", [
    ("{ lib }:\nlet\n  inherit lib;\nin lib.id\n",
     "recipe.nix:3:11: inherit lib; takes argument lib, which nixpkgs_pinned replaces, and `lib = nixpkgs_pinned.lib;` "
     "is not always the same: rewrite it by hand; file not converted"),
    ("{ lib }:\n{ inherit lib; x = lib.id; }\n",
     "recipe.nix:2:11: inherit lib; takes argument lib, which nixpkgs_pinned replaces, and `lib = nixpkgs_pinned.lib;` "
     "is not always the same: rewrite it by hand; file not converted"),
    ("{ lib, config }:\nlib.optional config.cudaSupport 1\n",
     "recipe.nix:2:14: config is not a package of nixpkgs_pinned (it is an argument of nixpkgs' import): name its "
     'replacement in map.config, e.g. "nixpkgs_pinned.config"; file not converted'),
    ("args@{ lib, ... }:\nlib.attrNames args\n",
     "recipe.nix:2:15: args is the whole argument set here, not args.<name>: the pinned set is more than what a "
     "caller passed; file not converted"),
    ("args@{ lib, ... }:\nif args ? cuda then 1 else 2\n",
     "recipe.nix:2:4: args is the whole argument set here, not args.<name>: the pinned set is more than what a "
     "caller passed; file not converted"),
    ("args@{ ... }:\nlet inherit (args) config; in config\n",
     "recipe.nix:2:20: inherit (args) config: config is not nixpkgs_pinned.config; rewrite it by hand; file not converted"),
    ("{ lib }:\n{ x = let nixpkgs_pinned = 1; in lib.id; }\n",
     "recipe.nix:2:34: nixpkgs_pinned would be captured here by an inner let: file not converted (rename that "
     "binding, or choose another 'name')"),
    ("{ lib }:\nwith lib; pkgs.hello\n",
     "recipe.nix:2:11: pkgs here comes from a `with` or is free; the new signature or binding would bind it: "
     "file not converted"),
    ("{ lib, x ? y }:\nlet y = 1; in x\n",
     "recipe.nix:2:15: y would be captured here by an inner let: file not converted (rename that binding, or choose "
     "another 'name')"),
    ("{ a ? b, b ? a }:\na\n",
     "recipe.nix:1:7: the default of a leads back to a (a cycle of defaults): file not converted"),
    ("{ lib, x ? y }:\nwith lib; x\n",
     "recipe.nix:2:11: y would be captured here by a `with`: file not converted (rename that binding, or choose "
     "another 'name')"),
    ("{ lib, cfg ? { } }:\nlet f = config: lib.id cfg; in f\n", None),  # an inner `config` binds nothing mapped: fine
])
def test_edge_cases_leave_the_file_with_one_warning(tmp_path, text, warning):
    plan, after = _run(tmp_path, text)
    if warning is None:
        assert after is not None and plan.warnings == []
        return
    assert after is None
    assert _warnings(plan) == [warning]


def test_a_mapped_formal_with_a_complex_expression_is_parenthesized(tmp_path):
    _, after = _run(tmp_path, "{ config }:\nconfig.cudaSupport\n",
                    map={"config": "nixpkgs_pinned.config // { cudaSupport = true; }"})
    assert after.endswith(b"in\n(nixpkgs_pinned.config // { cudaSupport = true; }).cudaSupport\n")


def test_a_plain_argument_function_and_a_non_function_are_reported(tmp_path):
    plan, after = _run(tmp_path, "pkgs: pkgs.hello\n")
    assert after is None
    assert _warnings(plan) == ["recipe.nix:1:1: the function takes one argument pkgs, not a set of packages: not converted"]
    plan, after = _run(tmp_path, "{ a = 1; }\n")
    assert after is None
    assert [w.message for w in plan.warnings] == ["not a function of its packages ({ lib, ... }: ...): not converted"]


def test_an_inner_function_argument_with_the_formals_name_keeps_its_references(tmp_path):
    _, after = _run(tmp_path, "{ lib }:\nlet\n  f = lib: lib.x;\nin f lib\n")
    assert after.endswith(b"  f = lib: lib.x;\nin f nixpkgs_pinned.lib\n")


def test_a_comment_on_the_let_line_stays_there(tmp_path):
    _, after = _run(tmp_path, "{ lib }:\nlet # helpers\n  x = lib.id;\nin x\n")
    assert after.startswith(b"{ pkgs ? import <nixpkgs> {} }:\nlet # helpers\n  nixpkgs_pinned = import (")
    assert after.endswith(b"}) { };\n\n  x = nixpkgs_pinned.lib.id;\nin x\n")  # one binding: a blank line


def test_unused_formals_simply_go(tmp_path):
    _, after = _run(tmp_path, "{ lib, mkl, openblas }:\nlet x = 1; in openblas\n")
    assert after.endswith(b"}) { }; x = 1; in nixpkgs_pinned.openblas\n")
    assert b"mkl" not in after


# --- abbreviated revisions ---------------------------------------------------------------------


def test_an_abbreviated_rev_is_completed_from_a_file_that_pins_it(tmp_path):
    (tmp_path / "pinned.nix").write_text(render_recipe(Variant("cpu", "avx2"), NEW_REV))
    (tmp_path / "flox.nix").write_text("{ lib }:\nlib.id\n")
    plan, changed = run_step(KIND, {"rev": NEW_REV[:7]}, tmp_path)
    assert list(changed) == ["flox.nix"]
    assert f"archive/{NEW_REV}.tar.gz".encode() in changed["flox.nix"]
    assert [n.split(": ", 1)[1] for n in plan.notes] == ["already pinned (its let binds nixpkgs_pinned): left alone"]


@pytest.mark.parametrize("revisions, message", [
    ((OLD_REV,), f"pin-nixpkgs: 'rev' {NEW_REV[:7]} is abbreviated and no file pins a full revision starting with it; "
                 f"give all 40 hex digits (git -C <nixpkgs clone> rev-parse {NEW_REV[:7]})"),
    ((NEW_REV, NEW_REV[:7] + "f" * 33),
     f"pin-nixpkgs: 'rev' {NEW_REV[:7]} is ambiguous (matches: {NEW_REV} at a.nix:7; {NEW_REV[:7] + 'f' * 33} at "
     "b.nix:7); give all 40 hex digits"),
])
def test_an_abbreviated_rev_found_nowhere_or_twice_stops_the_run_through_the_cli(tmp_path, run_cli, revisions, message):
    for name, rev in zip("ab", revisions):
        (tmp_path / f"{name}.nix").write_text(render_recipe(Variant("cpu", "avx2"), rev))
    (tmp_path / "flox.nix").write_text("{ lib }:\nlib.id\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    result = run_cli("apply", KIND, "--set", f"rev={NEW_REV[:7]}", ".", cwd=tmp_path)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"pinshift: error: {message}\n"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_apply_converts_in_place_with_a_map_table(tmp_path, run_cli):
    (tmp_path / "r.nix").write_text("{ config, lib }:\nlib.optional config.cudaSupport 1\n")
    result = run_cli("apply", KIND, "--set", f"rev={NEW_REV}", "--set", "map.config=nixpkgs_pinned.config",
                     "r.nix", cwd=tmp_path)
    assert result.exit_code == 0, result
    assert (tmp_path / "r.nix").read_text().endswith(
        "in\nnixpkgs_pinned.lib.optional nixpkgs_pinned.config.cudaSupport 1\n")


# --- parameters ----------------------------------------------------------------------------------


@pytest.mark.parametrize("params, message", [
    ({}, "missing parameter 'rev'"),
    ({"rev": "0182a36z"}, "'rev' must be a revision of 4 to 40 hex digits"),
    ({"rev": NEW_REV, "name": "let"}, "'name' must be a plain Nix identifier"),
    ({"rev": NEW_REV, "config": "{ allowUnfree = true "}, "'config' is not a Nix expression (syntax error"),
    ({"rev": NEW_REV, "overlays": " "}, "'overlays' is not a Nix expression (it is empty)"),
    ({"rev": NEW_REV, "signature": "{ pkgs"}, "'signature' must be a function head such as"),
    ({"rev": NEW_REV, "signature": "pkgs ? 1"}, "'signature' must be a function head such as"),
    ({"rev": NEW_REV, "signature": "{ pkgs }: pkgs"}, "'signature' must be a function head such as"),
    ({"rev": NEW_REV, "url": "https://example.org/nixpkgs.tar.gz"}, "'url' must be a plain URL containing {rev}"),
    ({"rev": NEW_REV, "url": 'https://x/"{rev}'}, "'url' must be a plain URL containing {rev}"),
    ({"rev": NEW_REV, "hash": "sha256-abc"}, "'hash' must be a sha256 hash"),
    ({"rev": NEW_REV, "map": {"con fig": "x"}}, "map key 'con fig' is not a plain Nix identifier"),
    ({"rev": NEW_REV, "map": {"config": "{"}}, "'map.config' is not a Nix expression"),
    ({"rev": NEW_REV, "map": {"config": 1}}, "map.config must be a string of Nix source"),
    ({"rev": NEW_REV, "comment": "a\nb"}, "'comment' must be one non-empty line of text"),
])
def test_parameter_errors_name_the_key(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()[KIND].parse_params(params)
    assert message in str(error.value)


@pytest.mark.parametrize("value", [SRI, "0bk2zxzmhrlx9r13h8h56idz89xh3ngvlg2djl9qnxl6qxvk9nyx",
                                   "dddb3477c786768b13954d3cba9f1db027f45b34052238424e9d66587fff622e"])
def test_hash_accepts_sri_base32_and_hex(value, tmp_path):
    _, after = _run(tmp_path, "{ lib }:\nlib\n", hash=value)
    assert f'    sha256 = "{value}";\n'.encode() in after


@pytest.mark.parametrize("kind", [KIND, "set-binding"])
def test_show_step_documents_every_parameter(kind):
    from pinshift.commands.recipes import parameter_rows

    rows = parameter_rows(bundled_kinds()[kind])
    assert [r[0] for r in rows if not r[3] or r[3].startswith("str")] == []


def test_a_recipe_may_write_the_url_template_with_rev(make_repo, run_cli, tmp_path):
    """`{rev}` in `url` is pin-nixpkgs' own placeholder: recipe loading leaves it for the step (and still
    fills `{base}`/`{target}`, and still refuses an unknown `{name}`)."""
    root = make_repo({"pkgs/a.nix": "{ lib }:\nlib.id 1\n"}, branch="main")
    recipe = tmp_path / "pin.toml"
    recipe.write_text(f'name = "pin"\nfiles = ["pkgs/*.nix"]\n[[steps]]\nkind = "pin-nixpkgs"\ntitle = "Pin onto {{base}}"\n'
                      f'[steps.params]\nrev = "{NEW_REV}"\nurl = "https://mirror.example/nixpkgs/{{rev}}.tar.gz"\n')
    result = run_cli("migrate", str(recipe), "--repo", str(root), "--from", "main", "--branch", "pinned")
    assert result.exit_code == 0, result
    from conftest import git

    assert f'url = "https://mirror.example/nixpkgs/{NEW_REV}.tar.gz";' in git(root, "show", "pinned:pkgs/a.nix")
    recipe.write_text(recipe.read_text().replace("{rev}.tar.gz", "{revision}.tar.gz"))
    refused = run_cli("migrate", str(recipe), "--repo", str(root), "--from", "main", "--branch", "other")
    assert refused.exit_code == 2 and "unknown placeholder {revision}" in refused.stderr


# --- companions (issue 34) ---------------------------------------------------------------------


def test_by_default_a_pass_through_of_flox_arguments_leaves_the_file_with_its_warning(tmp_path):
    text = (STEPS / KIND / "companions.nix").read_text()
    plan, after = _run(tmp_path, text, map={"config": "nixpkgs_pinned.config"})
    assert after is None
    assert [w.split(": ", 1)[1] for w in _warnings(plan)] == [
        "inherit python3Packages; takes argument python3Packages, which nixpkgs_pinned replaces, and "
        "`python3Packages = nixpkgs_pinned.python3Packages;` is not always the same: rewrite it by hand; "
        "file not converted"]


@pytest.mark.parametrize("call, converted", [
    ("import ./x.nix { lib = lib.extend (f: p: {}); }", "import ./x.nix { lib = nixpkgs_pinned.lib.extend (f: p: {}); }"),
    ("import /abs/x.nix { }", "import /abs/x.nix { }"),  # not a sibling's relative path
    ("import ./x.json { }", "import ./x.json { }"),
])
def test_other_calls_are_converted_as_code(tmp_path, call, converted):
    plan, after = _run(tmp_path, f"{{ lib }}:\nlet\n  a = {call};\nin a\n", companions="import")
    assert f"  a = {converted};\n".encode() in after and _warnings(plan) == []


def test_a_parenthesized_call_passing_formals_on_is_a_sibling_call_too(tmp_path):
    _, after = _run(tmp_path, "{ lib }:\n(import ./x.nix) { lib = lib; }\n", companions="import")
    assert after.endswith(b"(import ./x.nix) {}\n")


def test_a_call_passing_anything_else_leaves_the_file_with_the_usual_warning(tmp_path):
    plan, after = _run(tmp_path, '{ lib }:\nimport ./x.nix { inherit lib; gpu = "sm61"; }\n', companions="import")
    assert after is None and "inherit lib; takes argument lib" in _warnings(plan)[0]
