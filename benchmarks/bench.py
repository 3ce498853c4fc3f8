"""Benchmark pinshift against a bare tree-sitter parse and `sed` on synthetic recipe repositories.

Generates git repositories of 66, 1,000 and 10,000 recipes shaped like the seed's
`pytorch-2.9` branch (every GPU × ISA variant, CPU-only, Darwin; about one file in
ten in Flox function-argument style without a pin), then prints one table:

    files | dry-run s | dry-run MB | migrate s | migrate MB | bare parse s | sed s | dry-run/parse | migrate/sed

Usage: python benchmarks/bench.py [--sizes 66,1000,10000] [--keep DIR]
Wall times are the best of `--repeat` runs; peak RSS is the child's maximum resident set.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe, variants

RECIPE = "pytorch-2.10-cuda12_9"
FLOX_STYLE = """# Flox function-argument style: no pin of its own
{{ python3Packages, lib, config, cudaPackages, addDriverRunpath }}:
let
  gpuArchSM = "sm_{sm}";
in
(python3Packages.torch.override {{
  cudaSupport = true;
  gpuTargets = [ gpuArchSM ];
}}).overrideAttrs (oldAttrs: {{
  pname = "pytorch-python313-cuda12_8-sm{sm}-flox{n}";
  postInstall = (oldAttrs.postInstall or "") + ''
    echo 1 > $out/.metadata-rev
  '';
}})
"""


def git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_repository(root: Path, count: int) -> Path:
    """A git repo whose `pytorch-2.9` branch holds `count` recipes under .flox/pkgs/."""
    pkgs = root / ".flox" / "pkgs"
    pkgs.mkdir(parents=True)
    matrix = variants()
    for n in range(count):
        base = matrix[n % len(matrix)]
        copy = n // len(matrix)
        if n % 10 == 9:
            text = FLOX_STYLE.format(sm=base.gpu if base.gpu.isdigit() else "90", n=n)
            name = f"flox-{n}.nix"
        else:
            variant = Variant(base.gpu, base.isa, metadata_rev=1 + copy % 3)
            text = render_recipe(variant, OLD_REV)
            name = variant.filename if copy == 0 else variant.filename.replace(".nix", f"-{copy}.nix")
        (pkgs / name).write_text(text)
    git(root, "init", "-q", "-b", "pytorch-2.9")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "recipes")
    return root


# As installed users run it: bytecode caches allowed (some sandboxes set PYTHONDONTWRITEBYTECODE,
# which makes every run recompile pinshift); each repository gets one untimed warm-up dry run.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(command: list[str], cwd: Path, repeat: int) -> tuple[float, float]:
    """(best wall seconds, peak RSS in MB) of running `command` in a fresh child process."""
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "code = subprocess.run(sys.argv[1:]).returncode\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
    )
    best, peak = float("inf"), 0.0
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", wrapper, *command], cwd=cwd, capture_output=True, text=True,
                             env=USER_ENV)
        seconds, rss_kb, code = out.stdout.strip().splitlines()[-1].split()
        if code != "0":
            raise SystemExit(f"benchmark command failed ({code}): {' '.join(command)}\n{out.stderr[-2000:]}")
        best = min(best, float(seconds))
        peak = max(peak, int(rss_kb) / 1024)
    return best, peak


def bare_parse_seconds(files: list[Path]) -> float:
    """One process, tree-sitter only: read and parse every file once."""
    import tree_sitter
    import tree_sitter_nix

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_nix.language()))
    start = time.perf_counter()
    for path in files:
        parser.parse(path.read_bytes())
    return time.perf_counter() - start


def sed_seconds(repo: Path, scratch: Path) -> float:
    """`sed -i` doing the seed's two global replacements over a copy of the recipes."""
    copy = scratch / "sed-copy"
    shutil.copytree(repo / ".flox", copy)
    files = [str(p) for p in sorted(copy.rglob("*.nix"))]
    start = time.perf_counter()
    subprocess.run(
        ["sed", "-i", "-e", f"s/{OLD_REV}/{NEW_REV}/g",
         "-e", "s/nixpkgs_pinned\\.python3Packages\\.torch/nixpkgs_pinned.python313Packages.torch/g", *files],
        check=True,
    )
    elapsed = time.perf_counter() - start
    shutil.rmtree(copy)
    return elapsed


def run(sizes: list[int], repeat: int, keep: Path | None) -> None:
    scratch = Path(keep or tempfile.mkdtemp(prefix="pinshift-bench-"))
    pinshift = shutil.which("pinshift") or sys.exit("pinshift is not on PATH (pip install -e .)")
    header = ("files", "dry-run s", "dry-run MB", "migrate s", "migrate MB", "bare parse s", "sed s",
              "dry-run/parse", "migrate/sed")
    rows = []
    for size in sizes:
        repo = make_repository(scratch / f"repo-{size}", size)
        files = sorted((repo / ".flox" / "pkgs").glob("*.nix"))
        subprocess.run([pinshift, "migrate", RECIPE, "--dry-run"], cwd=repo, capture_output=True, env=USER_ENV)
        dry, dry_mb = measure([pinshift, "migrate", RECIPE, "--dry-run", "--format", "json", "--output",
                               str(scratch / f"report-{size}.json")], repo, repeat)
        full_times = []
        full_mb = 0.0
        for attempt in range(repeat):
            branch = f"bench-{attempt}"
            seconds, mb = measure([pinshift, "migrate", RECIPE, "--branch", branch], repo, 1)
            full_times.append(seconds)
            full_mb = max(full_mb, mb)
            git(repo, "branch", "-D", branch)
        parse = min(bare_parse_seconds(files) for _ in range(repeat))
        sed = min(sed_seconds(repo, scratch) for _ in range(repeat))
        full = min(full_times)
        rows.append((size, dry, dry_mb, full, full_mb, parse, sed, dry / parse, full / sed))
    widths = [max(len(h), 9) for h in header]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for row in rows:
        cells = [f"{row[0]:d}"] + [f"{v:.2f}" if i not in (2, 4) else f"{v:.0f}" for i, v in enumerate(row[1:], 1)]
        cells[-2:] = [f"{row[7]:.2f}x", f"{row[8]:.2f}x"]
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths)))
    print(f"\nmachine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; best of {repeat}; repos in {scratch}")
    if keep is None:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="66,1000,10000", help="comma-separated repository sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated repositories here")
    args = parser.parse_args()
    run([int(s) for s in args.sizes.split(",")], args.repeat, args.keep)


if __name__ == "__main__":
    main()
