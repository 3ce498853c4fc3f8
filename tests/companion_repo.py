"""Recipe branches with torchvision/torchaudio companions that import their PyTorch recipe (seed 001, issue 31).

Two styles, as the seeds show them:

- **Flox arguments** (`flox_branch`): the demo's 58 PyTorch recipes of `main` (CUDA 12.8, Flox function
  arguments) and 4 companions calling their PyTorch recipe three ways: `import ./pytorch-….nix { inherit
  python3Packages lib config cudaPackages addDriverRunpath; }` (SM61, both), `callPackage ./pytorch-….nix { }`
  by Flox's callPackage inside a let (torchvision SM75), and `import … { lib = lib; … }` (torchaudio SM75).
- **Pinned** (`pinned_branch`): the 66 pinned PyTorch recipes of the seed migration's result
  (tests/fixtures/tree-2.10: `nixpkgs_pinned.python313Packages.torch`) and 4 pinned companions: `import
  ./pytorch-….nix {}` (SM61, both), `(import ./pytorch-….nix { })` (torchvision SM75) and
  `nixpkgs_pinned.callPackage ./pytorch-….nix { }` (torchaudio SM75).

The expected results of the tests are hand-written files under tests/fixtures/graph/, never this module's output.
"""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, git
from pinshift.demo.flox_args import flox_args_files

PKGS = ".flox/pkgs"
GRAPH = FIXTURES / "graph"
COMPANIONS = (("torchvision", "61"), ("torchaudio", "61"), ("torchvision", "75"), ("torchaudio", "75"))
HARDWARE = {"61": ("Pascal", "GTX 1070/1080 Ti"), "75": ("Turing", "T4/RTX 2080 Ti")}
NAMES = {"torchvision": "TorchVision", "torchaudio": "TorchAudio"}

_FLOX_FORMALS = "{ python3Packages, lib, config, cudaPackages, addDriverRunpath }:"
_FLOX_CALLS = {
    ("torchvision", "61"): """  customPytorch = import ./pytorch-python313-cuda12_8-sm61-avx.nix {
    inherit python3Packages lib config cudaPackages addDriverRunpath;
  };""",
    ("torchaudio", "61"): """  customPytorch = import ./pytorch-python313-cuda12_8-sm61-avx.nix {
    inherit python3Packages lib config cudaPackages addDriverRunpath;
  };""",
    ("torchvision", "75"): """  customPytorch = callPackage ./pytorch-python313-cuda12_8-sm75-avx.nix { };""",
    ("torchaudio", "75"): """  customPytorch = import ./pytorch-python313-cuda12_8-sm75-avx.nix {
    python3Packages = python3Packages;
    lib = lib;
    config = config;
    cudaPackages = cudaPackages;
    addDriverRunpath = addDriverRunpath;
  };""",
}

_FLOX_COMPANION = """# {Name} for NVIDIA {family} (SM{sm}) + AVX, built on the matching PyTorch variant
# Package name: {name}-python313-cuda12_8-sm{sm}-avx
{formals}
let
  # The matching PyTorch build: the same GPU target and CPU flags
{call}
in
  (python3Packages.{name}.override {{
    torch = customPytorch;
  }}).overrideAttrs (oldAttrs: {{
    pname = "{name}-python313-cuda12_8-sm{sm}-avx";

    postInstall = (oldAttrs.postInstall or "") + ''
      echo 1 > $out/.metadata-rev
    '';

    meta = oldAttrs.meta // {{
      description = "{Name} for NVIDIA {hardware} (SM{sm}, {family}) + AVX";
      platforms = [ "x86_64-linux" ];
    }};
  }})
"""

_PINNED_CALLS = {
    ("torchvision", "61"): "import ./pytorch-python313-cuda12_9-sm61-avx.nix {}",
    ("torchaudio", "61"): "import ./pytorch-python313-cuda12_9-sm61-avx.nix {}",
    ("torchvision", "75"): "(import ./pytorch-python313-cuda12_9-sm75-avx.nix { })",
    ("torchaudio", "75"): "nixpkgs_pinned.callPackage ./pytorch-python313-cuda12_9-sm75-avx.nix { }",
}

