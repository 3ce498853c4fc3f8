"""Helpers for migrate's tests: a small recipe repository and a snapshot of everything a user can see.

`snapshot` records the user's side of a repository: the checked-out branch and
commit, every work-tree file's bytes (tracked, modified and untracked), the
index, staged and unstaged diffs, status, stash, refs and worktrees. Comparing
two snapshots proves a command left the user's checkout byte-identical.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from conftest import FIXTURES, git, without_loading_notices

MIGRATIONS = FIXTURES / "migrations"
SWAPS = FIXTURES / "migrate" / "swaps.toml"
SEED_STAND_IN = FIXTURES / "migrate" / "seed-stand-in.toml"

FILES = {
    "pkgs/a.nix": '{ x = "alpha"; y = "beta"; }\n',
    "pkgs/b.nix": '{\r\n  # alpha in a comment\r\n  x = "alpha beta";\r\n}',  # CRLF, no final newline
    "pkgs/c.nix": '{ x = "beta"; }\n',
    "pkgs/untouched.nix": "{ }\n",
    "notes.txt": "alpha beta outside the recipe's files\n",
}


def swaps_args(repo: Path, *extra: str) -> list[str]:
    return ["migrate", str(SWAPS), "--repo", str(repo), "--migrations", str(MIGRATIONS), *extra]


def files_of(root: Path) -> dict[str, bytes]:
    found = {}
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(directory) / name
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def snapshot(root: Path, refs: bool = True) -> dict[str, object]:
    state: dict[str, object] = {
        "head": git(root, "rev-parse", "HEAD"),
        "branch": git(root, "rev-parse", "--abbrev-ref", "HEAD"),
        "files": files_of(root),
        "index": git(root, "ls-files", "-s"),
        "staged": git(root, "diff", "--cached"),
        "unstaged": git(root, "diff"),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "stash": git(root, "stash", "list"),
        "worktrees": git(root, "worktree", "list", "--porcelain"),
    }
    if refs:
        state["refs"] = git(root, "for-each-ref")
    return state


def dirty(root: Path) -> None:
    """Leave a checkout as a user mid-work would: a stash, staged and unstaged changes, untracked files."""
    (root / "pkgs/c.nix").write_text('{ x = "beta"; stashed = true; }\n')
    git(root, "stash", "push", "-q", "-m", "work in progress")
    (root / "pkgs/a.nix").write_text('{ x = "alpha"; y = "beta"; local = 1; }\n')
    (root / "pkgs/c.nix").write_text('{ x = "beta"; staged = true; }\n')
    git(root, "add", "pkgs/c.nix")
    (root / "pkgs/new.nix").write_text('{ x = "alpha"; }\n')
    (root / "scratch.txt").write_bytes(b"untracked \xff bytes")


def worktree_dirs(root: Path) -> list[str]:
    admin = root / ".git" / "worktrees"
    return sorted(p.name for p in admin.iterdir()) if admin.is_dir() else []


# --- shared by the failure-path tests ------------------------------------------------------


@pytest.fixture(autouse=True)
def scratch(tmp_path, monkeypatch):
    """Temporary worktrees go here (not the shared /tmp), so a test sees only its own leftovers."""
    directory = tmp_path / "scratch"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    monkeypatch.setenv("TMPDIR", str(directory))
    return directory


@pytest.fixture
def repo(make_repo):
    return make_repo(FILES, branch="base")


def assert_one_line_error(result, code: int, *fragments: str) -> None:
    assert result.exit_code == code, result
    lines = without_loading_notices(result.stderr.strip())  # --migrations kinds announce their import
    assert len(lines) == 1 and lines[0].startswith("pinshift: error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0]


def assert_nothing_left(root, before) -> None:
    assert snapshot(root) == before
    assert worktree_dirs(root) == []
    assert git(root, "worktree", "prune", "--dry-run", "-v") == ""
    assert [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("pinshift-")] == []


def write_recipe(tmp_path, name: str, steps: str, base: str = "base") -> str:
    path = tmp_path / f"{name}.toml"
    base_line = f'base = "{base}"\n' if base else ""
    path.write_text(f'name = "{name}"\n{base_line}target = "{name}-out"\nfiles = ["pkgs/*.nix"]\n{steps}')
    return str(path)


def hook(root, name: str, script: str) -> None:
    path = root / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
