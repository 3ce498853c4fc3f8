"""Time pinshift on the small valid files that made it super-linear (issue 29) against a bare parse of each.

Each shape is a file of the size issue 29 measured (under 100 KB) and the command that was slow on it:
`pinshift parse`, `scan`, `lint`, or `apply rename-attr --set from=a --set to=zz --dry-run`. The real
command runs in a fresh process (one untimed warm-up run, bytecode caches allowed, as an installed user
runs it; best of `--repeat`), and again on a one-line file for the command's fixed cost (start, imports);
a bare tree-sitter parse of the same bytes is timed in this process (best of `--repeat`), in the same
run. The last line names the worst shape: the most time beyond the command's fixed cost.

`pinshift` is run as `python -c "from pinshift.cli import run; run()"` with this interpreter, so
PYTHONPATH can point it at another checkout (how docs/performance.md measured the code before the fix);
a run over `--timeout` seconds is shown as `>T`.

Usage: python benchmarks/bench_shapes.py [--repeat 3] [--scale 1.0] [--timeout 120] [--only NAME,...]
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

import tree_sitter
import tree_sitter_nix

USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
USER_ENV["PINSHIFT_CACHE"] = "off"  # every run reads, parses and plans the file
PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]
RENAME = ("apply", "rename-attr", "--set", "from=a", "--set", "to=zz", "--dry-run", ".")

# name: (what it is, the file for size n, n as issue 29 measured it, the command)
SHAPES = {
    "trailing-comma-defaults": ("`{ a ? { a ? 1, }: 1, }:` nested (nixfmt's test, 25 deep)",
                                lambda n: "{ a ? " * n + "1" + ", }: 1" * n, 25, ("parse", "x.nix")),
    "sum-of-free-names": ("`a + a + … + a`", lambda n: " + ".join(["a"] * n), 4000, RENAME),
    "sum-of-arguments": ("`{ a }: a + a + … + a`", lambda n: "{ a }: " + " + ".join(["a"] * n), 4000, RENAME),
    "with-chain": ("`{ a }: with a; … a`", lambda n: "{ a }: " + "with a; " * n + "a", 1000, RENAME),
    "or-chain": ("`{ a }: a.b or … a`", lambda n: "{ a }: " + "a.b or " * n + "a", 1000, RENAME),
    "deep-attrsets": ("`{ a }: { b = { b = … a; }; }`", lambda n: "{ a }: " + "{ b = " * n + "a" + "; }" * n, 8000, RENAME),
    "deep-lets": ("`{ a }: let b = 1; in … a`", lambda n: "{ a }: " + "let b = 1; in " * n + "a", 4000, RENAME),
    "deep-lambdas": ("`{ a }: b: b: … a`", lambda n: "{ a }: " + "b: " * n + "a", 8000, RENAME),
    "update-chain-scan": ("`{ a0 = 1; } // { a1 = 1; } // …`, scan",
                          lambda n: " // ".join("{ a%d = 1; }" % i for i in range(n)), 2000, ("scan", ".")),
    "update-chain-lint": ("the same, lint", lambda n: " // ".join("{ a%d = 1; }" % i for i in range(n)), 2000,
                          ("lint", ".")),
    "deep-attrsets-scan": ("`{ b = { b = … 1; }; }`, scan", lambda n: "{ b = " * n + "1" + "; }" * n, 8000, ("scan", ".")),
    "update-without-spaces": ("`{ a, b }: { xN = a//b; … }`",
                              lambda n: "{ a, b }: {\n" + "".join("  x%d = a//b;\n" % i for i in range(n)) + "}\n",
                              2000, ("parse", "x.nix")),
    "repeated-attribute": ("`{ a = 1; a = 1; … }` on one line", lambda n: "{ " + "a = 1; " * n + "}", 8000,
                           ("parse", "x.nix")),
    "select-chain": ("`a.b0.b1…` (quadratic in tree-sitter-nix itself)",
                     lambda n: "a" + "".join(".b%d" % i for i in range(n)), 2000, ("parse", "x.nix")),
}


def timed(command: list[str], cwd: Path, repeat: int, timeout: float) -> float | None:
    """Best wall time of `repeat` runs after one untimed run; None when a run exceeds `timeout`."""
    best = None
    for attempt in range(repeat + 1):
        start = time.perf_counter()
        try:
            subprocess.run(command, cwd=cwd, env=USER_ENV, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if attempt:
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
    return best


def bare_parse(data: bytes, repeat: int) -> float:
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_nix.language()))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        parser.parse(data)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per measurement (best is kept)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every shape's size")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a pinshift run may take")
    parser.add_argument("--only", default="", help="comma-separated shape names (default: all)")
    args = parser.parse_args()
    names = [n for n in SHAPES if not args.only or n in args.only.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="pinshift-shapes-"))
    try:
        run_shapes(names, scratch, args)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_shapes(names: list[str], scratch: Path, args: argparse.Namespace) -> None:
    (scratch / "start").mkdir()
    (scratch / "start" / "x.nix").write_text("{ a }: a\n")
    fixed = {command: timed([*PINSHIFT, *command], scratch / "start", args.repeat, args.timeout) or 0.0
             for command in {SHAPES[name][3] for name in names}}
    print(f"{sys.executable} -c 'from pinshift.cli import run; run()'; load average {os.getloadavg()[0]:.2f}; "
          f"best of {args.repeat}; fixed cost (the command on a one-line file): "
          + ", ".join(f"{c[0] if c[0] != 'apply' else 'apply rename'} {t:.2f} s" for c, t in fixed.items()) + "\n")
    header = f"{'shape':<24} | {'n':>6} | {'KB':>5} | {'command':<12} | {'pinshift s':>10} | {'- fixed s':>9} | {'parse s':>7}"
    print(header)
    print("-" * len(header))
    worst = None
    for name in names:
        what, source, n, command = SHAPES[name]
        size = max(1, int(n * args.scale))
        data = source(size).encode()
        directory = scratch / name
        directory.mkdir()
        (directory / "x.nix").write_bytes(data)
        took = timed([*PINSHIFT, *command], directory, args.repeat, args.timeout)
        parse = bare_parse(data, args.repeat)
        beyond = None if took is None else max(took - fixed[command], 0.0)
        shown = f">{args.timeout:.0f}" if took is None else f"{took:.2f}"
        print(f"{name:<24} | {size:>6} | {len(data) / 1000:>5.0f} | {command[0] if command[0] != 'apply' else 'apply rename':<12} | "
              f"{shown:>10} | {'' if beyond is None else f'{beyond:.2f}':>9} | {parse:>7.3f}")
        key = float("inf") if beyond is None else beyond
        if name != "select-chain" and (worst is None or key > worst[1]):
            worst = (name, key, took, parse)
    if worst is not None:
        name, _, took, parse = worst
        shown = f">{args.timeout:.0f} s" if took is None else f"{took:.2f} s"
        print(f"\nworst shape: {name} ({SHAPES[name][0]}): pinshift {shown}, bare parse {parse:.3f} s "
              f"(select-chain left out: tree-sitter-nix's own parse is quadratic there)")


if __name__ == "__main__":
    main()
