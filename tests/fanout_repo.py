"""The fan-out tests' repository: a demo-built recipe repository with five bases, and how to run pinshift on it.

Two bases share the seed pin (`pytorch-2.9`, `pytorch-2.9-b`), one lacks the pin (`main`: the recipe
changes nothing there), one has a recipe the edit engine refuses (`pytorch-2.9-broken`), and one does
not exist. The recipe (`recipe.toml` beside the repository) makes `{base}-pin0182a36`.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import git

from pinshift.demo.build import build_demo
from pinshift.demo.matrix import OLD_REV

PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]
RECIPE = f"""
name = "pin-0182a36"
target = "{{base}}-pin0182a36"
files = [".flox/pkgs/**/*.nix"]

[[steps]]
kind = "pin-swap"
title = "Pin nixpkgs to 0182a36"
[steps.params]
old = "{OLD_REV[:7]}"
new = "0182a361324364ae3f436a63005877674cf45efb"

[[steps]]
kind = "rename-attr"
title = "Use python313Packages"
[steps.params]
from = "python3Packages"
to = "python313Packages"
base = "nixpkgs_pinned"
"""
BASES = ["pytorch-2.9", "pytorch-2.9-b", "main", "pytorch-2.9-broken", "no-such-branch"]


@pytest.fixture
def repo(tmp_path):
    root = build_demo(tmp_path / "demo")
    git(root, "branch", "pytorch-2.9-b", "pytorch-2.9")
    git(root, "switch", "-q", "pytorch-2.9-b")
    (root / ".flox" / "pkgs" / "pytorch-python313-cpu-avx2.nix").unlink()
    git(root, "commit", "-qam", "b: one recipe fewer")
    git(root, "switch", "-q", "-c", "pytorch-2.9-broken", "pytorch-2.9")
    (root / ".flox" / "pkgs" / "broken.nix").write_text(f'{{ url = "https://x/archive/{OLD_REV}.tar.gz"; b = ; }}\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a broken recipe")
    git(root, "switch", "-q", "pytorch-2.9")
    (root.parent / "recipe.toml").write_text(RECIPE)
    return root


def pinshift(root, *args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*PINSHIFT, *args], cwd=root, capture_output=True, text=True, **kwargs)


def fan_args(root, *extra: str) -> list[str]:
    return ["migrate", str(root.parent / "recipe.toml"), *[a for b in BASES for a in ("--from", b)], *extra]


def pin_branches(root) -> list[str]:
    return sorted(b for b in git(root, "branch", "--format=%(refname:short)").split() if b.endswith("-pin0182a36"))


def step_trees(root, base: str, tip: str) -> list[str]:
    return [git(root, "rev-parse", f"{c}^{{tree}}").strip() for c in git(root, "rev-list", "--reverse", f"{base}..{tip}").split()]
