"""Every line of every text output fits the screen: $COLUMNS (80 and 60 here), else 100 off a terminal (issue 42).

Real repositories (tests/status_repos.py: build-pytorch with six branches on three pins, build-vllm), the real
CLI in its own process, the real nix-instantiate for `diff` and migrate's build check, the stub nixpkgs clone
for `verify` and `hash`. stdout and stderr are both read. Unified diffs (`--dry-run`) are content and are shown
whole: their lines are the one exception, and one of them is wider than the screen here, shown in full (so is a
recipe `infer` prints, TOML to save: written to a file here).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, git, require_nix
from status_repos import build_pytorch, build_vllm
from pinshift.demo.matrix import OLD_REV
from pinshift.demo.python_branch import RECIPE_FILE
from pinshift.languages.fit import cells

PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]
STUB = FIXTURES / "checks" / "stub-nixpkgs"
WIDTHS = (80, 60)


def pinshift(cwd: Path, *args: str, columns: int | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([*PINSHIFT, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def world(tmp_path_factory, hermetic_git):
    """build-pytorch (with pytorch-2.9-python311, migrated from -python312 by the demo's recipe), build-vllm, a
    stub nixpkgs clone, recipes pinned to its first commit, two files with syntax problems."""
    root = tmp_path_factory.mktemp("fits")
    pytorch = build_pytorch(root / "build-pytorch")
    build_vllm(root / "build-vllm")
    made = pinshift(pytorch, "migrate", str(RECIPE_FILE), "--from", "pytorch-2.9-python312", columns=None)
    assert made.returncode == 0, made.stderr
    nixpkgs = root / "nixpkgs"
    shutil.copytree(STUB / "first", nixpkgs)
    git(nixpkgs, "init", "-q", "-b", "master")
    git(nixpkgs, "add", "-A")
    git(nixpkgs, "commit", "-q", "-m", "first")
    first = git(nixpkgs, "rev-parse", "HEAD").strip()
    pinned = root / "pinned"
    shutil.copytree(pytorch / ".flox" / "pkgs", pinned)  # pytorch-2.9's recipes, on the stub's commit
    for path in pinned.iterdir():
        path.write_text(path.read_text().replace(OLD_REV, first).replace("python3Packages", "python313Packages"))
    bad = root / "bad"
    bad.mkdir()
    (bad / "long-line.nix").write_text("{ a = " + " ".join(f"value{i}" for i in range(40)) + " ;; b = 1; }\n")
    (bad / "repeated.nix").write_text("{ a = 1; a = 2; a = 3; }\n")
    (bad / ("a-recipe-file-whose-name-is-longer-than-any-line-of-a-narrow-terminal-could-hold.nix")
     ).write_text("{ x = ; }\n")
    return {"root": root, "pytorch": pytorch, "nixpkgs": nixpkgs, "first": first, "pinned": pinned, "bad": bad}


def commands(world: dict, width: int) -> dict[str, tuple[Path, list[str]]]:
    pytorch, root = world["pytorch"], world["root"]
    applied = root / f"apply-{width}"
    if not applied.exists():
        shutil.copytree(pytorch / ".flox" / "pkgs", applied)
    return {
        "diff": (pytorch, ["diff", "pytorch-2.9", "pytorch-2.10"]),
        "diff main": (pytorch, ["diff", "main", "pytorch-2.10"]),
        "diff --verbose": (pytorch, ["diff", "pytorch-2.9", "pytorch-2.10-cuda12_9", "--verbose"]),
        "migrate --dry-run": (pytorch, ["migrate", "pytorch-2.10-cuda12_9", "--dry-run", "--branch", "fit-dry"]),
        "migrate": (pytorch, ["migrate", "pytorch-2.10-cuda12_9", "--branch", f"fit-{width}"]),
        "migrate fan-out": (pytorch, ["migrate", "pytorch-2.10-cuda12_9", "--from", "pytorch-2.*", "--branch",
                                      "{base}-fit-" + str(width), "--dry-run"]),
        # the recipe infer prints is content (TOML to save, as `status --recipe`'s): written to a file here
        "infer": (pytorch, ["infer", "pytorch-2.9-python312", "pytorch-2.9-python311", "--output",
                            str(root / "python311.toml")]),
        "infer seed": (pytorch, ["infer", "pytorch-2.9", "pytorch-2.10-cuda12_9", "--output", str(root / "seed.toml")]),
        "recipes": (pytorch, ["recipes"]),
        "show": (pytorch, ["show", "pytorch-2.10-cuda12_9"]),
        "show --step": (pytorch, ["show", "--step", "pin-swap"]),
        "show --steps": (pytorch, ["show", "--steps"]),
        "status": (pytorch, ["status", "--repo", ".", "--repo", "../build-vllm", "--align-to", "../build-vllm@main"]),
        "scan": (pytorch, ["scan", ".flox/pkgs"]),
        "scan --verbose": (pytorch, ["scan", "--verbose", ".flox/pkgs"]),
        "lint": (pytorch, ["lint", ".flox/pkgs"]),
        "verify": (root, ["verify", str(world["pinned"]), "--nixpkgs", str(world["nixpkgs"])]),
        "parse": (root, ["parse", str(world["bad"])]),
        "hash": (root, ["hash", world["first"], "--nixpkgs", str(world["nixpkgs"])]),
        "apply --dry-run": (root, ["apply", "rename-attr", "--set", "from=python3Packages", "--set",
                                   "to=python313Packages", "--dry-run", str(applied)]),
        "apply": (root, ["apply", "rename-attr", "--set", "from=python3Packages", "--set", "to=python313Packages",
                         str(applied)]),
        "demo": (root, ["demo", "--dir", str(root / f"demo-{width}")]),
    }


_HUNK = re.compile(r"^(---|\+\+\+|@@) ")


def without_diffs(lines: list[str]) -> tuple[list[str], list[str]]:
    """(the report's lines, the unified diffs' lines): a diff runs from `--- ` through its hunks' ` `, `+`, `-`
    lines."""
    summary, diffs, in_diff = [], [], False
    for line in lines:
        if _HUNK.match(line):
            in_diff = True
        elif in_diff and not line.startswith((" ", "+", "-", "\\")):
            in_diff = False
        (diffs if in_diff else summary).append(line)
    return summary, diffs


@pytest.mark.parametrize("width", WIDTHS)
def test_every_line_of_every_command_fits_the_columns(world, width):
    require_nix()
    checked, diff_lines = 0, []
    for name, (cwd, args) in commands(world, width).items():
        done = pinshift(cwd, *args, columns=width)
        assert done.returncode in (0, 1), (name, done.stderr)
        summary, diffs = without_diffs((done.stdout + done.stderr).splitlines())
        assert summary, name
        too_wide = [line for line in summary if cells(line) > width]
        if "--verbose" in args:  # a token that cannot be cut meaningfully (a path) is whole, on a line of its own
            too_wide = [line for line in too_wide if len(line.split()) > 1]
        assert too_wide == [], (name, too_wide)
        diff_lines += diffs
        checked += len(summary)
    assert checked > 1000
    wide = [line for line in diff_lines if cells(line) > width]  # diffs are content: never cut or wrapped
    assert any(f"/archive/{OLD_REV}.tar.gz" in line for line in wide)


@pytest.mark.parametrize("width", WIDTHS)
def test_status_rows_stay_distinct(world, width):
    lines = pinshift(world["pytorch"], "status", "--repo", ".", "--repo", "../build-vllm", "--align-to",
                     "../build-vllm@main", "--branches", "pytorch-*", "--branches", "main",
                     columns=width).stdout.splitlines()
    start = lines.index("build-pytorch")
    rows = lines[start + 1: lines.index("build-vllm")]
    if rows[0].startswith("      "):  # each branch on a line of its own
        names = [line.strip() for line in rows if not line.startswith("      ")]
    else:
        names = [line.split()[0] for line in rows]
    assert len(names) == 6 and len(set(names)) == 6, rows
    python311 = [name for name in names if name.endswith("311")]
    python312 = [name for name in names if name.endswith("312")]
    assert len(python311) == 1 and len(python312) == 1 and python311 != python312
    assert all(cells(line) <= width for line in lines)


def test_branch_names_too_long_to_cut_apart_stand_above_their_rows(world):
    pytorch = world["pytorch"]
    names = [f"pytorch-2.9-python312-variant-{which}-built-for-a-screen-much-wider-than-this" for which in "ab"]
    for name in names:  # they differ in the middle only: no cut of 40 columns tells them apart
        git(pytorch, "branch", name, "pytorch-2.9-python312")
    try:
        lines = pinshift(pytorch, "status", "--branches", "*-variant-*", columns=40).stdout.splitlines()
    finally:
        for name in names:
            git(pytorch, "branch", "-D", name)
    assert "Branch (each above its row)" in lines
    shown = [line.strip() for line in lines if line.startswith("  pytorch")]
    assert len(set(shown)) == 2 and "-variant-a-" in shown[0] and "-variant-b-" in shown[1]
    assert all(cells(line) <= 40 for line in lines)


def test_off_a_terminal_without_columns_the_width_is_100(world):
    done = pinshift(world["pytorch"], "diff", "main", "pytorch-2.10", columns=None)
    lines = (done.stdout + done.stderr).splitlines()
    assert max(cells(line) for line in lines) <= 100
    assert any(cells(line) > 80 for line in lines)  # 100, not a narrower guess
    wide = pinshift(world["pytorch"], "diff", "main", "pytorch-2.10", columns=1000)
    assert "".join(wide.stdout.split()) == "".join(done.stdout.split())  # the same words, only wrapped
