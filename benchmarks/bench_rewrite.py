"""Time the `rewrite` rules of issue 46 against ast-grep on a generated home-manager-sized tree.

Generates a git repository of `--files` (default 3,500) Nix modules shaped like home-manager's: a
`{ config, lib, pkgs, ... }:` header, `let cfg = config.programs.NAME;` beside a lambda argument `cfg`,
an `options.programs.NAME` set with `lib.mkOption { … }` calls (`enableMcpIntegration` in one file in
ten), a submodule with its own `options`, `lib.optional` calls, `toString` in code, in interpolations, in
strings and in comments, `with lib;` in one file in five, a `let toString = …` in one in fifty. Then, per
rule, in a fresh clone each time (best of `--repeat`):

    pinshift  pinshift apply rewrite --set pattern=… --set replacement=… [--set inside=…] modules
    ast-grep  ast-grep run -l nix -p … -r … -U modules   (rule 3 as an inline YAML rule with `inside`)

and prints a table of seconds (wall and CPU), files changed and the ratios pinshift / ast-grep (issue 46's
target: at most 3). pinshift runs from bytecode compiled before the first run, as an installed pinshift does (`compiled`).
ast-grep is `--ast-grep PATH`, else `ast-grep` on PATH, else installed from PyPI (`ast-grep-cli`) into a
virtual environment of the benchmark's own (benchmarks/bench.py's helper); without it that column says why.
The edits differ where scope matters (ast-grep also rewrites a `toString` a `let` binds, and the
`lib.optional` under a shadowing `lib`): the table counts the files each changed.

Usage: python benchmarks/bench_rewrite.py [--files 3500] [--repeat 3] [--ast-grep PATH] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import ast_grep, checkout_copy, git  # noqa: E402  (the benchmarks' own helpers)

RULES = [
    ("toString", "toString $X", "builtins.toString $X", None),
    ("optional", "lib.optional $C $X", "lib.optionals $C [ $X ]", None),
    ("mcp default", "default = false;", "default = true;", "*.enableMcpIntegration"),
]

MCP_YAML = """id: mcp
language: nix
rule:
  pattern:
    context: "{ default = false; }"
    selector: binding
  inside:
    stopBy: end
    kind: binding
    regex: ^enableMcpIntegration
fix: default = true;
"""


def module(n: int) -> str:
    """One home-manager-shaped module; `n` varies names and which shapes it holds."""
    name = f"tool{n}"
    shadow = '  toString = x: "v${x}";\n' if n % 50 == 0 else ""
    mcp = ("    enableMcpIntegration = lib.mkOption {\n      type = lib.types.bool;\n      default = false;\n"
           "      description = \"Whether to enable the MCP integration.\";\n    };\n") if n % 10 == 0 else ""
    with_lib = "with lib; " if n % 5 == 0 else ""
    return f"""{{ config, lib, pkgs, ... }}:
