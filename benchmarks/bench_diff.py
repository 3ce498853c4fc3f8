"""Time `pinshift diff BASE TARGET` (issue 32): what every recipe builds on two commits, evaluated offline.

Builds two repositories from the seed's recipes (pinshift.demo.matrix) through git:

    seed   66 recipes    BASE: the pytorch-2.9 branch; TARGET: pin-swapped to 0182a36 and python313Packages
    large  1,000 recipes  the 66 variants again and again, each file with its own comment line (distinct blobs),
                          a fifth of them companions importing a PyTorch recipe; TARGET changed the same way

and times, in fresh processes, `pinshift diff BASE TARGET --format json`:

    cold   PINSHIFT_CACHE=off: every recipe of both commits evaluated (targets: seed < 3 s, large < 20 s on 2 cores)
    warm   the summaries remembered by an untimed first run (pinshift.evaluation.summary_memo), in a cache
           directory of the benchmark's own

It prints best and median wall seconds of `--repeat` runs, the median CPU seconds (user + system, the
nix-instantiate processes included), the nix-instantiate calls, and the load average before and after, since
other jobs on a shared machine move the wall figures.

Usage: python benchmarks/bench_diff.py [--repeat 3] [--only seed|large] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pinshift.demo.matrix import NEW_REV, OLD_REV, render_recipe, variants

TARGETS = {"seed": 3.0, "large": 20.0}
PINSHIFT = str(Path(sys.executable).parent / "pinshift")

COMPANION = """# torchvision {number}: built against its PyTorch recipe, imported.
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";
  }}) {{ config = {{ allowUnfree = true; cudaSupport = true; }}; }};
  pytorch = import ./{target} {{ inherit pkgs; }};
in
  (nixpkgs_pinned.{pkgset}.torchvision.override {{ torch = pytorch; }}).overrideAttrs (oldAttrs: {{
    pname = "torchvision-{number}";
  }})
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
                            GIT_COMMITTER_EMAIL="b@b"))


def files(count: int, rev: str, package_set: str) -> dict[str, str]:
    found: dict[str, str] = {}
    shapes = variants()
    recipes = [v for v in shapes]
    number = 0
    while len(found) < count:
        variant = recipes[number % len(recipes)]
        name = f".flox/pkgs/{variant.pname}-{number:04}.nix" if count > len(recipes) else f".flox/pkgs/{variant.filename}"
        if count > len(recipes) and number % 5 == 4 and number >= len(recipes):
            target = Path(list(found)[number - 1]).name
            found[f".flox/pkgs/torchvision-{number:04}.nix"] = COMPANION.format(number=number, rev=rev, target=target,
                                                                               pkgset=package_set)
        else:
            found[name] = f"# copy {number}\n" + render_recipe(variant, rev, package_set)
        number += 1
    return found


def build(root: Path, count: int) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "base")
    for rev, package_set, branch in ((OLD_REV, "python3Packages", None), (NEW_REV, "python313Packages", "target")):
        if branch:
            git(root, "checkout", "-q", "-b", branch)
        for path, text in files(count, rev, package_set).items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", branch or "base")


def run(root: Path, env: dict) -> tuple[float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([PINSHIFT, "diff", "base", "target", "--repo", str(root), "--format", "json"],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"pinshift diff failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=sorted(TARGETS))
    parser.add_argument("--keep", type=Path, help="build the repositories here and leave them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="pinshift-bench-diff-"))
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f}; cores: {len(os.sched_getaffinity(0))}")
        for name, count in (("seed", 66), ("large", 1000)):
            if args.only and name != args.only:
                continue
            root = work / name
            if not root.exists():
                build(root, count)
            cache = work / f"cache-{name}"
            for mode in ("cold", "warm"):
                env = dict(os.environ, XDG_CACHE_HOME=str(cache), PINSHIFT_CACHE="off" if mode == "cold" else "on")
                run(root, env)  # warm-up (and, warm, the run that fills the cache)
                walls, cpus, data = [], [], {}
                for _ in range(args.repeat):
                    wall, cpu, data = run(root, env)
                    walls.append(wall)
                    cpus.append(cpu)
                recipes = len(data["recipes"])
                evaluation = data["evaluation"]
                target = f" (target < {TARGETS[name]:g} s)" if mode == "cold" else ""
                print(f"{name:5} {mode}: {recipes} recipes x 2, best {min(walls):.2f} s, median {statistics.median(walls):.2f} s"
                      f"{target}; cpu {statistics.median(cpus):.2f} s; evaluated {evaluation['evaluated']}, remembered "
                      f"{evaluation['remembered']}, {evaluation['calls']} nix-instantiate calls")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
