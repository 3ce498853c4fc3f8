"""Stress: stop `pinshift migrate` (a fan-out, or one base) with a signal at many delays; check nothing is left.

    .venv/bin/python benchmarks/stress_ctrlc.py [--mode fanout|single] [--signal INT|TERM|KILL]
        [--from 0] [--to 2] [--step 0.05] [--load 2] [--rounds 1] [--src OLD/src]

Each trial copies a demo-built repository with a `pre-commit` hook (commits then go through scratch worktrees),
starts pinshift in a session of its own, sends the signal after the delay (INT to the whole group, as a
terminal's Ctrl-C; TERM and KILL to the main process alone), and compares checkout, index, refs, HEAD, stash,
status, `git worktree list --porcelain`, `.git/worktrees/` and `$TMPDIR/pinshift-*` with what they were.
After KILL, a second run must remove what the killed one left (docs/reliability.md G5).
`yes > /dev/null` processes load the CPUs. Prints one line per failing trial (NOTE: only Nix's scratch folders
were left, which a later run removes) and a summary.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from fanout_repo import BASES, RECIPE  # noqa: E402

from pinshift.demo.build import build_demo  # noqa: E402

PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout


def state(root: Path, tmp: Path) -> dict:
    admin = root / ".git" / "worktrees"
    return {
        "head": git(root, "symbolic-ref", "-q", "HEAD") + git(root, "rev-parse", "HEAD"),
        "refs": git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        "index": git(root, "ls-files", "-s"),
        "status": git(root, "status", "--porcelain=v1", "--untracked-files=all"),
        "stash": git(root, "stash", "list"),
        "worktrees": git(root, "worktree", "list", "--porcelain"),
        "admin": sorted(p.name for p in admin.iterdir()) if admin.is_dir() else [],
        "prune": git(root, "worktree", "prune", "--dry-run", "-v"),
        "tmp": sorted(p.name for p in tmp.iterdir() if p.name.startswith("pinshift-")),
    }


def make_template(where: Path) -> Path:
    root = build_demo(where / "demo")
    git(root, "branch", "pytorch-2.9-b", "pytorch-2.9")
    git(root, "branch", "pytorch-2.9-broken", "pytorch-2.9")
    (root.parent / "recipe.toml").write_text(RECIPE)
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nsleep 0.1\n")
    hook.chmod(0o755)
    git(root, "stash", "list")
    (root / "untracked.txt").write_text("mine\n")
    return root


def trial(template: Path, work: Path, mode: str, signum: int, delay: float) -> list[str]:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    root = work / "demo"
    shutil.copytree(template, root, symlinks=True)
    shutil.copy(template.parent / "recipe.toml", work / "recipe.toml")
    tmp = work / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PINSHIFT_CACHE="off", GIT_CONFIG_NOSYSTEM="1")
    bases = BASES[:3] if mode == "fanout" else BASES[:1]
    args = ["migrate", str(work / "recipe.toml"), *[a for b in bases for a in ("--from", b)]]
    before = state(root, tmp)
    process = subprocess.Popen([*PINSHIFT, *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True, env=env)
    time.sleep(delay)
    try:
        if signum == signal.SIGINT:
            os.killpg(process.pid, signal.SIGINT)
        else:
            os.kill(process.pid, signum)
    except ProcessLookupError:
        pass
    out, err = process.communicate(timeout=300)
    problems = []
    if "Traceback" in err:
        problems.append("traceback: " + err.strip().splitlines()[-1])
    if signum == signal.SIGKILL:
        for _ in range(100):  # the workers die with their parent (SIGTERM); give them time to clean up
            if not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _names(p, str(work))]:
                break
            time.sleep(0.05)
        # the next run (one base on which nothing changes: no branch) removes what the killed one left
        again = subprocess.run([*PINSHIFT, "migrate", str(work / "recipe.toml"), "--from", "main"], cwd=root,
                               capture_output=True, text=True, env=env)
        if "Traceback" in again.stderr or again.returncode != 0:
            problems.append(f"the run after the kill: {again.returncode} {again.stderr.strip()[-200:]}")
    after = state(root, tmp)
    created = {line for line in after["refs"].splitlines()} - set(before["refs"].splitlines())
    after_refs = "\n".join(sorted(set(after["refs"].splitlines()) - created))
    for key in before:
        if key == "refs":
            if after_refs != "\n".join(sorted(before["refs"].splitlines())):
                problems.append(f"refs changed: {after['refs']!r}")
            if any("pin0182a36" not in line for line in created):
                problems.append(f"unexpected refs: {created}")
            continue
        if key == "tmp":  # Nix's scratch folders: a later run removes them (sandbox/scratch_dirs.py); noted apart
            left = [name for name in after[key] if name not in before[key]]
            nix = [name for name in left if name.startswith(("pinshift-eval-", "pinshift-nix-"))]
            if nix:
                problems.append(f"note: Nix scratch left: {nix}")
            if len(nix) != len(left):
                problems.append(f"tmp: {before[key]!r} -> {after[key]!r}")
            continue
        if before[key] != after[key]:
            problems.append(f"{key}: {before[key]!r} -> {after[key]!r}")
    return problems


def _names(proc: Path, marker: str) -> bool:
    try:
        return marker.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="fanout", choices=["fanout", "single"])
    parser.add_argument("--signal", default="INT", choices=["INT", "TERM", "KILL"])
    parser.add_argument("--from", dest="start", type=float, default=0.0)
    parser.add_argument("--to", dest="stop", type=float, default=2.0)
    parser.add_argument("--step", type=float, default=0.05)
    parser.add_argument("--load", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--src", help="run pinshift from this src/ directory (an older tree, to compare)")
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))  # the load processes still go
    if options.src:
        os.environ["PYTHONPATH"] = options.src
    signum = getattr(signal, "SIG" + options.signal)
    base = Path(tempfile.mkdtemp(prefix="stress-ctrlc-"))
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1")
    load = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(options.load)]
    failures = trials = notes = 0
    try:
        template = make_template(base / "template")
        for _ in range(options.rounds):
            delay = options.start
            while delay <= options.stop + 1e-9:
                problems = trial(template, base / "work", options.mode, signum, delay)
                trials += 1
                if problems and all(p.startswith("note: ") for p in problems):
                    notes += 1
                    print(f"NOTE {options.mode} SIG{options.signal} delay={delay:.3f}: {'; '.join(problems)}",
                          flush=True)
                elif problems:
                    failures += 1
                    print(f"FAIL {options.mode} SIG{options.signal} delay={delay:.3f}: {'; '.join(problems)}",
                          flush=True)
                delay += options.step
    finally:
        for process in load:
            process.kill()
            process.wait()
        shutil.rmtree(base, ignore_errors=True)
    print(f"{options.mode} SIG{options.signal}: {trials} trials, {failures} failed, {notes} left only Nix scratch, delays "
          f"{options.start}-{options.stop} step {options.step}, load {options.load}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
