"""A fan-out stopped at the worst moment leaves no scratch worktree in the user's repository.

Once `.git/worktrees/worktree` was left after a Ctrl-C under load: a worker's cleanup can be cut short (its
parent's SIGTERM landing in the instant before the cleanup holds signals, or between `git worktree add` and the
`try` that removes it). These tests make the two outcomes of such an instant happen on purpose, with real
processes and a hook or filter that says when: a worker that dies holding its worktree (SIGKILL, which no
cleanup survives: the main process removes it once its workers have exited), and a worker that gets a signal
while `git worktree add` runs, which held signals must give back to the worker's own handler (SIGINT does
nothing to a worker; it used to stop its base).
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from conftest import git
from fanout_repo import PINSHIFT, pin_branches, repo  # noqa: F401
from test_fanout_signals import pinshift_processes
from migrate_repo import scratch, worktree_dirs  # noqa: F401

BASES = ["pytorch-2.9", "pytorch-2.9-b", "main"]


def start(root: Path) -> subprocess.Popen:
    args = ["migrate", str(root.parent / "recipe.toml"), *[a for b in BASES for a in ("--from", b)]]
    return subprocess.Popen([*PINSHIFT, *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=dict(os.environ, PINSHIFT_JOBS="2"))


def wait_for(path: Path, process: subprocess.Popen, seconds: float = 180) -> str:
    import time

    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text().strip()):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path.read_text()


def assert_no_scratch_left(root: Path, scratch: Path) -> None:
    assert worktree_dirs(root) == []
    assert git(root, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(root, "worktree", "prune", "--dry-run", "-v") == ""
    assert [p.name for p in scratch.iterdir() if p.name.startswith("pinshift-")] == []


def test_a_worker_killed_while_it_holds_its_worktree_leaves_nothing_once_the_run_ends(repo, tmp_path, scratch):
    log = tmp_path / "committing"
    hook = repo / ".git" / "hooks" / "pre-commit"  # the worker's pid (the parent of `git commit`), then a pause
    hook.write_text(f"#!/bin/sh\nps -o ppid= -p $PPID >> {log}\nsleep 2\n")
    hook.chmod(0o755)
    before = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    process = start(repo)
    try:
        victim = int(wait_for(log, process).split()[0])
        os.kill(victim, signal.SIGKILL)  # no cleanup survives this: the worktree stays until someone removes it
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 1, (out, err)
    assert f"its worker (pid {victim}) ended; no branch was set" in out
    assert "Traceback" not in err
    assert len(pin_branches(repo)) == 1  # the other base's branch, complete
    after = set(git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines())
    assert {line for line in after if "pin0182a36" not in line} == set(before.splitlines())
    assert_no_scratch_left(repo, scratch)


def test_sigint_to_a_worker_alone_while_git_makes_its_worktree_changes_nothing(repo, tmp_path, scratch):
    flag = tmp_path / "checking-out"
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")  # commits go through worktrees
    (repo / ".git" / "hooks" / "pre-commit").chmod(0o755)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("*.nix filter=slow\n")
    # the first file any `git worktree add` checks out: say so, and pause
    git(repo, "config", "filter.slow.smudge", f"if [ ! -e {flag} ]; then echo x > {flag}; sleep 2; fi; cat")
    git(repo, "config", "filter.slow.clean", "cat")
    process = start(repo)
    try:
        wait_for(flag, process)
        marker = str(repo.parent / "recipe.toml")
        workers = [pid for pid in pinshift_processes(marker) if pid != process.pid]
        assert workers
        for pid in workers:
            os.kill(pid, signal.SIGINT)  # the worker alone, not git: the terminal's Ctrl-C is its parent's to act on
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, (out, err)
    assert out.rstrip().endswith("3 bases done: 2 created, 1 nothing to change"), out
    assert pin_branches(repo) == ["pytorch-2.9-b-pin0182a36", "pytorch-2.9-pin0182a36"]
    assert "Traceback" not in err
    assert_no_scratch_left(repo, scratch)
