"""Ctrl-C while the pool plans (issue 29 item 5): one line, exit 130, and the pool ended before the interrupt
leaves the planning code, never by the garbage collector on another thread.

The traceback users saw — `Exception ignored in: <generator object process_files> … RuntimeError: cannot
join current thread` — came from the memo loop of `segments.run_segment`: an interrupt there left the pool's
generator suspended, to be finalized later by whichever thread collected it, the pool's own manager
thread included, which then tried to join itself. Each test picks the moment of a real signal; the last
kills pinshift outright, whose pool workers must not outlive it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import process as futures_process
from pathlib import Path

import pytest
import tomllib
from conftest import git, without_loading_notices

from pinshift.planning import memo as plan_memo
from pinshift.demo.matrix import OLD_REV, render_recipe, variants
from pinshift.files.tree import DirectoryTree
from pinshift.interrupts import handling_signals
from pinshift.steps.registry import bundled_kinds
from pinshift.recipes.recipe import parse_recipe, validate_recipe
from pinshift.planning.jobs import RunOptions
from pinshift.planning.runner import plan_recipe

MIGRATIONS = Path(__file__).parent / "fixtures" / "migrations"
RECIPE = """
name = "swaps"
base = "main"
target = "swapped"
files = ["pkgs/*.nix"]

[[steps]]
kind = "word-swap"
[steps.params]
old = "alpha"
new = "gamma"
sigint = "STOP-HERE"
"""

BUNDLED_KINDS_RECIPE = f"""
name = "bundled-kinds"
files = ["pkgs/*.nix"]

[[steps]]
kind = "pin-swap"
[steps.params]
old = "{OLD_REV[:7]}"
new = "0182a361324364ae3f436a63005877674cf45efb"

[[steps]]
kind = "rename-attr"
[steps.params]
from = "python3Packages"
to = "python313Packages"
base = "nixpkgs_pinned"
"""


def test_ctrl_c_to_pinshift_alone_while_the_pool_plans_prints_one_line(tmp_path):
    root = tmp_path / "repo"
    (root / "pkgs").mkdir(parents=True)
    for n in range(120):
        (root / "pkgs" / f"f{n:03}.nix").write_text(f'{{ x = "alpha"; n = {n}; }}\n')
    (root / "pkgs" / "f060.nix").write_text('{ x = "alpha STOP-HERE"; }\n')
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "files")
    (tmp_path / "swaps.toml").write_text(RECIPE)
    done = subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", "migrate",
                           str(tmp_path / "swaps.toml"), "--migrations", str(MIGRATIONS), "--dry-run"],
                          cwd=root, capture_output=True, text=True, timeout=120, start_new_session=True,
                          env=dict(os.environ, PINSHIFT_JOBS="2"))
    assert done.returncode == 130, done
    assert without_loading_notices(done.stderr) == ["pinshift: interrupted (SIGINT)"], done.stderr
    assert done.stdout == ""


class SignalOnFirstRecord(plan_memo.PlanMemo):
    """A real plan memo (in a temporary cache) whose first recorded plan is followed by a real SIGINT: the
    moment the issue's traceback needs, inside the loop that consumes the pool's results."""

    def segment(self, shape: str):
        segment = super().segment(shape)
        for name in ("record", "written"):  # a plan sent to the parent, or one a worker stored itself
            original = getattr(segment, name)

            def then_interrupt(*args, original=original):
                original(*args)
                os.kill(os.getpid(), signal.SIGINT)

            setattr(segment, name, then_interrupt)
        return segment


def pool_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if isinstance(t, futures_process._ExecutorManagerThread)]


def test_an_interrupt_in_the_memo_loop_ends_the_pool_before_it_leaves_the_runner(tmp_path, monkeypatch):
    (tmp_path / "pkgs").mkdir()
    matrix = variants()
    for n in range(64):
        (tmp_path / "pkgs" / f"r{n:03}.nix").write_text(render_recipe(matrix[n % len(matrix)], OLD_REV))
    recipe = parse_recipe(tomllib.loads(BUNDLED_KINDS_RECIPE), "bundled-kinds.toml")
    steps = validate_recipe(recipe, bundled_kinds())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    memo = SignalOnFirstRecord()
    assert multiprocessing.active_children() == [] and pool_threads() == []
    with pytest.raises(KeyboardInterrupt):
        with handling_signals():
            try:
                plan_recipe(DirectoryTree(tmp_path), recipe, steps, RunOptions(jobs=2, memo=memo))
            except KeyboardInterrupt:
                # still inside the interrupt, its traceback alive: the pool must be gone already
                assert multiprocessing.active_children() == []
                assert pool_threads() == []
                raise


SLOW_KIND = '''"""slow-plan — a test step kind: says when it plans a file containing `marker`, then sleeps."""

import time
from dataclasses import dataclass
from pathlib import Path

from pinshift.steps.kind import StepOutput

NAME = "slow-plan"


@dataclass(frozen=True)
class Params:
    marker: str
    flag: str


def plan(doc, params, context):
    if params.marker.encode() in doc.data:
        Path(params.flag).touch()
        time.sleep(60)
    return StepOutput()
'''


def live_processes(marker: str) -> list[int]:
    """Live processes whose command line names `marker` (the test's own recipe path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_pool_workers_die_with_a_killed_pinshift(tmp_path):
    """`kill -9` of pinshift while its pool plans: the workers (which only plan) go with it at once."""
    kinds = tmp_path / "kinds"
    kinds.mkdir()
    (kinds / "slow_plan.py").write_text(SLOW_KIND)
    root = tmp_path / "repo"
    (root / "pkgs").mkdir(parents=True)
    for n in range(40):
        (root / "pkgs" / f"f{n:03}.nix").write_text(f"{{ n = {n}; }}\n" if n % 10 else "{ slow = true; }\n")
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "files")
    flag = tmp_path / "planning"
    recipe = tmp_path / "slow-recipe.toml"
    recipe.write_text(f'name = "slow"\nbase = "main"\ntarget = "slowed"\nfiles = ["pkgs/*.nix"]\n\n[[steps]]\n'
                      f'kind = "slow-plan"\n[steps.params]\nmarker = "slow"\nflag = "{flag}"\n')
    process = subprocess.Popen([sys.executable, "-c", "from pinshift.cli import run; run()", "migrate", str(recipe),
                                "--migrations", str(kinds), "--dry-run"], cwd=root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True, env=dict(os.environ, PINSHIFT_JOBS="2"))
    try:
        deadline = time.monotonic() + 120
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists(), "a worker should be planning"
        assert len(live_processes(str(recipe))) == 3  # pinshift and its two workers
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while live_processes(str(recipe)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live_processes(str(recipe)) == [], "pool workers outlived pinshift"
    finally:
        for pid in live_processes(str(recipe)):
            os.kill(pid, signal.SIGKILL)
