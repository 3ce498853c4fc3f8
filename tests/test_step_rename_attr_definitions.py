"""rename-attr and attributes the file defines itself (issue 23 §1): overlays, packageOverrides, `//`, let aliases.

Renaming `nixpkgs_pinned.python3Packages` when an overlay of the same file defines
`python3Packages` would silently drop the overlay from the build. Default: the file is
refused, naming the definition and the use; `definitions = "rename"` renames both.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import git
from pinshift.errors import ParamError
from pinshift.planning.plan import Outcome
from pinshift.steps.registry import bundled_kinds
from step_golden import STEPS, canonical_changes, expected, run_case, run_step

BASED = {"from": "python3Packages", "to": "python313Packages", "base": "nixpkgs_pinned"}
ANY = {"from": "python3Packages", "to": "python313Packages"}
RENAME = {"definitions": "rename"}
RENAMED = ("python3Packages", "python313Packages")
KIND = STEPS / "rename-attr"

# case: (params, tokens renamed in the canonical parse); each with and without `base`
DEFINED = {"overlay-torch": 3, "package-overrides": 4, "let-alias": 3}
PLAIN = {"plain-let-alias": 2}
REFUSAL_TAIL = ("renaming only the use to python313Packages would bypass this definition; file left unchanged "
                "(set definitions = \"rename\" to rename both)")


def _tree(tmp_path, text: str):
    (tmp_path / "recipe.nix").write_text(text)
    return tmp_path


def _only(plan):
    [change] = plan.files
    return change


# --- goldens (expected files written by hand) ------------------------------------------------


@pytest.mark.parametrize("params", [BASED, ANY], ids=["base", "no-base"])
@pytest.mark.parametrize("case", sorted(DEFINED))
def test_rename_renames_the_definition_with_its_uses(case, params, tmp_path):
    plan, _, after = run_case("rename-attr", case, {**params, **RENAME}, tmp_path)
    assert after == expected("rename-attr", case)
    assert _only(plan).outcome is Outcome.CHANGED
    assert [str(w) for w in plan.warnings] == []


@pytest.mark.parametrize("params", [BASED, ANY], ids=["base", "no-base"])
@pytest.mark.parametrize("case", sorted(PLAIN))
def test_a_file_without_a_definition_is_renamed_as_before(case, params, tmp_path):
    for definitions in ("refuse", "rename"):
        (tmp_path / definitions).mkdir()
        plan, _, after = run_case("rename-attr", case, {**params, "definitions": definitions}, tmp_path / definitions)
        assert after == expected("rename-attr", case)
        assert plan.warnings == [] and plan.refused == []


@pytest.mark.parametrize("case", sorted(DEFINED) + sorted(PLAIN))
def test_outputs_parse_and_change_only_the_renamed_tokens(case, nix_oracle):
    before = (KIND / f"{case}.nix").read_bytes()
    changes = canonical_changes(nix_oracle, before, expected("rename-attr", case))
    assert changes == [RENAMED] * {**DEFINED, **PLAIN}[case]


@pytest.mark.parametrize("case", sorted(DEFINED) + sorted(PLAIN))
def test_second_run_on_the_output_changes_nothing(case, tmp_path):
    shutil.copyfile(KIND / f"{case}.expected.nix", tmp_path / "recipe.nix")
    for params in (BASED, ANY):
        plan, changed = run_step("rename-attr", {**params, **RENAME}, tmp_path)
        assert changed == {} and plan.refused == [] and plan.warnings == []


# --- default: refuse, naming both places -------------------------------------------------------


@pytest.mark.parametrize("case, reason", [
    ("overlay-torch", "recipe.nix:15:9: python3Packages is defined here (in an overlay) and used at recipe.nix:32:19 "
                      "(nixpkgs_pinned.python3Packages): "),
    ("package-overrides", "recipe.nix:8:7: python3Packages is defined here (in packageOverrides) and used at "
                          "recipe.nix:14:18 (nixpkgs_pinned.python3Packages) and 1 more use: "),
    ("let-alias", "recipe.nix:4:5: python3Packages is defined here (in an overlay) and used at recipe.nix:11:23 "
                  "(nixpkgs_pinned.python3Packages): "),
])
def test_default_refuses_the_file_naming_definition_and_use(case, reason, tmp_path):
    plan, before, after = run_case("rename-attr", case, BASED, tmp_path)
    assert after == before
    change = _only(plan)
    assert change.outcome is Outcome.REFUSED and change.edits == []
    assert change.reason == reason + REFUSAL_TAIL
    # refused again on a second run: the refusal is stable, nothing creeps in
    plan_again, changed = run_step("rename-attr", BASED, tmp_path / case)
    assert changed == {} and _only(plan_again).reason == change.reason


def test_without_base_the_right_hand_side_prev_use_is_refused_too(tmp_path):
    """Issue 23: without `base`, `prev.python3Packages` on the right-hand side was renamed, the binding name not."""
    plan, before, after = run_case("rename-attr", "overlay-torch", ANY, tmp_path)
    assert after == before
    assert _only(plan).reason == ("recipe.nix:15:9: python3Packages is defined here (in an overlay) and used at "
                                  "recipe.nix:32:19 (nixpkgs_pinned.python3Packages) and 1 more use: " + REFUSAL_TAIL)


def test_only_the_definitions_overlay_use_is_enough_to_refuse(tmp_path):
    text = ("{ python3Packages }:\nlet p = import ./n.nix { overlays = [ (final: prev: {\n"
            "  python3Packages = prev.python3Packages.override { }; }) ]; };\nin python3Packages.torch\n")
    plan, changed = run_step("rename-attr", ANY, _tree(tmp_path, text))
    assert changed == {}
    assert _only(plan).reason == ("recipe.nix:3:3: python3Packages is defined here (in an overlay) and used at "
                                  "recipe.nix:3:26 (prev.python3Packages): " + REFUSAL_TAIL)


SHAPES = {
    "extend": "let nixpkgs_pinned = (import ./n.nix { }).extend (final: prev: { python3Packages = 1; });\n"
              "in nixpkgs_pinned.python3Packages.torch\n",
    "appendOverlays, composeManyExtensions": "{ pkgs, lib }:\nlet nixpkgs_pinned = pkgs.appendOverlays [\n"
              "  (lib.composeManyExtensions [ (f: p: { python3Packages = 1; }) ]) ];\nin nixpkgs_pinned.python3Packages.torch\n",
    "inherit overlays": "let overlays = [ (f: p: { python3Packages = 1; }) ];\n"
                        "nixpkgs_pinned = import ./n.nix { inherit overlays; };\nin nixpkgs_pinned.python3Packages.torch\n",
    "overlays joined with ++": "let a = [ ]; b = [ (f: p: { python3Packages = 1; }) ];\n"
                               "nixpkgs_pinned = import ./n.nix { overlays = a ++ b; };\nin nixpkgs_pinned.python3Packages.torch\n",
    "nested config": "let nixpkgs_pinned = import ./n.nix {\n  config = { packageOverrides = pkgs: { python3Packages = 1; }; };\n"
                     "};\nin nixpkgs_pinned.python3Packages.torch\n",
    "let, with, if in the overlay": "let nixpkgs_pinned = import ./n.nix { overlays = [ (f: p: let x = 1; in with p;\n"
                                    "  if x == 1 then { python3Packages = 1; } else { }) ]; };\nin nixpkgs_pinned.python3Packages.torch\n",
    "rec binding the select goes through": "rec {\n  pinned = import ./n.nix { overlays = [ (f: p: { python3Packages = 1; }) ]; };\n"
                                           "  nixpkgs_pinned = pinned;\n  torch = nixpkgs_pinned.python3Packages.torch;\n}\n",
    "// merge": "let nixpkgs_pinned = import ./n.nix { } // { python3Packages = 1; };\n"
                "in nixpkgs_pinned.python3Packages.torch\n",
    "has-attr test": "let nixpkgs_pinned = import ./n.nix { overlays = [ (f: p: { python3Packages = 1; }) ]; };\n"
                     "in nixpkgs_pinned ? python3Packages\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_of_definition_is_found(shape, tmp_path, nix_oracle):
    text = SHAPES[shape]
    assert nix_oracle(text.encode())[0], "the fixture itself must be valid Nix"
    plan, changed = run_step("rename-attr", BASED, _tree(tmp_path, text))
    assert changed == {}
    assert "python3Packages is defined here" in _only(plan).reason
    plan, changed = run_step("rename-attr", {**BASED, **RENAME}, tmp_path)
    after = changed["recipe.nix"]
    assert b"python3Packages" not in after and after.count(b"python313Packages") == text.count("python3Packages")
    assert canonical_changes(nix_oracle, text.encode(), after) == [RENAMED] * text.count("python3Packages")


# --- no false alarms ----------------------------------------------------------------------------


@pytest.mark.parametrize("text, renamed", [
    # another import has the overlay; base restricts the step to the plain one
    ("let other = import ./n.nix { overlays = [ (f: p: { python3Packages = 1; }) ]; };\n"
     "nixpkgs_pinned = import ./n.nix { };\nin [ nixpkgs_pinned.python3Packages.torch other.python3Packages.x ]\n",
     "let other = import ./n.nix { overlays = [ (f: p: { python3Packages = 1; }) ]; };\n"
     "nixpkgs_pinned = import ./n.nix { };\nin [ nixpkgs_pinned.python313Packages.torch other.python3Packages.x ]\n"),
    # the overlay defines something else (the seed's cudaPackages overlay) and reads the set
    ("let nixpkgs_pinned = import ./n.nix { overlays = [ (f: p: { cudaPackages = f.cudaPackages_12_9;\n"
     "  torch = p.python3Packages.torch; }) ]; };\nin nixpkgs_pinned.python3Packages.torch\n",
     "let nixpkgs_pinned = import ./n.nix { overlays = [ (f: p: { cudaPackages = f.cudaPackages_12_9;\n"
     "  torch = p.python3Packages.torch; }) ]; };\nin nixpkgs_pinned.python313Packages.torch\n"),
    # a let variable named like the set, built from it: not an attribute of the set
    ("nixpkgs_pinned: let python3Packages = nixpkgs_pinned.python3Packages.override { }; in python3Packages.torch\n",
     "nixpkgs_pinned: let python3Packages = nixpkgs_pinned.python313Packages.override { }; in python3Packages.torch\n"),
])
def test_definitions_elsewhere_do_not_stop_the_rename(text, renamed, tmp_path, nix_oracle):
    plan, changed = run_step("rename-attr", BASED, _tree(tmp_path, text))
    assert changed["recipe.nix"].decode() == renamed
    assert canonical_changes(nix_oracle, text.encode(), changed["recipe.nix"]) == [RENAMED] * (
        renamed.count("python313Packages"))
    assert plan.warnings == [] and plan.refused == []


def test_overlays_from_another_file_are_warned_not_checked(tmp_path):
    text = ("let nixpkgs_pinned = import ./n.nix { overlays = [ (import ./overlay.nix) ]; };\n"
            "in [ nixpkgs_pinned.python3Packages.torch nixpkgs_pinned.python3Packages.numpy ]\n")
    plan, changed = run_step("rename-attr", BASED, _tree(tmp_path, text))
    assert changed["recipe.nix"].count(b"nixpkgs_pinned.python313Packages") == 2
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:2:21: nixpkgs_pinned.python3Packages and 1 more use reads a set built with "
        "`import ./overlay.nix`, which this file does not show (at recipe.nix:1:53): not checked for a "
        "definition of python3Packages; look there before relying on the rename"
    ]


# --- definitions = "rename": refused when the meaning cannot be kept --------------------------------

OVERLAY = "import ./n.nix { overlays = [ (final: prev: { python3Packages = prev.python3Packages; }) ]; }"


@pytest.mark.parametrize("text, reason", [
    (f"let nixpkgs_pinned = {OVERLAY};\n  pinned = nixpkgs_pinned;\nin [ pinned.python3Packages.a nixpkgs_pinned.python3Packages.b ]\n",
     "recipe.nix:3:13: definitions = \"rename\": pinned.python3Packages also reads the definition at recipe.nix:1:68 "
     "and is not renamed (base = nixpkgs_pinned); renaming the definition would change what it builds; file left unchanged"),
    (f"let nixpkgs_pinned = {OVERLAY};\nin {{ inherit (nixpkgs_pinned) python3Packages; t = nixpkgs_pinned.python3Packages.torch; }}\n",
     "recipe.nix:2:31: definitions = \"rename\": inherit (nixpkgs_pinned) python3Packages; reads the definition at "
     "recipe.nix:1:68 and cannot be renamed; renaming the definition would change what it builds; file left unchanged"),
    (f"let nixpkgs_pinned = {OVERLAY};\nin [ nixpkgs_pinned.python3Packages.a (with nixpkgs_pinned; python3Packages.b) ]\n",
     "recipe.nix:2:61: definitions = \"rename\": python3Packages (from `with nixpkgs_pinned;`) reads the definition at "
     "recipe.nix:1:68 and cannot be renamed; renaming the definition would change what it builds; file left unchanged"),
    ("let nixpkgs_pinned = import ./n.nix { overlays = [ (f: p: { python3Packages = 1; python313Packages = 2; }) ]; };\n"
     "in nixpkgs_pinned.python3Packages.torch\n",
     "recipe.nix:1:82: definitions = \"rename\": python313Packages is already defined here (in an overlay); renaming "
     "the definition of python3Packages at recipe.nix:1:61 would define it twice; file left unchanged"),
    ("let nixpkgs_pinned = import ./n.nix { overlays = [ (f: p: { inherit (p) python3Packages; }) ]; };\n"
     "in nixpkgs_pinned.python3Packages.torch\n",
     "recipe.nix:1:73: definitions = \"rename\": python3Packages is inherited here (in an overlay): an inherit also "
     "names where the value comes from; write it as a binding first; file left unchanged"),
    ("let sets = rec { python3Packages = { }; torch = python3Packages.torch; };\nin sets.python3Packages.numpy\n",
     "recipe.nix:1:49: definitions = \"rename\": python3Packages here refers to the rec binding at recipe.nix:1:18; "
     "rename it by hand; file left unchanged"),
])
def test_rename_refuses_when_a_reader_of_the_definition_would_not_follow(text, reason, tmp_path, nix_oracle):
    assert nix_oracle(text.encode())[0]
    params = {**(BASED if "nixpkgs_pinned" in text else ANY), **RENAME}
    plan, changed = run_step("rename-attr", params, _tree(tmp_path, text))
    assert changed == {}
    assert _only(plan).reason == reason


def test_every_reason_is_counted_the_first_is_shown(tmp_path):
    text = (f"let nixpkgs_pinned = {OVERLAY};\nin {{ inherit (nixpkgs_pinned) python3Packages;\n"
            "  t = with nixpkgs_pinned; python3Packages.torch; u = nixpkgs_pinned.python3Packages; }\n")
    plan, changed = run_step("rename-attr", {**BASED, **RENAME}, _tree(tmp_path, text))
    assert changed == {}
    reason = _only(plan).reason
    assert reason.startswith("recipe.nix:2:31: definitions = \"rename\": inherit (nixpkgs_pinned) python3Packages;")
    assert reason.endswith("file left unchanged (and 1 more)")


def test_rename_renames_final_and_prev_uses_outside_base(tmp_path, nix_oracle):
    text = ("let nixpkgs_pinned = import ./n.nix { overlays = [\n"
            "  (final: prev: { python3Packages = prev.python3Packages.override { }; })\n"
            "  (final: prev: { tool = final.python3Packages.callPackage ./tool.nix { }; })\n"
            "]; };\nin nixpkgs_pinned.python3Packages.torch\n")
    plan, changed = run_step("rename-attr", {**BASED, **RENAME}, _tree(tmp_path, text))
    assert changed["recipe.nix"].decode() == text.replace("python3Packages", "python313Packages")
    assert [e.reason for e in _only(plan).edits] == ["rename-attr: python3Packages -> python313Packages"] * 4
    assert canonical_changes(nix_oracle, text.encode(), changed["recipe.nix"]) == [RENAMED] * 4


@pytest.mark.parametrize("text, described", [
    ("final: prev:\n{\n  python3Packages = prev.python3Packages.override { };\n"
     "  tool = final.python3Packages.callPackage ./tool.nix { };\n}\n", "in an overlay"),
    ("[\n  (self: super: {\n  python3Packages = super.python3Packages.override { }; })\n]\n", "in an overlay"),
    ("{ allowUnfree = true;\n  packageOverrides = pkgs: {\n  python3Packages = pkgs.python3Packages.override { }; };\n}\n",
     "in packageOverrides"),
])
def test_a_file_that_is_an_overlay_or_a_config_is_refused_then_renamed_with_a_warning(text, described, tmp_path,
                                                                                        nix_oracle):
    """The set is built by another file: its users elsewhere read the renamed definition too."""
    plan, changed = run_step("rename-attr", ANY, _tree(tmp_path, text))
    assert changed == {}
    assert _only(plan).reason.startswith(f"recipe.nix:3:3: python3Packages is defined here ({described}) and used at ")
    plan, changed = run_step("rename-attr", {**ANY, **RENAME}, tmp_path)
    assert changed["recipe.nix"].decode() == text.replace("python3Packages", "python313Packages")
    assert canonical_changes(nix_oracle, text.encode(), changed["recipe.nix"]) == [RENAMED] * text.count("python3Packages")
    assert [str(w) for w in plan.warnings] == [
        f"recipe.nix:3:3: python3Packages renamed to python313Packages here ({described}) for a set another file "
        "builds: the files that read python3Packages from that set must say python313Packages too; check them"
    ]


def test_a_flox_recipe_function_is_not_taken_for_an_overlay(tmp_path):
    text = "{ pkgs, python3Packages }:\n{ python3Packages = python3Packages.override { }; }\n"
    plan, changed = run_step("rename-attr", ANY, _tree(tmp_path, text))
    assert changed["recipe.nix"] == b"{ pkgs, python313Packages }:\n{ python3Packages = python313Packages.override { }; }\n"
    assert plan.warnings == [] and plan.refused == []


# --- parameters ---------------------------------------------------------------------------------


def test_definitions_parameter_is_refuse_or_rename():
    kind = bundled_kinds()["rename-attr"]
    assert kind.parse_params(ANY).definitions == "refuse"
    assert kind.parse_params({**ANY, **RENAME}).definitions == "rename"
    with pytest.raises(ParamError) as error:
        kind.parse_params({**ANY, "definitions": "ignore"})
    assert str(error.value).endswith("'definitions' must be one of 'refuse', 'rename', not 'ignore'")


# --- through the CLI: apply and migrate ------------------------------------------------------------


def test_apply_writes_nothing_while_a_file_is_refused(run_cli, tmp_path):
    shutil.copyfile(KIND / "overlay-torch.nix", tmp_path / "torch.nix")
    shutil.copyfile(KIND / "plain-let-alias.nix", tmp_path / "plain.nix")
    args = ("apply", "rename-attr", "--set", "from=python3Packages", "--set", "to=python313Packages",
            "--set", "base=nixpkgs_pinned")
    result = run_cli(*args, ".", cwd=tmp_path)
    assert result.exit_code == 1
    assert "refused  torch.nix:15:9: python3Packages is defined here (in an overlay)" in result.stderr
    assert (tmp_path / "torch.nix").read_bytes() == (KIND / "overlay-torch.nix").read_bytes()
    assert (tmp_path / "plain.nix").read_bytes() == (KIND / "plain-let-alias.nix").read_bytes()
    result = run_cli(*args, "--set", "definitions=rename", ".", cwd=tmp_path)
    assert result.exit_code == 0, result
    assert (tmp_path / "torch.nix").read_bytes() == expected("rename-attr", "overlay-torch")
    assert (tmp_path / "plain.nix").read_bytes() == expected("rename-attr", "plain-let-alias")


RECIPE = """name = "py313"
base = "main"
target = "py313"
files = [".flox/pkgs/*.nix"]

