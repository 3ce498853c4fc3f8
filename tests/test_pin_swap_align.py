"""pin-swap's `new = { repo = "../build-vllm", ref = "main" }` (issue 20 item 2): the pin of another
repository's branch, resolved before planning (pinshift.facts.pin_inputs), migrated with the real `pinshift migrate`."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import git, require_nix_tool
from migrate_repo import assert_one_line_error, snapshot
from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe
from status_repos import build_pytorch, build_vllm, commit_branch, stub_nixpkgs, vllm_recipe  # noqa: F401

STEP = '''name = "align"
base = "pytorch-2.9"
target = "pytorch-2.9-aligned"
files = [".flox/pkgs/**/*.nix"]

[[steps]]
kind = "pin-swap"
title = "Pin nixpkgs to the pin of build-vllm"
[steps.params]
old = "6a030d5"
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    parent = tmp_path_factory.mktemp("align")
    return build_pytorch(parent / "build-pytorch"), build_vllm(parent / "build-vllm")


@pytest.fixture
def repos(built, tmp_path):
    """Fresh copies side by side (tests migrate and add recipes)."""
    pytorch, vllm = tmp_path / "build-pytorch", tmp_path / "build-vllm"
    shutil.copytree(built[0], pytorch)
    shutil.copytree(built[1], vllm)
    return pytorch, vllm


def recipe(pytorch, params: str) -> None:
    directory = pytorch / ".pinshift" / "recipes"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "align.toml").write_text(STEP + params)


def test_migrates_a_branch_onto_the_siblings_pin(run_cli, repos, nix_oracle):
    pytorch, vllm = repos
    recipe(pytorch, 'new = { repo = "../build-vllm", ref = "main" }\n')
    vllm_main = git(vllm, "rev-parse", "main").strip()
    note = f"new pin 0182a36…, the pin of build-vllm@main ({vllm_main[:7]}, 4 recipes)"
    dry = run_cli("migrate", "align", "--dry-run", "--format", "json", cwd=pytorch)
    assert dry.exit_code == 0, dry
    [step] = json.loads(dry.stdout)["steps"]
    assert step["notes"][0] == note
    result = run_cli("migrate", "align", cwd=pytorch)
    assert result.exit_code == 0, result
    assert f"note: step 1: {note}" in result.stdout
    message = git(pytorch, "log", "-1", "--format=%B", "pytorch-2.9-aligned")
    assert message.strip().split("\n\n") == ["Pin nixpkgs to the pin of build-vllm", note, "66 files changed, 66 edits",
                                              "Pinshift-Recipe: align\nPinshift-Step: 1/1 pin-swap"]
    changed = git(pytorch, "diff", "--name-only", "pytorch-2.9", "pytorch-2.9-aligned").split()
    assert len(changed) == 66
    for path in changed[:5]:
        before = git(pytorch, "show", f"pytorch-2.9:{path}")
        after = git(pytorch, "show", f"pytorch-2.9-aligned:{path}")
        assert after == before.replace(OLD_REV, NEW_REV)
        (ok_before, parse_before), (ok_after, parse_after) = nix_oracle(before.encode()), nix_oracle(after.encode())
        assert ok_before and ok_after and parse_after == parse_before.replace(OLD_REV, NEW_REV)


def test_absolute_repo_and_a_commit_as_ref(run_cli, repos):
    pytorch, vllm = repos
    commit = git(vllm, "rev-parse", "main").strip()
    recipe(pytorch, f'new = {{ repo = "{vllm}", ref = "{commit[:10]}" }}\n')
    result = run_cli("migrate", "align", "--dry-run", cwd=pytorch)
    assert result.exit_code == 0, result
    assert f"note: new pin 0182a36…, the pin of build-vllm@{commit[:10]} ({commit[:7]}, 4 recipes)" in result.stdout


def test_ambiguous_sibling_branch_is_one_line_and_exit_2(run_cli, repos, scratch_dir):
    pytorch, vllm = repos
    recipe(pytorch, 'new = { repo = "../build-vllm", ref = "mixed" }\n')
    before, sibling = snapshot(pytorch), snapshot(vllm)
    result = run_cli("migrate", "align", cwd=pytorch)
    assert_one_line_error(
        result, 2, ".pinshift/recipes/align.toml: step 1 (pin-swap): build-vllm@mixed (",
        "uses 2 nixpkgs pins: 0182a36 (3 recipes), 6a030d5 (2 recipes); set pick = \"majority\" in the new table")
    assert snapshot(pytorch) == before and snapshot(vllm) == sibling
    assert "pytorch-2.9-aligned" not in git(pytorch, "branch", "--list")


def test_pick_majority_takes_the_most_common_pin(run_cli, repos):
    pytorch, vllm = repos
    recipe(pytorch, 'new = { repo = "../build-vllm", ref = "mixed", pick = "majority" }\n')
    result = run_cli("migrate", "align", cwd=pytorch)
    assert result.exit_code == 0, result
    mixed = git(vllm, "rev-parse", "mixed").strip()[:7]
    assert (f"note: step 1: new pin 0182a36…, the pin of build-vllm@mixed ({mixed}, 3 of 5 recipes, a majority "
            "(60 %); also 6a030d5 (2 recipes))") in result.stdout
    assert NEW_REV in git(pytorch, "show", "pytorch-2.9-aligned:.flox/pkgs/pytorch-python313-cpu-avx2.nix")


def test_a_tie_has_no_majority(run_cli, repos):
    pytorch, _ = repos
    recipe(pytorch, 'new = { repo = "../build-vllm", ref = "tie", pick = "majority" }\n')
    assert_one_line_error(run_cli("migrate", "align", cwd=pytorch), 2,
                          "build-vllm@tie (", "has no majority pin: 0182a36 (2 recipes), 6a030d5 (2 recipes)")


@pytest.mark.parametrize("table, fragments", [
    ('{ repo = "../nowhere", ref = "main" }', ['new = { repo = "../nowhere" }: ', "nowhere is not a directory"]),
    ('{ repo = "../plain", ref = "main" }', ['new = { repo = "../plain" }: ', "plain is not a git repository"]),
    ('{ repo = "../build-vllm", ref = "mian" }', ["'mian' is not a branch or commit of ", "closest branches: main"]),
    ('{ repo = "../build-pytorch", ref = "main" }', ["build-pytorch@main (", "pins no nixpkgs revision: its 58 "
                                                     "recipes use the caller's nixpkgs"]),
    ('{ repo = "../build-vllm", ref = "main", files = ["nothing/*.nix"] }', ["has no recipes in nothing/*.nix"]),
])
def test_bad_sibling_is_one_line(run_cli, repos, table, fragments):
    pytorch, _ = repos
    (pytorch.parent / "plain").mkdir()
    recipe(pytorch, f"new = {table}\n")
    before = snapshot(pytorch)
    result = run_cli("migrate", "align", cwd=pytorch)
    assert_one_line_error(result, 2, "align.toml: step 1 (pin-swap): ", *fragments)
    assert snapshot(pytorch) == before


@pytest.mark.parametrize("value, message", [
    ("5", "'new' must be a string, not 5"),
    ("{}", "'new' table: missing parameter 'repo'"),
    ('{ repo = "../build-vllm" }', "'new' table: missing parameter 'ref'"),
    ('{ repo = "../build-vllm", ref = "main", pick = "most" }',
     "'new' table: 'pick' must be one of 'single', 'majority', not 'most'"),
    ('{ repo = "../build-vllm", ref = "main", branch = "x" }', "'new' table: unknown parameter 'branch'"),
    ('{ repo = "", ref = "main" }', "'new' table: 'repo' must be the path of a local clone"),
    ('{ repo = "../build-vllm", ref = "-x" }', "'new' table: 'ref' must be a branch (or commit) of ../build-vllm"),
    ('"not a revision!"', "'new' must be a full 40-hex-digit revision, or a branch, tag or abbreviated commit"),
])
def test_parameter_validation_messages(run_cli, repos, value, message):
    pytorch, _ = repos
    recipe(pytorch, f"new = {value}\n")
    assert_one_line_error(run_cli("migrate", "align", "--dry-run", cwd=pytorch), 2,
                          "align.toml: step 1 (pin-swap): ", message)


def test_old_already_the_siblings_pin(run_cli, repos):
    pytorch, _ = repos
    (pytorch / ".pinshift" / "recipes").mkdir(parents=True)
    (pytorch / ".pinshift" / "recipes" / "align.toml").write_text(
        STEP.replace('old = "6a030d5"', 'old = "0182a36"') + 'new = { repo = "../build-vllm", ref = "main" }\n')
    assert_one_line_error(run_cli("migrate", "align", "--dry-run", cwd=pytorch), 2,
                          "'new' (0182a36…, the pin of build-vllm@main) is the same revision as 'old' (0182a36): "
                          "nothing to align")


def test_apply_takes_the_table_from_set(run_cli, repos, tmp_path):
    _, vllm = repos
    files = tmp_path / "files"
    files.mkdir()
    target = files / "x.nix"
    target.write_text(render_recipe(Variant("cpu", "avx2"), OLD_REV))
    result = run_cli("apply", "pin-swap", "--set", "old=6a030d5", "--set", f"new.repo={vllm}",
                     "--set", "new.ref=main", str(target))
    assert result.exit_code == 0, result
    assert target.read_text() == render_recipe(Variant("cpu", "avx2"), NEW_REV)
    assert "the pin of build-vllm@main" in result.output


def test_abbreviated_sibling_pin_needs_and_uses_a_nixpkgs_clone(run_cli, repos, stub_nixpkgs):  # noqa: F811
    pytorch, vllm = repos
    clone, first, second = stub_nixpkgs
    path, text = vllm_recipe("313", "90", second)
    commit_branch(vllm, "short", {path: text.replace(second, second[:12])})
    recipe(pytorch, 'new = { repo = "../build-vllm", ref = "short" }\n')
    assert_one_line_error(run_cli("migrate", "align", "--dry-run", cwd=pytorch), 2,
                          f"the pin of build-vllm@short is abbreviated in its recipes ({second[:12]}); naming its "
                          "full commit needs a local nixpkgs clone: pass --nixpkgs DIR")
    result = run_cli("migrate", "align", "--nixpkgs", str(clone), cwd=pytorch)
    assert result.exit_code == 0, result
    assert second in git(pytorch, "show", "pytorch-2.9-aligned:.flox/pkgs/pytorch-python313-cpu-avx2.nix")


def test_hash_compute_with_the_siblings_pin(run_cli, repos, stub_nixpkgs):  # noqa: F811
    require_nix_tool("nix-prefetch-url")
    pytorch, vllm = repos
    clone, first, second = stub_nixpkgs
    path, text = vllm_recipe("313", "90", second)
    commit_branch(vllm, "stub", {path: text})
    recipe(pytorch, 'new = { repo = "../build-vllm", ref = "stub" }\nhash = "compute"\n')
    assert_one_line_error(run_cli("migrate", "align", "--dry-run", cwd=pytorch), 2,
                          'hash = "compute" needs a local nixpkgs clone')
    expected = run_cli("hash", second, "--nixpkgs", str(clone)).stdout.strip()
    result = run_cli("migrate", "align", "--nixpkgs", str(clone), cwd=pytorch)
    assert result.exit_code == 0, result
    migrated = git(pytorch, "show", "pytorch-2.9-aligned:.flox/pkgs/pytorch-python313-cpu-avx2.nix")
    assert second in migrated and f'sha256 = "{expected}";' in migrated


@pytest.fixture
def scratch_dir(tmp_path, monkeypatch):
    """Temporary worktrees go under the test's own directory, so leftovers would be seen."""
    import tempfile

    directory = tmp_path / "scratch"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    yield directory
    assert list(directory.iterdir()) == []


def test_show_spells_the_table_as_toml(run_cli, repos):
    pytorch, _ = repos
    recipe(pytorch, 'new = { repo = "../build-vllm", ref = "main" }\n')
    result = run_cli("show", "align", cwd=pytorch)
    assert result.exit_code == 0, result
    assert ('  new               = { repo = "../build-vllm", ref = "main", pick = "single", '
            'files = [".flox/pkgs/**/*.nix"] }') in result.stdout.splitlines()


def test_apply_set_new_stays_text_beside_the_table_form(run_cli, tmp_path):
    """`new` is `str | table`: `--set new=1234567` is still the text of a revision, not a number."""
    target = tmp_path / "x.nix"
    target.write_text(render_recipe(Variant("cpu", "avx2"), OLD_REV))
    result = run_cli("apply", "pin-swap", "--set", "old=6a030d5", "--set", "new=1234567", str(target))
    assert result.exit_code == 2
    assert "needs a local nixpkgs clone" in result.stderr and "must be a string" not in result.stderr
