"""Time `pinshift status` on recipe repositories shaped like one maintainer's six (issue 33), against
`git grep` of the same facts in the same run.

Builds, from the recipe shapes of tests/fixtures/kinds/ (and the demo's PyTorch recipe), git
repositories whose every recipe blob is distinct (each file carries its own comment line, as real
recipes differ), through git's plumbing:

    build-pytorch      11 branches x 164 recipes = 1,804 blobs (PyTorch pinned and Flox-args, companions)
    build-vllm          5 branches x 120 recipes
    build-onnxruntime   5 branches x  60 recipes
    build-torchvision   3 branches x  40 recipes
    build-torchaudio    2 branches x  40 recipes
    build-comfyui       2 branches x  20 recipes       (28 branches in all, as in issue 33)

and times, in fresh processes (one untimed warm-up run each, bytecode caches allowed, as an installed
user runs it):

    one   pinshift status --repo build-pytorch --format json             (target: <= 3 s on 2 cores)
    six   pinshift status --repo ... (all six) --format json               (target: <= 5 s on 2 cores)

each twice: *cold* (`PINSHIFT_CACHE=off`: every blob read from git and parsed, as on a first run) and
*warm* (the facts of every blob remembered by the warm-up run, pinshift.facts.facts_memo, in a cache
directory of the benchmark's own: what a maintainer's next run does); and for each, `git grep -P` of
the same facts (nixpkgs archive revisions, package sets and interpreters, cudaPackages_X_Y /
cudaVersion, every GPU-target notation, versions, pnames) over every branch of the same
repositories, one `git grep` per repository, as the cheapest reading of the same blobs. It prints
best and median wall seconds of `--repeat` runs, the median CPU seconds of status (user + system, its
workers included: what the machine's load cannot inflate), the ratio of the medians, and the load average
before and after, since other jobs on a shared machine move the wall figures.

Usage: python benchmarks/bench_status.py [--repeat 3] [--keep DIR] [--only one|six]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pinshift.demo.matrix import GPUS, Variant, render_recipe

KINDS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "kinds"
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
PINS = ("0182a361324364ae3f436a63005877674cf45efb", "6a030d535719c5190187c4cec156f335e95e3211",
        "46336d4d6980ae6f136b45c8507b17787eb186a0", "9a1b2c3d4e5f60718293a4b5c6d7e8f901234567")
TARGETS = {"one": 3.0, "six": 5.0}
# repository -> (branches, recipes per branch, fixture templates (kinds/<dir>/<glob>), demo recipes share)
REPOSITORIES = {
    "build-pytorch": (11, 164, ("pytorch", "pytorch-*.nix"), 0.6),
    "build-vllm": (5, 120, ("vllm", "*.nix"), 0.0),
    "build-onnxruntime": (5, 60, ("onnxruntime", "*.nix"), 0.0),
    "build-torchvision": (3, 40, ("pytorch", "torchvision-*.nix"), 0.0),
    "build-torchaudio": (2, 40, ("pytorch", "torchaudio-*.nix"), 0.0),
    "build-comfyui": (2, 20, ("comfyui", "*.nix"), 0.0),
}
GREP = (r"archive/[0-9a-f]{40}", r"python3[0-9]*Packages", r"python3[0-9]+\.(override|pkgs|withPackages)",
        r"cudaPackages_[0-9_]+", r"cudaVersion", r"gpuArch(SM|Num|CMake)", r"gpuTargets", r"cudaCapabilities",
        r"TORCH_CUDA_ARCH_LIST", r"CMAKE_CUDA_ARCHITECTURES", r"[A-Za-z]*[vV]ersion *=", r"pname *=")
SMS = tuple(GPUS) + ("110", "121")
ISAS = ("avx", "avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9")
_STEM = re.compile(r"-sm\d+a?(?=-|\Z)")
_ISA = re.compile(r"-(avx512bf16|avx512vnni|avx512|avx2|avx|armv8_2|armv9)\Z")
_REV = re.compile(r"[0-9a-f]{40}")


def git(root: Path, *args: str, data: bytes | None = None, env: dict | None = None) -> str:
    env = dict(USER_ENV, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid", **(env or {}))
    done = subprocess.run(["git", *args], cwd=root, env=env, input=data, capture_output=True, check=True)
    return done.stdout.decode().strip()


def _variant_stem(stem: str, number: int) -> str:
    """The template's file name moved to another SM and ISA (`…-sm90-avx512` -> `…-sm120-armv9`)."""
    stem = _STEM.sub(f"-sm{SMS[number % len(SMS)]}", stem)
    return _ISA.sub(f"-{ISAS[(number // len(SMS)) % len(ISAS)]}", stem)


