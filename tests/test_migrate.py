"""`pinshift migrate` through the real CLI on real repositories: the happy path, and the checkout it never touches."""

from __future__ import annotations

import subprocess

import pytest
from conftest import git, without_loading_notices
from migrate_repo import FILES, MIGRATIONS, SEED_STAND_IN, SWAPS, dirty, snapshot, swaps_args, worktree_dirs


@pytest.fixture
def repo(make_repo):
    root = make_repo(FILES, branch="base")
    git(root, "branch", "other")
    return root


def blob(root, ref, path) -> bytes:
    """A file's committed bytes (conftest's `git` decodes text and would fold CRLF)."""
    return subprocess.run(["git", "cat-file", "blob", f"{ref}:{path}"], cwd=root, capture_output=True, check=True).stdout


def test_one_commit_per_changing_step_each_touching_only_its_files(repo, run_cli):
    result = run_cli(*swaps_args(repo))
    assert result.exit_code == 0, result
    log = git(repo, "log", "--format=%s", "base..swapped").splitlines()
    assert log == ["Swap beta for delta everywhere", "Swap alpha for gamma"]
    assert git(repo, "diff", "--name-only", "base", "swapped~1").split() == ["pkgs/a.nix", "pkgs/b.nix"]
    assert git(repo, "diff", "--name-only", "swapped~1", "swapped").split() == ["pkgs/b.nix", "pkgs/c.nix"]
    assert blob(repo, "swapped", "pkgs/a.nix") == b'{ x = "gamma"; y = "beta"; }\n'  # step 3 excludes a.nix
    assert blob(repo, "swapped", "pkgs/b.nix") == b'{\r\n  # gamma in a comment\r\n  x = "gamma delta";\r\n}'
    assert blob(repo, "swapped", "pkgs/c.nix") == b'{ x = "delta"; }\n'
    assert blob(repo, "swapped", "notes.txt") == FILES["notes.txt"].encode()
    assert git(repo, "rev-parse", "swapped~2") == git(repo, "rev-parse", "base")


def test_commit_message_has_title_counts_files_and_trailers(repo, run_cli):
    assert run_cli(*swaps_args(repo)).exit_code == 0
    first = git(repo, "log", "-1", "--format=%B", "swapped~1")
    assert first == ("Swap alpha for gamma\n\n2 files changed, 3 edits:\n  pkgs/a.nix\n  pkgs/b.nix\n\n"
                     "Pinshift-Recipe: swaps\nPinshift-Step: 1/3 word-swap\n\n")
    last = git(repo, "log", "-1", "--format=%B", "swapped")
    assert last.startswith("Swap beta for delta everywhere\n\nDelta is what the new pin calls it.\n\n"
                           "2 files changed, 2 edits:\n")
    assert git(repo, "log", "-1", "--format=%(trailers:key=Pinshift-Step,valueonly)", "swapped").strip() == "3/3 word-swap"


def test_summary_names_branch_base_steps_and_how_to_inspect(repo, run_cli):
    result = run_cli(*swaps_args(repo))
    head = git(repo, "rev-parse", "--short=7", "swapped").strip()
    first = git(repo, "rev-parse", "--short=7", "swapped~1").strip()
    lines = result.stdout.splitlines()
    assert lines[0] == f"branch  swapped ({head})"
    assert lines[1].startswith("base    base (")
    assert f"  1/3 {first} Swap alpha for gamma — 2 files, 3 edits" in lines
    assert "  2/3 ------- Swap nothing (no file has zzz) — no change, no commit" in lines
    assert f"  3/3 {head} Swap beta for delta — 2 files, 2 edits" in lines
    assert lines[-1] == "inspect: git log --stat base..swapped"


def test_dirty_checkout_of_the_base_survives_byte_for_byte(repo, run_cli):
    dirty(repo)
    before = snapshot(repo, refs=False)
    result = run_cli(*swaps_args(repo))
    assert result.exit_code == 0, result
    assert snapshot(repo, refs=False) == before
    assert worktree_dirs(repo) == []
    # the branch was made from the committed base, not from the dirty files
    assert "local" not in git(repo, "show", "swapped:pkgs/a.nix")
    assert "pkgs/new.nix" not in git(repo, "ls-tree", "-r", "--name-only", "swapped")


def test_other_branch_checked_out_stays_checked_out(repo, run_cli):
    git(repo, "switch", "-q", "other")
    assert run_cli(*swaps_args(repo)).exit_code == 0
    assert git(repo, "branch", "--show-current").strip() == "other"


def test_dry_run_changes_nothing_at_all(repo, run_cli):
    dirty(repo)
    before = snapshot(repo)
    result = run_cli(*swaps_args(repo, "--dry-run"))
    assert result.exit_code == 0, result
    assert snapshot(repo) == before
    assert "(dry run)" in result.stdout
    assert '-{ x = "alpha"; y = "beta"; }' in result.stdout  # planned from the base commit, not the dirty file
    assert '+{ x = "gamma"; y = "beta"; }' in result.stdout


def test_dry_run_json_report_and_check(repo, run_cli):
    import json

    result = run_cli(*swaps_args(repo, "--dry-run", "--format", "json", "--check"))
    assert result.exit_code == 1  # --check: something would change
    report = json.loads(result.stdout)
    assert report["recipe"] == "swaps"
    assert git(repo, "branch", "--list", "swapped") == ""


