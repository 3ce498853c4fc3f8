"""Benchmark pinshift against `sed`, ast-grep and a bare parse on synthetic recipe repositories (issue 15).

Generates git repositories of 66, 1,000, 10,000 and 40,000 distinct recipes shaped like the seed's
`pytorch-2.9` branch (every GPU x ISA variant, CPU-only, Darwin; about one file in ten in Flox
function-argument style without a pin), and measures in the same run, per size (sed, ast-grep and
apply each in a fresh clone whose checkout is synced to disk before it is timed):

    dry-run   pinshift migrate pytorch-2.10-cuda12_9 --dry-run --format json --output FILE
    migrate   pinshift migrate pytorch-2.10-cuda12_9 (three commits on a new branch)
    apply     pinshift apply rename-attr python3Packages -> python313Packages (base nixpkgs_pinned)
    parse     a bare single-process tree-sitter parse of every recipe
    sed       sed -i doing the seed's two replacements, then `git add -A && git commit` of the result
    ast-grep  ast-grep run -p 'nixpkgs_pinned.python3Packages.torch' -r '...python313Packages.torch' -U

Each pinshift command is measured twice (issue 35): *cold*, each run with its own empty cache directory
(`XDG_CACHE_HOME`: every file read, parsed and planned, and the plan memo written), and *warm*, after an
untimed run of the same command has filled the plan memo (src/pinshift/planning/memo.py) in the benchmark's
own cache directory, as a `--dry-run` fills it for the `migrate` that follows. pinshift's migrate rows run
with `--no-build-check`, so that they do what sed, ast-grep and the parse do; the "dry cold +builds" column is
the same cold dry run evaluating what the recipes build after each step (issue 32), once. It prints a table of
times and one of the ratios issue 35 sets targets for: migrate cold / (sed + add + commit) <= 2.0, dry-run
cold / parse <= 2.0, dry-run warm / parse <= 1.0, apply cold / ast-grep <= 2.0, and peak RSS (<= 400 MB at
40,000). It also prints issue 44's four rows per size, each with its anchor from the same run: migrate
--no-build-check cold / (sed + add + commit) <= 2.0, dry run --no-build-check cold / parse <= 2.0, the dry run
with the check, warm (a second identical run) / parse <= 1.0, and migrate with the check, cold / migrate
--no-build-check, cold <= 2.0 (the last two leave out with --no-builds). ast-grep comes from PyPI (`ast-grep-cli`), installed into a virtual environment of the benchmark's
own; without it that column says why.

Usage: python benchmarks/bench.py [--sizes 66,1000,10000,40000] [--repeat 3] [--keep DIR] [--no-builds]
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
from collections.abc import Callable
from pathlib import Path

from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe, variants

RECIPE = "pytorch-2.10-cuda12_9"
README_STEP = "# Added by issue 6"  # where the bundled recipe's README step begins (see `recipe_file`)


def recipe_file(scratch: Path) -> str:
    """The bundled recipe without its README step, as a file: the generated repositories have no README, so the step
    changes nothing, and since issue 40 it needs `{facts.revision}`, which a repository whose Flox-style recipes pin
    no nixpkgs cannot give (the run would stop with no branch); the three recipe steps are what is measured."""
    import pinshift.bundled_recipes

    text = (Path(pinshift.bundled_recipes.__path__[0]) / f"{RECIPE}.toml").read_text()
    path = scratch / f"{RECIPE}.toml"
    path.write_text(text[: text.index(README_STEP)] if README_STEP in text else text)
    return str(path)
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
    """A git repo whose `pytorch-2.9` branch holds `count` distinct recipes under .flox/pkgs/."""
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
        # every file distinct, as real recipes are: no two share a blob (git would store and hash it once)
        (pkgs / name).write_text(f"{text}# recipe {n + 1} of {count}\n")
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
    copy = checkout_copy(repo, scratch, "sed-copy")
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


def checkout_copy(repo: Path, scratch: Path, name: str = "apply-copy") -> Path:
    """A fresh clone of `repo` whose checkout is on disk before anything is timed in it: the kernel's
    write-back of the files git just wrote would otherwise fall on whichever command runs next (pinshift
    apply's own `sync` included), not on the clone."""
    copy = scratch / name
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(copy)], check=True)
    os.sync()
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


_COLD = [0]


def _pinshift_env(base: dict[str, str], scratch: Path, cache: bool) -> dict[str, str]:
    """pinshift's environment: warm, the benchmark's own cache directory (filled by an earlier run); cold, a new
    empty cache directory of its own (issue 35: what a first run pays, writing its memo included)."""
    if cache:
        directory = scratch / "cache"
    else:
        _COLD[0] += 1
        directory = scratch / f"cold-cache-{_COLD[0]}"
    env = dict(base, XDG_CACHE_HOME=str(directory))
    env.pop("PINSHIFT_CACHE", None)
    return env


