"""Recipe repositories of the shapes issue 41 names, built as real git repositories (tests/status_repos.commit_branch).

build-vllm (its `main` and 0.14.x branches): every vLLM recipe pins nixpkgs 0182a36, overrides `python313` with
`packageOverrides` whose torch is `import ./lib/custom-torch.nix { … }` (a function of its caller's arguments, with
a pname of its own) and takes its CPU flags from `cpuISA = (import ./lib/cpu-isa.nix).<isa>;` (a table of ISAs):
neither lib/ file is a recipe.

build-comfyui: Flox function-argument recipes; `comfyui-extras.nix` builds `color-matcher` with
`callPackage ./color-matcher.nix { … }`, a dependency Flox never builds on its own; some recipes reach their
packages through `python3.pkgs`, others through `python3Packages` (one set).

build-pytorch `pytorch-2.10-python313`: each recipe states torch's version only inside the overlay that
overrides the package set (`python3Packages.overrideScope`, or `python3.override { packageOverrides … }`).
"""

from __future__ import annotations

from pathlib import Path

from conftest import git
from status_repos import commit_branch

PIN = "0182a361324364ae3f436a63005877674cf45efb"
OLD_PIN = "46336d4d6980ae6f136b45c8507b17787eb186a0"

CPU_ISA = """{
  avx2 = {
    name = "avx2";
    flags = [ "-mavx2" "-mfma" "-mf16c" ];
  };
  avx512 = {
    name = "avx512";
    flags = [ "-mavx512f" "-mavx512dq" "-mavx512vl" "-mavx512bw" "-mfma" ];
  };
  armv9 = {
    name = "armv9";
    flags = [ "-march=armv9-a+sve2+bf16+i8mm" ];
  };
}
"""

CUSTOM_TORCH = """# Custom PyTorch from source, used inside packageOverrides.
{ lib, torchBase, smCapability, cpuISA, platform, extraPreConfigure ? "" }:

(torchBase.override {
  cudaSupport = true;
  gpuTargets = [ smCapability ];
}).overrideAttrs (oldAttrs: {
  pname = "pytorch-custom-cuda12_9-sm${builtins.replaceStrings [ "." ] [ "" ] smCapability}-${cpuISA.name}";
  preConfigure = (oldAttrs.preConfigure or "") + ''
    export CXXFLAGS="${lib.concatStringsSep " " cpuISA.flags} $CXXFLAGS"
  '' + extraPreConfigure;
  meta = oldAttrs.meta // { platforms = [ platform ]; };
})
"""

VLLM = """# vLLM for SM{sm}, {isa}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{pin}.tar.gz";
  }}) {{
    config = {{
      allowUnfree = true;
      cudaSupport = true;
      cudaCapabilities = [ "{capability}" ];
    }};
    overlays = [ (final: prev: {{ cudaPackages = final.cudaPackages_12_9; }}) ];
  }};
  inherit (nixpkgs_pinned) lib;
  smCapability = "{capability}";
  variantName = "{name}";
  cpuISA = (import ./lib/cpu-isa.nix).{isa};
  platform = "{platform}";
  python313Custom = nixpkgs_pinned.python313.override {{
    packageOverrides = self: super: {{
      torch = import ./lib/custom-torch.nix {{
        inherit lib smCapability cpuISA platform;
        torchBase = super.torch;
      }};
    }};
  }};
in
  python313Custom.pkgs.vllm.overrideAttrs (oldAttrs: {{
    pname = variantName;
    meta = oldAttrs.meta // {{ platforms = [ platform ]; }};
  }})
"""

VLLM_VARIANTS = (("90", "avx512"), ("90", "armv9"), ("100", "avx512"), ("120", "avx2"))


def vllm_files(pin: str = PIN) -> dict[str, str]:
    files = {".flox/pkgs/lib/cpu-isa.nix": CPU_ISA, ".flox/pkgs/lib/custom-torch.nix": CUSTOM_TORCH}
    for sm, isa in VLLM_VARIANTS:
        name = f"vllm-python313-cuda12_9-sm{sm}-{isa}"
        files[f".flox/pkgs/{name}.nix"] = VLLM.format(
            sm=sm, isa=isa, pin=pin, capability=f"{sm[:-1]}.{sm[-1]}", name=name,
            platform="aarch64-linux" if isa.startswith("arm") else "x86_64-linux")
    return files


COMFYUI = """{ lib, python3, fetchFromGitHub, makeWrapper }:

python3.pkgs.buildPythonApplication rec {
  pname = "comfyui";
  version = "0.3.68";
  format = "other";
  src = fetchFromGitHub {
    owner = "comfyanonymous";
    repo = "ComfyUI";
    rev = "v${version}";
    hash = "sha256-aSkRaNBBLIVNab7GgGHwiRqc7YoZi73igxCURUHEVLM=";
  };
  propagatedBuildInputs = with python3.pkgs; [ torch torchvision pillow ];
  nativeBuildInputs = [ makeWrapper ];
  dontBuild = true;
  meta = with lib; { platforms = platforms.linux; };
}
"""

EXTRAS = """{ lib, python3, callPackage }:
let
  color-matcher = callPackage ./color-matcher.nix { inherit python3; };
in
python3.pkgs.buildPythonPackage rec {
  pname = "comfyui-extras";
  version = "0.10.0";
  format = "other";
  dontUnpack = true;
  propagatedBuildInputs = (with python3.pkgs; [ numba piexif ]) ++ [ color-matcher ];
}
"""

