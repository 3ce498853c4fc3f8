"""migrate's build check with `--nixpkgs DIR`: the start and the migrated recipes evaluated at their real pins,
exported from a nixpkgs-shaped repository of real derivations (tests/real_nixpkgs.py), by the real
`nix-instantiate`, offline; a recipe the new pin breaks is refused with Nix's message, no branch made."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import git, require_nix
from real_nixpkgs import build_nixpkgs
from pinshift.demo.matrix import Variant, render_recipe

ROOT = Path(__file__).resolve().parent.parent
REPORT_SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text())
PKGS = ".flox/pkgs"
GPU, CPU = Variant("90", "avx512"), Variant("cpu", "avx2")
UNCHECKED = "unchecked: the real pins' versions and rebuilds (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    require_nix()
    root = tmp_path_factory.mktemp("nixpkgs") / "nixpkgs"
    return root, build_nixpkgs(root)


@pytest.fixture
def repo(make_repo, clone):
    _, commits = clone
    return make_repo({f"{PKGS}/{v.filename}": render_recipe(v, commits["first"], "python3Packages")
                      for v in (GPU, CPU)}, branch="base")


def recipe(tmp_path: Path, commits: dict, onto: str) -> str:
    path = tmp_path / f"to-{onto}.toml"
    path.write_text(f'name = "to-{onto}"\nbase = "base"\ntarget = "on-{onto}"\nfiles = ["{PKGS}/**/*.nix"]\n\n'
                    f'[[steps]]\nkind = "pin-swap"\ntitle = "Pin {onto}"\n[steps.params]\n'
                    f'old = "{commits["first"][:7]}"\nnew = "{commits[onto]}"\n')
    return str(path)


def section(stdout: str) -> list[str]:
    return stdout.split("What the recipes build\n", 1)[1].split("\n\n", 1)[0].splitlines()


def test_a_migration_onto_a_new_build_says_every_recipe_rebuilds_and_commits(clone, repo, run_cli, tmp_path):
    nixpkgs, commits = clone
    args = ("migrate", recipe(tmp_path, commits, "patched"), "--repo", str(repo), "--nixpkgs", str(nixpkgs))
    dry = run_cli(*args, "--dry-run")
    assert dry.exit_code == 0, dry
    assert section(dry.stdout)[1:] == [
        f"real: 2 recipes rebuild: torch 2.9.1 → 2.9.1 (first: {PKGS}/{CPU.filename}; --verbose lists all)",
        "2 recipes at the real pins: 2 rebuild"]
    data = json.loads(run_cli(*args, "--dry-run", "--format", "json").stdout)
    jsonschema.validate(data, REPORT_SCHEMA)
    real = data["builds"]["real"]
    assert real["checked"] is True and real["counts"]["rebuild"] == 2
    assert {r["after"]["build"]["version"] for r in real["recipes"]} == {"2.9.1"}
    made = run_cli(*args)
    assert made.exit_code == 0, made
    assert commits["patched"] in git(repo, "show", f"on-patched:{PKGS}/{CPU.filename}")


def test_a_pin_that_renames_a_parameter_is_refused_with_nix_message_and_no_branch(clone, repo, run_cli, tmp_path):
    nixpkgs, commits = clone
    args = ("migrate", recipe(tmp_path, commits, "renamed"), "--repo", str(repo), "--nixpkgs", str(nixpkgs))
    refusal = (f"{PKGS}/{GPU.filename}: no longer evaluates at its real pin: anonymous function at "
               f"<nixpkgs {commits['renamed'][:7]}>/pkgs/development/python-modules/torch/default.nix:1:1 called "
               f"with unexpected argument 'gpuTargets' (at {PKGS}/{GPU.filename}:32:4) (pinshift migrate "
               "--allow-broken commits it anyway)")
    made = run_cli(*args)
    assert (made.exit_code, made.stdout) == (1, "")
    assert made.stderr == f"pinshift: error: step 1/1 (pin-swap) failed: {refusal}; no branch was created\n"
    assert "on-renamed" not in git(repo, "branch", "--list")
    dry = run_cli(*args, "--dry-run")
    assert dry.exit_code == 1
    assert f"refused: {refusal}" in dry.stdout
    assert f"real: {PKGS}/{CPU.filename}: rebuild: torch 2.9.1 → 2.10.0" in dry.stdout
    allowed = run_cli(*args, "--allow-broken")
    assert allowed.exit_code == 0, allowed
    assert "--allow-broken: 1 recipe no longer evaluate at their real pins" in allowed.stdout
    assert "on-renamed" in git(repo, "branch", "--list")


def test_an_unchanged_derivation_is_no_rebuild(clone, repo, run_cli, tmp_path):
    nixpkgs, commits = clone
    result = run_cli("migrate", recipe(tmp_path, commits, "same"), "--repo", str(repo), "--nixpkgs", str(nixpkgs),
                     "--dry-run")
    assert result.exit_code == 0, result
    assert section(result.stdout)[-1] == "2 recipes at the real pins: 2 no rebuild"


def test_without_a_clone_the_section_says_what_is_unchecked(clone, repo, run_cli, tmp_path, monkeypatch):
    _, commits = clone
    monkeypatch.delenv("PINSHIFT_NIXPKGS", raising=False)
    args = ("migrate", recipe(tmp_path, commits, "renamed"), "--repo", str(repo), "--dry-run")
    result = run_cli(*args)
    assert result.exit_code == 0, result  # the stand-in cannot know the real pin renamed a parameter
    assert section(result.stdout)[-1] == UNCHECKED
    data = json.loads(run_cli(*args, "--format", "json").stdout)
    jsonschema.validate(data, REPORT_SCHEMA)
    assert data["builds"]["real"] == {"checked": False, "unchecked": [UNCHECKED.removeprefix("unchecked: ")]}
    markdown = run_cli(*args, "--format", "markdown").stdout
    assert f"> Unchecked: {UNCHECKED.removeprefix('unchecked: ')}" in markdown


def test_pinshift_nixpkgs_names_the_clone_for_migrate(clone, repo, run_cli, tmp_path, monkeypatch):
    nixpkgs, commits = clone
    monkeypatch.setenv("PINSHIFT_NIXPKGS", str(nixpkgs))
    result = run_cli("migrate", recipe(tmp_path, commits, "renamed"), "--repo", str(repo), "--dry-run")
    assert result.exit_code == 1 and "no longer evaluates at its real pin" in result.output
