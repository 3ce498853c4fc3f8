"""`pinshift demo`: the seed-shaped repository it builds, and the migration it runs on it."""

from __future__ import annotations

import re
import tempfile

import pytest
from conftest import git

from pinshift.demo.build import build_demo
from pinshift.demo.matrix import OLD_REV
from pinshift.steps.registry import bundled_kinds
from pinshift.syntax.document import parse_document

TARGET = "pytorch-2.10-cuda12_9"


def test_demo_repository_has_the_seed_branch_shape(tmp_path):
    root = build_demo(tmp_path / "demo")
    assert git(root, "branch", "--show-current").strip() == "pytorch-2.9"
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "branch", "--format=%(refname:short)").split() == ["main", "pytorch-2.9"]
    recipes = [p for p in git(root, "ls-files", ".flox/pkgs").split() if p.endswith(".nix")]
    assert len(recipes) == 66
    assert {"sm61", "sm120", "cpu-avx2", "darwin-mps"} <= {m for p in recipes for m in re.findall(r"sm\d+|cpu-avx2|darwin-mps", p)}
    for path in recipes:
        data = (root / path).read_bytes()
        assert OLD_REV.encode() in data and b"nixpkgs_pinned.python3Packages.torch" in data
        assert not parse_document(data, path).problems
    readme = (root / "README.md").read_text()
    assert "> You are on the **`pytorch-2.9`** branch" in readme
    assert "| **`pytorch-2.9`** ⬅️ |" in readme
    assert f"[`{OLD_REV[:7]}`](https://github.com/NixOS/nixpkgs/tree/{OLD_REV})" in readme
    assert readme.count(f"tree/{OLD_REV}") == 2  # another branch shares the old pin and must keep it
    assert (root / ".flox/env/manifest.toml").is_file()


def test_demo_refuses_a_directory_that_is_not_empty(tmp_path, run_cli):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("mine\n")
    result = run_cli("demo", "--dir", str(tmp_path / "taken"))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"pinshift: error: --dir {tmp_path / 'taken'}: exists and is not empty; give a new or empty directory"]
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["file"]


@pytest.mark.skipif("rename-attr" not in bundled_kinds(), reason="the bundled recipe needs the rename-attr step kind")
def test_demo_runs_the_bundled_recipe_as_a_user_would(tmp_path, run_cli, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = run_cli("demo")
    assert result.exit_code == 0, result
    root = next(tmp_path.glob("pinshift-demo-*"))
    assert f"demo repository: {root}" in result.stdout
    subjects = git(root, "log", "--reverse", "--format=%s", f"pytorch-2.9..{TARGET}").splitlines()
    assert len(subjects) == 4
    for subject in subjects:
        assert subject in result.stdout  # the commit list
    assert f"branch  {TARGET} (" in result.stdout
    assert f"look around: cd {root} && git log --stat pytorch-2.9..{TARGET}" in result.stdout
    sm90 = ".flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix"
    after = git(root, "show", f"{TARGET}:{sm90}")
    assert "0182a361324364ae3f436a63005877674cf45efb" in after and "nixpkgs_pinned.python313Packages.torch" in after
    assert "echo 2 > $out/.metadata-rev" in after
    assert git(root, "branch", "--show-current").strip() == "pytorch-2.9"
    assert git(root, "worktree", "list").count("\n") == 1


def test_demo_python312_makes_the_python311_branch_with_renamed_files(tmp_path, run_cli):
    result = run_cli("demo", "--python312", "--dir", str(tmp_path / "py"))
    assert result.exit_code == 0, result
    root = tmp_path / "py"
    assert "branch pytorch-2.9-python312: 67 recipes" in result.stdout
    assert "  1/4 " in result.stdout and "67 files (67 renamed), 136 edits" in result.stdout
    names = git(root, "ls-tree", "-r", "--name-only", "pytorch-2.9-python311", ".flox/pkgs").split()
    assert len(names) == 67 and all("-python311-" in name for name in names)
    assert git(root, "branch", "--show-current").strip() == "pytorch-2.9-python312"
