"""`{base}`/`{target}` in step parameters: filled from the migration's real branches, escapes, errors.

The bundled recipe's README step says `base = "{base}"`, so `migrate --from B --branch T` finds B's row
and adds T's; checked on the trial-shaped README through the real CLI on a real repository.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, git
from pinshift.demo.matrix import Variant, render_recipe
from pinshift.errors import RecipeError
from pinshift.recipes.placeholders import PlaceholderError, expand
from pinshift.recipes.recipe import parse_recipe, validate_recipe
from pinshift.steps.registry import available_kinds

DOCS = FIXTURES / "docs"
BUNDLED = "pytorch-2.10-cuda12_9"
TRIAL_BASE = "pytorch-2.9-python313"


def one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def recipe_with(params: dict, **top) -> dict:
    return {"name": "r", **top, "steps": [{"kind": "readme-branch-table", "title": "rows of {target}",
                                           "params": params}]}


# --- expand ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("{base}", "pytorch-2.9"),
    ("from {base} to {target}", "from pytorch-2.9 to next"),
    ("{{base}}", "{base}"),
    ("{{{target}}}", "{next}"),
    ("{ cudaSupport = true; }", "{ cudaSupport = true; }"),  # a Nix attrset is not a placeholder
    ("[0-9a-f]{7}", "[0-9a-f]{7}"),  # nor a regex quantifier
    ("{}", "{}"),
    ('"v${version}-{target}"', '"v${version}-next"'),  # Nix/shell interpolation is not a placeholder
])
def test_expand(text, expected):
    assert expand(text, {"base": "pytorch-2.9", "target": "next"}) == expected


def test_unknown_placeholder_is_named_with_the_known_ones():
    with pytest.raises(PlaceholderError) as error:
        expand("{branch}", {"base": "a", "target": "b"})
    assert str(error.value) == "unknown placeholder {branch} (known: {base}, {target}; write {{ and }} for a literal brace)"


# --- validate_recipe --------------------------------------------------------------------------------


def test_branches_fill_params_title_and_message():
    recipe = parse_recipe(recipe_with({"base": "{base}", "target": "{target}", "columns": {"Note": "was {base}"}},
                                      base="pytorch-2.9", target="next"), "r.toml")
    ((step, _, params),) = validate_recipe(recipe, available_kinds(), branches={"base": "B", "target": "T"})
    assert (params.base, params.target, params.columns) == ("B", "T", {"Note": "was B"})
    assert step.title == "rows of T" and step.params["base"] == "B"


def test_without_branches_the_recipe_own_base_and_target_are_used():
    recipe = parse_recipe(recipe_with({"base": "{base}", "target": "{target}"}, base="pytorch-2.9"), "r.toml")
    ((_, _, params),) = validate_recipe(recipe, available_kinds())
    assert (params.base, params.target) == ("pytorch-2.9", "r")  # no target: the recipe's name, as migrate does


def test_unknown_placeholder_is_a_recipe_error_naming_file_step_and_key():
    recipe = parse_recipe(recipe_with({"base": "{from}", "target": "x"}, base="a"), "r.toml")
    with pytest.raises(RecipeError) as error:
        validate_recipe(recipe, available_kinds())
    assert str(error.value) == ("r.toml: step 1 (readme-branch-table): 'base': unknown placeholder {from} "
                                "(known: {base}, {target}; write {{ and }} for a literal brace)")


def test_base_placeholder_in_a_recipe_without_base_is_a_recipe_error():
    recipe = parse_recipe(recipe_with({"base": "{base}", "target": "x"}), "r.toml")
    with pytest.raises(RecipeError, match=r"r.toml: step 1 \(readme-branch-table\): 'base': \{base\} stands for the "
                                          r"migration's base branch, which is not known here; set base = \"BRANCH\""):
        validate_recipe(recipe, available_kinds())


def test_show_prints_the_filled_values(run_cli, tmp_path):
    result = run_cli("show", BUNDLED, cwd=tmp_path)
    assert result.exit_code == 0, result
    assert "step 4/4 readme-branch-table: README: add the pytorch-2.10-cuda12_9 row to the branch tables" in result.stdout
    assert 'base           = "pytorch-2.9"' in result.stdout and "{base}" not in result.stdout


# --- apply: no migration, no branches ----------------------------------------------------------------


def test_apply_with_a_branch_placeholder_is_a_usage_error(run_cli, tmp_path):
    readme = (DOCS / "README.md").read_bytes()
    (tmp_path / "README.md").write_bytes(readme)
    line = one_line_error(run_cli("apply", "readme-branch-table", "--files", "*.md", "--set", "base={base}",
                                  "--set", "target=next", cwd=tmp_path))
    assert line == ("pinshift: error: readme-branch-table: 'base': {base} stands for the migration's base branch, "
                    "which is not known here; apply has no migration, so write the branch name itself "
                    "(--set base=BRANCH)")
    assert (tmp_path / "README.md").read_bytes() == readme


def test_apply_with_an_unknown_placeholder_is_a_usage_error(run_cli, tmp_path):
    (tmp_path / "x.nix").write_bytes(b"{ }\n")
    line = one_line_error(run_cli("apply", "metadata-rev", "--set", "missing={mode}", cwd=tmp_path))
    assert line.startswith("pinshift: error: metadata-rev: 'missing': unknown placeholder {mode} (known: {base}, {target}")


def test_apply_unescapes_doubled_braces(run_cli, tmp_path):
    (tmp_path / "README.md").write_text("| Branch | Note |\n|---|---|\n| `{a}` | x |\n")
    result = run_cli("apply", "readme-branch-table", "README.md", "--set", "base={{a}}", "--set", "target={{b}}",
                     cwd=tmp_path)
    assert result.exit_code == 0, result
    assert (tmp_path / "README.md").read_text() == "| Branch | Note |\n|---|---|\n| `{a}` | x |\n| `{b}` | x |\n"


# --- migrate: --from and --branch reach the README step --------------------------------------------------


@pytest.fixture
def trial_repo(make_repo):
    """A repository whose branch pytorch-2.9-python313 holds the trial README and three seed-shaped recipes."""
    files = {"README.md": (DOCS / "README-trial.md").read_bytes()}
    for variant in (Variant("90", "avx512"), Variant("cpu", "avx2"), Variant("darwin", "")):
        files[f".flox/pkgs/{variant.filename}"] = render_recipe(variant)
    return make_repo(files, branch=TRIAL_BASE)


def blob(root: Path, ref: str, path: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f"{ref}:{path}"], cwd=root, capture_output=True,
                          check=True).stdout


def test_migrate_from_another_base_updates_its_rows(trial_repo, run_cli):
    result = run_cli("migrate", BUNDLED, "--from", TRIAL_BASE, "--repo", str(trial_repo))
    assert result.exit_code == 0, result
    assert "warning" not in result.stdout
    assert blob(trial_repo, BUNDLED, "README.md") == (DOCS / "README-trial.facts.expected.md").read_bytes()


def test_migrate_with_branch_names_the_new_branch_in_rows_banner_heading_and_commit(trial_repo, run_cli):
    result = run_cli("migrate", BUNDLED, "--from", TRIAL_BASE, "--branch", "my-2.10", "--repo", str(trial_repo))
    assert result.exit_code == 0, result
    expected = (DOCS / "README-trial.facts.expected.md").read_bytes().replace(b"pytorch-2.10-cuda12_9", b"my-2.10")
    assert blob(trial_repo, "my-2.10", "README.md") == expected
    subject = git(trial_repo, "log", "-1", "--format=%s", "my-2.10")
    body = git(trial_repo, "log", "-1", "--format=%b", "my-2.10")
    assert subject == "README: add my-2.10 to the branch tables\n"
    assert f'the "this branch" marker moves from {TRIAL_BASE} to the new row.' in body


@pytest.fixture
def seed_repo(make_repo):
    """Branch pytorch-2.9 (the bundled recipe's own base) with the seed README and three recipes."""
    files = {"README.md": (DOCS / "README.md").read_bytes()}
    for variant in (Variant("90", "avx512"), Variant("cpu", "avx2"), Variant("darwin", "")):
        files[f".flox/pkgs/{variant.filename}"] = render_recipe(variant)
    return make_repo(files, branch="pytorch-2.9")


def test_from_a_remote_tracking_branch_means_its_branch_name(seed_repo, tmp_path, run_cli):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(seed_repo), str(clone))
    git(clone, "checkout", "-q", "--detach")
    git(clone, "branch", "-q", "-D", "pytorch-2.9")
    result = run_cli("migrate", BUNDLED, "--from", "origin/pytorch-2.9", "--repo", str(clone))
    assert result.exit_code == 0, result
    assert blob(clone, BUNDLED, "README.md") == (DOCS / "README.facts.expected.md").read_bytes()