def test_dry_run_over_an_existing_branch_is_allowed_with_force(repo, run_cli):
    assert run_cli(*swaps_args(repo)).exit_code == 0
    before = snapshot(repo)
    assert run_cli(*swaps_args(repo, "--dry-run", "--force")).exit_code == 0
    assert snapshot(repo) == before


def test_from_and_branch_override_the_recipe(repo, run_cli):
    (repo / "pkgs/a.nix").write_text('{ x = "alpha"; other = true; }\n')
    git(repo, "commit", "-q", "-am", "other work")
    git(repo, "branch", "-f", "other")
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    result = run_cli(*swaps_args(repo, "--from", "other", "--branch", "from-other"))
    assert result.exit_code == 0, result
    assert git(repo, "show", "from-other:pkgs/a.nix") == '{ x = "gamma"; other = true; }\n'
    assert git(repo, "rev-parse", "from-other~2") == git(repo, "rev-parse", "other")


def test_remote_tracking_branch_as_base(repo, tmp_path, run_cli):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", "other", str(repo), str(clone))
    result = run_cli(*swaps_args(clone, "--from", "origin/base"))
    assert result.exit_code == 0, result
    assert "base    origin/base (" in result.stdout


def test_recipe_by_name_from_the_repository(repo, run_cli):
    (repo / ".pinshift/recipes").mkdir(parents=True)
    (repo / ".pinshift/recipes/swaps.toml").write_bytes(SWAPS.read_bytes())
    result = run_cli("migrate", "swaps", "--migrations", str(MIGRATIONS), cwd=repo)
    assert result.exit_code == 0, result
    assert git(repo, "rev-parse", "--verify", "-q", "swapped")


def test_warnings_are_listed_in_the_summary(repo, run_cli, tmp_path):
    recipe = tmp_path / "warn.toml"
    recipe.write_text('name = "warn"\nbase = "base"\ntarget = "warned"\nfiles = ["pkgs/*.nix"]\n'
                      '[[steps]]\nkind = "word-swap"\n[steps.params]\nold = "alpha"\nnew = "gamma"\nwarn = "beta"\n')
    result = run_cli("migrate", str(recipe), "--repo", str(repo), "--migrations", str(MIGRATIONS))
    assert result.exit_code == 0, result
    # Three files warn the same: one line with the first location; --verbose lists each.
    assert "warning: step 1: 3 files: found beta (first: pkgs/a.nix:1:21; --verbose lists all)" in result.stdout
    again = run_cli("migrate", str(recipe), "--repo", str(repo), "--migrations", str(MIGRATIONS),
                    "--branch", "warned-again", "--verbose")
    assert again.exit_code == 0, again
    warnings = [line for line in again.stdout.splitlines() if line.startswith("warning: ")]
    assert warnings == ["warning: pkgs/a.nix:1:21: found beta", "warning: pkgs/b.nix:3:14: found beta",
                        "warning: pkgs/c.nix:1:8: found beta"]


@pytest.mark.nix
def test_demo_shaped_repository_migrates_with_the_seed_changes(tmp_path, run_cli, nix_oracle):
    from pinshift.demo.build import build_demo
    from pinshift.demo.matrix import NEW_REV, OLD_REV

    root = build_demo(tmp_path / "demo")
    result = run_cli("migrate", str(SEED_STAND_IN), "--repo", str(root), "--migrations", str(MIGRATIONS))
    assert result.exit_code == 0, result
    target = "pytorch-2.10-cuda12_9"
    assert len(git(root, "log", "--format=%H", f"pytorch-2.9..{target}").split()) == 4
    for ref, count in ((f"{target}~3", 66), (f"{target}~2", 66), (f"{target}~1", 66), (target, 1)):
        assert len(git(root, "diff", "--name-only", f"{ref}~1", ref).split()) == count
    path = ".flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix"
    before, after = git(root, "show", f"pytorch-2.9:{path}"), git(root, "show", f"{target}:{path}")
    expected = (before.replace(OLD_REV, NEW_REV).replace("nixpkgs_pinned.python3Packages.", "nixpkgs_pinned.python313Packages.")
                .replace("echo 1 > $out/.metadata-rev", "echo 2 > $out/.metadata-rev"))
    assert after == expected
    ok_before, canonical_before = nix_oracle(before.encode())
    ok_after, canonical_after = nix_oracle(after.encode())
    assert ok_before and ok_after
    assert canonical_after == (canonical_before.replace(OLD_REV, NEW_REV).replace("python3Packages", "python313Packages")
                               .replace("echo 1 >", "echo 2 >"))


def test_committed_run_can_write_the_json_report(repo, run_cli):
    import json

    result = run_cli(*swaps_args(repo, "--format", "json"))
    assert result.exit_code == 0, result
    report = json.loads(result.stdout)
    head = git(repo, "rev-parse", "swapped").strip()
    assert report["dry_run"] is False
    assert report["target"] == {"ref": "swapped", "commit": head}
    assert [s["commit"] for s in report["steps"]] == [git(repo, "rev-parse", "swapped~1").strip(), None, head]
    assert "\n".join(without_loading_notices(result.stderr)).startswith("branch  swapped (")  # the summary moves to stderr
