"""Benchmark pinshift against `sed`, ast-grep and a bare parse on synthetic recipe repositories (issue 15).

Generates git repositories of 66, 1,000, 10,000 and 40,000 recipes shaped like the seed's
`pytorch-2.9` branch (every GPU x ISA variant, CPU-only, Darwin; about one file in ten in Flox
function-argument style without a pin), and measures in the same run, per size:

    dry-run   pinshift migrate pytorch-2.10-cuda12_9 --dry-run --format json --output FILE
    migrate   pinshift migrate pytorch-2.10-cuda12_9 (three commits on a new branch)
    apply     pinshift apply rename-attr python3Packages -> python313Packages (base nixpkgs_pinned)
    parse     a bare single-process tree-sitter parse of every recipe
    sed       sed -i doing the seed's two replacements, then `git add -A && git commit` of the result
    ast-grep  ast-grep run -p 'nixpkgs_pinned.python3Packages.torch' -r '...python313Packages.torch' -U

and prints one table with the ratios the issue sets targets for: dry-run / parse (<= 1.0), migrate /
(sed + add + commit) (<= 2.0), apply / ast-grep (<= 1.0), and peak RSS (<= 300 MB at 10,000, <= 400
MB at 40,000). ast-grep comes from PyPI (`ast-grep-cli`), installed into a virtual environment of the
benchmark's own; without it that column says why.

Usage: python benchmarks/bench.py [--sizes 66,1000,10000,40000] [--repeat 3] [--keep DIR]
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


def sed_seconds(repo: Path, scratch: Path) -> tuple[float, float]:
    """(`sed -i` doing the seed's two global replacements, `git add -A && git commit` of the result) in a copy."""
    copy = scratch / "sed-copy"
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(copy)], check=True)
    files = [str(p) for p in sorted((copy / ".flox" / "pkgs").glob("*.nix"))]
    start = time.perf_counter()
    for batch in range(0, len(files), 4000):  # as xargs would: one command line cannot hold 40,000 paths
        subprocess.run(
            ["sed", "-i", "-e", f"s/{OLD_REV}/{NEW_REV}/g",
             "-e", "s/nixpkgs_pinned\\.python3Packages\\.torch/nixpkgs_pinned.python313Packages.torch/g",
             *files[batch : batch + 4000]],
            check=True,
        )
    sed = time.perf_counter() - start
    start = time.perf_counter()
    git(copy, "add", "-A")
    git(copy, "commit", "-q", "-m", "sed")
    commit = time.perf_counter() - start
    shutil.rmtree(copy)
    return sed, commit


def ast_grep(scratch: Path) -> str | None:
    """The ast-grep executable of the benchmark's own environment (installed from PyPI), or None."""
    env = scratch / "ast-grep-env"
    binary = env / "bin" / "ast-grep"
    if not binary.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(env)], capture_output=True)
        pip = subprocess.run([str(env / "bin" / "pip"), "install", "-q", "ast-grep-cli"], capture_output=True,
                             text=True) if made.returncode == 0 else None
        if pip is None or pip.returncode != 0:
            print(f"ast-grep column skipped: cannot install ast-grep-cli ({(pip.stderr if pip else '').strip()[:200]})")
            return None
    return str(binary)


def checkout_copy(repo: Path, scratch: Path) -> Path:
    copy = scratch / "apply-copy"
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(copy)], check=True)
    return copy


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, env=USER_ENV)
    if done.returncode not in (0, 1):
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


RENAME = ["apply", "rename-attr", "--set", "from=python3Packages", "--set", "to=python313Packages",
          "--set", "base=nixpkgs_pinned", ".flox/pkgs"]
AST_GREP = ["run", "--lang", "nix", "-p", "nixpkgs_pinned.python3Packages.torch",
            "-r", "nixpkgs_pinned.python313Packages.torch", "-U", ".flox/pkgs"]


def run(sizes: list[int], repeat: int, keep: Path | None) -> None:
    scratch = Path(keep or tempfile.mkdtemp(prefix="pinshift-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    pinshift = shutil.which("pinshift") or sys.exit("pinshift is not on PATH (pip install -e .)")
    grep = ast_grep(scratch)
    header = ("files", "dry-run s", "dry MB", "migrate s", "migrate MB", "apply s", "parse s", "sed s", "add+commit s",
              "ast-grep s", "dry/parse", "migrate/(sed+commit)", "apply/ast-grep")
    rows = []
    for size in sizes:
        repo = scratch / f"repo-{size}"
        if not repo.exists():
            make_repository(repo, size)
        files = sorted((repo / ".flox" / "pkgs").glob("*.nix"))
        subprocess.run([pinshift, "migrate", RECIPE, "--dry-run"], cwd=repo, capture_output=True, env=USER_ENV)
        dry, dry_mb = measure([pinshift, "migrate", RECIPE, "--dry-run", "--format", "json", "--output",
                               str(scratch / f"report-{size}.json")], repo, repeat)
        full_times, full_mb = [], 0.0
        for attempt in range(repeat):
            branch = f"bench-{attempt}"
            seconds, mb = measure([pinshift, "migrate", RECIPE, "--branch", branch], repo, 1)
            full_times.append(seconds)
            full_mb = max(full_mb, mb)
            git(repo, "branch", "-D", branch)
        applies, greps = [], []
        for _ in range(repeat):
            copy = checkout_copy(repo, scratch)
            applies.append(timed([pinshift, *RENAME], copy))
            if grep:
                copy = checkout_copy(repo, scratch)
                greps.append(timed([grep, *AST_GREP], copy))
        shutil.rmtree(scratch / "apply-copy", ignore_errors=True)
        parse = min(bare_parse_seconds(files) for _ in range(repeat))
        sed, commit = min(sed_seconds(repo, scratch) for _ in range(repeat))
        full, apply, grep_s = min(full_times), min(applies), (min(greps) if greps else None)
        rows.append((size, dry, dry_mb, full, full_mb, apply, parse, sed, commit, grep_s,
                     dry / parse, full / (sed + commit), (apply / grep_s) if grep_s else None))
    widths = [max(len(h), 7) for h in header]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for row in rows:
        cells = [f"{row[0]:,}"]
        for index, value in enumerate(row[1:], 1):
            if value is None:
                cells.append("-")
            elif index in (2, 4):
                cells.append(f"{value:.0f}")
            elif index >= 10:
                cells.append(f"{value:.2f}x")
            else:
                cells.append(f"{value:.2f}")
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths)))
    if len(rows) > 1:
        first, last = rows[-2], rows[-1]
        scale = last[0] / first[0]
        print(f"\ngrowth {first[0]:,} -> {last[0]:,} files ({scale:.0f}x): dry-run {last[1] / first[1]:.1f}x, "
              f"migrate {last[3] / first[3]:.1f}x, apply {last[5] / first[5]:.1f}x (linear: {scale:.0f}x)")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load average "
          f"{os.getloadavg()[0]:.2f}; best of {repeat}; repos in {scratch}")
    if keep is None:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="66,1000,10000,40000", help="comma-separated repository sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated repositories here (reused)")
    args = parser.parse_args()
    run([int(s) for s in args.sizes.split(",")], args.repeat, args.keep)


if __name__ == "__main__":
    main()
