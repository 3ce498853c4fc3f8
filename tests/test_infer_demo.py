"""Issue 17, done-when 1 and 2: `pinshift infer` recovers the bundled and test recipes from the commits they made.

Each repository is built by the demo generator and migrated with a recipe through the real CLI;
`pinshift infer BASE TARGET` must then write a recipe whose parameters equal the original's where the
commits determine them, and replaying it with `pinshift migrate` must give TARGET's tree byte for
byte. The expectations are the original recipes themselves (read with tomllib) and the git trees the
original migrations committed, never infer's own output. A commit with a change no step kind
expresses (two flags swapped in one recipe) leaves that hunk as residue, exit 1, the rest inferred.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, git

from pinshift.recipes.placeholders import fill_facts

from pinshift.cli import main
from pinshift.demo.build import build_demo
from pinshift.demo.python_branch import PARAGRAPH, RECIPE_FILE as PYTHON311_RECIPE, build_python312_demo
from pinshift.files.globs import matches
from pinshift.recipes.recipe import _bundled_dir

PKGS = ".flox/pkgs"
BUNDLED = _bundled_dir()
GROUPS_RECIPE = FIXTURES / "infer" / "groups.toml"


def pinshift(*args: str) -> tuple[int, str, str]:
    """The real entry point, in-process (module fixtures cannot use the function-scoped run_cli)."""
    with CliRunner().isolation() as (out, err, _):
        code = main(list(args))
        return code, out.getvalue().decode(), err.getvalue().decode()


def migrated(root: Path, recipe: str, *extra: str) -> None:
    code, out, err = pinshift("migrate", recipe, "--repo", str(root), *extra)
    assert code == 0, (out, err)


def inferred(root: Path, base: str, target: str, output: Path) -> tuple[int, str, dict]:
    code, out, err = pinshift("infer", base, target, "--repo", str(root), "--output", str(output))
    assert "Traceback" not in err
    return code, out, tomllib.loads(output.read_text()) if output.exists() else {}


def tree(root: Path, ref: str) -> str:
    return git(root, "rev-parse", f"{ref}^{{tree}}").strip()


def replayed(root: Path, recipe: Path, base: str, target: str) -> str:
    """TARGET's branch moved aside, the inferred recipe run onto a branch of the same name: its tree."""
    git(root, "branch", "-m", target, f"{target}-original")
    try:
        migrated(root, str(recipe), "--from", base, "--branch", target)
        return tree(root, target)
    finally:
        git(root, "branch", "-D", target)
        git(root, "branch", "-m", f"{target}-original", target)


def files_selected(root: Path, ref: str, globs) -> set[str]:
    paths = git(root, "ls-tree", "-r", "--name-only", ref).split()
    return {p for p in paths if matches(p, globs)}


def steps_of(recipe: dict, kind: str) -> list[dict]:
    return [s for s in recipe["steps"] if s["kind"] == kind]


# --- the seed migration: pytorch-2.9 -> pytorch-2.10-cuda12_9 (bundled recipe) --------------------


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    root = build_demo(tmp_path_factory.mktemp("seed") / "demo")
    migrated(root, "pytorch-2.10-cuda12_9")
    output = root.parent / "inferred.toml"
    code, out, recipe = inferred(root, "pytorch-2.9", "pytorch-2.10-cuda12_9", output)
    return root, code, out, recipe, output


def test_seed_migration_is_inferred_with_the_bundled_recipes_parameters(seed):
    root, code, out, recipe, _ = seed
    original = tomllib.loads((BUNDLED / "pytorch-2.10-cuda12_9.toml").read_text())
    assert code == 0, out
    assert [s["kind"] for s in recipe["steps"]] == [s["kind"] for s in original["steps"]]
    for mine, theirs in zip(recipe["steps"], original["steps"]):
        if mine["kind"] != "readme-branch-table":
            assert mine["params"] == theirs["params"], mine["kind"]
    readme, = steps_of(recipe, "readme-branch-table")
    theirs, = steps_of(original, "readme-branch-table")
    # the bundled README step writes facts (docs/doc-steps.md); infer learns the values they took on the demo
    facts = {"revision": "0182a361324364ae3f436a63005877674cf45efb", "pin": "0182a36", "version": "?",
             "cuda": "12.9", "python": "3.13", "variants": "66"}
    theirs = {**theirs, "params": fill_facts(theirs["params"], facts)}
    columns = readme["params"].pop("columns")
    assert readme["params"] == {k: v for k, v in theirs["params"].items() if k != "columns"}
    # every column infer sets has the original's value; the others (CUDA 12.9, Python 3.13, 66 variants) are
    # the base row's values, which the commit cannot tell apart from "left alone"
    assert columns.items() <= theirs["params"]["columns"].items()
    assert set(theirs["params"]["columns"]) - set(columns) == {"CUDA", "Python", "Variants"}
    assert readme["files"] == ["README.md"] and recipe["files"] == original["files"]
    assert (recipe["base"], recipe["target"]) == ("pytorch-2.9", "pytorch-2.10-cuda12_9")