[[steps]]
kind = "rename-attr"
title = "Use python313Packages"
[steps.params]
from = "python3Packages"
to = "python313Packages"
base = "nixpkgs_pinned"
"""


def test_migrate_stops_before_creating_anything_then_renames_with_the_parameter(make_repo, run_cli):
    files = {".flox/pkgs/torch.nix": (KIND / "overlay-torch.nix").read_bytes(),
             ".flox/pkgs/plain.nix": (KIND / "plain-let-alias.nix").read_bytes(),
             ".pinshift/recipes/py313.toml": RECIPE}
    root = make_repo(files)
    result = run_cli("migrate", "py313", "--repo", str(root))
    assert result.exit_code == 1
    assert result.stderr == ("pinshift: error: step 1/1 (rename-attr) failed: .flox/pkgs/torch.nix:15:9: python3Packages "
                             "is defined here (in an overlay) and used at .flox/pkgs/torch.nix:32:19 "
                             f"(nixpkgs_pinned.python3Packages): {REFUSAL_TAIL}; no branch was created\n")
    assert git(root, "branch", "--list", "py313") == ""
    (root / ".pinshift/recipes/py313.toml").write_text(RECIPE + 'definitions = "rename"\n')
    git(root, "commit", "-qam", "rename definitions too")
    result = run_cli("migrate", "py313", "--repo", str(root))
    assert result.exit_code == 0, result
    assert git(root, "show", "py313:.flox/pkgs/torch.nix") == expected("rename-attr", "overlay-torch").decode()
    assert git(root, "show", "py313:.flox/pkgs/plain.nix") == expected("rename-attr", "plain-let-alias").decode()
