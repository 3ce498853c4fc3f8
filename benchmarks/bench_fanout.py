"""Time a fan-out over four bases of 66 recipes against a single-base run (issue 16: less than twice).

Builds the `pinshift demo` repository, adds three more branches of the seed's 66 recipes (each with
one recipe fewer, so the four plans differ), then times, as a user runs them (one untimed warm-up):

    pinshift migrate RECIPE --from pytorch-2.9 --branch single-N                 (one base)
    pinshift migrate RECIPE --from A --from B --from C --from D --branch '{base}-fan-N'   (four bases)

Prints best and median of `--repeat` runs and the ratio fan-out / single.
Usage: python benchmarks/bench_fanout.py [--repeat 5] [--keep DIR]
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

from pinshift.demo.build import BASE, RECIPE, build_demo

USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
EXTRA = ("pytorch-2.9-b", "pytorch-2.9-c", "pytorch-2.9-d")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_repository(root: Path) -> Path:
    build_demo(root)
    recipes = sorted((root / ".flox" / "pkgs").glob("*.nix"))
    for n, branch in enumerate(EXTRA):
        git(root, "switch", "-q", "-c", branch, BASE)
        recipes[n].unlink()
        git(root, "commit", "-qam", f"{branch}: one recipe fewer")
    git(root, "switch", "-q", BASE)
    return root


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=USER_ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    scratch = Path(args.keep or tempfile.mkdtemp(prefix="pinshift-bench-fanout-"))
    root = make_repository(scratch / "repo")
    pinshift = shutil.which("pinshift") or sys.exit("pinshift is not on PATH (pip install -e .)")
    bases = [BASE, *EXTRA]
    single, fanned = [], []
    for attempt in range(args.repeat + 1):
        one = timed([pinshift, "migrate", RECIPE, "--from", BASE, "--branch", f"single-{attempt}"], root)
        four = timed([pinshift, "migrate", RECIPE, *[a for b in bases for a in ("--from", b)],
                      "--branch", f"{{base}}-fan-{attempt}"], root)
        if attempt:  # the first run of each warms caches
            single.append(one)
            fanned.append(four)
    print(f"{'run':<34}{'best s':>8}{'median s':>10}")
    print(f"{'one base (66 recipes)':<34}{min(single):>8.2f}{statistics.median(single):>10.2f}")
    print(f"{'four bases (fan-out)':<34}{min(fanned):>8.2f}{statistics.median(fanned):>10.2f}")
    print(f"\nfan-out / one base: best {min(fanned) / min(single):.2f}x, median "
          f"{statistics.median(fanned) / statistics.median(single):.2f}x (target: under 2x)")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; repository in {root}")
    if args.keep is None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
