"""Time `pinshift status` over 10 branches × 200 recipes (issue 20's target: under 3 s on 2 cores).

Builds a repository of `--branches` branches, each with `--recipes` seed-shaped recipes under
`.flox/pkgs/` (the demo matrix, numbered to reach the count), spread over three nixpkgs pins.
Two layouts:
  distinct  every branch's files differ from every other's (its own .metadata-rev): nothing
            can be shared, every file of every branch is read and parsed (the worst case);
  shared    the branches share 90 % of their files byte for byte (as branches forked from
            one another do): each blob is read and parsed once.
Then runs the real `pinshift status --format json` in a subprocess (one untimed warm-up run,
bytecode caches allowed, as an installed user runs it) and prints best and median wall time
with the load average, since other jobs on a shared machine change the figures.

Usage: python benchmarks/bench_status.py [--branches 10] [--recipes 200] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe, variants

TARGET = 3.0
THIRD_REV = "2017d6d5f2a8c1b0e9d8c7b6a5f4e3d2c1b0a9f8"
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def git(root: Path, *args: str, data: bytes | None = None) -> str:
    env = dict(USER_ENV, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    done = subprocess.run(["git", *args], cwd=root, env=env, input=data, capture_output=True, check=True)
    return done.stdout.decode().strip()


def recipes(branch: int, count: int, distinct: bool) -> dict[str, str]:
    """`count` recipe files of branch number `branch` on one of three pins."""
    pin = (OLD_REV, NEW_REV, THIRD_REV)[branch % 3]
    matrix = variants()
    files = {}
    for number in range(count):
        variant = matrix[number % len(matrix)]
        own = distinct or number % 10 == 0  # shared: one file in ten is the branch's own
        revision = Variant(variant.gpu, variant.isa, metadata_rev=branch + 2 if own else 1)
        text = render_recipe(revision, pin if own else OLD_REV)
        name = variant.pname.replace("pytorch-", f"pytorch{number // len(matrix)}-", 1)
        files[f".flox/pkgs/{name}.nix"] = text.replace(variant.pname, name)
    return files


def build(root: Path, branches: int, count: int, distinct: bool) -> None:
    """One repository, `branches` branches of `count` recipes, written through git's plumbing."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "branch-0")
    for branch in range(branches):
        entries = []
        for path, text in sorted(recipes(branch, count, distinct).items()):
            sha = git(root, "hash-object", "-w", "--stdin", data=text.encode())
            entries.append(f"100644 {sha}\t{path}")
        index = root / ".git" / "bench-index"
        env_index = {"GIT_INDEX_FILE": str(index)}
        subprocess.run(["git", "update-index", "--add", "--index-info"], cwd=root, check=True,
                       input="\n".join(entries).encode(), env=dict(USER_ENV, **env_index))
        tree = subprocess.run(["git", "write-tree"], cwd=root, check=True, capture_output=True,
                              env=dict(USER_ENV, **env_index)).stdout.decode().strip()
        index.unlink()
        commit = git(root, "commit-tree", tree, "-m", f"branch {branch}")
        git(root, "update-ref", f"refs/heads/branch-{branch}", commit)


def timed(command: list[str], repeat: int) -> list[float]:
    times = []
    for attempt in range(repeat + 1):
        start = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, env=USER_ENV)
        if attempt:
            times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=10)
    parser.add_argument("--recipes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="build the repositories here and keep them")
    args = parser.parse_args()
    pinshift = shutil.which("pinshift") or sys.exit("pinshift is not on PATH (pip install -e .)")
    scratch = Path(tempfile.mkdtemp(prefix="pinshift-bench-"))
    base = args.keep or scratch
    rows = {}
    try:
        for layout in ("distinct", "shared"):
            root = base / f"status-{layout}"
            build(root, args.branches, args.recipes, layout == "distinct")
            load = os.getloadavg()[0]
            times = timed([pinshift, "status", "--repo", str(root), "--format", "json"], args.repeat)
            rows[layout] = (times, load, os.getloadavg()[0])
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"pinshift status, {args.branches} branches x {args.recipes} recipes, {args.repeat} runs each, "
          f"{os.cpu_count()} CPUs\n")
    print(f"{'layout':<9} | {'best s':>7} | {'median s':>8} | {'target s':>8} | met | load before/after")
    print(f"{'-' * 9}-|-{'-' * 7}-|-{'-' * 8}-|-{'-' * 8}-|-----|-------------------")
    for layout, (times, before, after) in rows.items():
        best, median = min(times), statistics.median(times)
        met = "yes" if median < TARGET else "NO"
        print(f"{layout:<9} | {best:>7.3f} | {median:>8.3f} | {TARGET:>8.1f} | {met:<3} | {before:.2f} / {after:.2f}")


if __name__ == "__main__":
    main()
