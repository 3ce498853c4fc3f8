"""Real Plans for the report tests: the real runner over real files, with a fixture step kind.

`fixture_files()` is a small tree with every awkward case a report must survive
(CRLF, Latin-1 bytes, no final newline, a refused file, a skipped binary);
`demo_files()` is the 66-recipe `pytorch-2.9` tree of the seed migration.
"""

from __future__ import annotations

from pathlib import Path

from pinshift.demo.matrix import OLD_REV, Variant, render_recipe, variants
from pinshift.files.tree import DirectoryTree
from pinshift.planning.plan import Plan
from pinshift.recipes.recipe import load_recipe_file, validate_recipe
from pinshift.planning.runner import plan_recipe
from pinshift.steps.registry import load_kinds_from

REPORTS = Path(__file__).parent / "fixtures" / "reports"
BASE_COMMIT = "1111111111111111111111111111111111111111"
STEP_COMMITS = ("2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333")


def fixture_files() -> dict[str, bytes]:
    gpu = render_recipe(Variant("90", "avx512")).encode()
    darwin = render_recipe(Variant("darwin", "")).encode().replace(b"\n", b"\r\n")
    latin1 = (
        b"# Caf\xe9 build, \xa9 the maintainers\n"
        b"{ pkgs }:\nlet nixpkgs_pinned = import (builtins.fetchTarball {\n"
        b'  url = "https://github.com/NixOS/nixpkgs/archive/' + OLD_REV.encode() + b'.tar.gz";\n'
        b"}) {}; in nixpkgs_pinned.python3Packages.torch"
    )
    return {
        ".flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix": gpu,
        ".flox/pkgs/pytorch-python313-darwin-mps.nix": darwin,
        ".flox/pkgs/latin1-comment.nix": latin1,
        ".flox/pkgs/broken.nix": b"{ pkgs }:\nlet rev = \"" + OLD_REV.encode() + b"\";\nin { inherit rev\n",
        ".flox/pkgs/blob.nix": b"\x00\x01binary " + OLD_REV.encode(),
        ".flox/pkgs/unrelated.nix": b"{ lib }: lib.id\n",
        "README.md": b"# recipes\n",
    }


def demo_files() -> dict[str, bytes]:
    return {f".flox/pkgs/{v.filename}": render_recipe(v).encode() for v in variants()}


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def build_plan(root: Path, committed: bool = False) -> Plan:
    """Plan the fixture recipe over `root` with the real runner; `committed` fills in fixed commit ids."""
    recipe = load_recipe_file(REPORTS / "recipe.toml", "recipe.toml")
    kinds = load_kinds_from(REPORTS / "migrations")
    plan = plan_recipe(DirectoryTree(root), recipe, validate_recipe(recipe, kinds))
    plan.repository = "https://github.com/example/build-pytorch"
    plan.base, plan.base_commit, plan.target = recipe.base, BASE_COMMIT, recipe.target
    for step in plan.steps:
        step.notes = []  # "loaded from <temp path>": not deterministic
    if committed:
        plan.dry_run = False
        for step, commit in zip(plan.steps, STEP_COMMITS):
            step.commit = commit
        plan.target_commit = STEP_COMMITS[-1]
    return plan


def assert_golden(name: str, text: str) -> None:
    """Compare with tests/fixtures/reports/NAME; PINSHIFT_UPDATE_GOLDEN=1 rewrites it."""
    import os

    golden = REPORTS / name
    if os.environ.get("PINSHIFT_UPDATE_GOLDEN") == "1":
        golden.write_bytes(text.encode("utf-8"))
    assert golden.exists(), f"missing golden file {golden} (run with PINSHIFT_UPDATE_GOLDEN=1 once and review it)"
    assert text == golden.read_bytes().decode("utf-8")
