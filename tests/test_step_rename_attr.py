"""rename-attr: exact segments in selects, Flox-style arguments by lexical scope, warnings for what it leaves."""

from __future__ import annotations

import shutil

import pytest

from pinshift.errors import ParamError
from pinshift.steps.registry import bundled_kinds
from step_golden import STEPS, canonical_changes, expected, run_case, run_step

BASED = {"from": "python3Packages", "to": "python313Packages", "base": "nixpkgs_pinned"}
ANY = {"from": "python3Packages", "to": "python313Packages"}
RENAMED = ("python3Packages", "python313Packages")
CASES = {
    # case: (params, how many tokens change in the canonical parse, all of them RENAMED)
    "seed-gpu": (BASED, 1),
    "lookalikes": (BASED, 5),
    "flox-arguments": (ANY, 7),
    "crlf-no-final-newline": (BASED, 1),
}


def _tree(tmp_path, text: str):
    (tmp_path / "recipe.nix").write_text(text)
    return tmp_path


def _warnings(plan) -> list[str]:
    return [w.message for w in plan.warnings]


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    plan, _, after = run_case("rename-attr", case, CASES[case][0], tmp_path)
    assert after == expected("rename-attr", case)
    assert _warnings(plan) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_second_run_changes_nothing(case, tmp_path):
    shutil.copyfile(STEPS / "rename-attr" / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step("rename-attr", CASES[case][0], tmp_path)
    assert changed == {}


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_parses_and_changes_only_the_renamed_tokens(case, nix_oracle):
    before = (STEPS / "rename-attr" / f"{case}.nix").read_bytes()
    changes = canonical_changes(nix_oracle, before, expected("rename-attr", case))
    assert changes == [RENAMED] * CASES[case][1]


def test_base_restricts_to_selects_on_that_variable(tmp_path):
    root = _tree(tmp_path, "{ a = pkgs.python3Packages.x; b = nixpkgs_pinned.python3Packages.y; }\n")
    _, changed = run_step("rename-attr", BASED, root)
    assert changed["recipe.nix"] == b"{ a = pkgs.python3Packages.x; b = nixpkgs_pinned.python313Packages.y; }\n"


def test_without_base_every_select_segment_is_renamed_but_not_binding_names(tmp_path):
    root = _tree(tmp_path, "{ python3Packages = pkgs.python3Packages; b = x.y.python3Packages.z; }\n")
    _, changed = run_step("rename-attr", ANY, root)
    assert changed["recipe.nix"] == b"{ python3Packages = pkgs.python313Packages; b = x.y.python313Packages.z; }\n"


def test_with_base_a_function_argument_is_reported_not_renamed(tmp_path):
    root = _tree(tmp_path, "{ python3Packages, lib }:\npython3Packages.torch\n")
    plan, changed = run_step("rename-attr", BASED, root)
    assert changed == {}
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:1:3: python3Packages is an argument of this file's function, not nixpkgs_pinned.python3Packages: "
        "left alone (rename-attr without 'base' renames arguments)"
    ]


def test_inherit_from_is_reported_with_its_location(tmp_path):
    root = _tree(tmp_path, "let\n  inherit (nixpkgs_pinned) python3Packages;\nin python3Packages.torch\n")
    plan, changed = run_step("rename-attr", BASED, root)
    assert changed == {}
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:2:28: inherit (nixpkgs_pinned) python3Packages: not renamed (it also names the binding); "
        "write `python3Packages = nixpkgs_pinned.python313Packages;` if that is meant"
    ]


def test_an_inherited_argument_is_left_alone_with_a_warning(tmp_path):
    text = "{ python3Packages }:\n{ inherit python3Packages; torch = python3Packages.torch; }\n"
    plan, changed = run_step("rename-attr", ANY, _tree(tmp_path, text))
    assert changed == {}
    assert _warnings(plan) == [
        "inherit python3Packages: renaming argument python3Packages would rename this attribute too: argument left alone"
    ]


def test_an_inner_binding_that_would_capture_the_new_name_stops_the_argument_rename(tmp_path):
    text = "{ python3Packages }:\nlet python313Packages = 1; in python3Packages.torch\n"
    plan, changed = run_step("rename-attr", ANY, _tree(tmp_path, text))
    assert changed == {}
    assert "bound here by an inner let" in _warnings(plan)[0]


def test_a_function_that_already_takes_the_new_name_is_left_alone(tmp_path):
    text = "{ python3Packages, python313Packages }:\npython3Packages.torch\n"
    plan, changed = run_step("rename-attr", ANY, _tree(tmp_path, text))
    assert changed == {}
    assert _warnings(plan) == ["the function already takes python313Packages: argument python3Packages left alone"]


def test_a_name_only_a_with_supplies_is_reported(tmp_path):
    text = "with nixpkgs_pinned; [ python3Packages.torch ]\n"
    plan, changed = run_step("rename-attr", BASED, _tree(tmp_path, text))
    assert changed == {}
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:1:24: python3Packages here comes from a `with`: not renamed (check it by hand)"
    ]


def test_a_lexical_binding_wins_over_with(tmp_path):
    text = "{ python3Packages }:\nwith pkgs; python3Packages.torch\n"
    plan, changed = run_step("rename-attr", ANY, _tree(tmp_path, text))
    assert changed["recipe.nix"] == b"{ python313Packages }:\nwith pkgs; python313Packages.torch\n"
    assert _warnings(plan) == []


@pytest.mark.parametrize(
    "params, message",
    [
        ({"to": "x"}, "missing parameter 'from'"),
        ({"from": "python3Packages"}, "missing parameter 'to'"),
        ({"from": "a", "to": "a"}, "'to' is the same name as 'from'"),
        ({"from": "a", "to": "b c"}, "'to' must be a plain Nix identifier, not 'b c'"),
        ({"from": "a", "to": "in"}, "'to' must be a plain Nix identifier, not 'in'"),
        ({"from": "a", "to": "b", "base": "x.y"}, "'base' must be a plain Nix identifier"),
    ],
)
def test_parameter_errors_name_the_key(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()["rename-attr"].parse_params(params)
    assert message in str(error.value)


def test_recipe_key_from_maps_to_field_from_(tmp_path):
    params = bundled_kinds()["rename-attr"].parse_params(ANY)
    assert params.from_ == "python3Packages" and params.to == "python313Packages"
