"""`pinshift diff` on a clone that lacks objects: one line naming what is missing and what to do, exit 2.

The shapes: a partial clone (`--filter=blob:none`, `--filter=tree:0`) whose remote is gone, so git cannot fetch
what it lacks, and a full clone with loose objects deleted from .git/objects (a blob only BASE has, a blob of
TARGET, a tree). Never `internal error: GitCommandError`, never a traceback, nothing evaluated.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from build_repos import commit
from conftest import git, require_nix
from pinshift.git.repo import UNREADABLE


def _history(make_repo) -> Path:
    root = make_repo({"a.nix": "{ x = 1; }\n", "b.nix": '{ y = 1; long = "' + "a" * 60 + '"; }\n',
                      "d/e.nix": "{ z = 1; }\n"})
    git(root, "mv", "b.nix", "c.nix")
    commit(root, {"a.nix": "{ x = 2; }\n", "c.nix": '{ y = 1; long = "' + "a" * 60 + '"; } # moved\n',
                  "d/e.nix": "{ z = 2; }\n"}, "two")
    return root


def _one_line_exit_2(result, *needles: str) -> None:
    assert result.exit_code == 2, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("pinshift: error: "), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.rstrip("\n").endswith(f"; {UNREADABLE}"), result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


@pytest.mark.parametrize("how", ["blob:none", "tree:0"])
def test_a_partial_clone_whose_remote_is_gone(make_repo, run_cli, tmp_path, how):
    require_nix()
    origin = _history(make_repo)
    git(origin, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-local", "--no-checkout", f"--filter={how}", f"file://{origin}",
                    str(clone)], check=True, capture_output=True)
    assert git(clone, "config", "remote.origin.promisor").strip() == "true"  # a partial clone indeed
    shutil.rmtree(origin)
    for args in (("main~1", "main"), ("main~1", "main", "a.nix")):
        result = run_cli("diff", *(f"origin/{a}" if a.startswith("main") else a for a in args), "--repo", str(clone))
        _one_line_exit_2(result)


@pytest.mark.parametrize("which", ["base blob", "target blob", "tree"])
def test_objects_deleted_from_a_full_clone(make_repo, run_cli, which):
    require_nix()
    root = _history(make_repo)
    sha = {"base blob": "main~1:a.nix", "target blob": "main:d/e.nix", "tree": "main:d"}[which]
    sha = git(root, "rev-parse", sha).strip()
    (root / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    result = run_cli("diff", "main~1", "main", "--repo", str(root))
    _one_line_exit_2(result)
    if which != "tree":
        assert sha in result.stderr or "cannot compare the files" in result.stderr