_PINNED_COMPANION = """# {Name} for NVIDIA {family} (SM{sm}) + AVX, built on the matching PyTorch variant
# Package name: {name}-python313-cuda12_9-sm{sm}-avx
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  # Import nixpkgs at a specific revision with CUDA 12.9
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/0182a361324364ae3f436a63005877674cf45efb.tar.gz";
  }}) {{
    config = {{
      allowUnfree = true;
      cudaSupport = true;
    }};
    overlays = [
      (final: prev: {{ cudaPackages = final.cudaPackages_12_9; }})
    ];
  }};

  # The matching PyTorch build: the same GPU target and CPU flags
  customPytorch = {call};
in
  (nixpkgs_pinned.python313Packages.{name}.override {{
    torch = customPytorch;
  }}).overrideAttrs (oldAttrs: {{
    pname = "{name}-python313-cuda12_9-sm{sm}-avx";

    meta = oldAttrs.meta // {{
      description = "{Name} for NVIDIA {hardware} (SM{sm}, {family}) + AVX";
      platforms = [ "x86_64-linux" ];
    }};
  }})
"""


def flox_companion(name: str, sm: str) -> tuple[str, str]:
    family, hardware = HARDWARE[sm]
    formals = _FLOX_FORMALS.replace("addDriverRunpath }", "addDriverRunpath, callPackage }") \
        if (name, sm) == ("torchvision", "75") else _FLOX_FORMALS
    text = _FLOX_COMPANION.format(Name=NAMES[name], name=name, sm=sm, family=family, hardware=hardware,
                                  formals=formals, call=_FLOX_CALLS[name, sm])
    return f"{PKGS}/{name}-python313-cuda12_8-sm{sm}-avx.nix", text


def pinned_companion(name: str, sm: str) -> tuple[str, str]:
    family, hardware = HARDWARE[sm]
    text = _PINNED_COMPANION.format(Name=NAMES[name], name=name, sm=sm, family=family, hardware=hardware,
                                    call=_PINNED_CALLS[name, sm])
    return f"{PKGS}/{name}-python313-cuda12_9-sm{sm}-avx.nix", text


def flox_files() -> dict[str, str]:
    """The Flox-args branch: 58 PyTorch recipes, 4 companions, README.md and the Flox manifest."""
    files = {path: data.decode() for path, data in flox_args_files().items()}
    files.update(flox_companion(name, sm) for name, sm in COMPANIONS)
    return files


def pinned_files() -> dict[str, str]:
    """The pinned branch: the seed migration's 66 PyTorch recipes, 4 companions and a README naming a few."""
    tree = FIXTURES / "tree-2.10" / PKGS
    files = {f"{PKGS}/{p.name}": p.read_text() for p in sorted(tree.glob("pytorch-*.nix"))}
    files.update(pinned_companion(name, sm) for name, sm in COMPANIONS)
    files["README.md"] = ("# PyTorch builds\n\n| package | GPU |\n|---|---|\n"
                          "| `pytorch-python313-cuda12_9-sm61-avx` | SM61 |\n"
                          "| `torchvision-python313-cuda12_9-sm61-avx` | SM61 |\n")
    return files


def commit_branch(root: Path, files: dict[str, str], branch: str, message: str) -> Path:
    """A repository at `root` (created if needed) whose `branch` holds exactly `files`."""
    if not (root / ".git").exists():
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", branch)
        git(root, "config", "commit.gpgsign", "false")
    else:
        git(root, "checkout", "-q", "--orphan", branch)
        git(root, "rm", "-rq", "--cached", ".")
        for path in git(root, "ls-files", "--others").split():
            (root / path).unlink()
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return root


def show(root: Path, branch: str, path: str) -> bytes:
    import subprocess

    return subprocess.run(["git", "-C", str(root), "show", f"{branch}:{path}"], capture_output=True, check=True).stdout


def tree_of(root: Path, branch: str) -> list[str]:
    return git(root, "ls-tree", "-r", "--name-only", branch).split()
