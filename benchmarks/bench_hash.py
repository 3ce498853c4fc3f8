"""Benchmark `pinshift hash` on a nixpkgs-sized git tree against `nix-hash` of the same tree checked out.

Builds (with `git fast-import`, nothing on disk but the pack) a repository whose one
commit holds `--files` files (default 40,000) laid out like nixpkgs: `pkgs/by-name/xx/<name>/package.nix`
and friends, three to six levels deep, sizes drawn around nixpkgs' (median ~1.5 KB, a
long tail to 200 KB, about 150 MB in all), one file in fifty executable, some symlinks,
a `.gitattributes` with nixpkgs' linguist lines (none that changes the archive). Then
it times, each as a fresh process, best and median of `--repeat` runs:

    pinshift hash, cold     no cache entry: ls-tree, one cat-file stream, NAR + sha256
    pinshift hash, cached   the same revision again: the cache entry
    nix-hash                `nix-hash --type sha256 --base32` of the tree unpacked from
                            `git archive` (what nix-prefetch-url --unpack hashes)

and checks that pinshift's hash equals nix-hash's. The target (issue 19): a cold hash
of 40,000 files under 15 s on a 2-core machine. The load average is printed with the
table: on a shared machine timings move with it.

Usage: python benchmarks/bench_hash.py [--files 40000] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GITATTRIBUTES = b"""**/deps.nix linguist-generated
**/deps.json linguist-generated
**/node-packages.nix linguist-generated
doc/** linguist-documentation
nixos/modules/module-list.nix merge=union
"""
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
WORDS = b"stdenv lib fetchFromGitHub pname version src hash meta description license maintainers " \
        b"buildInputs nativeBuildInputs propagatedBuildInputs python3Packages callPackage inherit rec let in " \
        b"with mkDerivation installPhase buildPhase patches postPatch substituteInPlace makeWrapper".split()


def _text(rng: random.Random, size: int) -> bytes:
    """Nix-looking text of about `size` bytes (compresses like source does, not like noise or zeros)."""
    out, length = [], 0
    while length < size:
        line = b" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) + b" = \"%d\";\n" % rng.randint(0, 10**6)
        out.append(line)
        length += len(line)
    return b"".join(out)[:size]


def _size(rng: random.Random) -> int:
    return min(int(rng.lognormvariate(7.3, 1.2)), 200_000)  # median ~1.5 KB, mean ~3 KB


def layout(count: int, seed: int = 19) -> list[tuple[str, str, bytes]]:
    """(path, mode, data) for `count` entries shaped like nixpkgs; a symlink's data is its target."""
    rng = random.Random(seed)
    entries: list[tuple[str, str, bytes]] = [(".gitattributes", "100644", GITATTRIBUTES)]
    n = 0
    while len(entries) < count:
        n += 1
        name = f"pkg{n:05d}"
        kind = rng.random()
        if kind < 0.55:
            base = f"pkgs/by-name/{name[:2]}{n % 97:02d}/{name}"
        elif kind < 0.8:
            base = f"pkgs/development/python-modules/{name}"
        elif kind < 0.92:
            base = f"nixos/modules/services/{['web', 'networking', 'misc', 'system'][n % 4]}/{name}"
        else:
            base = f"pkgs/applications/{['editors', 'graphics', 'audio'][n % 3]}/{name}/sub"
        entries.append((f"{base}/package.nix" if kind < 0.55 else f"{base}/default.nix", "100644", _text(rng, _size(rng))))
        for extra in range(rng.choice((0, 0, 0, 1, 2, 3))):
            suffix = rng.choice(("patch", "json", "sh", "py", "nix"))
            mode = "100755" if suffix == "sh" and rng.random() < 0.5 else "100644"
            entries.append((f"{base}/file{extra}.{suffix}", mode, _text(rng, _size(rng))))
        if n % 400 == 0:
            entries.append((f"{base}/link", "120000", b"default.nix"))
    return entries[:count]


def make_repository(root: Path, count: int) -> tuple[str, int]:
    """A repository with one commit of `count` entries; (commit id, total bytes)."""
    subprocess.run(["git", "init", "-q", "-b", "master", str(root)], check=True)
    entries = layout(count)
    stream = [b"commit refs/heads/master\ncommitter bench <bench@example.com> 1700000000 +0000\ndata 6\nbench\n"]
    for path, mode, data in entries:
        stream.append(b"M %s inline %s\ndata %d\n%s\n" % (mode.encode(), path.encode(), len(data), data))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=b"".join(stream), check=True)
    commit = subprocess.run(["git", "rev-parse", "master"], cwd=root, capture_output=True, text=True,
                            check=True).stdout.strip()
    return commit, sum(len(d) for _, _, d in entries)


def timed(command: list[str], env: dict, repeat: int, before=None) -> tuple[list[float], str]:
    """Wall seconds of each of `repeat` runs of `command` (a fresh process each), and the last stdout."""
    times, output = [], ""
    for _ in range(repeat):
        if before is not None:
            before()
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed: {done.stderr.strip()}")
        output = done.stdout.strip()
    return times, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it")
    args = parser.parse_args()
    if shutil.which("nix-hash") is None:
        sys.exit("nix-hash is not on PATH (install Nix, Debian package nix-bin)")
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="pinshift-bench-hash-"))
    scratch.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    try:
        started = time.perf_counter()
        commit, total = make_repository(scratch / "nixpkgs", args.files)
        built = time.perf_counter() - started
        unpacked = scratch / "unpacked"
        unpacked.mkdir()
        archive = subprocess.Popen(["git", "-C", str(scratch / "nixpkgs"), "archive", "--prefix=nixpkgs/", commit],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(unpacked)], stdin=archive.stdout, check=True)
        archive.wait()

        cache = scratch / "cache"
        env = dict(USER_ENV, XDG_CACHE_HOME=str(cache))
        pinshift = [sys.executable, "-c", "from pinshift.cli import run; run()", "hash", commit, "--nixpkgs", str(scratch / "nixpkgs")]
        cold, ours = timed(pinshift, env, args.repeat, before=lambda: shutil.rmtree(cache, ignore_errors=True))
        cached, again = timed(pinshift, env, args.repeat)
        nix, theirs = timed(["nix-hash", "--type", "sha256", "--base32", str(unpacked / "nixpkgs")], env, args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    if not (ours == again == theirs):
        sys.exit(f"hashes differ: pinshift cold {ours}, cached {again}, nix-hash {theirs}")
    load_after = os.getloadavg()

    rows = [("pinshift hash, cold", cold), ("pinshift hash, cached", cached), ("nix-hash of the unpacked tree", nix)]
    best_nix = min(nix)
    print(f"{args.files:,} files, {total / 1e6:.0f} MB, one commit (built in {built:.1f} s); sha256 {ours}")
    print(f"{'':32}{'best s':>9}{'median s':>10}{'best / nix-hash':>17}")
    for label, times in rows:
        print(f"{label:32}{min(times):9.2f}{statistics.median(times):10.2f}{min(times) / best_nix:17.2f}")
    print(f"\nmachine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; best and median of {args.repeat} "
          f"fresh processes; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"(timings on a shared machine move with it)")
    target = "met" if min(cold) < 15 else "NOT met"
    print(f"target: cold hash of {args.files:,} files under 15 s: {target}")


if __name__ == "__main__":
    main()
