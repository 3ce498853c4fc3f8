"""Deep input is never an internal error (issue 36): every walk of a tree keeps its stack in a list.

Python's call stack holds about 1,000 calls; a Nix file nests as deep as Nix's parser allows (its stack
holds 10,000 entries: 2,497 curried lambdas with trailing-comma formals, 4,998 lists). Each shape below
made some command end with `internal error: RecursionError` (exit 3) at about 1,000 levels, or would
have: the real console entry point runs in a subprocess on all of them at 2,000 levels (1,500 for an
error), and must finish with its own exit code, no traceback and no internal error. The valid shapes are
valid for Nix too (tests/test_oracle.py checks the fixtures of the issue's two shapes).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DEPTH = 2000


def _walks_into_nested_literals(n: int) -> str:
    shape = "{ }"
    for _ in range(n):
        shape = "{ a = " + shape + "; a.z = 1; }"
    return "{ lib }: " + shape


VALID = {
    # the shape: curried lambdas whose formals end in a trailing comma
    "curried-trailing-comma": lambda n: "".join("{ a%d, }: " % i for i in range(n)) + "1",
    "nested-defaults": lambda n: "{ a ? " * n + "1" + ", }: 1" * n,
    "attrsets": lambda n: "{ lib }: " + "{ a = " * n + "lib.x" + "; }" * n,
    "walks-into-nested-literals": _walks_into_nested_literals,
    "lets": lambda n: "{ lib }: " + "let b = lib.x; in " * n + "b",
    "withs": lambda n: "{ lib }: " + "with lib; " * n + "x",
    "ifs": lambda n: "{ lib }: " + "if lib.x then " * n + "lib.y" + " else lib.z" * n,
    "updates": lambda n: "{ lib }: " + "{ a = lib.x; } // " * n + "{ }",
    "string-sum": lambda n: '{ lib }: { description = ' + " + ".join(['"alpha"'] * n) + "; }",
    "comparisons": lambda n: "{ lib }: " + " && ".join(["lib.x < lib.y"] * n),
    "or-defaults": lambda n: "{ lib }: " + "lib.a or " * n + "lib.x",
    "interpolations": lambda n: "{ lib }: " + '"${' * n + "lib.x" + '}"' * n,
    "overlay-lets": lambda n: "{ pkgs }: (pkgs.extend (final: prev: " + "let in " * n + "{ x = prev.x; })).x",
    "overlay-updates": lambda n: "{ pkgs }: (pkgs.extend (final: prev: " + "prev // " * n + "{ x = prev.x; })).x",
    "overlays-joined": lambda n: "let pkgs = import <nixpkgs> { overlays = " + "[ (f: p: { x = p.x; }) ] ++ " * n
                                 + "[ ]; }; in pkgs.x",
    "overlay-names": lambda n: "let " + "".join("o%d = o%d; " % (i, i + 1) for i in range(n))
                               + "o%d = f: p: { x = p.x; }; pkgs = import <nixpkgs> { overlays = [ o0 ]; }; in pkgs.x" % n,
    "package-overrides-ifs": lambda n: "let pkgs = import <nixpkgs> { config.packageOverrides = pkgs: "
                                       + "if true then " * n + "{ x = 1; }" + " else { }" * n + "; }; in pkgs.x",
    "formal-defaults-chain": lambda n: "{ " + "".join("a%d ? a%d, " % (i, i + 1) for i in range(n))
                                       + "a%d ? 1, stdenv }: stdenv.mkDerivation { src = a0; }" % n,
}

ERRORS = {
    # the shapes: an error nested under a few hundred attrsets, ~1,500 lists
    "attrsets": (lambda n: "{ a = " * n + "=" + "; }" * n, 300),
    "lists": (lambda n: "[ " * n + "=" + " ]" * n, 1500),
    "lambdas": (lambda n: "".join("{ a%d, }: " % i for i in range(n)) + "{ = }", DEPTH),
    "lets": (lambda n: "let b = 1; in " * n + "b +", DEPTH),
}

COMMANDS = {
    "parse": ("parse", "."),
    "rename-attr": ("apply", "rename-attr", "--set", "from=x", "--set", "to=y", "--dry-run"),
    "rename-lib": ("apply", "rename-attr", "--set", "from=lib", "--set", "to=lib2", "--dry-run"),
    "replace-in-strings": ("apply", "replace-in-strings", "--set", 'paths=["description"]', "--set", "old=alpha",
                           "--set", "new=gamma", "--dry-run"),
    "pin-nixpkgs": ("apply", "pin-nixpkgs", "--set", "rev=fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3", "--dry-run"),
    "lint": ("lint", "."),
    "scan": ("scan", "."),
}


def pinshift(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The real console entry point in a subprocess (a recursion error there is what a user would see)."""
    return subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def _no_internal_error(result: subprocess.CompletedProcess) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output and "RecursionError" not in output, output[-2000:]


@pytest.fixture(scope="module")
def valid_files(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("deep-valid")
    for name, shape in VALID.items():
        (root / f"{name}.nix").write_text(shape(DEPTH) + "\n")
    return root


@pytest.fixture(scope="module")
def broken_files(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("deep-broken")
    for name, (shape, depth) in ERRORS.items():
        (root / f"{name}.nix").write_text(shape(depth) + "\n")
    return root


@pytest.mark.parametrize("command", COMMANDS)
def test_deep_valid_files_finish_without_an_internal_error(valid_files, command):
    result = pinshift(valid_files, *COMMANDS[command])
    _no_internal_error(result)
    if command == "parse":
        assert result.returncode == 0, result.stdout[-2000:]
        assert result.stderr.splitlines()[-1] == f"{len(VALID)} files parsed, 0 problems, 0 skipped"
    else:
        assert result.returncode in (0, 1), result.stderr[-2000:]  # 1: a step refused a file, lint found something


def test_deep_errors_are_problems_with_their_location(broken_files):
    result = pinshift(broken_files, "parse", "--quiet", ".")
    _no_internal_error(result)
    assert result.returncode == 1
    located = {line.split(":", 1)[0] for line in result.stdout.splitlines() if not line.startswith(" ")}
    assert located == {f"{name}.nix" for name in ERRORS}
    for line in result.stdout.splitlines():
        if not line.startswith(" "):
            path, row, column, message = line.split(":", 3)
            assert row.isdigit() and column.isdigit() and message.startswith(" syntax error"), line


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "parse"])
def test_deep_errors_do_not_stop_other_commands(broken_files, command):
    result = pinshift(broken_files, *COMMANDS[command])
    _no_internal_error(result)
    assert result.returncode in (0, 1), result.stderr[-2000:]


@pytest.mark.nix
def test_the_deep_shapes_are_what_nix_says(nix_oracle):
    for name, shape in VALID.items():
        accepted, message = nix_oracle((shape(DEPTH) + "\n").encode())
        assert accepted or "undefined variable" in message, (name, message)
    for name, (shape, depth) in ERRORS.items():
        assert not nix_oracle((shape(depth) + "\n").encode())[0], name
