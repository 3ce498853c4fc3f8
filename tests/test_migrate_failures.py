"""`pinshift migrate` failure paths: one clear line, the right exit code, and nothing left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest
from conftest import git, without_loading_notices
from migrate_repo import (FILES, MIGRATIONS, SWAPS, assert_nothing_left, assert_one_line_error, dirty, hook, repo,
                          scratch, snapshot, swaps_args, worktree_dirs, write_recipe)


# --- git states -----------------------------------------------------------------------------


def test_not_a_git_repository(tmp_path, run_cli):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.nix").write_text("{ }\n")
    result = run_cli(*swaps_args(plain))
    assert_one_line_error(result, 2, "not a git repository")
    assert os.listdir(plain) == ["a.nix"]


def test_bare_repository(tmp_path, run_cli):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    listing = sorted(os.listdir(bare))
    assert_one_line_error(run_cli(*swaps_args(bare)), 2, "is a bare repository", "git clone")
    assert sorted(os.listdir(bare)) == listing


def test_shallow_clone(tmp_path, repo, run_cli):
    (repo / "pkgs/c.nix").write_text('{ x = "beta"; v = 2; }\n')
    git(repo, "commit", "-q", "-am", "second")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "-b", "base", f"file://{repo}", str(clone))
    before = snapshot(clone)
    assert_one_line_error(run_cli(*swaps_args(clone)), 2, "shallow clone", "git fetch --unshallow")
    assert snapshot(clone) == before


def test_repository_without_commits(tmp_path, run_cli):
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    (empty / "a.nix").write_text("{ }\n")
    assert_one_line_error(run_cli(*swaps_args(empty)), 2, "has no commits yet")
    assert git(empty, "status", "--porcelain") == "?? a.nix\n"


def test_detached_head_without_a_base_to_start_from(tmp_path, repo, run_cli):
    git(repo, "switch", "-q", "--detach", "base")
    before = snapshot(repo)
    recipe = write_recipe(tmp_path, "nobase", '[[steps]]\nkind = "word-swap"\n[steps.params]\nold = "a"\nnew = "b"\n',
                          base="")
    result = run_cli("migrate", recipe, "--repo", str(repo), "--migrations", str(MIGRATIONS))
    assert_one_line_error(result, 2, "HEAD is detached", "--from BRANCH")
    assert_nothing_left(repo, before)


def test_detached_head_does_not_stop_a_migration_with_a_base(repo, run_cli):
    """The work happens in a separate worktree, so the user's HEAD may be anywhere (docs/migrate.md)."""
    git(repo, "switch", "-q", "--detach", "base")
    head = git(repo, "rev-parse", "HEAD")
    assert run_cli(*swaps_args(repo)).exit_code == 0
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "HEAD"


def test_missing_base_lists_close_branch_names(make_repo, tmp_path, run_cli):
    root = make_repo(FILES, branch="pytorch-2.9-python313")
    git(root, "branch", "main")
    before = snapshot(root)
    result = run_cli(*swaps_args(root, "--from", "pytorch-2.9"))
    assert_one_line_error(result, 2, "base 'pytorch-2.9'", "closest branches: pytorch-2.9-python313")
    assert_nothing_left(root, before)


def test_existing_target_branch_is_refused(repo, run_cli):
    git(repo, "branch", "swapped")
    before = snapshot(repo)
    assert_one_line_error(run_cli(*swaps_args(repo)), 2, "branch 'swapped' already exists", "--resume", "--force")
    assert_nothing_left(repo, before)


def test_unknown_recipe(repo, run_cli):
    before = snapshot(repo)
    result = run_cli("migrate", "no-such-recipe", "--repo", str(repo))
    assert_one_line_error(result, 2, "unknown recipe 'no-such-recipe'", "pytorch-2.10-cuda12_9")
    assert_nothing_left(repo, before)


def test_resume_and_force_exclude_each_other(repo, run_cli):
    assert_one_line_error(run_cli(*swaps_args(repo, "--resume", "--force")), 2, "exclude each other")


def test_unknown_push_remote_is_refused_before_anything(repo, run_cli):
    before = snapshot(repo)
    assert_one_line_error(run_cli(*swaps_args(repo, "--push", "nowhere")), 2, "--push nowhere: no such remote")
    assert_nothing_left(repo, before)


