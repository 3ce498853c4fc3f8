"""`pinshift completion bash|zsh|fish`, and the completion protocol the script speaks: the real `pinshift`
started with `_PINSHIFT_COMPLETE=bash_complete COMP_WORDS=… COMP_CWORD=…` in a real repository offers its
recipe names, step kinds and branch names, not only options."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git

PINSHIFT = [sys.executable, "-m", "pinshift"]
RECIPE = '''name = "align-to-vllm"
description = "Pin the recipes to build-vllm's nixpkgs"
files = ["**/*.nix"]

[[steps]]
kind = "metadata-rev"
title = "Bump .metadata-rev"
'''


@pytest.fixture
def repository(make_repo) -> Path:
    root = make_repo({"pkgs/a.nix": "{ a = 1; }\n", ".pinshift/recipes/align-to-vllm.toml": RECIPE},
                     branch="pytorch-2.9")
    git(root, "branch", "pytorch-2.9-python312")
    git(root, "branch", "main")
    return root


def complete(cwd: Path, *words: str) -> list[tuple[str, str]]:
    """(type, value) of each completion bash would be offered for `pinshift WORDS…` (the last word incomplete)."""
    line = " ".join(("pinshift", *words))
    env = dict(os.environ, _PINSHIFT_COMPLETE="bash_complete", COMP_WORDS=line, COMP_CWORD=str(len(words)))
    done = subprocess.run(PINSHIFT, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [tuple(item.split(",", 1)) for item in done.stdout.splitlines() if item]


def values(found: list[tuple[str, str]]) -> list[str]:
    return [value for kind, value in found if kind == "plain"]


def test_recipe_names_of_the_repository_and_bundled(repository):
    offered = values(complete(repository, "migrate", ""))
    assert "align-to-vllm" in offered and "pytorch-2.10-cuda12_9" in offered and "flox-args-to-pinned" in offered
    assert values(complete(repository, "migrate", "al")) == ["align-to-vllm"]
    assert values(complete(repository, "show", "pytorch-2.1")) == ["pytorch-2.10-cuda12_9"]
    elsewhere = values(complete(repository.parent, "migrate", "--repo", str(repository), "al"))
    assert elsewhere == ["align-to-vllm"]  # --repo names the repository whose recipes are offered


def test_step_kinds(repository):
    offered = values(complete(repository, "apply", ""))
    assert {"pin-swap", "rename-attr", "metadata-rev", "readme-branch-table", "rename-files"} <= set(offered)
    assert values(complete(repository, "show", "--step", "rename-b")) == ["rename-binding"]


def test_branch_names(repository):
    assert values(complete(repository, "diff", "pytorch")) == ["pytorch-2.9", "pytorch-2.9-python312"]
    assert values(complete(repository, "diff", "main", "pytorch-2.9-")) == ["pytorch-2.9-python312"]
    assert "main" in values(complete(repository, "migrate", "align-to-vllm", "--from", ""))
    assert values(complete(repository, "status", "--branches", "ma")) == ["main"]
    assert values(complete(repository, "infer", "m")) == ["main"]


def test_commands_and_options_too(repository):
    assert {"migrate", "diff", "completion", "lint"} <= set(values(complete(repository, "")))
    assert "--format" in values(complete(repository, "lint", "--f"))


def test_outside_a_repository_branches_complete_to_nothing(tmp_path):
    assert values(complete(tmp_path, "diff", "")) == []
    assert "pytorch-2.10-cuda12_9" in values(complete(tmp_path, "migrate", ""))  # bundled recipes still


@pytest.mark.parametrize("shell, marker", [("bash", "complete -o nosort -F _pinshift_completion pinshift"),
                                            ("zsh", "compdef _pinshift_completion pinshift"),
                                            ("fish", "complete --no-files --command pinshift")])
def test_completion_prints_each_shells_script(tmp_path, shell, marker):
    done = subprocess.run([*PINSHIFT, "completion", shell], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and marker in done.stdout and "_PINSHIFT_COMPLETE" in done.stdout
    wrong = subprocess.run([*PINSHIFT, "completion", "tcsh"], cwd=tmp_path, capture_output=True, text=True)
    assert wrong.returncode == 2 and wrong.stderr.startswith("pinshift completion: error: Invalid value for")


def test_the_bash_script_completes_in_a_real_bash(repository):
    """The printed script, sourced by bash, calls pinshift with the protocol above and fills COMPREPLY."""
    script = subprocess.run([*PINSHIFT, "completion", "bash"], capture_output=True, text=True, check=True).stdout
    bin_dir = repository / "bin"
    bin_dir.mkdir()
    (bin_dir / "pinshift").write_text(f"#!/bin/sh\nexec {sys.executable} -m pinshift \"$@\"\n")
    (bin_dir / "pinshift").chmod(0o755)
    driver = script + '\nCOMP_WORDS=(pinshift diff pytorch-2.9-); COMP_CWORD=2\n_pinshift_completion pinshift\n' \
                      'printf "%s\\n" "${COMPREPLY[@]}"\n'
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", driver], cwd=repository, env=env,
                          capture_output=True, text=True)
    assert done.stdout.splitlines() == ["pytorch-2.9-python312"], done.stderr