let
  cfg = config.programs.{name};
{shadow}  flags = cfg: lib.optional cfg.verbose "--verbose" ++ lib.optional (cfg.level > 1) "-v${{toString cfg.level}}";
in
{{
  meta.maintainers = [ lib.maintainers.someone{n % 7} ];

  options.programs.{name} = {{
    enable = lib.mkEnableOption "{name}";
    package = lib.mkPackageOption pkgs "{name}" {{ }};
{mcp}    port = lib.mkOption {{ type = lib.types.port; default = {8000 + n % 1000}; }};
    settings = lib.mkOption {{
      type = lib.types.submodule {{
        options.verbose = lib.mkOption {{ default = false; }};
        options.level = lib.mkOption {{ default = 0; }};
      }};
      default = {{ }};
      description = ''
        Settings for {name}. Write ''${{toString x}} to escape; toString here is text.
      '';
    }};
  }};

  # toString in a comment, lib.optional too
  config = lib.mkIf cfg.enable ({with_lib}{{
    home.packages = [ cfg.package ] ++ lib.optional (cfg.settings.verbose) pkgs.hello;
    home.file.".config/{name}/port".text = "port=${{toString cfg.port}}";
    home.sessionVariables.{name.upper()}_FLAGS = toString (flags cfg.settings);
  }});
}}
"""


def make_tree(root: Path, count: int) -> Path:
    repo = root / "hm"
    (repo / "modules" / "programs").mkdir(parents=True)
    for n in range(count):
        (repo / "modules" / "programs" / f"tool{n}.nix").write_text(module(n))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "modules")
    return repo


def changed_files(copy: Path) -> int:
    out = subprocess.run(["git", "diff", "--name-only"], cwd=copy, capture_output=True, text=True, check=True)
    return len(out.stdout.split())


def best(command: list[str], repo: Path, scratch: Path, repeat: int,
         env: dict[str, str]) -> tuple[float, int, str, float]:
    """(best seconds, files changed, the first line of stderr when it failed, best CPU seconds) of `command` in
    fresh clones. CPU seconds are user + system time of the command and every process it waited for (pinshift's
    workers, ast-grep's threads): on a shared machine they move far less than the wall time."""
    times, cpus, changed, failure = [], [], 0, ""
    for _ in range(repeat):
        copy = checkout_copy(repo, scratch)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(command, cwd=copy, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if result.returncode not in (0,):
            failure = (result.stderr or result.stdout).strip().splitlines()[:1]
            failure = failure[0][:120] if failure else f"exit {result.returncode}"
        changed = changed_files(copy)
        shutil.rmtree(copy)
    return min(times), changed, failure, min(cpus)


def compiled(env: dict[str, str], scratch: Path) -> None:
    """pinshift's modules compiled to bytecode first, as `pip install` does, in a cache of the benchmark's own
    (`PYTHONPYCACHEPREFIX`, nothing written beside the sources): a run under PYTHONDONTWRITEBYTECODE=1 would
    otherwise compile every module it imports each time (about 0.4 s of start-up on 2 cores)."""
    import pinshift
    import pinshift.migrations

    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    folders = [str(Path(pinshift.__file__).parent), str(Path(pinshift.migrations.__file__).parent)]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], env=env, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ast-grep", dest="ast_grep", default=None)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="pinshift-bench-rewrite-"))
    scratch.mkdir(parents=True, exist_ok=True)
    repo = make_tree(scratch, args.files) if not (scratch / "hm").exists() else scratch / "hm"
    grep = args.ast_grep or shutil.which("ast-grep") or ast_grep(scratch)
    pinshift = shutil.which("pinshift") or str(Path(sys.executable).parent / "pinshift")
    env = dict(os.environ, PINSHIFT_CACHE="off")
    compiled(env, scratch)
    rules_file = scratch / "mcp.yml"
    rules_file.write_text(MCP_YAML)
    rows = []
    for label, pattern, replacement, inside in RULES:
        command = [pinshift, "apply", "rewrite", "--set", f"pattern={pattern}", "--set", f"replacement={replacement}"]
        command += ["--set", f"inside={inside}"] if inside else []
        ours = best([*command, "--skip-refused", "modules"], repo, scratch, args.repeat, env)
        theirs = None
        if grep is not None:
            other = [grep, "scan", "-r", str(rules_file), "-U", "modules"] if inside else \
                [grep, "run", "-l", "nix", "-p", pattern, "-r", replacement, "-U", "modules"]
            theirs = best(other, repo, scratch, args.repeat, env)
        rows.append((label, ours, theirs))
    print(f"{args.files:,} home-manager-shaped modules, best of {args.repeat} (fresh clone each run), load average "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    print(f"{'rule':<12} {'pinshift s':>10} {'cpu s':>6} {'files':>6} {'ast-grep s':>10} {'cpu s':>6} {'files':>6} "
          f"{'ratio':>6} {'cpu':>5}")
    for label, ours, theirs in rows:
        if theirs is None:
            print(f"{label:<12} {ours[0]:>10.2f} {ours[3]:>6.2f} {ours[1]:>6} {'(none)':>10}")
            continue
        ratio = ours[0] / theirs[0] if theirs[0] else float("inf")
        cpu = ours[3] / theirs[3] if theirs[3] else float("inf")
        print(f"{label:<12} {ours[0]:>10.2f} {ours[3]:>6.2f} {ours[1]:>6} {theirs[0]:>10.2f} {theirs[3]:>6.2f} "
              f"{theirs[1]:>6} {ratio:>6.1f} {cpu:>5.1f}")
        for who, result in (("pinshift", ours), ("ast-grep", theirs)):
            if result[2]:
                print(f"  {who} {label}: {result[2]}")
    if args.keep is None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
