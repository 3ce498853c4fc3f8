"""readme-branch-table through the real runner over real git repositories, checked against golden bytes."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from pinshift.errors import RecipeError
from pinshift.files import DirectoryTree
from pinshift.plan import Outcome
from pinshift.recipes import load_recipe_file, validate_recipe
from pinshift.runner import plan_recipe
from pinshift.steps import available_kinds

DOCS = Path(__file__).parent / "fixtures" / "docs"
NEW_REV = "0182a361324364ae3f436a63005877674cf45efb"

RECIPE = f"""
name = "readme-test"
files = ["**/*.md"]

[[steps]]
kind = "readme-branch-table"
title = "README branch tables"
[steps.params]
base = "pytorch-2.9"
target = "pytorch-2.10-cuda12_9"
revision = "{NEW_REV}"
[steps.params.columns]
PyTorch = "2.10.0"
CUDA = "12.9"
Python = "3.13"
"Min Driver" = "560+"
"Nixpkgs Pin" = "0182a36"
"""


def run_step(root: Path, recipe_text: str = RECIPE):
    """The one StepPlan of `recipe_text` planned over the repository at `root`."""
    path = root.parent / "recipe.toml"
    path.write_text(recipe_text)
    recipe = load_recipe_file(path)
    plan = plan_recipe(DirectoryTree(root), recipe, validate_recipe(recipe, available_kinds(root)))
    return plan.steps[0]


def file_change(step, path):
    return next(f for f in step.files if f.path == path)


@pytest.mark.parametrize(
    "source, golden",
    [
        ("README.md", "README.expected.md"),
        ("README-crlf.md", "README-crlf.expected.md"),
        ("README-target-present.md", "README-target-present.expected.md"),
    ],
)
def test_golden_output(make_repo, source, golden):
    root = make_repo({"README.md": (DOCS / source).read_bytes()})
    change = file_change(run_step(root), "README.md")
    assert change.outcome is Outcome.CHANGED
    assert change.language == "markdown"
    assert change.after == (DOCS / golden).read_bytes()


def test_only_the_base_row_the_new_rows_and_the_banner_change(make_repo):
    before = (DOCS / "README.md").read_bytes()
    root = make_repo({"README.md": before})
    after = file_change(run_step(root), "README.md").after
    diff = [line for line in difflib.ndiff(before.decode().splitlines(), after.decode().splitlines())
            if line[:1] in "+-"]
    assert diff == [
        "- > You are on the **`pytorch-2.9`** branch — PyTorch 2.9.1 + CUDA 12.9 (66 variants)",
        "+ > You are on the **`pytorch-2.10-cuda12_9`** branch — PyTorch 2.10.0 + CUDA 12.9 (66 variants)",
        "- | **`pytorch-2.9`** ⬅️ | 2.9.1 | 12.9 | 3.13 | 66 | Full coverage + SM75/SM103 + AVX-only + Darwin MPS |",
        "+ | `pytorch-2.9` | 2.9.1 | 12.9 | 3.13 | 66 | Full coverage + SM75/SM103 + AVX-only + Darwin MPS |",
        "+ | **`pytorch-2.10-cuda12_9`** ⬅️ | 2.10.0 | 12.9 | 3.13 | 66 | Full coverage + SM75/SM103 + AVX-only + Darwin MPS |",
        "- | **`pytorch-2.9`** ⬅️ | 2.9.1 | 12.9 | 9.13.0 | 3.13 | 550+ | [`6a030d5`](https://github.com/NixOS/nixpkgs/tree/6a030d535719c5190187c4cec156f335e95e3211) |",
        "+ | `pytorch-2.9` | 2.9.1 | 12.9 | 9.13.0 | 3.13 | 550+ | [`6a030d5`](https://github.com/NixOS/nixpkgs/tree/6a030d535719c5190187c4cec156f335e95e3211) |",
        f"+ | **`pytorch-2.10-cuda12_9`** ⬅️ | 2.10.0 | 12.9 | 9.13.0 | 3.13 | 560+ | [`0182a36`](https://github.com/NixOS/nixpkgs/tree/{NEW_REV}) |",
    ]


def test_rows_of_other_branches_with_the_same_old_pin_are_untouched(make_repo):
    before = (DOCS / "README.md").read_bytes()
    root = make_repo({"README.md": before})
    after = file_change(run_step(root), "README.md").after
    legacy = [line for line in before.splitlines() if line.startswith(b"| `pytorch-2.9-legacy`")]
    assert len(legacy) == 2 and b"6a030d5" in legacy[1]
    for line in legacy:
        assert line in after.splitlines()
    assert after.count(b"6a030d535719c5190187c4cec156f335e95e3211") == before.count(b"6a030d535719c5190187c4cec156f335e95e3211")


@pytest.mark.parametrize("golden", ["README.expected.md", "README-crlf.expected.md", "README-target-present.expected.md"])
def test_second_run_changes_nothing(make_repo, golden):
    root = make_repo({"README.md": (DOCS / golden).read_bytes()})
    change = file_change(run_step(root), "README.md")
    assert change.outcome is Outcome.UNCHANGED
    assert change.edits == []


def test_readme_without_branch_table_is_reported_and_left_alone(make_repo):
    root = make_repo({"README.md": (DOCS / "README-no-branch-table.md").read_bytes()})
    change = file_change(run_step(root), "README.md")
    assert change.outcome is Outcome.UNCHANGED
    assert [str(w) for w in change.warnings] == [
        "README.md:1:1: no branch table (no table with a 'Branch' column); file left alone"
    ]


def test_table_without_branch_column_is_reported_as_a_note_not_a_warning(make_repo):
    """A variants table next to the branch tables is normal: reported, but --strict must not fail on it."""
    root = make_repo({"README.md": (DOCS / "README.md").read_bytes()})
    plan = run_step(root)
    change = file_change(plan, "README.md")
    assert [str(n) for n in change.notes] == ["README.md:40:1: table has no 'Branch' column; left alone"]
    assert change.warnings == []
    assert "README.md:40:1: table has no 'Branch' column; left alone" in plan.notes


def test_unused_override_column_is_reported(make_repo):
    root = make_repo({"README.md": (DOCS / "README-crlf.md").read_bytes()})
    messages = [w.message for w in file_change(run_step(root), "README.md").warnings]
    assert "no branch table has a 'Min Driver' column; that override was not used" in messages


def test_branch_table_without_base_row_is_reported(make_repo):
    text = "| Branch | PyTorch | CUDA | Python | Min Driver | Nixpkgs Pin |\n|---|---|---|---|---|---|\n" \
        "| `main` | 2.8.0 | 12.8 | 3.13 | 550+ | fe5e41d |\n\nSee `pytorch-2.9`.\n"
    root = make_repo({"README.md": text})
    change = file_change(run_step(root), "README.md")
    assert change.outcome is Outcome.UNCHANGED
    assert [w.message for w in change.warnings] == [
        "branch table has no row for 'pytorch-2.9' or 'pytorch-2.10-cuda12_9'; left alone"
    ]


def test_link_to_long_revision_without_revision_parameter_is_reported(make_repo):
    recipe = RECIPE.replace(f'revision = "{NEW_REV}"\n', "")
    root = make_repo({"README.md": (DOCS / "README.md").read_bytes()})
    change = file_change(run_step(root, recipe), "README.md")
    assert "link in 'nixpkgs pin' still points to the old revision; set 'revision' to rebuild it" in [
        w.message for w in change.warnings
    ]


def test_unquoted_column_value_is_a_recipe_error(tmp_path):
    path = tmp_path / "recipe.toml"
    path.write_text(RECIPE.replace('Python = "3.13"', "Python = 3.13"))
    recipe = load_recipe_file(path)
    with pytest.raises(RecipeError, match=r"step 1 \(readme-branch-table\): columns.Python must be a string"):
        validate_recipe(recipe, available_kinds())


def test_bundled_recipe_readme_step_has_the_seed_values(make_repo):
    """Seed 002 step 5: PyTorch 2.10.0, CUDA 12.9, Python 3.13, min driver 560+, pin 0182a36, as its own step."""
    from pinshift.recipes import find_recipe
    from pinshift.runner import WorkingSet, plan_step

    recipe = find_recipe("pytorch-2.10-cuda12_9")
    (step,) = [s for s in recipe.steps if s.kind == "readme-branch-table"]
    assert recipe.files_for(step) == ("README.md",)
    kind = available_kinds()[step.kind]
    root = make_repo({"README.md": (DOCS / "README.md").read_bytes(), "docs/README.md": b"| Branch |\n"})
    plan = plan_step(WorkingSet(DirectoryTree(root)), kind, kind.parse_params(step.params), recipe.files_for(step))
    (change,) = plan.files
    assert change.path == "README.md"
    assert change.after == (DOCS / "README.expected.md").read_bytes()


def test_branch_links_are_renamed_in_text_and_address(make_repo):
    text = (
        "| Branch | PyTorch |\n|---|---|\n"
        "| **[pytorch-2.9](../../tree/pytorch-2.9)** ⬅️ | 2.9.1 |\n"
        "| [pytorch-2.9-legacy](../../tree/pytorch-2.9-legacy) | 2.9.1 |\n"
    )
    root = make_repo({"README.md": text})
    after = file_change(run_step(root), "README.md").after.decode()
    assert after == (
        "| Branch | PyTorch |\n|---|---|\n"
        "| [pytorch-2.9](../../tree/pytorch-2.9) | 2.9.1 |\n"
        "| **[pytorch-2.10-cuda12_9](../../tree/pytorch-2.10-cuda12_9)** ⬅️ | 2.10.0 |\n"
        "| [pytorch-2.9-legacy](../../tree/pytorch-2.9-legacy) | 2.9.1 |\n"
    )
