"""Acceptance for issue 31: recipe branches whose torchvision/torchaudio companions import their PyTorch recipe.

One real repository (tests/companion_repo.py) holds a Flox-args `main` (the demo's 58 PyTorch recipes and 4
companions: 62 files, the seed's shape) and a pinned branch (the seed migration's 66 pinned recipes and 4
companions), migrated once with the real CLI:

- `python312` (rename-files python313 -> python312, rename-attr python313Packages -> python312Packages) from
  the pinned branch, and rename-files alone from `main`: every import still names a file, and the companions
  equal the hand-written files of tests/fixtures/graph/python312 and flox-python312;
- the bundled `flox-args-to-pinned` from `main`: 62 of 62 files converted, no call passing an argument its
  callee does not take, the companions equal tests/fixtures/graph/flox-pinned.

Every written file parses with `nix-instantiate --parse`, and every file of the resulting branches evaluates
against a stub nixpkgs (tests/fixtures/graph/stub-nixpkgs), each companion to a build on the PyTorch recipe
of its own variant.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from companion_repo import COMPANIONS, GRAPH, PKGS, commit_branch, flox_files, pinned_files, show, tree_of
from conftest import git, require_nix
from pinshift.evaluation.clone_eval import nix_string
from pinshift.cli import main

STUB = GRAPH / "stub-nixpkgs"
PYTHON312 = """name = "python312"
description = "python313 recipes -> python312"
files = [".flox/pkgs/**/*.nix"]

[[steps]]
kind = "rename-files"
title = "Rename the recipes to python312"
[steps.params]
from = "python313"
to = "python312"