def test_force_refuses_a_branch_checked_out_by_the_user(repo, run_cli):
    assert run_cli(*swaps_args(repo)).exit_code == 0
    git(repo, "switch", "-q", "swapped")
    before = snapshot(repo)
    assert_one_line_error(run_cli(*swaps_args(repo, "--force")), 2, "is checked out in")
    assert_nothing_left(repo, before)


# --- step failures roll back ----------------------------------------------------------------


def test_refused_file_fails_the_step_and_creates_nothing(tmp_path, repo, run_cli):
    steps = ('[[steps]]\nkind = "word-swap"\n[steps.params]\nold = "alpha"\nnew = "gamma"\n'
             '[[steps]]\nkind = "word-swap"\ntitle = "Break the files"\n[steps.params]\nold = "}"\nnew = ""\n')
    recipe = write_recipe(tmp_path, "breaks", steps)
    dirty(repo)
    before = snapshot(repo)
    result = run_cli("migrate", recipe, "--repo", str(repo), "--migrations", str(MIGRATIONS))
    assert_one_line_error(result, 1, "step 2/2 (word-swap) failed", "pkgs/", "no branch was created")
    assert_nothing_left(repo, before)


def test_strict_warning_fails_the_step(tmp_path, repo, run_cli):
    steps = '[[steps]]\nkind = "word-swap"\n[steps.params]\nold = "alpha"\nnew = "gamma"\nwarn = "beta"\n'
    recipe = write_recipe(tmp_path, "warns", steps)
    before = snapshot(repo)
    result = run_cli("migrate", recipe, "--repo", str(repo), "--migrations", str(MIGRATIONS), "--strict")
    assert_one_line_error(result, 1, "warning under --strict", "found beta")
    assert_nothing_left(repo, before)


def test_failing_pre_commit_hook_rolls_everything_back(repo, run_cli):
    hook(repo, "pre-commit", 'git diff --cached --name-only | grep -q c.nix && { echo "hook: no c.nix" >&2; exit 1; }\n'
                             'exit 0\n')
    dirty(repo)
    before = snapshot(repo)
    result = run_cli(*swaps_args(repo))
    assert_one_line_error(result, 1, "step 3/3 (word-swap) failed", "hook: no c.nix", "no branch was created")
    assert_nothing_left(repo, before)


def test_no_verify_skips_the_hook(repo, run_cli):
    hook(repo, "pre-commit", 'echo "hook: never" >&2\nexit 1\n')
    result = run_cli(*swaps_args(repo, "--no-verify"))
    assert result.exit_code == 0, result
    assert len(git(repo, "log", "--format=%H", "base..swapped").split()) == 2


def test_hooks_and_identity_apply_to_the_commits(repo, run_cli):
    hook(repo, "commit-msg", 'echo "Reviewed-by: hook" >> "$1"\n')
    git(repo, "config", "user.name", "Recipe Maintainer")
    assert run_cli(*swaps_args(repo)).exit_code == 0
    assert git(repo, "log", "-1", "--format=%an|%(trailers:key=Reviewed-by,valueonly)", "swapped").strip() == \
        "Recipe Maintainer|hook"


def test_keyboard_interrupt_while_planning_leaves_nothing(tmp_path, repo, run_cli):
    steps = '[[steps]]\nkind = "word-swap"\n[steps.params]\nold = "alpha"\nnew = "gamma"\ninterrupt = "beta"\n'
    recipe = write_recipe(tmp_path, "interrupted", steps)
    before = snapshot(repo)
    result = run_cli("migrate", recipe, "--repo", str(repo), "--migrations", str(MIGRATIONS))
    assert result.exit_code == 130
    assert "interrupted" in result.stderr
    assert_nothing_left(repo, before)