def recipes(name: str, branch: int) -> dict[str, str]:
    """The recipe files of one branch: fixture shapes (and demo recipes) renamed, re-pinned, each distinct."""
    _, count, (directory, pattern), demo_share = REPOSITORIES[name]
    templates = sorted((KINDS / directory).glob(pattern))
    pin = PINS[branch % len(PINS)]
    files = {}
    for number in range(count):
        if number < int(count * demo_share):
            sm = SMS[number % len(GPUS)] if number % 9 else "cpu"
            variant = Variant(sm if sm in GPUS else "cpu", ISAS[(number // 9) % len(ISAS)] if sm != "cpu" else "avx2")
            text, stem = render_recipe(variant, pin), variant.pname
        else:
            template = templates[number % len(templates)]
            stem = template.name.removesuffix(".nix")
            text = _REV.sub(pin, template.read_text())
        new = _variant_stem(stem, number)
        while f".flox/pkgs/{new}.nix" in files:
            new += "-x"
        files[f".flox/pkgs/{new}.nix"] = f"# bench: {name} branch {branch} recipe {number}\n" + text.replace(stem, new)
    return files


def build(root: Path, name: str) -> int:
    """One repository of REPOSITORIES[name], every branch written through plumbing; the number of blobs."""
    branches = REPOSITORIES[name][0]
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "branch-0")
    blobs = set()
    for branch in range(branches):
        files = recipes(name, branch)
        shas = git(root, "hash-object", "-w", "--stdin-paths", data="\n".join(
            str(_scratch_file(root, path, text)) for path, text in sorted(files.items())).encode()).split()
        blobs.update(shas)
        index = {"GIT_INDEX_FILE": str(root / ".git" / "bench-index")}
        entries = "\n".join(f"100644 {sha}\t{path}" for sha, path in zip(shas, sorted(files)))
        git(root, "update-index", "--add", "--index-info", data=entries.encode(), env=index)
        tree = git(root, "write-tree", env=index)
        (root / ".git" / "bench-index").unlink()
        commit = git(root, "commit-tree", tree, "-m", f"branch {branch}")
        git(root, "update-ref", f"refs/heads/branch-{branch}", commit)
    shutil.rmtree(root / ".git" / "bench-files", ignore_errors=True)
    git(root, "gc", "-q")  # packed, as a clone is
    return len(blobs)


def _scratch_file(root: Path, path: str, text: str) -> Path:
    target = root / ".git" / "bench-files" / path.replace("/", "_")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return target


def timed(commands: list[list[str]], cwd: Path, repeat: int, env: dict | None = None,
          cpu: list | None = None) -> list[float]:
    """Wall seconds of running `commands` one after another, `repeat` times after one untimed run; the CPU
    seconds (user + system of the commands and their workers) of each timed run are added to `cpu`."""
    times = []
    for attempt in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        for command in commands:
            result = subprocess.run(command, cwd=cwd, capture_output=True, env=env or USER_ENV)
            if result.returncode not in (0, 1):
                sys.exit(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.decode().strip()}")
        if attempt:
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if cpu is not None:
                cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times


def grep_commands(roots: list[Path]) -> list[list[str]]:
    """One `git grep` per repository over every branch: PCRE (-P, the fastest git has) when git has it."""
    pcre = subprocess.run(["git", "-C", str(roots[0]), "grep", "-q", "-P", "x", "HEAD"], capture_output=True)
    mode = "-E" if b"support for" in pcre.stderr or b"not built" in pcre.stderr else "-P"
    commands = []
    for root in roots:
        branches = git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
        commands.append(["git", "-C", str(root), "grep", "-I", mode, "-e", "|".join(GREP), *branches, "--", ".flox/pkgs/"])
    return commands


def blob_count(root: Path) -> int:
    """Distinct blobs under .flox/pkgs/ over every branch."""
    blobs = set()
    for branch in git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads").split():
        blobs.update(line.split()[2] for line in git(root, "ls-tree", "-r", branch, "--", ".flox/pkgs/").splitlines())
    return len(blobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="build the repositories here and keep them")
    parser.add_argument("--only", choices=("one", "six"), default=None)
    args = parser.parse_args()
    pinshift = shutil.which("pinshift") or sys.exit("pinshift is not on PATH (pip install .)")
    scratch = Path(tempfile.mkdtemp(prefix="pinshift-bench-status-"))
    base = args.keep or scratch
    try:
        roots, blobs = {}, {}
        for name in REPOSITORIES:
            roots[name] = base / name
            if not (roots[name] / ".git").is_dir():
                build(roots[name], name)
            blobs[name] = blob_count(roots[name])
        cases = {"one": ["build-pytorch"], "six": list(REPOSITORIES)}
        rows = []
        for case, names in cases.items():
            if args.only and case != args.only:
                continue
            chosen = [roots[n] for n in names]
            status = [[pinshift, "status", *(a for r in chosen for a in ("--repo", str(r))), "--format", "json"]]
            branches = sum(REPOSITORIES[n][0] for n in names)
            for memo in ("cold", "warm"):
                env = dict(USER_ENV, XDG_CACHE_HOME=str(scratch / "cache"), PINSHIFT_CACHE="off" if memo == "cold" else "on")
                shutil.rmtree(scratch / "cache", ignore_errors=True)
                before = os.getloadavg()[0]
                cpu: list[float] = []
                ours = timed(status, base, args.repeat, env, cpu)
                grep = timed(grep_commands(chosen), base, args.repeat)
                after = os.getloadavg()[0]
                rows.append((f"{case} {memo}", len(names), branches, sum(blobs[n] for n in names), ours, grep, before,
                             after, cpu))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # with --keep, the repositories are elsewhere
    print(f"pinshift status against git grep of the same facts; {args.repeat} runs each after one warm-up; "
          f"{os.cpu_count()} CPUs\n")
    print("case | repos | branches | blobs | status best s | status median s | status CPU s | git grep median s | "
          "ratio (medians) | target s | met | load before/after")
    print("---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---")
    for case, repos, branches, count, ours, grep, before, after, cpu in rows:
        median, grep_median = statistics.median(ours), statistics.median(grep)
        target = TARGETS[case.split()[0]]
        met = "yes" if median <= target else "NO"
        print(f"{case} | {repos} | {branches} | {count:,} | {min(ours):.2f} | {median:.2f} | "
              f"{statistics.median(cpu):.2f} | {grep_median:.3f} | {median / grep_median:.1f}x | {target:.1f} | {met} "
              f"| {before:.2f} / {after:.2f}")


if __name__ == "__main__":
    main()