[[steps]]
kind = "rename-attr"
title = "Use python312Packages"
[steps.params]
from = "python313Packages"
to = "python312Packages"
base = "nixpkgs_pinned"
"""
RENAME_ONLY = PYTHON312[: PYTHON312.index("\n[[steps]]\nkind = \"rename-attr\"")] + "\n"


def pinshift(*args: str) -> tuple[int, str, str]:
    runner = CliRunner()
    with runner.isolation() as (out, err, _):
        code = main(list(args))
        return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """The repository, its three migrated branches, and what each migrate printed."""
    root = tmp_path_factory.mktemp("companions") / "build-pytorch"
    commit_branch(root, flox_files(), "main", "Flox-args recipes and companions")
    commit_branch(root, pinned_files(), "pinned", "Pinned recipes and companions")
    recipes = tmp_path_factory.mktemp("recipes")
    (recipes / "python312.toml").write_text(PYTHON312)
    (recipes / "rename-only.toml").write_text(RENAME_ONLY.replace('name = "python312"', 'name = "rename-only"'))
    printed = {}
    for recipe, base, branch in ((recipes / "python312.toml", "pinned", "py312"),
                                 (recipes / "rename-only.toml", "main", "flox312"),
                                 ("flox-args-to-pinned", "main", "main-pinned")):
        code, out, err = pinshift("migrate", str(recipe), "--repo", str(root), "--from", base, "--branch", branch)
        assert code == 0, (out, err)
        printed[branch] = out
    return root, printed


def _companions(style: str) -> list[str]:
    python, cuda = {"python312": ("python312", "12_9"), "flox-python312": ("python312", "12_8"),
                    "flox-pinned": ("python313", "12_8")}[style]
    return [f"{name}-{python}-cuda{cuda}-sm{sm}-avx.nix" for name, sm in COMPANIONS]


# --- python313 -> python312 -------------------------------------------------------------------------


@pytest.mark.parametrize("name", _companions("python312"))
def test_renamed_pinned_companions_equal_the_hand_written_files(repo, name):
    root, _ = repo
    assert show(root, "py312", f"{PKGS}/{name}") == (GRAPH / "python312" / name).read_bytes()


@pytest.mark.parametrize("name", _companions("flox-python312"))
def test_renamed_flox_companions_equal_the_hand_written_files(repo, name):
    root, _ = repo
    assert show(root, "flox312", f"{PKGS}/{name}") == (GRAPH / "flox-python312" / name).read_bytes()


@pytest.mark.parametrize("branch, count", [("py312", 70), ("flox312", 62)])
def test_every_recipe_is_renamed_and_every_import_names_a_file(repo, branch, count, tmp_path, run_cli):
    root, _ = repo
    paths = [p for p in tree_of(root, branch) if p.endswith(".nix")]
    assert len(paths) == count and not any("python313" in p for p in paths)
    checkout = tmp_path / branch
    git(root, "worktree", "add", "-q", "--detach", str(checkout), branch)
    result = run_cli("lint", "--select", "R", "--format", "json", str(checkout / PKGS))
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["findings"] == []
    for name, sm in COMPANIONS:  # each companion imports the renamed PyTorch recipe of its own variant
        companion = next(p for p in paths if p.startswith(f"{PKGS}/{name}-") and f"-sm{sm}-" in p)
        text = show(root, branch, companion).decode()
        imported = text.split("./pytorch-", 1)[1].split(".nix", 1)[0]
        assert f"{PKGS}/pytorch-{imported}.nix" in paths and imported.startswith("python312-") and f"-sm{sm}-" in imported


def test_the_report_groups_the_references_under_the_rename(repo, tmp_path):
    root, _ = repo
    recipe = tmp_path / "python312.toml"
    recipe.write_text(PYTHON312)
    code, out, _ = pinshift("migrate", str(recipe), "--repo", str(root), "--from", "pinned", "--branch", "again",
                            "--dry-run")
    assert code == 0
    assert "note: 4 files: import of a renamed recipe follows it (first: .flox/pkgs/torchaudio-python312-cuda12_9-" \
           "sm61-avx.nix:19:26; --verbose lists all)" in out
    assert "note: 2 times in 1 file: mentions a renamed recipe by name (text, not a Nix reference): left as it is " \
           "(first: README.md:5:4; --verbose lists all)" in out
    assert "step 1/2 rename-files: Rename the recipes to python312 — 70 files changed (70 renamed), 144 edits" in out


# --- Flox arguments -> pinned, the bundled recipe ------------------------------------------------------


def test_flox_args_to_pinned_converts_62_of_62(repo):
    root, printed = repo
    assert "1/6" in printed["main-pinned"] and "— 55 files," in printed["main-pinned"] and "— 7 files," in printed["main-pinned"]
    changed = git(root, "diff", "--name-only", "main..main-pinned").split()
    recipes = [p for p in tree_of(root, "main") if p.endswith(".nix")]
    assert len(recipes) == 62 and sorted(changed) == sorted(recipes)
    for path in recipes:
        text = show(root, "main-pinned", path).decode()
        assert "{ pkgs ? import <nixpkgs> {} }:" in text and "nixpkgs_pinned = import (builtins.fetchTarball" in text, path


@pytest.mark.parametrize("name", _companions("flox-pinned"))
def test_converted_companions_equal_the_hand_written_files(repo, name):
    root, _ = repo
    assert show(root, "main-pinned", f"{PKGS}/{name}") == (GRAPH / "flox-pinned" / name).read_bytes()


def test_no_call_of_the_converted_branch_passes_what_its_callee_does_not_take(repo, tmp_path, run_cli):
    root, _ = repo
    checkout = tmp_path / "main-pinned"
    git(root, "worktree", "add", "-q", "--detach", str(checkout), "main-pinned")
    result = run_cli("lint", "--select", "R", "--format", "json", str(checkout / PKGS))
    assert result.exit_code == 0 and json.loads(result.stdout)["findings"] == []
    before = tmp_path / "main"
    git(root, "worktree", "add", "-q", "--detach", str(before), "main")
    # the same check on main, with the PyTorch recipes converted and the companions as they were: what the
    # graph-blind conversion left (issue 31), found by lint as R002
    for name, sm in COMPANIONS:
        pytorch = f"pytorch-python313-cuda12_8-sm{sm}-avx.nix"
        (before / PKGS / pytorch).write_bytes(show(root, "main-pinned", f"{PKGS}/{pytorch}"))
    result = run_cli("lint", "--select", "R002", "--format", "json", str(before / PKGS))
    assert result.exit_code == 1
    found = sorted((f["path"].rsplit("/", 1)[1], f["code"]) for f in json.loads(result.stdout)["findings"])
    assert found == sorted((f"{name}-python313-cuda12_8-sm{sm}-avx.nix", "R002")
                           for name, sm in COMPANIONS if (name, sm) != ("torchvision", "75"))


# --- Nix as the oracle -----------------------------------------------------------------------------------


@pytest.mark.nix
@pytest.mark.parametrize("branch, base", [("py312", "pinned"), ("flox312", "main"), ("main-pinned", "main")])
def test_every_written_file_parses_with_nix(repo, branch, base):
    nix = require_nix()
    root, _ = repo
    written = git(root, "diff", "--name-only", "--diff-filter=AMR", f"{base}..{branch}").split()
    assert written
    for path in written:
        result = subprocess.run([nix, "--parse", "-"], input=show(root, branch, path), capture_output=True)
        assert result.returncode == 0, (path, result.stderr.decode())


_PROJECTION = "{ pname = v.pname; version = v.version; torch = v.passthru.torch.pname or null; }"
FLOX_ARGUMENTS = ("{ allowUnfree = true; cudaSupport = true; }",
                  "[ (final: prev: { cudaPackages = final.cudaPackages_12_8; }) ]")


def _evaluate(checkout: Path, paths: list[str], flox: bool) -> dict:
    """Every file evaluated against the stub: a pinned recipe through `scopedImport`, its `fetchTarball` and every
    `import` (the companion's of its PyTorch recipe too) giving the stub; a Flox-args recipe called like callPackage."""
    stub = f"(/. + {nix_string(str(STUB))})"
    scope = (f"scope = {{ builtins = builtins // {{ fetchTarball = s; }}; fetchTarball = s; import = scopedImport scope; }}; "
             f"s = _: {stub};")
    entries = []
    for path in paths:
        file = f"(/. + {nix_string(str(checkout / path))})"
        if flox:
            config, overlays = FLOX_ARGUMENTS
            value = (f"let pkgs = import {stub} {{ config = {config}; overlays = {overlays}; }}; f = import {file}; "
                     f"v = f (builtins.intersectAttrs (builtins.functionArgs f) pkgs); in {_PROJECTION}")
        else:
            value = f"let {scope} v = scopedImport scope {file} {{ }}; in {_PROJECTION}"
        entries.append(f"  {nix_string(path)} = ({value});")
    result = subprocess.run([require_nix(), "--readonly-mode", "--eval", "--strict", "--json", "--expr",
                             "{\n" + "\n".join(entries) + "\n}"], capture_output=True, env=dict(os.environ, NIX_PATH=""))
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


@pytest.mark.nix
@pytest.mark.parametrize("branch, flox", [("py312", False), ("main-pinned", False), ("flox312", True)])
def test_every_file_of_the_resulting_branches_evaluates(repo, tmp_path, branch, flox):
    """Companions included: each builds on the PyTorch recipe of its own variant, imported by the renamed name."""
    root, _ = repo
    checkout = tmp_path / branch
    git(root, "worktree", "add", "-q", "--detach", str(checkout), branch)
    paths = [p for p in tree_of(root, branch) if p.endswith(".nix")]
    values = _evaluate(checkout, paths, flox)
    assert len(values) == len(paths) in (62, 70)
    for path, value in values.items():
        stem = path.rsplit("/", 1)[1].removesuffix(".nix")
        assert value["pname"] == stem, path
        if stem.startswith(("torchvision-", "torchaudio-")):
            assert value["torch"] == "pytorch-" + stem.split("-", 1)[1], path
            assert value["version"] == "0.23.0"
        else:
            assert value["torch"] is None and value["version"] == "2.8.0", path