def test_from_a_commit_falls_back_to_the_recipe_base(seed_repo, run_cli):
    """CI runs `--from "$HEAD_SHA"`: a commit names no branch, so {base} is the recipe's base."""
    sha = git(seed_repo, "rev-parse", "HEAD").strip()
    result = run_cli("migrate", BUNDLED, "--from", sha, "--repo", str(seed_repo))
    assert result.exit_code == 0, result
    assert blob(seed_repo, BUNDLED, "README.md") == (DOCS / "README.facts.expected.md").read_bytes()


def test_ci_guard_on_a_migrated_commit_leaves_the_readme_alone(seed_repo, run_cli):
    """docs/ci.md's guard, `--from "$HEAD_SHA" --force --dry-run --check`, on the migrated branch: the README
    step finds its row (the recipe's own target) and changes nothing. (metadata-rev bumps on every run.)"""
    import json

    assert run_cli("migrate", BUNDLED, "--repo", str(seed_repo)).exit_code == 0
    sha = git(seed_repo, "rev-parse", BUNDLED).strip()
    result = run_cli("migrate", BUNDLED, "--from", sha, "--force", "--dry-run", "--format", "json",
                     "--repo", str(seed_repo))
    assert result.exit_code == 0, result
    steps = json.loads(result.stdout)["steps"]
    readme = next(s for s in steps if s["kind"] == "readme-branch-table")
    assert readme["files_changed"] == []
    assert readme["warnings"] == []
