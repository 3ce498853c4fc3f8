"""Issue 21 (§1, §4, §5): migrate never touches a worktree it did not make, survives signals, and
refuses before any work what git would refuse after it.

Each test reproduces an attack from the adversarial trial with real git, real hooks and real
signals sent to a real `pinshift` process, and asserts what the user's repository looks like after.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import git
from migrate_repo import (assert_nothing_left, assert_one_line_error, hook, repo, scratch, snapshot,  # noqa: F401
                          swaps_args, worktree_dirs)

PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]


def start(repo, *extra: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([*PINSHIFT, *swaps_args(repo, *extra)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)


def wait_for(path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


@pytest.fixture(params=["plumbing", "worktree"])
def commit_path(request, repo):
    """Both ways migrate commits: plumbing (no hooks), and a scratch worktree (forced by a no-op post-commit hook)."""
    if request.param == "worktree":
        hook(repo, "post-commit", "exit 0\n")
    return request.param


def pinshift_locks(root) -> list[str]:
    admin = root / ".git" / "worktrees"
    if not admin.is_dir():
        return []
    return [(d / "locked").read_text().strip() for d in admin.iterdir() if (d / "locked").is_file()]


# --- §1: only what pinshift made -------------------------------------------------------------


def test_a_user_worktree_whose_directory_is_away_survives_a_migration(tmp_path, repo, run_cli, commit_path):
    """The trial: a worktree moved by hand (or on an unmounted drive) lost its admin files to `prune`."""
    away = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(away), "HEAD")
    git(away, "commit", "-q", "--allow-empty", "-m", "precious")
    precious = git(away, "rev-parse", "HEAD").strip()
    os.rename(away, tmp_path / "wt.away")
    admin_before = worktree_dirs(repo)

    assert run_cli(*swaps_args(repo)).exit_code == 0

    assert worktree_dirs(repo) == admin_before
    os.rename(tmp_path / "wt.away", away)
    assert git(away, "rev-parse", "HEAD").strip() == precious
    assert git(away, "status", "--porcelain") == ""


def test_the_worktree_is_locked_with_the_runs_process_while_it_commits(tmp_path, repo, run_cli):
    seen = tmp_path / "seen"
    hook(repo, "pre-commit", f'cat "$(git rev-parse --git-dir)/locked" > {seen}\n')
    assert run_cli(*swaps_args(repo)).exit_code == 0
    reason = seen.read_text()
    assert reason.startswith(f"pinshift pid={os.getpid()} start=")
    assert f" host={os.uname().nodename}" in reason
    assert worktree_dirs(repo) == []


def test_a_killed_runs_worktree_is_removed_by_the_next_run_and_said_so(tmp_path, repo, scratch, run_cli):
    flag = tmp_path / "committing"
    hook(repo, "pre-commit", f"touch {flag}; sleep 30\n")
    process = start(repo)
    wait_for(flag)
    process.kill()
    process.wait()
    assert len(worktree_dirs(repo)) == 1
    left = [p for p in os.listdir(scratch) if p.startswith("pinshift-")]
    assert len(left) == 1 and (scratch / left[0] / "worktree" / "pkgs" / "a.nix").is_file()

    (repo / ".git" / "hooks" / "pre-commit").unlink()
    result = run_cli(*swaps_args(repo))

    assert result.exit_code == 0, result
    cleaned = [line for line in result.stderr.splitlines() if "earlier pinshift run" in line]
    assert cleaned == [f"pinshift: removed a worktree left by an earlier pinshift run (pid {process.pid}, no longer "
                       f"running): {scratch / left[0] / 'worktree'}"]
    assert worktree_dirs(repo) == []
    assert not (scratch / left[0]).exists()
    assert git(repo, "worktree", "prune", "--dry-run", "-v") == ""


def test_a_live_runs_worktree_and_foreign_locked_worktrees_are_left_alone(tmp_path, repo, run_cli):
    flag = tmp_path / "committing"
    hook(repo, "pre-commit", f"touch {flag}; while [ -e {flag} ]; do sleep 0.05; done\n")
    other = tmp_path / "mine"
    git(repo, "worktree", "add", "-q", "--detach", "--lock", "--reason", "pinshift is my project name", str(other))
    dead = tmp_path / "dead-looking"
    git(repo, "worktree", "add", "-q", "--detach", "--lock", "--reason", "on a USB stick", str(dead))
    process = start(repo)
    try:
        wait_for(flag)
        live = [r for r in pinshift_locks(repo) if r.startswith(f"pinshift pid={process.pid} ")]
        assert len(live) == 1
        (repo / ".git" / "hooks" / "pre-commit").unlink()
        second = subprocess.run([*PINSHIFT, *swaps_args(repo, "--branch", "second")], capture_output=True, text=True)
        assert second.returncode == 0, second
        assert "earlier pinshift run" not in second.stderr
        assert [r for r in pinshift_locks(repo) if r.startswith(f"pinshift pid={process.pid} ")] == live
    finally:
        flag.unlink()
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert sorted(pinshift_locks(repo)) == ["on a USB stick", "pinshift is my project name"]


# --- §4: signals ------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_during_commits_leave_nothing(tmp_path, repo, signum):
    flag = tmp_path / "committing"
    hook(repo, "pre-commit", f"touch {flag}; sleep 30\n")
    before = snapshot(repo)
    process = start(repo)
    wait_for(flag)
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, err
    assert err.strip().splitlines()[-1] == f"pinshift: interrupted ({signal.Signals(signum).name})"
    assert "Traceback" not in err
    assert_nothing_left(repo, before)


def test_sigint_to_pinshift_alone_while_the_worktree_is_checked_out_leaves_nothing(tmp_path, repo):
    """git keeps checking out (it did not get the signal); pinshift waits for it, then removes it all."""
    hook(repo, "post-commit", "exit 0\n")  # a hook: commits go through a scratch worktree
    flag = tmp_path / "checking-out"
    (repo / ".gitattributes").write_text("*.nix filter=slow\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "slow smudge")
    git(repo, "config", "filter.slow.smudge", f"touch {flag}; sleep 1; cat")
    git(repo, "config", "filter.slow.clean", "cat")
    before = snapshot(repo)
    process = start(repo)
    wait_for(flag)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert_nothing_left(repo, before)


@pytest.mark.skipif(tuple(int(p) for p in git(os.getcwd(), "version").split()[2].split(".")[:2]) < (2, 28),
                    reason="git's reference-transaction hook is needed to signal right after the ref is set")
def test_a_signal_after_the_branch_is_set_reports_the_finished_branch(tmp_path, repo):
    hook(repo, "reference-transaction",
         'if [ "$1" = committed ] && grep -q "refs/heads/swapped" ; then\n'
         '  kill -TERM "$(ps -o ppid= -p $PPID | tr -d " ")"\nfi\nexit 0\n')
    process = start(repo)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "note: SIGTERM arrived after the branch was complete; the run finished" in out
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == \
        ["Swap beta for delta everywhere", "Swap alpha for gamma"]
    assert worktree_dirs(repo) == []


def test_a_failing_post_checkout_hook_leaves_no_worktree_entry(repo, run_cli, commit_path):
    hook(repo, "post-checkout", "echo no >&2; exit 1\n")
    for extra in ((), ("--no-verify", "--branch", "other")):
        result = run_cli(*swaps_args(repo, *extra))
        assert result.exit_code == 0, result
        assert worktree_dirs(repo) == []
        assert git(repo, "worktree", "prune", "--dry-run", "-v") == ""


# --- §5: clear errors instead of crashes ------------------------------------------------------


def test_a_sparse_checkout_repository_migrates(repo, run_cli, commit_path):
    git(repo, "sparse-checkout", "set", "--no-cone", "/notes.txt")
    assert not (repo / "pkgs").exists()
    before = snapshot(repo)
    result = run_cli(*swaps_args(repo))
    assert result.exit_code == 0, result
    assert git(repo, "show", "swapped:pkgs/a.nix") == '{ x = "gamma"; y = "beta"; }\n'
    del before["refs"]
    assert snapshot(repo, refs=False) == before
    assert git(repo, "sparse-checkout", "list").split() == ["/notes.txt"]


@pytest.mark.parametrize("name, fragment", [
    ("base/child", "branch 'base' exists, and git cannot have both"),
    ("@", "not a plain branch name"),
    ("@{-1}", "not a plain branch name"),
    ("HEAD", "not a plain branch name"),
    ("refs/heads/x", "not a plain branch name"),
    ("bad..name", "is not a valid branch name"),
])
def test_branch_names_git_would_refuse_are_refused_before_any_work(repo, run_cli, name, fragment):
    before = snapshot(repo)
    result = run_cli(*swaps_args(repo, "--branch", name))
    assert_one_line_error(result, 2, fragment, "--branch")
    assert_nothing_left(repo, before)


def test_a_branch_below_which_another_exists_is_refused(repo, run_cli):
    git(repo, "branch", "release/one")
    before = snapshot(repo)
    result = run_cli(*swaps_args(repo, "--branch", "release"))
    assert_one_line_error(result, 2, "branch 'release/one' exists")
    assert_nothing_left(repo, before)


def test_a_remote_that_cannot_be_pushed_to_is_refused_before_any_work(tmp_path, repo, run_cli):
    git(repo, "remote", "add", "gone", str(tmp_path / "no-such-remote.git"))
    before = snapshot(repo)
    result = run_cli(*swaps_args(repo, "--push", "gone"))
    assert_one_line_error(result, 2, "--push gone: a push would fail", "nothing was done")
    assert_nothing_left(repo, before)


def test_a_push_refused_after_the_commits_says_the_branch_exists_and_exits_1(tmp_path, repo, run_cli):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    (remote / "hooks" / "pre-receive").write_text("#!/bin/sh\necho 'protected' >&2\nexit 1\n")
    (remote / "hooks" / "pre-receive").chmod(0o755)
    git(repo, "remote", "add", "upstream", str(remote))
    result = run_cli(*swaps_args(repo, "--push", "upstream"))
    assert_one_line_error(result, 1, "branch swapped was created, but pushing it to upstream failed",
                          "git push upstream swapped")
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == \
        ["Swap beta for delta everywhere", "Swap alpha for gamma"]
    assert worktree_dirs(repo) == []


def test_a_relative_hooks_path_runs_the_users_hooks(tmp_path, repo, run_cli):
    """core.hooksPath=.githooks resolves against the user's work tree, as their own `git commit` would."""
    hooks = repo / ".githooks"
    hooks.mkdir()
    (hooks / "commit-msg").write_text('#!/bin/sh\necho "Hooked-by: user" >> "$1"\n')
    (hooks / "commit-msg").chmod(0o755)
    git(repo, "config", "core.hooksPath", ".githooks")  # untracked: the base commit has no .githooks at all
    assert run_cli(*swaps_args(repo)).exit_code == 0
    assert git(repo, "log", "-1", "--format=%(trailers:key=Hooked-by,valueonly)", "swapped").strip() == "user"


