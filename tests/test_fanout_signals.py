"""A signal to a fan-out's main process alone stops all of it; a killed main process takes its workers along
(issue 29 items 3 and 4).

Six bases, two workers (`PINSHIFT_JOBS=2`). A pre-commit hook (commits then go through scratch worktrees)
logs `start` and sleeps, so the test knows when both workers are committing, and each later base would
log its own `start`. `main` changes nothing (no commit, no hook): it finishes before the signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import git
from fanout_repo import PINSHIFT, pin_branches, repo  # noqa: F401
from migrate_repo import worktree_dirs

BASES = ["main", "pytorch-2.9", "pytorch-2.9-b", "copy-1", "copy-2", "copy-3"]


def with_hook(root: Path, log: Path, seconds: int) -> None:
    for name in BASES[3:]:
        git(root, "branch", name, "pytorch-2.9")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho start >> {log}\nsleep {seconds}\necho end >> {log}\n")
    hook.chmod(0o755)


def start(root: Path) -> subprocess.Popen:
    args = ["migrate", str(root.parent / "recipe.toml"), *[a for b in BASES for a in ("--from", b)]]
    return subprocess.Popen([*PINSHIFT, *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=dict(os.environ, PINSHIFT_JOBS="2"))


def lines(log: Path, word: str) -> int:
    return log.read_text().split().count(word) if log.exists() else 0


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def pinshift_processes(marker: str) -> list[int]:
    """Live processes whose command line names `marker` (the test's own recipe path): pinshift's, not git's."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_to_the_main_process_alone_stops_every_worker(repo, tmp_path, signum):
    log = tmp_path / "hook.log"
    with_hook(repo, log, 20)
    process = start(repo)
    try:
        assert wait_for(lambda: lines(log, "start") == 2, 120), "both workers should be committing"
        process.send_signal(signum)  # `kill PID`: the main process only, not its group
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signum, (out, err)
    assert lines(log, "start") == 2, "no base may start after the signal"
    assert lines(log, "end") == 0, "the stop must not wait for the running commits"
    assert err.splitlines()[1:] == [
        "pinshift: finished before the interrupt: main → main-pin0182a36 (nothing to change)",
        f"pinshift: interrupted ({signal.Signals(signum).name})"], err
    assert pinshift_processes(str(repo.parent / "recipe.toml")) == []
    assert pin_branches(repo) == []
    assert worktree_dirs(repo) == []


def test_workers_die_with_a_killed_main_process_and_make_no_branch_after_it(repo, tmp_path):
    log = tmp_path / "hook.log"
    with_hook(repo, log, 3)
    marker = str(repo.parent / "recipe.toml")
    process = start(repo)
    try:
        assert wait_for(lambda: lines(log, "start") == 2, 120), "both workers should be committing"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        gone = wait_for(lambda: pinshift_processes(marker) == [], 10)
        left = pinshift_processes(marker)
    finally:
        for pid in pinshift_processes(marker):  # the orphans of a failing run: never leave them behind
            os.kill(pid, signal.SIGKILL)
    assert gone, f"workers outlived their parent: {left}"
    assert pin_branches(repo) == []
    started = lines(log, "start")
    time.sleep(4)  # longer than a commit's hook: an orphan still committing would show by now
    assert lines(log, "start") == started == 2
    assert pin_branches(repo) == []
    assert worktree_dirs(repo) == []


def test_a_worker_killed_from_outside_fails_its_base_alone(repo, tmp_path):
    log = tmp_path / "hook.log"
    with_hook(repo, log, 1)
    marker = str(repo.parent / "recipe.toml")
    process = start(repo)
    try:
        assert wait_for(lambda: lines(log, "start") >= 1, 120), "a worker should be committing"
        victim = next(pid for pid in pinshift_processes(marker) if pid != process.pid)
        os.kill(victim, signal.SIGKILL)
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 1, (out, err)
    assert f"its worker (pid {victim}) ended; no branch was set" in out
    last = out.splitlines()[-1]
    assert last.startswith("6 bases done: ") and \
        sorted(last.removeprefix("6 bases done: ").split(", ")) == ["1 failed", "1 nothing to change", "4 created"], out
    assert len(pin_branches(repo)) == 4
    assert "Traceback" not in err