def test_seed_migration_replays_to_targets_tree_byte_for_byte(seed):
    root, _, _, _, output = seed
    assert replayed(root, output, "pytorch-2.9", "pytorch-2.10-cuda12_9") == tree(root, "pytorch-2.10-cuda12_9")


def test_under_another_branch_name_only_the_readme_names_that_branch(seed):
    root, _, _, _, output = seed
    migrated(root, str(output), "--from", "pytorch-2.9", "--branch", "elsewhere")
    changed = git(root, "diff", "--name-only", "elsewhere", "pytorch-2.10-cuda12_9").split()
    assert changed == ["README.md"]
    assert "**`elsewhere`** ⬅️" in git(root, "show", "elsewhere:README.md")


def test_seed_recipe_carries_its_proof_and_the_summary_says_it(seed):
    root, _, out, _, output = seed
    text = output.read_text()
    header = text[: text.index("\nname = ")]
    assert all(line.startswith("#") or not line for line in header.splitlines())
    assert "# proof: 67 of 67 changed files reproduced byte for byte, 0 partly, 0 not at all" in header
    assert "proof: 67 of 67 changed files reproduced byte for byte" in out
    assert f"recipe written to {output}" in out
    for title in ("Pin nixpkgs to 0182a36", "Use python313Packages instead of python3Packages", "Bump .metadata-rev"):
        assert title in out


# --- rename-files: pytorch-2.9-python312 -> pytorch-2.9-python311 (the demo's recipe) ----------------


@pytest.fixture(scope="module")
def python311(tmp_path_factory):
    root = build_python312_demo(tmp_path_factory.mktemp("py311") / "demo")
    migrated(root, str(PYTHON311_RECIPE))
    output = root.parent / "inferred.toml"
    code, out, recipe = inferred(root, "pytorch-2.9-python312", "pytorch-2.9-python311", output)
    return root, code, out, recipe, output


def test_python311_branch_is_inferred_with_the_demo_recipes_parameters(python311):
    root, code, out, recipe, _ = python311
    original = tomllib.loads(PYTHON311_RECIPE.read_text())
    assert code == 0, out
    kinds = [s["kind"] for s in recipe["steps"]]
    assert kinds == ["rename-files", "rename-attr", "replace-in-strings", "replace-in-strings"]
    assert [s["params"] for s in recipe["steps"][:3]] == [s["params"] for s in original["steps"][:3]]
    # the original removes the paragraph with a regular expression; the commit determines the text it removed
    assert recipe["steps"][3]["params"] == {"paths": ["meta.longDescription"], "old": PARAGRAPH, "new": ""}


def test_python311_branch_replays_byte_for_byte(python311):
    root, _, _, _, output = python311
    target = "pytorch-2.9-python311"
    assert replayed(root, output, "pytorch-2.9-python312", target) == tree(root, target)


# --- pin-nixpkgs in groups, rename-attr, set-binding with after/comment: main -> main-pinned ----------


@pytest.fixture(scope="module")
def flox(tmp_path_factory):
    root = build_demo(tmp_path_factory.mktemp("flox") / "demo", flox_args=True)
    migrated(root, "flox-args-to-pinned", "--from", "main", "--branch", "main-pinned")
    output = root.parent / "inferred.toml"
    code, out, recipe = inferred(root, "main", "main-pinned", output)
    return root, code, out, recipe, output


def test_flox_conversion_is_inferred_with_the_bundled_recipes_parameters_and_groups(flox):
    root, code, out, recipe, _ = flox
    original = tomllib.loads((BUNDLED / "flox-args-to-pinned.toml").read_text())
    assert code == 0, out
    for kind in ("pin-nixpkgs", "set-binding"):
        mine, theirs = steps_of(recipe, kind), steps_of(original, kind)
        # `map` says what replaces the formal `config`: the CPU and Darwin recipes take no `config`, so
        # their commit cannot show the original's map; the GPU recipes' commit determines it
        assert [{k: v for k, v in s["params"].items() if k != "map"} for s in mine] == \
            [{k: v for k, v in s["params"].items() if k != "map"} for s in theirs], kind
        assert [s["params"].get("map") for s in mine] == [{"config": "nixpkgs_pinned.config"}, None][: len(mine)] \
            if kind == "pin-nixpkgs" else True
        for step, other in zip(mine, theirs):  # each step runs on the same group of files as the original's
            assert files_selected(root, "main", step["files"]) == files_selected(root, "main", other["files"])
    renames = sorted((s["params"]["from"], s["params"]["to"], s["params"]["base"]) for s in steps_of(recipe, "rename-attr"))
    assert renames == sorted((s["params"]["from"], s["params"]["to"], s["params"]["base"])
                             for s in steps_of(original, "rename-attr"))