PLUGINS = """{ lib, python3Packages, fetchFromGitHub }:

python3Packages.buildPythonPackage rec {
  pname = "comfyui-plugins";
  version = "0.10.0";
  format = "other";
  src = fetchFromGitHub {
    owner = "example";
    repo = "comfyui-plugins";
    rev = "v${version}";
    hash = "sha256-bSkRaNBBLIVNab7GgGHwiRqc7YoZi73igxCURUHEVLM=";
  };
}
"""

COLOR_MATCHER = """{ lib, python3 }:

python3.pkgs.buildPythonPackage rec {
  pname = "color-matcher";
  version = "0.6.0";
  src = python3.pkgs.fetchPypi {
    inherit pname version;
    hash = "sha256-cSkRaNBBLIVNab7GgGHwiRqc7YoZi73igxCURUHEVLM=";
  };
  propagatedBuildInputs = with python3.pkgs; [ numpy ];
}
"""


def comfyui_files() -> dict[str, str]:
    return {".flox/pkgs/comfyui.nix": COMFYUI, ".flox/pkgs/comfyui-extras.nix": EXTRAS,
            ".flox/pkgs/comfyui-plugins.nix": PLUGINS, ".flox/pkgs/color-matcher.nix": COLOR_MATCHER}


OVERLAY_SCOPE = """# PyTorch 2.10.0 for SM{sm}: the version is the overlay's.
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";
  }}) {{
    config = {{ allowUnfree = true; cudaSupport = true; cudaCapabilities = [ "{capability}" ]; }};
    overlays = [
      (final: prev: {{ cudaPackages = final.cudaPackages_13_0; }})
      (final: prev: {{
        python3Packages = prev.python3Packages.overrideScope (pyFinal: pyPrev: {{
          torch = pyPrev.torch.overrideAttrs (oldAttrs: rec {{
            version = "2.10.0";
            src = prev.fetchFromGitHub {{
              owner = "pytorch";
              repo = "pytorch";
              rev = "v${{version}}";
              hash = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
            }};
          }});
        }});
      }})
    ];
  }};
in
  (nixpkgs_pinned.python3Packages.torch.override {{ cudaSupport = true; }}).overrideAttrs (oldAttrs: {{
    pname = "{name}";
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma"
    '';
  }})
"""

PACKAGE_OVERRIDES = """# PyTorch 2.10.0, CPU: the version is the interpreter's packageOverrides'.
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";
  }}) {{
    config.allowUnfree = true;
    overlays = [
      (final: prev: {{
        python3 = prev.python3.override {{
          packageOverrides = self: super: {{
            torch = super.torch.overrideAttrs (old: {{ version = "2.10.0"; }});
          }};
        }};
      }})
    ];
  }};
in
  nixpkgs_pinned.python3Packages.torch.overrideAttrs (oldAttrs: {{
    pname = "{name}";
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS -mavx2 -mfma"
    '';
  }})
"""


SET_OVERRIDE = """# PyTorch 2.10.0 for SM{sm}: build-pytorch's own spelling, `python3Packages.override {{ overrides = … }}`.
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";
  }}) {{
    config = {{ allowUnfree = true; cudaSupport = true; }};
    overlays = [
      (final: prev: {{ cudaPackages = final.cudaPackages_13_0; }})
      # Override torch to 2.10.0
      (final: prev: {{
        python3Packages = prev.python3Packages.override {{
          overrides = pfinal: pprev: {{
            torch = pprev.torch.overrideAttrs (oldAttrs: rec {{
              version = "2.10.0";
              patches = [];
            }});
          }};
        }};
      }})
    ];
  }};
  gpuArchSM = "{capability}";
in
  (nixpkgs_pinned.python3Packages.torch.override {{ cudaSupport = true; gpuTargets = [ gpuArchSM ]; }}).overrideAttrs
  (oldAttrs: {{
    pname = "{name}";
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma"
    '';
  }})
"""


def overlay_version_files() -> dict[str, str]:
    files = {}
    name = "pytorch-python313-cuda13_0-sm89-avx512"
    files[f".flox/pkgs/{name}.nix"] = SET_OVERRIDE.format(sm="89", capability="8.9", name=name)
    for sm in ("90", "100", "120"):
        name = f"pytorch-python313-cuda13_0-sm{sm}-avx512"
        files[f".flox/pkgs/{name}.nix"] = OVERLAY_SCOPE.format(sm=sm, capability=f"{sm[:-1]}.{sm[-1]}", name=name)
    name = "pytorch-python313-cpu-avx2"
    files[f".flox/pkgs/{name}.nix"] = PACKAGE_OVERRIDES.format(name=name)
    return files


def repository(parent: Path, name: str, branches: dict[str, dict[str, str]]) -> Path:
    """A repository `parent/name` whose branches each commit exactly their files (the first is checked out)."""
    root = parent / name
    root.mkdir()
    git(root, "init", "-q", "-b", "placeholder")
    git(root, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "start")
    for branch, files in branches.items():
        commit_branch(root, branch, files)
    git(root, "switch", "-q", next(iter(branches)))
    git(root, "branch", "-q", "-D", "placeholder")
    return root
