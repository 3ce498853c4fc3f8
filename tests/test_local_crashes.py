"""Crashes (exit 3) that are the user's situation, each now one line (issue 45 §11, §12, §13).

§13: a repository another user owns: git refuses it (`safe.directory`), for root too; every command says so in
one line with the command that allows it, and pinshift never sets safe.directory itself. §12: `apply` inside
`.git/`. §11: `python-constant` with a value the file's declared encoding cannot hold.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git

OTHER_UID = 12345


def pinshift(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SUDO_UID", "SUDO_GID", "SUDO_USER")}
    return subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def one_line(result: subprocess.CompletedProcess, code: int = 2) -> str:
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
    [line] = result.stderr.splitlines()
    return line


def _chown(root: Path, uid: int) -> None:
    for directory, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(directory, name), uid, uid)
    os.lchown(root, uid, uid)


@pytest.fixture
def foreign(make_repo) -> Path:
    """A repository owned by another uid (git's safe.directory check applies to root as well)."""
    if os.geteuid() != 0:
        pytest.skip("giving a repository to another uid needs root (chown)")
    root = make_repo({"a.nix": 'pkgs: { p = pkgs.python3Packages.foo; version = "1"; }\n'}, name="foreign")
    _chown(root, OTHER_UID)
    return root


def _allow_hint(root: Path) -> str:
    return (f"pinshift: error: {root}: git refuses to work in a repository owned by another user; if you trust it, "
            f"allow it with `git config --global --add safe.directory {root}` and run pinshift again")


COMMANDS = {
    "status": lambda root, here: (root, ("status",)),
    "status --align-to": lambda root, here: (here, ("status", "--align-to", f"{root}@main")),
    "infer --repo": lambda root, here: (here, ("infer", "--repo", str(root), "main", "main")),
    "apply": lambda root, here: (root, ("apply", "rename-attr", "--set", "from=python3Packages",
                                        "--set", "to=python313Packages")),
    "scan": lambda root, here: (root, ("scan", ".")),
    "hash --nixpkgs": lambda root, here: (here, ("hash", "--nixpkgs", str(root), "main")),
    "migrate": lambda root, here: (root, ("migrate", "flox-args-to-pinned", "--dry-run")),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_repository_owned_by_another_user_is_one_line_saying_how_to_allow_it(foreign, make_repo, command):
    here = make_repo({"b.nix": "{ }\n"}, name="mine")
    cwd, args = COMMANDS[command](foreign, here)
    before = foreign.joinpath("a.nix").read_bytes()
    assert one_line(pinshift(cwd, *args)) == _allow_hint(foreign)
    assert foreign.joinpath("a.nix").read_bytes() == before
    # never bypassed: no safe.directory was added to any configuration pinshift could write
    config = subprocess.run(["git", "config", "--global", "--get-all", "safe.directory"], capture_output=True,
                            text=True)
    assert config.stdout == "", config


def test_once_allowed_the_same_repository_works(foreign, tmp_path):
    """The hint is the fix: with the user's own safe.directory entry, `scan` runs (so the refusal was git's)."""
    env_config = tmp_path / "allowed.gitconfig"
    env_config.write_text(f"[safe]\n\tdirectory = {foreign}\n")
    done = subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", "scan", "."], cwd=foreign,
                          env=dict(os.environ, GIT_CONFIG_GLOBAL=str(env_config)), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode in (0, 1), done
    assert "safe.directory" not in done.stderr


# --- §12: apply inside .git/ --------------------------------------------------------------------------------


@pytest.mark.parametrize("where", [".git", ".git/refs"])
def test_apply_inside_the_git_directory_is_one_line(make_repo, where):
    root = make_repo({"a.nix": 'pkgs: { p = pkgs.python3Packages.foo; }\n'})
    before = {p: p.read_bytes() for p in (root / ".git").rglob("*") if p.is_file()}
    line = one_line(pinshift(root / where, "apply", "rename-attr", "--set", "from=python3Packages",
                             "--set", "to=python313Packages"))
    assert line == (f"pinshift: error: {root / where}: inside the repository's .git directory, which holds git's own "
                    f"files; run pinshift in the work tree ({root})")
    assert {p: p.read_bytes() for p in (root / ".git").rglob("*") if p.is_file()} == before


# --- §11: python-constant and the file's declared encoding -------------------------------------------------


@pytest.mark.parametrize("cookie, value, character", [
    ("# -*- coding: latin-1 -*-", "€", "€"),
    ("# coding=ascii", "é", "é"),
    ("# vim: set fileencoding=cp1252 :", "2.10-ℵ", "ℵ"),
])
def test_a_value_the_declared_encoding_cannot_hold_refuses_that_file_in_one_line(tmp_path, cookie, value, character):
    bad = tmp_path / "bad.py"
    bad.write_bytes(f'{cookie}\nVERSION = "1.0"\n'.encode("ascii"))
    good = tmp_path / "good.py"
    good.write_bytes(b'VERSION = "1.0"\n')
    result = pinshift(tmp_path, "apply", "python-constant", "--set", f"constants.VERSION={value}",
                      "--files", "*.py", ".")
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    refused = [line for line in result.stderr.splitlines() if line.startswith("refused")]
    assert len(refused) == 1 and refused[0].startswith("refused  bad.py:2:11: VERSION: the file's declared "
                                                         "encoding"), result
    assert f"cannot hold {character!r} of {value!r}; the file is left as it was" in refused[0]
    assert bad.read_bytes() == f'{cookie}\nVERSION = "1.0"\n'.encode("ascii")
    assert good.read_bytes() == b'VERSION = "1.0"\n'  # all or nothing: a refused file stops the step