def test_flox_conversion_replays_byte_for_byte(flox):
    root, _, _, _, output = flox
    assert replayed(root, output, "main", "main-pinned") == tree(root, "main-pinned")


# --- a test recipe: replace-in-strings in groups, clone-files, remove-files, a one-file set-binding ----


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    root = build_demo(tmp_path_factory.mktemp("groups") / "demo")
    migrated(root, str(GROUPS_RECIPE))
    output = root.parent / "inferred.toml"
    code, out, recipe = inferred(root, "pytorch-2.9", "groups", output)
    return root, code, out, recipe, output


def test_groups_are_inferred_as_restricted_steps_with_the_originals_parameters(groups):
    root, code, out, recipe, _ = groups
    original = tomllib.loads(GROUPS_RECIPE.read_text())
    assert code == 0, out
    mine = sorted(steps_of(recipe, "replace-in-strings"), key=lambda s: s["params"]["new"])
    theirs = sorted(steps_of(original, "replace-in-strings"), key=lambda s: s["params"]["new"])
    assert [s["params"] for s in mine] == [s["params"] for s in theirs]
    for step, other in zip(mine, theirs):  # the clones (sm70) are GPU recipes too, on both sides
        assert files_selected(root, "groups", step["files"]) == files_selected(root, "groups", other["files"])
    clone, = steps_of(recipe, "clone-files")
    original_clone, = steps_of(original, "clone-files")
    assert {k: v for k, v in clone["params"].items() if k != "select"} == \
        {k: v for k, v in original_clone["params"].items() if k != "select"}
    removal, = steps_of(recipe, "remove-files")
    assert files_selected(root, "pytorch-2.9", removal["params"]["select"]) == \
        files_selected(root, "pytorch-2.9", steps_of(original, "remove-files")[0]["params"]["select"])
    binding, = steps_of(recipe, "set-binding")
    assert binding["params"] == steps_of(original, "set-binding")[0]["params"]
    assert files_selected(root, "pytorch-2.9", binding["files"]) == {f"{PKGS}/pytorch-python313-darwin-mps.nix"}


def test_groups_replay_byte_for_byte(groups):
    root, _, _, _, output = groups
    assert replayed(root, output, "pytorch-2.9", "groups") == tree(root, "groups")


# --- residue: a change no step kind expresses -----------------------------------------------------


@pytest.fixture(scope="module")
def reordered(tmp_path_factory):
    """The seed migration, then a commit swapping two CPU flags in one recipe."""
    root = build_demo(tmp_path_factory.mktemp("reordered") / "demo")
    migrated(root, "pytorch-2.10-cuda12_9")
    git(root, "switch", "-q", "-c", "reordered", "pytorch-2.10-cuda12_9")
    path = root / PKGS / "pytorch-python313-cuda12_9-sm90-avx2.nix"
    data = path.read_text()
    assert '    "-mavx2"\n    "-mfma"\n' in data
    path.write_text(data.replace('    "-mavx2"\n    "-mfma"\n', '    "-mfma"\n    "-mavx2"\n'))
    git(root, "commit", "-q", "-am", "build with FMA first")
    git(root, "switch", "-q", "pytorch-2.9")
    output = root.parent / "inferred.toml"
    code, out, recipe = inferred(root, "pytorch-2.9", "reordered", output)
    return root, code, out, recipe, output


def test_a_reordered_list_is_residue_with_its_hunk_and_the_rest_is_inferred(reordered):
    root, code, out, recipe, output = reordered
    assert code == 1
    assert [s["kind"] for s in recipe["steps"]] == ["pin-swap", "rename-attr", "metadata-rev", "readme-branch-table"]
    where = f"{PKGS}/pytorch-python313-cuda12_9-sm90-avx2.nix:25: the same lines in another order"
    assert where in out
    assert "proof: 66 of 67 changed files reproduced byte for byte, 1 partly, 0 not at all" in out
    header = output.read_text().split("\nname = ")[0]
    assert f"#   {where}" in header
    assert '#     +    "-mfma"' in header and '#     -    "-mfma"' in header
    # the rest replays: every file but the reordered one is TARGET's
    changed = git(root, "diff", "--name-only", "pytorch-2.10-cuda12_9", "reordered").split()
    assert changed == [f"{PKGS}/pytorch-python313-cuda12_9-sm90-avx2.nix"]