@pytest.mark.skipif(not shutil.which("ps"), reason="the Ctrl-C hook finds its process group with ps")
def test_ctrl_c_while_committing_removes_the_worktree_and_the_branch(repo):
    """SIGINT to the whole process group from inside `git commit`, as a terminal's Ctrl-C sends it."""
    hook(repo, "pre-commit", 'git diff --cached --name-only | grep -q c.nix || exit 0\n'
                             'kill -INT -$(ps -o pgid= -p $$ | tr -d " ")\nsleep 5\nexit 0\n')
    dirty(repo)
    before = snapshot(repo)
    command = [sys.executable, "-c", "from pinshift.cli import run; run()", *swaps_args(repo)]
    process = subprocess.run(command, capture_output=True, text=True, start_new_session=True, timeout=60)
    assert process.returncode in (130, -signal.SIGINT), process
    assert "Traceback" not in process.stderr
    assert_nothing_left(repo, before)


# --- keep-partial, resume, force, push ------------------------------------------------------


def test_keep_partial_then_resume_completes_the_recipe(repo, run_cli):
    hook(repo, "pre-commit", 'git diff --cached --name-only | grep -q c.nix && { echo "hook: no c.nix" >&2; exit 1; }\n'
                             'exit 0\n')
    result = run_cli(*swaps_args(repo, "--keep-partial"))
    assert_one_line_error(result, 1, "step 3/3 (word-swap) failed", "kept at", "--resume")
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == ["Swap alpha for gamma"]
    assert worktree_dirs(repo) == []
    (repo / ".git/hooks/pre-commit").unlink()
    result = run_cli(*swaps_args(repo, "--resume"))
    assert result.exit_code == 0, result
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == \
        ["Swap beta for delta everywhere", "Swap alpha for gamma"]
    assert git(repo, "show", "swapped:pkgs/c.nix") == '{ x = "delta"; }\n'
    assert "resum" not in "\n".join(without_loading_notices(result.stderr))  # (a checkout's path may hold it)


def test_resume_of_a_finished_branch_has_nothing_to_do(repo, run_cli):
    assert run_cli(*swaps_args(repo)).exit_code == 0
    refs = git(repo, "for-each-ref")
    result = run_cli(*swaps_args(repo, "--resume"))
    assert result.exit_code == 0, result
    assert result.stdout.startswith("nothing to do: branch swapped already has every step of recipe swaps")
    assert git(repo, "for-each-ref") == refs


def test_resume_refuses_foreign_commits_after_the_last_step(repo, run_cli, tmp_path):
    assert run_cli(*swaps_args(repo)).exit_code == 0
    git(repo, "switch", "-q", "swapped")
    git(repo, "commit", "-q", "--allow-empty", "-m", "by hand")
    git(repo, "switch", "-q", "base")
    before = snapshot(repo)
    assert_one_line_error(run_cli(*swaps_args(repo, "--resume")), 2, "commits after pinshift's last step")
    assert_nothing_left(repo, before)


def test_resume_refuses_a_branch_pinshift_did_not_make(repo, run_cli):
    git(repo, "branch", "swapped")
    git(repo, "switch", "-q", "swapped")
    git(repo, "commit", "-q", "--allow-empty", "-m", "someone else's work")
    git(repo, "switch", "-q", "base")
    assert_one_line_error(run_cli(*swaps_args(repo, "--resume")), 2, "did not make")


def test_force_recreates_the_branch_from_the_base(repo, run_cli):
    git(repo, "branch", "swapped")
    git(repo, "switch", "-q", "swapped")
    git(repo, "commit", "-q", "--allow-empty", "-m", "stale attempt")
    git(repo, "switch", "-q", "base")
    result = run_cli(*swaps_args(repo, "--force"))
    assert result.exit_code == 0, result
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == \
        ["Swap beta for delta everywhere", "Swap alpha for gamma"]


def test_failed_force_keeps_the_old_branch(repo, run_cli):
    git(repo, "branch", "swapped")
    old = git(repo, "rev-parse", "swapped")
    hook(repo, "pre-commit", "exit 1\n")
    assert run_cli(*swaps_args(repo, "--force")).exit_code == 1
    assert git(repo, "rev-parse", "swapped") == old


def test_push_to_a_local_bare_remote(tmp_path, repo, run_cli):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "upstream", str(remote))
    result = run_cli(*swaps_args(repo, "--push", "upstream"))
    assert result.exit_code == 0, result
    assert "pushed  swapped to upstream" in result.stdout
    assert git(remote, "rev-parse", "swapped") == git(repo, "rev-parse", "swapped")
