"""A small nixpkgs-shaped git repository whose packages are real `derivation`s, at four commits.

Built on verify's stub (tests/fixtures/checks/stub-nixpkgs/first: `import nixpkgs { config; overlays; }`,
`python3Packages`/`python313Packages`, `lib.callPackageWith`, `.override`), with a `lib.mkDerivation` that
returns a real `derivation { name; system; builder; … }` (meta and passthru kept beside it, as nixpkgs does), so
Nix computes each recipe's `.drv` path:

  first    torch 2.9.1, parameter `gpuTargets`
  same     only numpy changes: every torch recipe keeps its derivation (no rebuild)
  patched  torch 2.9.1 with a patch: every torch recipe rebuilds, at the same version
  renamed  torch 2.10.0, `gpuTargets` renamed `gpuTargetList`: GPU recipes fail with Nix's message
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES, git

STUB = FIXTURES / "checks" / "stub-nixpkgs"
TORCH = "pkgs/development/python-modules/torch/default.nix"
NUMPY = "pkgs/development/python-modules/numpy/default.nix"

LIB = """# The few lib functions recipes use; mkDerivation makes a real derivation (Nix computes its .drv path).
rec {
  callPackageWith = autoArgs: fn: args:
    let f = import fn;
    in makeOverridable f (builtins.intersectAttrs (builtins.functionArgs f) autoArgs // args);
  makeOverridable = f: args: f args // { override = more: makeOverridable f (args // more); };
  mkDerivation = attrs:
    let
      drv = derivation (builtins.removeAttrs attrs [ "meta" "passthru" ] // {
        name = "${attrs.pname}-${attrs.version}";
        system = "x86_64-linux";
        builder = "/bin/sh";
        args = [ "-c" "echo stub > $out" ];
      });
    in drv // {
      inherit (attrs) pname version;
      meta = attrs.meta or { };
      passthru = attrs.passthru or { };
      overrideAttrs = g: mkDerivation (attrs // g attrs);
    };
  concatStringsSep = builtins.concatStringsSep;
  filter = builtins.filter;
  hasPrefix = prefix: text: builtins.substring 0 (builtins.stringLength prefix) text == prefix;
}
"""


def torch(version: str = "2.9.1", parameter: str = "gpuTargets", patches: str = "") -> str:
    extra = f'  patches = [ "{patches}" ];\n' if patches else ""
    return (f"{{\n  lib,\n  cudaPackages,\n  cudaSupport ? false,\n  {parameter} ? [ ],\n}}:\nlib.mkDerivation {{\n"
            f'  pname = "torch";\n  version = "{version}";\n{extra}'
            f"  cudaTargets = lib.concatStringsSep \";\" {parameter};\n"
            "  passthru = { cudaVersion = cudaPackages.cudaVersion; };\n"
            '  meta = { platforms = [ "x86_64-linux" "aarch64-linux" ]; };\n}\n')


def _commit(root: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def build_nixpkgs(root: Path) -> dict[str, str]:
    """The repository at `root`; name -> commit (first, same, patched, renamed)."""
    shutil.copytree(STUB / "first", root)
    git(root, "init", "-q", "-b", "master")
    commits = {"first": _commit(root, {"lib.nix": LIB, TORCH: torch()}, "first: torch 2.9.1")}
    numpy = (root / NUMPY).read_text().replace('"2.3.1"', '"2.3.2"')
    commits["same"] = _commit(root, {NUMPY: numpy}, "numpy 2.3.2: torch unchanged")
    commits["patched"] = _commit(root, {TORCH: torch(patches="fix-cuda.patch")}, "torch: a patch")
    commits["renamed"] = _commit(root, {TORCH: torch("2.10.0", "gpuTargetList")},
                                 "torch 2.10.0: gpuTargets renamed gpuTargetList")
    return commits