def test_a_killed_runs_commit_index_is_removed_by_the_next_run_and_a_live_ones_is_not(repo, scratch, run_cli):
    """Plumbing commits keep a private index in $TMPDIR/pinshift-index-<pid>-<start>-*; SIGKILL cannot remove it."""
    from pinshift.git.commit import _process_start

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = scratch / f"pinshift-index-{dead.pid}-12345-abcd"
    stale.mkdir()
    (stale / "index").write_bytes(b"DIRC")
    live = scratch / f"pinshift-index-{os.getpid()}-{_process_start(os.getpid())}-efgh"
    live.mkdir()
    result = run_cli(*swaps_args(repo))
    assert result.exit_code == 0, result
    assert f"pinshift: removed the commit index left by an earlier pinshift run (pid {dead.pid}, no longer running): " \
           f"{stale}" in result.stderr.splitlines()
    assert not stale.exists() and live.is_dir()


def test_a_report_that_cannot_be_written_after_the_branch_was_made_says_so_and_exits_1(tmp_path, repo, run_cli):
    reports = tmp_path / "reports"
    reports.mkdir()
    hook(repo, "post-commit", f"rm -rf {reports}\n")  # the report's directory goes while the commits are made
    result = run_cli(*swaps_args(repo, "--format", "json", "--output", str(reports / "r.json")))
    assert result.exit_code == 1, result
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("pinshift: error: branch swapped was created, but the report could not be written: ")
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == \
        ["Swap beta for delta everywhere", "Swap alpha for gamma"]
