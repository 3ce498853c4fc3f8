"""migrate's build check evaluates the start and the last tree, and the trees in between only where they must name a step.

Through the real CLI on real repositories, evaluated by the real nix-instantiate (in-process, so the count of
recipes each tree had evaluated, pinshift.evaluation.evaluation.EVALUATED, is this run's): four steps that each change
what every recipe builds as their kinds declare evaluate the start and step 4 only; a rename past an overriding
overlay as step 2 of 4 is warned on step 2 (and nowhere else), and removing an imported recipe as step 2 of 4 is
refused naming step 2, the trees in between evaluated to find it; a step that changes the recipes' bytes but not what
they build, and a step changing no recipe at all, cost no evaluation of their trees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from build_repos import PKGS, fixture_files
from conftest import git, require_nix
from pinshift.evaluation import evaluation
from pinshift.facts.recipe_set import build_recipe_paths

OVERLAY_FILES = ("pytorch-python313-cpu-avx2", "pytorch-python313-cuda12_9-sm120-avx2",
                 "pytorch-python313-cuda12_9-sm90-avx512")


def binding(path: str, value: str) -> str:
    return (f'[[steps]]\nkind = "set-binding"\ntitle = "Set {path}"\n[steps.params]\npath = "{path}"\n'
            f'value = "{value}"\nafter = "pname"\nwhere = "result"\n\n')


RENAME = ('[[steps]]\nkind = "rename-attr"\ntitle = "Use python313Packages"\n[steps.params]\nfrom = "python3Packages"\n'
          'to = "python313Packages"\nbase = "nixpkgs_pinned"\n\n')
REMOVE = ('[[steps]]\nkind = "remove-files"\ntitle = "Drop the SM75 PyTorch"\n[steps.params]\n'
          'select = [".flox/pkgs/pytorch-*-sm75-*.nix"]\nreferences = "allow-dangling"\n\n')
LOST = ("the package set's override of torch (an overlay or packageOverrides on python3Packages) no longer applies "
        "after this rename-attr step: version 2.10.0 → «python313Packages.torch.version»")


def recipe(tmp_path: Path, *steps: str) -> str:
    path = tmp_path / "recipe.toml"
    path.write_text('name = "check"\ndescription = "a test recipe"\nfiles = [".flox/pkgs/**/*.nix"]\n\n' + "".join(steps))
    return str(path)


@pytest.fixture
def counted():
    require_nix()
    evaluation.EVALUATED.clear()
    yield evaluation.EVALUATED
    evaluation.EVALUATED.clear()


def migrate(run_cli, root: Path, path: str, *extra: str):
    return run_cli("migrate", path, "--repo", str(root), "--from", "main", "--branch", "next", *extra)


def test_steps_that_change_only_what_they_declare_evaluate_the_start_and_the_last_tree(make_repo, run_cli, tmp_path,
                                                                                       counted):
    root = make_repo(fixture_files("overlay"))
    steps = [binding("doCheck", "false"), binding("dontStrip", "true"), binding("enableParallelBuilding", "true"),
             binding("doInstallCheck", "false")]
    result = migrate(run_cli, root, recipe(tmp_path, *steps), "--dry-run", "--format", "json")
    assert result.exit_code == 0, result
    data = json.loads(result.stdout)
    assert [s["warnings"] for s in data["steps"]] == [[], [], [], []]
    changed = [r for r in data["builds"]["recipes"] if r["status"] == "changed"]
    assert len(changed) == 3 and all(
        {"doCheck", "dontStrip", "enableParallelBuilding", "doInstallCheck"} <= {c["attribute"] for c in r["changes"]}
        for r in changed)
    nix_files = build_recipe_paths(fixture_files("overlay"))  # the helper beside them is read through them
    assert dict(counted) == {"start": len(nix_files), "step 4": 3}  # the three recipes only, twice


def test_an_unintended_change_by_step_2_of_4_is_warned_on_step_2(make_repo, run_cli, tmp_path, counted):
    root = make_repo(fixture_files("overlay"))
    steps = [binding("doCheck", "false"), RENAME, binding("dontStrip", "true"), binding("enableParallelBuilding", "true")]
    result = migrate(run_cli, root, recipe(tmp_path, *steps), "--dry-run", "--format", "json")
    assert result.exit_code == 0, result
    data = json.loads(result.stdout)
    built = [[(w["path"], w["message"]) for w in s["warnings"] if "builds" in w["message"] or "override" in
              w["message"] and "no longer applies" in w["message"]] for s in data["steps"]]
    assert built[0] == built[2] == built[3] == []
    assert sorted(path for path, _ in built[1]) == [f"{PKGS}/{name}.nix" for name in OVERLAY_FILES]
    assert all(message.startswith(LOST) for _, message in built[1])
    # the ends first, then the trees in between for the three recipes the last tree cannot explain
    assert dict(counted) == {"start": len(build_recipe_paths(fixture_files("overlay"))), "step 1": 3,
                             "step 2": 3, "step 3": 3, "step 4": 3}
    text = migrate(run_cli, root, recipe(tmp_path, *steps), "--dry-run")
    assert f"warning: step 2: 3 files: {LOST}" in text.stderr


def test_a_breakage_by_step_2_of_4_is_refused_naming_step_2(make_repo, run_cli, tmp_path, counted):
    root = make_repo(fixture_files("companions"))
    steps = [binding("doCheck", "false"), REMOVE, binding("dontStrip", "true"), binding("enableParallelBuilding", "true")]
    result = migrate(run_cli, root, recipe(tmp_path, *steps))
    assert result.exit_code == 1, result
    assert result.stderr.startswith(
        f"pinshift: error: step 2/4 (remove-files) failed: {PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix: no "
        f"longer evaluates after this step: getting status of '{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix': No "
        f"such file or directory (at {PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix:10:13)")
    assert git(root, "branch", "--list", "next") == ""
    dry = json.loads(migrate(run_cli, root, recipe(tmp_path, *steps), "--dry-run", "--format", "json").stdout)
    assert [[r["path"] for r in s["refused"]] for s in dry["steps"]] == [
        [], [f"{PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix", f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix"],
        [], []]
    assert counted["step 1"] > 0 and counted["step 2"] > 0  # the trees in between were evaluated to find the step
