"""`hash = "compute"` and `new = "<branch>"` end to end: the demo repository migrated against the stub nixpkgs
clone of tests/test_verify.py, with the hash Nix gives for GitHub's archive of the stub's revision."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import git
from migrate_repo import snapshot
from pinshift.demo.build import build_demo
from pinshift.demo.matrix import NEW_REV, OLD_REV
from test_archive_hash import oracle
from test_verify import nixpkgs  # noqa: F401  (the stub nixpkgs clone: a fixture with two revisions)

RECIPE = """name = "pin-with-hash"
base = "pytorch-2.9"
files = [".flox/pkgs/**/*.nix"]

[[steps]]
kind = "pin-swap"
title = "Pin nixpkgs to the stub's master, with its sha256"
[steps.params]
old = "6a030d5"
new = "{new}"
hash = "compute"
"""


@pytest.fixture
def demo(tmp_path, monkeypatch):
    monkeypatch.delenv("PINSHIFT_NIXPKGS", raising=False)
    root = build_demo(tmp_path / "demo")
    (tmp_path / "pin.toml").write_text(RECIPE.format(new="master"))
    return root


def blob(root, ref, path) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f"{ref}:{path}"], cwd=root, capture_output=True, check=True).stdout


def recipes_of(root, ref) -> list[str]:
    return [p for p in git(root, "ls-tree", "-r", "--name-only", ref, ".flox/pkgs").split() if p.endswith(".nix")]


def test_compute_writes_the_hash_nix_gives_and_a_second_run_changes_nothing(run_cli, demo, nixpkgs, tmp_path,
                                                                            nix_oracle):
    clone, _, second = nixpkgs
    expected = oracle(clone, second, tmp_path)
    result = run_cli("migrate", str(tmp_path / "pin.toml"), "--repo", str(demo), "--nixpkgs", str(clone))
    assert result.exit_code == 0, result
    assert f"note: step 1: nixpkgs master = {second}" in result.stdout.splitlines()
    assert f"note: step 1: sha256 of nixpkgs {second[:7]}: {expected} (computed from " in result.stdout
    paths = recipes_of(demo, "pin-with-hash")
    assert len(paths) == 66
    for path in paths:
        data = blob(demo, "pin-with-hash", path)
        assert data.count(f'sha256 = "{expected}";'.encode()) == 1 and OLD_REV.encode() not in data
        assert f"nixpkgs/archive/{second}.tar.gz".encode() in data
    ok, canonical = nix_oracle(blob(demo, "pin-with-hash", paths[0]))
    assert ok and f'fetchTarball {{ sha256 = "{expected}"; url = ' in canonical

    again = run_cli("migrate", str(tmp_path / "pin.toml"), "--repo", str(demo), "--nixpkgs", str(clone),
                    "--from", "pin-with-hash", "--branch", "again", "--dry-run", "--check")
    assert again.exit_code == 0, again
    assert f"note: sha256 of nixpkgs {second[:7]}: {expected} (cached)" in again.stdout
    assert "0 files changed" in again.stdout


def test_the_report_says_which_commit_the_branch_named_and_keeps_the_recipe_readable(run_cli, demo, nixpkgs, tmp_path):
    clone, _, second = nixpkgs
    result = run_cli("migrate", str(tmp_path / "pin.toml"), "--repo", str(demo), "--nixpkgs", str(clone),
                     "--dry-run", "--format", "json")
    assert result.exit_code == 0, result
    [step] = json.loads(result.stdout)["steps"]
    assert step["params"] == {"old": "6a030d5", "new": "master", "hash": "compute"}
    assert step["notes"][0] == f"nixpkgs master = {second}"
    assert step["notes"][1].startswith(f"sha256 of nixpkgs {second[:7]}: ")


def test_apply_computes_too_and_takes_the_clone_from_the_environment(run_cli, demo, nixpkgs, tmp_path, monkeypatch):
    clone, first, _ = nixpkgs
    expected = oracle(clone, first, tmp_path)
    monkeypatch.setenv("PINSHIFT_NIXPKGS", str(clone))
    result = run_cli("apply", "pin-swap", "--set", "old=6a030d5", "--set", f"new={first[:10]}", "--set",
                     "hash=compute", ".flox/pkgs", cwd=demo)
    assert result.exit_code == 0, result
    assert f"note: nixpkgs {first[:10]} = {first}" in result.stdout
    data = (demo / ".flox/pkgs/pytorch-python313-cpu-avx2.nix").read_bytes()
    assert f'sha256 = "{expected}";'.encode() in data and first.encode() in data


# --- errors: one line, exit 2, the user's repository exactly as it was -----------------------------


@pytest.mark.parametrize("new, nixpkgs_arg, message", [
    (NEW_REV, None, 'hash = "compute" needs a local nixpkgs clone: pass --nixpkgs DIR or set PINSHIFT_NIXPKGS'),
    ("f" * 40, "clone", "nixpkgs revision '" + "f" * 40 + "' is not in {clone}; fetch it there"),
    ("nixos-unstable", "clone", "nixpkgs revision 'nixos-unstable' is not in {clone}; fetch it there"),
    ("master", "not-a-clone", "--nixpkgs {tmp}/not-a-clone: not a git repository"),
])
def test_errors_stop_before_anything_is_created(run_cli, demo, nixpkgs, tmp_path, new, nixpkgs_arg, message):
    clone, _, _ = nixpkgs
    (tmp_path / "not-a-clone").mkdir()
    (tmp_path / "pin.toml").write_text(RECIPE.format(new=new))
    before = snapshot(demo)
    args = ["migrate", str(tmp_path / "pin.toml"), "--repo", str(demo)]
    if nixpkgs_arg is not None:
        args += ["--nixpkgs", str(clone if nixpkgs_arg == "clone" else tmp_path / nixpkgs_arg)]
    result = run_cli(*args)
    assert result.exit_code == 2, result
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"pinshift: error: {tmp_path / 'pin.toml'}: step 1 (pin-swap): "
                                    + message.format(clone=clone, tmp=tmp_path))
    assert snapshot(demo) == before


def test_a_branch_name_without_a_clone_says_how_to_name_it(run_cli, demo, tmp_path):
    (tmp_path / "pin.toml").write_text(RECIPE.format(new="nixos-unstable").replace('hash = "compute"\n', ""))
    result = run_cli("migrate", str(tmp_path / "pin.toml"), "--repo", str(demo), "--dry-run")
    assert result.exit_code == 2
    assert result.stderr == (f"pinshift: error: {tmp_path / 'pin.toml'}: step 1 (pin-swap): 'new' must be a full "
                             "40-hex-digit revision, not 'nixos-unstable' (a branch, tag or abbreviated commit needs "
                             "a local nixpkgs clone to name it: pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)\n")


def test_the_same_revision_as_old_is_refused_after_resolution(run_cli, demo, nixpkgs, tmp_path):
    clone, _, _ = nixpkgs
    git(clone, "tag", "old-pin", "HEAD")
    (tmp_path / "pin.toml").write_text(RECIPE.format(new="old-pin").replace('old = "6a030d5"', f'old = "{git(clone, "rev-parse", "HEAD").strip()[:7]}"'))
    result = run_cli("migrate", str(tmp_path / "pin.toml"), "--repo", str(demo), "--nixpkgs", str(clone), "--dry-run")
    assert result.exit_code == 2 and "is the same revision as 'old'" in result.stderr


def test_migrate_verify_checks_the_written_hashes(run_cli, demo, nixpkgs, tmp_path):
    """--verify reads the planned files: the computed sha256 passes V106; a stale literal would not."""
    clone, first, _ = nixpkgs
    (tmp_path / "pin.toml").write_text(RECIPE.format(new=first))
    result = run_cli("migrate", str(tmp_path / "pin.toml"), "--repo", str(demo), "--nixpkgs", str(clone),
                     "--verify", "--dry-run", "--format", "json")
    assert "V106" not in result.stderr, result
    stale = RECIPE.format(new=first).replace('hash = "compute"', f'hash = "{"0" * 52}"')
    (tmp_path / "pin.toml").write_text(stale)
    before = snapshot(demo)
    result = run_cli("migrate", str(tmp_path / "pin.toml"), "--repo", str(demo), "--nixpkgs", str(clone), "--verify")
    assert result.exit_code == 1
    assert f"V106 sha256 of nixpkgs {first[:7]}'s archive is " in result.stderr
    assert "nothing committed" in result.stderr and snapshot(demo) == before
