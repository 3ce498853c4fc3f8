"""The runner's file-major pipeline: serial and parallel runs give identical plans; surveys see earlier steps."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from pinshift.demo.matrix import OLD_REV, NEW_REV, render_recipe, variants
from pinshift.errors import ParamError
from pinshift.files.tree import DirectoryTree
from pinshift.planning.plan import Outcome
from pinshift.recipes.recipe import parse_recipe, validate_recipe
from pinshift.planning.jobs import RunOptions
from pinshift.planning.runner import plan_recipe, plan_step
from pinshift.planning.working_set import WorkingSet
from pinshift.steps.registry import load_kinds_from

KINDS = load_kinds_from(Path(__file__).parent / "fixtures" / "runner" / "migrations")

RECIPE = f"""
name = "pipeline"
files = ["pkgs/**/*.nix"]

[[steps]]
kind = "text-swap"
[steps.params]
old = "{OLD_REV}"
new = "{NEW_REV}"

[[steps]]
kind = "bump-all"

[[steps]]
kind = "text-swap"
[steps.params]
old = "python3Packages"
new = "python313Packages"
"""


def make_tree(root: Path, count: int) -> Path:
    pkgs = root / "pkgs"
    pkgs.mkdir(parents=True)
    matrix = variants()
    for n in range(count):
        text = render_recipe(matrix[n % len(matrix)], OLD_REV)
        if n % 7 == 0:
            text = text.replace("\nin\n", f"\n  metadataRev = {n % 5};\nin\n", 1)
        (pkgs / f"r{n:04}.nix").write_text(text)
    (pkgs / "broken.nix").write_text(f'{{ url = "{OLD_REV}" ')
    (pkgs / "binary.nix").write_bytes(b"\x00\x01" + OLD_REV.encode())
    (root / "notes.txt").write_text(OLD_REV)
    return root


def run(root: Path, jobs: int):
    recipe = parse_recipe(tomllib.loads(RECIPE), "pipeline.toml")
    tree = DirectoryTree(root)
    return plan_recipe(tree, recipe, validate_recipe(recipe, KINDS), RunOptions(jobs=jobs))


def test_parallel_plan_is_identical_to_serial(tmp_path):
    root = make_tree(tmp_path, 450)
    serial, parallel = run(root, 1), run(root, 2)
    assert parallel == serial
    assert len(serial.steps[0].changed) == 450
    assert {f.outcome for f in serial.steps[0].files} == {Outcome.CHANGED, Outcome.REFUSED, Outcome.SKIPPED}


def test_each_step_sees_the_previous_steps_output(tmp_path):
    root = make_tree(tmp_path, 30)
    plan = run(root, 1)
    first, bump, last = plan.steps
    # bump-all surveyed every file: largest metadataRev among n % 7 == 0 files is 4, so all become 5
    changed = {f.path: f for f in bump.changed}
    assert changed and all(f.after.count(b"metadataRev = 5;") == 1 for f in changed.values())
    for f in bump.changed:
        assert NEW_REV.encode() in f.before  # it planned on the pinned output of step 1
    for f in last.changed:
        assert b"python313Packages" in f.after and NEW_REV.encode() in f.before
    assert all(OLD_REV.encode() not in f.after for f in last.changed)


def test_survey_after_a_change_uses_the_new_bytes(tmp_path):
    root = make_tree(tmp_path, 8)
    recipe = parse_recipe(tomllib.loads(
        'name = "x"\nfiles = ["pkgs/*.nix"]\n'
        '[[steps]]\nkind = "text-swap"\n[steps.params]\nold = "metadataRev = 0;"\nnew = "metadataRev = 41;"\n'
        '[[steps]]\nkind = "bump-all"\n'),
        "x.toml",
    )
    plan = plan_recipe(DirectoryTree(root), recipe, validate_recipe(recipe, KINDS))
    assert all(b"metadataRev = 42;" in f.after for f in plan.steps[1].changed)


@pytest.mark.parametrize("jobs", [1, 2])
def test_step_errors_cross_the_process_boundary_intact(tmp_path, jobs):
    root = make_tree(tmp_path, 420)
    files = WorkingSet(DirectoryTree(root))
    kind = KINDS["fail-on"]
    with pytest.raises(ParamError) as caught:
        plan_step(files, kind, kind.parse_params({"marker": "(SM120)"}), ["pkgs/*.nix"], options=RunOptions(jobs=jobs))
    assert caught.value.key == "marker" and "found (SM120)" in str(caught.value)


class ParentOnlyTree:
    """A tree whose files only the parent process may read (like one backed by git objects)."""

    def __init__(self, inner):
        self.inner = inner

    def paths(self):
        return self.inner.paths()

    def read(self, path):
        return self.inner.read(path)


def test_parallel_run_reading_in_the_parent_matches_serial(tmp_path):
    root = make_tree(tmp_path, 420)
    recipe = parse_recipe(tomllib.loads(RECIPE), "pipeline.toml")
    resolved = validate_recipe(recipe, KINDS)
    serial = plan_recipe(DirectoryTree(root), recipe, resolved, RunOptions(jobs=1))
    parent = plan_recipe(ParentOnlyTree(DirectoryTree(root)), recipe, resolved, RunOptions(jobs=2))
    assert parent == serial
    assert [f.outcome for f in parent.steps[0].files if f.path.endswith("binary.nix")] == [Outcome.SKIPPED]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_is_held_once_and_each_steps_bytes_are_derived_from_its_edits(tmp_path, jobs):
    """plan.derive: a changed file holds the previous step's change (or the file's bytes) and its edits, not copies."""
    from pinshift.planning.plan import DERIVED, FileChange

    root = make_tree(tmp_path, 450 if jobs == 2 else 20)
    plan = run(root, jobs)
    first, second, third = (next(c for c in step.changed if c.path == "pkgs/r0000.nix") for step in plan.steps)
    assert isinstance(first.__dict__["_before"], bytes)
    assert second.__dict__["_before"] is first and third.__dict__["_before"] is second
    assert all(c.__dict__["_after"] is DERIVED for c in (first, second, third))
    original = (root / "pkgs" / "r0000.nix").read_bytes()
    assert first.before == original
    assert third.after == original.replace(OLD_REV.encode(), NEW_REV.encode()).replace(
        b"metadataRev = 0;", b"metadataRev = 5;").replace(b"python3Packages", b"python313Packages")
    assert isinstance(second, FileChange) and second.before == first.after and third.before == second.after
