"""readme-branch-table through the real runner over real git repositories, checked against golden bytes."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from pinshift.errors import RecipeError
from pinshift.files.tree import DirectoryTree
from pinshift.planning.plan import Outcome
from pinshift.recipes.recipe import load_recipe_file, validate_recipe
from pinshift.planning.runner import plan_recipe
from pinshift.steps.registry import available_kinds

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
    """Seed 002 step 5, as its own step: the columns are facts (docs/doc-steps.md), and with the seed's facts
    (PyTorch 2.10.0, CUDA 12.9, Python 3.13, 66 variants, pin 0182a36) it writes the seed's row; min driver 560+
    is typed."""
    from pinshift.recipes.placeholders import fill_facts
    from pinshift.recipes.recipe import find_recipe
    from pinshift.planning.runner import plan_step
    from pinshift.planning.working_set import WorkingSet

    recipe = find_recipe("pytorch-2.10-cuda12_9")
    (step,) = [s for s in recipe.steps if s.kind == "readme-branch-table"]
    assert recipe.files_for(step) == ("README.md",)
    (resolved,) = [(s, k, p) for s, k, p in validate_recipe(recipe, available_kinds()) if k.name == step.kind]
    validated, kind, _ = resolved
    assert validated.facts == ("revision", "version", "cuda", "python", "variants", "pin")
    assert validated.params["columns"]["PyTorch"] == "{facts.version}"
    facts = {"revision": "0182a361324364ae3f436a63005877674cf45efb", "pin": "0182a36", "version": "2.10.0",
             "cuda": "12.9", "python": "3.13", "variants": "66"}
    params = kind.parse_params(fill_facts(validated.params, facts))
    assert (params.base, params.target) == ("pytorch-2.9", "pytorch-2.10-cuda12_9")  # the recipe's own branches
    root = make_repo({"README.md": (DOCS / "README.md").read_bytes(), "docs/README.md": b"| Branch |\n"})
    plan = plan_step(WorkingSet(DirectoryTree(root)), kind, params, recipe.files_for(step))
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


# --- the trial's README: three branch tables, a fully marked row, a self-reference, repeated base rows ----

TRIAL_RECIPE = RECIPE.replace('base = "pytorch-2.9"', 'base = "pytorch-2.9-python313"')
ARROW = "⬅️"


def marked_rows(text: str) -> list[list[str]]:
    """Per branch table, the branch cells of rows that say "this branch" (arrow, the words, a bold name).

    Written from the README conventions, not from the step's code: a row is marked when it has an
    arrow or the words "This branch" anywhere, or its first cell is bold.
    """
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("| Branch |"):
            current = []
            tables.append(current)
        elif current is not None and line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if ARROW in line or "this branch" in line.lower() or cells[0].startswith("**"):
                current.append(cells[0])
        elif not line.startswith("|"):
            current = None
    return tables


def test_trial_readme_golden(make_repo):
    root = make_repo({"README.md": (DOCS / "README-trial.md").read_bytes()})
    change = file_change(run_step(root, TRIAL_RECIPE), "README.md")
    assert change.after == (DOCS / "README-trial.expected.md").read_bytes()
    assert change.warnings == []
    assert [str(n) for n in change.notes] == ["README.md:31:1: table has no 'Branch' column; left alone"]


def test_trial_readme_has_exactly_one_marked_row_per_table_before_and_after(make_repo):
    before = (DOCS / "README-trial.md").read_text()
    assert marked_rows(before) == [["**`pytorch-2.9-python313`** ⬅️"]] * 3
    after = (DOCS / "README-trial.expected.md").read_text()
    assert marked_rows(after) == [["**`pytorch-2.10-cuda12_9`** ⬅️"]] * 3
    root = make_repo({"README.md": before})
    planned = file_change(run_step(root, TRIAL_RECIPE), "README.md").after.decode()
    assert marked_rows(planned) == [["**`pytorch-2.10-cuda12_9`** ⬅️"]] * 3


def test_trial_marker_leaves_the_old_row_whole(make_repo):
    """The words, their separator, the bold of every cell and of the pin link all leave the base row."""
    root = make_repo({"README.md": (DOCS / "README-trial.md").read_bytes()})
    after = file_change(run_step(root, TRIAL_RECIPE), "README.md").after.decode()
    old_rows = [line for line in after.splitlines() if line.startswith("| `pytorch-2.9-python313`")]
    assert len(old_rows) == 5  # one in each of the first two tables, three in the third
    for row in old_rows:
        assert "**" not in row and ARROW not in row and "this branch" not in row.lower(), row
    assert "(this branch: pytorch-2.10-cuda12_9)" in after and "this branch: pytorch-2.9-python313" not in after


def test_trial_second_run_changes_nothing(make_repo):
    root = make_repo({"README.md": (DOCS / "README-trial.expected.md").read_bytes()})
    change = file_change(run_step(root, TRIAL_RECIPE), "README.md")
    assert (change.outcome, change.warnings) == (Outcome.UNCHANGED, [])


def test_several_unmarked_base_rows_copy_the_first_and_warn(make_repo):
    text = ("| Branch | CUDA |\n|---|---|\n| `main` | 12.8 |\n"
            "| `pytorch-2.9` | 12.9 |\n| `pytorch-2.9` | 13.0 |\n| `other` | 12.4 |\n")
    root = make_repo({"README.md": text})
    change = file_change(run_step(root), "README.md")
    assert change.after.decode() == ("| Branch | CUDA |\n|---|---|\n| `main` | 12.8 |\n"
                                     "| `pytorch-2.9` | 12.9 |\n| `pytorch-2.9` | 13.0 |\n"
                                     "| `pytorch-2.10-cuda12_9` | 12.9 |\n| `other` | 12.4 |\n")
    assert [w.message for w in change.warnings if "override" not in w.message] == [
        "2 rows for 'pytorch-2.9' and none is marked as this branch; the new row copies the first (line 4): check it"]


def test_another_marked_row_is_left_alone_and_reported(make_repo):
    text = "| Branch | CUDA |\n|---|---|\n| `main` ⬅️ | 12.8 |\n| `pytorch-2.9` ⬅️ | 12.9 |\n"
    root = make_repo({"README.md": text})
    change = file_change(run_step(root), "README.md")
    assert change.after.decode() == ("| Branch | CUDA |\n|---|---|\n| `main` ⬅️ | 12.8 |\n"
                                     "| `pytorch-2.9` | 12.9 |\n| `pytorch-2.10-cuda12_9` ⬅️ | 12.9 |\n")
    assert [str(w) for w in change.warnings if "override" not in w.message] == ["README.md:3:1: row 'main' is marked as this branch too; left alone"]


def test_bold_that_every_row_has_is_style_not_a_marker(make_repo):
    text = ("| Branch | PyTorch | Notes |\n|---|---|---|\n| **`main`** | **2.8.0** | baseline |\n"
            "| **`pytorch-2.9`** ⬅️ | **2.9.1** | **This branch**: full coverage |\n")
    root = make_repo({"README.md": text})
    after = file_change(run_step(root), "README.md").after.decode()
    assert after == ("| Branch | PyTorch | Notes |\n|---|---|---|\n| **`main`** | **2.8.0** | baseline |\n"
                     "| **`pytorch-2.9`** | **2.9.1** | full coverage |\n"
                     "| **`pytorch-2.10-cuda12_9`** ⬅️ | **2.10.0** | **This branch**: full coverage |\n")


def test_a_bold_name_alone_is_the_marker_and_moves(make_repo):
    text = "| Branch | PyTorch |\n|---|---|\n| `main` | 2.8.0 |\n| **pytorch-2.9** | 2.9.1 |\n"
    root = make_repo({"README.md": text})
    after = file_change(run_step(root), "README.md").after.decode()
    assert after == ("| Branch | PyTorch |\n|---|---|\n| `main` | 2.8.0 |\n| pytorch-2.9 | 2.9.1 |\n"
                     "| **pytorch-2.10-cuda12_9** | 2.10.0 |\n")


def test_existing_target_row_receives_every_mark(make_repo):
    text = ("## Matrix (this branch: pytorch-2.9)\n\n| Branch | PyTorch | Pin | Notes |\n|---|---|---|---|\n"
            "| **`pytorch-2.9`** ⬅️ | 2.9.1 | [**`6a030d5`**](https://x/6a030d5) | **This branch** — full |\n"
            "| `pytorch-2.10-cuda12_9` | 2.9.1 | [`6a030d5`](https://x/6a030d5) | planned |\n")
    recipe = RECIPE.replace('"Nixpkgs Pin" = "0182a36"', 'Pin = "0182a36"')
    root = make_repo({"README.md": text})
    after = file_change(run_step(root, recipe), "README.md").after.decode()
    assert after == ("## Matrix (this branch: pytorch-2.10-cuda12_9)\n\n| Branch | PyTorch | Pin | Notes |\n|---|---|---|---|\n"
                     "| `pytorch-2.9` | 2.9.1 | [`6a030d5`](https://x/6a030d5) | full |\n"
                     "| **`pytorch-2.10-cuda12_9`** ⬅️ | 2.10.0 | [**`0182a36`**](https://x/0182a36) | **This branch** — planned |\n")


def test_self_reference_of_another_branch_is_left_alone(make_repo):
    text = ("Compare with the table on main (this branch: pytorch-2.9-legacy).\n\n"
            "| Branch | PyTorch |\n|---|---|\n| `pytorch-2.9` ⬅️ | 2.9.1 |\n")
    root = make_repo({"README.md": text})
    after = file_change(run_step(root), "README.md").after.decode()
    assert after.startswith("Compare with the table on main (this branch: pytorch-2.9-legacy).\n")
