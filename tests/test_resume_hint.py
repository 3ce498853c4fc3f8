"""`--keep-partial`'s resume hint is a command that works as printed (issue 29 item 6).

The hint used to be `pinshift migrate RECIPE --resume [--branch T]`: without `--from` it resumed from the
recipe's base (or refused the branch's commits as foreign), without `--migrations` or `--repo` it could not
run at all. Each test runs the printed command, word for word, from the directory the first run ran in.
"""

from __future__ import annotations

import re
import shlex
import subprocess

from conftest import git
from fanout_repo import PINSHIFT, repo  # noqa: F401
from migrate_repo import FILES, MIGRATIONS, SWAPS, hook, scratch  # noqa: F401

HINT = re.compile(r"continue with `([^`]+)`")


def run_printed(command: str, cwd) -> subprocess.CompletedProcess:
    words = shlex.split(command)
    assert words[:2] == ["pinshift", "migrate"], command
    return subprocess.run([*PINSHIFT, *words[1:]], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_hint_of_a_single_run_from_another_base_resumes_it(make_repo, tmp_path):
    root = make_repo(FILES, branch="base")
    git(root, "switch", "-q", "-c", "other")
    (root / "pkgs" / "d.nix").write_text('{ x = "alpha beta"; }\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "other: one file more")
    git(root, "switch", "-q", "base")
    hook(root, "pre-commit", 'git diff --cached --name-only | grep -q c.nix && { echo "hook: no c.nix" >&2; exit 1; }\n'
                             'exit 0\n')
    first = subprocess.run([*PINSHIFT, "migrate", str(SWAPS), "--repo", str(root), "--migrations", str(MIGRATIONS),
                            "--from", "other", "--branch", "out", "--keep-partial"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert first.returncode == 1, first
    assert git(root, "log", "--format=%s", "other..out").splitlines() == ["Swap alpha for gamma"]
    command = HINT.search(first.stderr).group(1)
    (root / ".git" / "hooks" / "pre-commit").unlink()
    resumed = run_printed(command, tmp_path)
    assert resumed.returncode == 0, (command, resumed)
    assert git(root, "log", "--format=%s", "other..out").splitlines() == \
        ["Swap beta for delta everywhere", "Swap alpha for gamma"]
    assert git(root, "show", "out:pkgs/c.nix") == '{ x = "delta"; }\n'
    assert git(root, "show", "out:pkgs/d.nix") == '{ x = "gamma beta"; }\n'  # the base given, not the recipe's


def test_the_hint_of_a_fan_out_base_resumes_that_base(repo):
    git(repo, "switch", "-q", "-c", "marked", "pytorch-2.9")
    (repo / "MARKED").write_text("the hook refuses step 2 here\n")
    git(repo, "add", "MARKED")
    git(repo, "commit", "-qm", "marked")
    git(repo, "switch", "-q", "main")
    hook(repo, "pre-commit", '[ -f MARKED ] && git diff --cached | grep -q python313Packages && '
                             '{ echo "hook: not on marked" >&2; exit 1; }\nexit 0\n')
    first = subprocess.run([*PINSHIFT, "migrate", str(repo.parent / "recipe.toml"), "--from", "pytorch-2.9",
                            "--from", "marked", "--keep-partial"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert first.returncode == 1, first
    assert git(repo, "log", "--format=%s", "marked..marked-pin0182a36").splitlines() == ["Pin nixpkgs to 0182a36"]
    command = HINT.search(first.stdout).group(1)
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    resumed = run_printed(command, repo)
    assert resumed.returncode == 0, (command, resumed)
    assert git(repo, "log", "--format=%s", "marked..marked-pin0182a36").splitlines() == \
        ["Use python313Packages", "Pin nixpkgs to 0182a36"]
    assert git(repo, "log", "--format=%s", "pytorch-2.9..pytorch-2.9-pin0182a36").splitlines() == \
        ["Use python313Packages", "Pin nixpkgs to 0182a36"]
