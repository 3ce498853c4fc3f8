"""Time `pinshift migrate` and its `--dry-run` on the demo repository, as a user runs them.

Builds the `pinshift demo` repository (66 seed-shaped recipes on `pytorch-2.9`),
then runs the real `pinshift` command in a subprocess: the dry run, and the full
migration (temporary worktree, one commit per step, branch) with `--force` so
every repeat does the whole job. Prints one table of wall times (best and median
of `--repeat` runs) against the targets: full migrate < 1.5 s, dry run < 0.5 s.

Usage: python benchmarks/bench_migrate.py [--recipe NAME_OR_PATH] [--migrations DIR] [--repeat 5] [--keep DIR]
Until the bundled recipe's step kinds all exist, pass the stand-in:
    --recipe tests/fixtures/migrate/seed-stand-in.toml --migrations tests/fixtures/migrations
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pinshift.demo.build import RECIPE, build_demo

TARGETS = {"dry run": 0.5, "full migrate": 1.5}


# As installed users run it: bytecode caches allowed (some sandboxes set PYTHONDONTWRITEBYTECODE,
# which makes every run recompile pinshift), and one warm-up run that is not timed.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


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
    parser.add_argument("--recipe", default=RECIPE)
    parser.add_argument("--migrations", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="build the repository here and keep it")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pinshift-bench-"))
    root = build_demo(args.keep or scratch / "demo")
    pinshift = shutil.which("pinshift") or sys.exit("pinshift is not on PATH (pip install -e .)")
    command = [pinshift, "migrate", args.recipe, "--repo", str(root)]
    if args.migrations:
        command += ["--migrations", args.migrations]
    try:
        rows = {
            "dry run": timed([*command, "--dry-run", "--force"], args.repeat),
            "full migrate": timed([*command, "--force"], args.repeat),
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"pinshift migrate on the demo repository (66 recipes), {args.repeat} runs each\n")
    print(f"{'run':<14} | {'best s':>7} | {'median s':>8} | {'target s':>8} | met")
    print(f"{'-' * 14}-|-{'-' * 7}-|-{'-' * 8}-|-{'-' * 8}-|----")
    for name, times in rows.items():
        best, median = min(times), statistics.median(times)
        print(f"{name:<14} | {best:>7.3f} | {median:>8.3f} | {TARGETS[name]:>8.1f} | {'yes' if median < TARGETS[name] else 'NO'}")


if __name__ == "__main__":
    main()