def _cold(command: list[str], cwd: Path, repeat: int, scratch: Path, plain: dict[str, str],
          before: Callable[[], None] | None = None) -> tuple[float, float]:
    """(best seconds, peak MB) of `repeat` runs, each with its own empty cache directory."""
    global USER_ENV
    best, peak = float("inf"), 0.0
    for _ in range(repeat):
        if before is not None:
            before()
        USER_ENV = _pinshift_env(plain, scratch, False)
        seconds, mb = measure(command, cwd, 1)
        best, peak = min(best, seconds), max(peak, mb)
    USER_ENV = plain
    return best, peak


def run(sizes: list[int], repeat: int, keep: Path | None, builds: bool = True) -> None:
    global USER_ENV
    scratch = Path(keep or tempfile.mkdtemp(prefix="pinshift-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    pinshift = shutil.which("pinshift") or sys.exit("pinshift is not on PATH (pip install -e .)")
    grep = ast_grep(scratch)
    recipe = recipe_file(scratch)
    plain_env = USER_ENV
    rows = []
    for size in sizes:
        repo = scratch / f"repo-{size}"
        if not repo.exists():
            make_repository(repo, size)
        files = sorted((repo / ".flox" / "pkgs").glob("*.nix"))
        shutil.rmtree(scratch / "cache", ignore_errors=True)
        row: dict[str, float | None] = {"files": size}
        # the rows compare what sed, ast-grep and a parse do: the edits, not the evaluation of what the recipes
        # build (issue 32's check, --no-build-check here; its own cost is the "dry cold +builds" column)
        dry = [pinshift, "migrate", recipe, "--dry-run", "--no-build-check", "--format", "json", "--output",
               str(scratch / f"report-{size}.json")]
        row["dry cold"], row["dry MB cold"] = _cold(dry, repo, repeat, scratch, plain_env)
        row["dry builds"], row["dry MB builds"] = (_cold([a for a in dry if a != "--no-build-check"], repo, 1, scratch,
                                                         plain_env) if builds else (None, 0.0))
        attempt = [0]

        def migrate_command() -> list[str]:
            attempt[0] += 1
            return [pinshift, "migrate", recipe, "--no-build-check", "--branch", f"bench-{attempt[0]}"]

        times, peak = [], 0.0
        for _ in range(repeat):
            seconds, mb = _cold(migrate_command(), repo, 1, scratch, plain_env)
            times.append(seconds)
            peak = max(peak, mb)
            git(repo, "branch", "-D", f"bench-{attempt[0]}")
        row["migrate cold"], row["migrate MB cold"] = min(times), peak
        row["migrate builds"] = None
        if builds:  # issue 44: the default migrate, the build check included, against the same with --no-build-check
            row["migrate builds"], row["migrate MB builds"] = _cold(
                [a for a in migrate_command() if a != "--no-build-check"], repo, 1, scratch, plain_env)
            git(repo, "branch", "-D", f"bench-{attempt[0]}")
        row["apply cold"] = min(_cold([pinshift, *RENAME], checkout_copy(repo, scratch), 1, scratch, plain_env)[0]
                                for _ in range(repeat))
        # warm: the benchmark's own cache directory, filled by an untimed run of the same command
        shutil.rmtree(scratch / "cache", ignore_errors=True)
        USER_ENV = _pinshift_env(plain_env, scratch, True)
        subprocess.run(dry, cwd=repo, capture_output=True, env=USER_ENV)
        row["dry warm"], row["dry MB warm"] = measure(dry, repo, repeat)
        row["dry builds warm"] = None
        if builds:  # issue 44: a second identical dry run with the check (its summaries remembered by the first)
            checked = [a for a in dry if a != "--no-build-check"]
            subprocess.run(checked, cwd=repo, capture_output=True, env=USER_ENV)
            row["dry builds warm"], row["dry MB builds warm"] = measure(checked, repo, repeat)
        times, peak = [], 0.0
        for _ in range(repeat):
            seconds, mb = measure(migrate_command(), repo, 1)
            times.append(seconds)
            peak = max(peak, mb)
            git(repo, "branch", "-D", f"bench-{attempt[0]}")
        row["migrate warm"], row["migrate MB warm"] = min(times), peak
        timed([pinshift, *RENAME], checkout_copy(repo, scratch))  # what a warm apply finds remembered
        row["apply warm"] = min(timed([pinshift, *RENAME], checkout_copy(repo, scratch)) for _ in range(repeat))
        USER_ENV = plain_env
        for stale in scratch.glob("cold-cache-*"):
            shutil.rmtree(stale, ignore_errors=True)
        greps = [timed([grep, *AST_GREP], checkout_copy(repo, scratch)) for _ in range(repeat)] if grep else []
        shutil.rmtree(scratch / "apply-copy", ignore_errors=True)
        row["parse"] = min(bare_parse_seconds(files) for _ in range(repeat))
        row["sed"], row["commit"] = min(sed_seconds(repo, scratch) for _ in range(repeat))
        row["ast-grep"] = min(greps) if greps else None
        rows.append(row)
    _print_tables(rows)
    if len(rows) > 1:
        first, last = rows[-2], rows[-1]
        scale = last["files"] / first["files"]
        print(f"\ngrowth {first['files']:,} -> {last['files']:,} files ({scale:.0f}x), cold: dry-run "
              f"{last['dry cold'] / first['dry cold']:.1f}x, migrate {last['migrate cold'] / first['migrate cold']:.1f}x, "
              f"apply {last['apply cold'] / first['apply cold']:.1f}x (linear: {scale:.0f}x)")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load average "
          f"{os.getloadavg()[0]:.2f}; best of {repeat}; repos in {scratch}")
    print("cold: each run with its own empty cache directory (every file read, parsed and planned, the memo "
          "written); warm: the plan memo holds the files (an earlier run of the same recipe on the same bytes); "
          "pinshift's rows with --no-build-check; dry cold +builds: the same cold dry run evaluating what the "
          "recipes build (one run); the issue 44 table: the same figures as its four rows")
    if keep is None:
        shutil.rmtree(scratch, ignore_errors=True)


def _print_tables(rows: list[dict]) -> None:
    def table(header: list[str], cells: list[list[str]]) -> None:
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
        print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
        for line in cells:
            print("  ".join(c.rjust(w) for c, w in zip(line, widths)))
        print()

    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    keys = ["dry cold", "dry builds", "dry warm", "migrate cold", "migrate warm", "apply cold", "apply warm", "parse", "sed",
            "commit", "ast-grep"]
    table(["files", *[k.replace("commit", "add+commit").replace("dry builds", "dry cold +builds") + " s"
                       for k in keys], "dry MB", "migrate MB"],
          [[f"{r['files']:,}", *[seconds(r[k]) for k in keys],
            f"{max(r['dry MB cold'], r['dry MB warm'], r.get('dry MB builds', 0), r.get('dry MB builds warm', 0)):.0f}",
            f"{max(r['migrate MB cold'], r['migrate MB warm'], r.get('migrate MB builds', 0)):.0f}"]
           for r in rows])

    def ratio(value: float | None, against: float | None) -> str:
        return "-" if value is None or not against else f"{value / against:.2f}x"

    cells = []
    for r in rows:
        sed = r["sed"] + r["commit"]
        cells.append([f"{r['files']:,}", ratio(r["dry cold"], r["parse"]), ratio(r["dry warm"], r["parse"]),
                      ratio(r["migrate cold"], sed), ratio(r["migrate warm"], sed),
                      ratio(r["apply cold"], r["ast-grep"]), ratio(r["apply warm"], r["ast-grep"])])
    issue = [["migrate --no-build-check, cold", "migrate cold", "sed + git add + commit", None, 2.0],
             ["dry run --no-build-check, cold", "dry cold", "bare tree-sitter parse", "parse", 2.0],
             ["dry run with the check, warm", "dry builds warm", "bare tree-sitter parse", "parse", 1.0],
             ["migrate with the check, cold", "migrate builds", "migrate --no-build-check, cold", "migrate cold", 2.0]]
    for r in rows:  # issue 44's four rows, each anchor measured in this run
        lines = []
        for name, key, anchor_name, anchor, target in issue:
            against = r["sed"] + r["commit"] if anchor is None else r[anchor]
            got = r.get(key)
            lines.append([name, seconds(got), anchor_name, seconds(against), ratio(got, against), f"<= {target:.1f}x"])
        print(f"issue 44, {r['files']:,} files:")
        table(["run", "s", "anchor", "anchor s", "ratio", "target"], lines)
    table(["files", "dry/parse cold", "dry/parse warm", "migrate/(sed+commit) cold", "migrate/(sed+commit) warm",
           "apply/ast-grep cold", "apply/ast-grep warm"], cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="66,1000,10000,40000", help="comma-separated repository sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated repositories here (reused)")
    parser.add_argument("--no-builds", action="store_true", help="leave out the dry run that evaluates the recipes")
    args = parser.parse_args()
    run([int(s) for s in args.sizes.split(",")], args.repeat, args.keep, builds=not args.no_builds)


if __name__ == "__main__":
    main()
