"""Fan-out (issue 16): one recipe onto several bases in one run, each as a single-base run would make it.

A demo-built repository gets five bases: two sharing the seed pin (`pytorch-2.9`, `pytorch-2.9-b`),
one without the pin (`main`: the recipe changes nothing there), one whose recipe the edit engine
refuses (`pytorch-2.9-broken`), and one that does not exist.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import git
from fanout_repo import BASES, PINSHIFT, RECIPE, fan_args, pin_branches, pinshift, repo, step_trees  # noqa: F401
from migrate_repo import scratch, snapshot, worktree_dirs  # noqa: F401

DOCS = Path(__file__).parent.parent / "docs"


def test_five_bases_make_the_expected_branches_and_report_the_failures(repo):
    before = snapshot(repo, refs=False)
    done = pinshift(repo, *fan_args(repo))
    assert done.returncode == 1, done
    assert pin_branches(repo) == ["pytorch-2.9-b-pin0182a36", "pytorch-2.9-pin0182a36"]
    table = done.stdout
    assert "pytorch-2.9 → pytorch-2.9-pin0182a36" in table and "created" in table
    assert "main → main-pin0182a36" in table and "nothing to change" in table
    assert "failed: pytorch-2.9-broken: step 1/2 (pin-swap) failed: .flox/pkgs/broken.nix:1:" in table
    assert "failed: no-such-branch: base 'no-such-branch' is not a branch or commit" in table
    assert table.rstrip().endswith("5 bases done: 2 created, 1 nothing to change, 2 failed")
    assert snapshot(repo, refs=False) == before
    assert worktree_dirs(repo) == []

    # each created branch has the commits a single-base run makes (same trees per step)
    for base in ("pytorch-2.9", "pytorch-2.9-b"):
        single = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), "--from", base, "--branch", f"single-{base}")
        assert single.returncode == 0, single
        fanned = step_trees(repo, base, f"{base}-pin0182a36")
        assert len(fanned) == 2 and fanned == step_trees(repo, base, f"single-{base}")
        assert git(repo, "log", "--format=%s", f"{base}..{base}-pin0182a36").splitlines() == \
            ["Use python313Packages", "Pin nixpkgs to 0182a36"]


def test_a_glob_matches_local_branches_and_names_them(repo):
    done = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), "--from", "pytorch-2.9*", "--dry-run")
    assert "onto 3 bases: pytorch-2.9, pytorch-2.9-b, pytorch-2.9-broken" in done.stderr
    assert done.returncode == 1  # the broken one would fail
    assert pin_branches(repo) == []


def test_usage_errors_stop_before_any_work(repo):
    before = snapshot(repo)
    for args, fragment in (
        (["--from", "pytorch-2.9", "--from", "pytorch-2.9-b", "--branch", "same"], "names no {base}"),
        (["--from", "nothing-*"], "--from nothing-*: matches no local branch"),
    ):
        done = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), *args)
        assert done.returncode == 2, done
        assert fragment in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert snapshot(repo) == before


def test_recipe_bases_and_target_template(repo):
    (repo.parent / "recipe.toml").write_text(RECIPE.replace('target = ', 'bases = ["pytorch-2.9", "main"]\ntarget = '))
    done = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"))
    assert done.returncode == 0, done
    assert pin_branches(repo) == ["pytorch-2.9-pin0182a36"]
    assert "2 bases done: 1 created, 1 nothing to change" in done.stdout


def test_an_existing_target_fails_that_base_unless_force(repo):
    git(repo, "branch", "pytorch-2.9-b-pin0182a36", "pytorch-2.9-b")
    old = git(repo, "rev-parse", "pytorch-2.9-b-pin0182a36")
    done = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), "--from", "pytorch-2.9", "--from", "pytorch-2.9-b")
    assert done.returncode == 1
    assert "failed: pytorch-2.9-b: branch 'pytorch-2.9-b-pin0182a36' already exists" in done.stdout
    assert git(repo, "rev-parse", "pytorch-2.9-b-pin0182a36") == old
    assert "pytorch-2.9-pin0182a36" in pin_branches(repo)
    forced = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), "--from", "pytorch-2.9", "--from",
                      "pytorch-2.9-b", "--force")
    assert forced.returncode == 0, forced
    assert len(step_trees(repo, "pytorch-2.9-b", "pytorch-2.9-b-pin0182a36")) == 2


def test_dry_run_json_is_one_wrapper_of_per_branch_reports(repo):
    done = pinshift(repo, *fan_args(repo, "--dry-run", "--format", "json"))
    assert done.returncode == 1
    data = json.loads(done.stdout)
    jsonschema.validate(data, json.loads((DOCS / "fanout-schema.json").read_text()))
    report_schema = json.loads((DOCS / "report-schema.json").read_text())
    assert [(b["base"], b["status"]) for b in data["branches"]] == [
        ("pytorch-2.9", "planned"), ("pytorch-2.9-b", "planned"), ("main", "planned"),
        ("pytorch-2.9-broken", "failed"), ("no-such-branch", "failed")]
    for branch in data["branches"]:
        if branch["report"] is not None:
            jsonschema.validate(branch["report"], report_schema)
    assert data["branches"][0]["report"]["would_change"] is True and data["branches"][2]["report"]["would_change"] is False
    assert pin_branches(repo) == []


def test_dry_run_markdown_into_a_directory_writes_one_file_per_branch_and_an_index(repo, tmp_path):
    out = tmp_path / "reports"
    done = pinshift(repo, *fan_args(repo, "--dry-run", "--format", "markdown", "--output", f"{out}/"))
    assert done.returncode == 1, done
    names = sorted(p.name for p in out.iterdir())
    assert names == ["index.md", "main-pin0182a36.md", "pytorch-2.9-b-pin0182a36.md", "pytorch-2.9-broken-pin0182a36.md",
                     "pytorch-2.9-pin0182a36.md"]
    index = (out / "index.md").read_text()
    assert "[`pytorch-2.9-pin0182a36`](pytorch-2.9-pin0182a36.md)" in index
    assert "base 'no-such-branch' is not a branch or commit" in index
    assert "0182a36" in (out / "pytorch-2.9-pin0182a36.md").read_text()


def test_combined_markdown_has_a_section_per_branch(repo):
    done = pinshift(repo, *fan_args(repo, "--dry-run", "--format", "markdown"))
    sections = [line for line in done.stdout.splitlines() if line.startswith("### ")]
    assert sections == [f"### `{b}` → `{b}-pin0182a36`" for b in BASES]


def test_push_pushes_every_created_branch(repo, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    done = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), "--from", "pytorch-2.9", "--from",
                    "pytorch-2.9-b", "--push", "origin")
    assert done.returncode == 0, done
    for branch in ("pytorch-2.9-pin0182a36", "pytorch-2.9-b-pin0182a36"):
        assert git(remote, "rev-parse", branch) == git(repo, "rev-parse", branch)
    assert done.stdout.count("pushed to origin") == 2


def test_ctrl_c_during_a_fan_out_leaves_no_half_made_branch_and_no_worktree(repo, tmp_path):
    flag = tmp_path / "committing"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {flag}; sleep 30\n")  # a hook: commits go through scratch worktrees
    hook.chmod(0o755)
    process = subprocess.Popen([*PINSHIFT, *fan_args(repo)], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    import time

    deadline = time.monotonic() + 60
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert flag.exists()
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err
    assert pin_branches(repo) == []
    assert worktree_dirs(repo) == []
    assert git(repo, "worktree", "prune", "--dry-run", "-v") == ""


def test_a_single_base_on_which_nothing_changes_gets_no_branch(repo):
    done = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), "--from", "main")
    assert done.returncode == 0, done
    assert done.stdout.startswith("nothing to change: recipe pin-0182a36 changes nothing on main")
    assert pin_branches(repo) == []


def test_a_report_that_cannot_be_written_after_the_branches_says_which_exist(repo, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.write_text(f"#!/bin/sh\nrm -rf {reports}\n")
    hook.chmod(0o755)
    done = pinshift(repo, "migrate", str(repo.parent / "recipe.toml"), "--from", "pytorch-2.9", "--from",
                    "pytorch-2.9-b", "--format", "json", "--output", str(reports / "r.json"))
    assert done.returncode == 1, done
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("pinshift: error: branches pytorch-2.9-pin0182a36, pytorch-2.9-b-pin0182a36 were created, "
                           "but the report could not be written: "), last
    assert "Traceback" not in done.stderr
    assert pin_branches(repo) == ["pytorch-2.9-b-pin0182a36", "pytorch-2.9-pin0182a36"]


def test_an_output_that_cannot_be_written_stops_a_fan_out_before_any_work(repo, tmp_path):
    before = snapshot(repo)
    done = pinshift(repo, *fan_args(repo, "--format", "json", "--output", str(tmp_path / "missing" / "r.json")))
    assert done.returncode == 2, done
    assert "directory" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert snapshot(repo) == before
