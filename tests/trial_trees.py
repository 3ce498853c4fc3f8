"""Recipe branches shaped like the second trial's (issues 14 and 23), written into a directory by the tests.

`write_mixed_branch`: 201 recipes mixing CUDA 12.8, 12.9, 13.0 and 13.1, three GPU-target notations and
three nixpkgs pins, with torchvision/torchaudio companions:

| CUDA | GPUs (SM) | ISAs | GPU target as written | overlay | pin | package set |
|---|---|---|---|---|---|---|
| 12.8 | 61 75 80 86 89 90 100 120 | all 7 | gpuArchNum "86", gpuArchSM "sm_86" | cudaPackages_12_8 | 0182a36 | python3Packages |
| 12.9 | 75 80 86 89 90 100 103 120 | all 7 | gpuArchNum "86", gpuArchSM "8.6" | cudaPackages_12_9 | 0182a36 | python313Packages |
| 13.0 | 75 80 86 89 90 100 110 120 121 | 6 (no avx) | gpuArchSM "86" | cudaPackages_13 (an alias) | 6a030d5 | python313Packages |
| 13.1 | 86 90 120 121 | 6 (no avx) | gpuArchSM "sm86" + a torch src `rev = "v${version}"` | cudaPackages_13_1 | 2017d6d | python313Packages |

plus 6 CPU recipes and 1 Darwin recipe (pin 0182a36, python313Packages) and torchvision/torchaudio for
cuda12_8 sm61/sm75 avx (pin 0182a36, python3Packages): 56 + 56 + 54 + 24 + 7 + 4 = 201.

`write_flox_branch`: 50 recipes in the Flox function-argument style of the `main` branch (the caller
supplies python3Packages and cudaPackages; no pin) and 1 recipe that pins nixpkgs itself.

The tests' expected outputs are written from the tables above, not from pinshift.
"""

from __future__ import annotations

from pathlib import Path

NEW_REV = "0182a361324364ae3f436a63005877674cf45efb"
OLD_REV = "6a030d535719c5190187c4cec156f335e95e3211"
REV_2017 = "2017d6d515f8a7b289fe06d3ccdfd24f2cab5d2a"

FLAGS = {
    "avx": ["-mavx"],
    "avx2": ["-mavx2", "-mfma", "-mf16c"],
    "avx512": ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma"],
    "avx512bf16": ["-mavx512f", "-mavx512bf16", "-mfma"],
    "avx512vnni": ["-mavx512f", "-mavx512vnni", "-mfma"],
    "armv8_2": ["-march=armv8.2-a+fp16+dotprod"],
    "armv9": ["-march=armv9-a+sve2"],
}
ALL_ISAS = tuple(FLAGS)
NO_AVX = tuple(isa for isa in FLAGS if isa != "avx")
CPU_ISAS = NO_AVX

# CUDA -> (SMs, ISAs, GPU-target bindings given the SM, overlay, pin, package set)
MIXED = {
    "12_8": (("61", "75", "80", "86", "89", "90", "100", "120"), ALL_ISAS,
             lambda sm: f'gpuArchNum = "{sm}";\n  gpuArchSM = "sm_{sm}";', "cudaPackages_12_8", NEW_REV, "python3Packages"),
    "12_9": (("75", "80", "86", "89", "90", "100", "103", "120"), ALL_ISAS,
             lambda sm: f'gpuArchNum = "{sm}";\n  gpuArchSM = "{sm[:-1]}.{sm[-1]}";', "cudaPackages_12_9", NEW_REV,
             "python313Packages"),
    "13_0": (("75", "80", "86", "89", "90", "100", "110", "120", "121"), NO_AVX,
             lambda sm: f'gpuArchSM = "{sm}";', "cudaPackages_13", OLD_REV, "python313Packages"),
    "13_1": (("86", "90", "120", "121"), NO_AVX,
             lambda sm: f'gpuArchSM = "sm{sm}";', "cudaPackages_13_1", REV_2017, "python313Packages"),
}


def _platform(isa: str) -> str:
    return "aarch64-linux" if isa.startswith("arm") else "x86_64-linux"


def _flags(isa: str) -> str:
    return "\n".join(f'    "{flag}"' for flag in FLAGS[isa])


def _pinned(rev: str, overlay: str) -> str:
    return f"""  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";
  }}) {{
    config = {{ allowUnfree = true; cudaSupport = true; }};
    overlays = [ (final: prev: {{ cudaPackages = final.{overlay}; }}) ];
  }};
"""


def gpu_recipe(pname: str, gpu: str, isa: str, overlay: str, rev: str, pkgset: str, src_override: bool) -> str:
    src = """
    version = "2.10.0";
    src = nixpkgs_pinned.fetchFromGitHub {
      owner = "pytorch";
      repo = "pytorch";
      rev = "v${version}";
      hash = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    };""" if src_override else ""
    return f"""# {pname}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
{_pinned(rev, overlay)}
  {gpu}
  cpuFlags = [
{_flags(isa)}
  ];
in
  (nixpkgs_pinned.{pkgset}.torch.override {{
    cudaSupport = true;
    gpuTargets = [ gpuArchSM ];
  }}).overrideAttrs (oldAttrs: {"rec " if src_override else ""}{{
    pname = "{pname}";{src}
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS ${{nixpkgs_pinned.lib.concatStringsSep " " cpuFlags}}"
    '';
    meta = oldAttrs.meta // {{ platforms = [ "{_platform(isa)}" ]; }};
  }})
"""


def cpu_recipe(pname: str, isa: str) -> str:
    return f"""{{ pkgs ? import <nixpkgs> {{}} }}:
let
{_pinned(NEW_REV, "cudaPackages_12_9")}
  cpuFlags = [
{_flags(isa)}
  ];
in
  nixpkgs_pinned.python313Packages.torch.overrideAttrs (oldAttrs: {{
    pname = "{pname}";
    preConfigure = ''export CXXFLAGS="$CXXFLAGS ${{nixpkgs_pinned.lib.concatStringsSep " " cpuFlags}}"'';
    meta = oldAttrs.meta // {{ platforms = [ "{_platform(isa)}" ]; }};
  }})
"""


DARWIN = f"""{{ pkgs ? import <nixpkgs> {{}} }}:
let
{_pinned(NEW_REV, "cudaPackages_12_9")}in
  nixpkgs_pinned.python313Packages.torch.overrideAttrs (oldAttrs: {{
    pname = "pytorch-python313-darwin-mps";
    meta = oldAttrs.meta // {{ platforms = [ "aarch64-darwin" ]; }};
  }})
"""


def companion_recipe(package: str, sm: str) -> str:
    pname = f"{package}-python313-cuda12_8-sm{sm}-avx"
    return f"""# {package} built against pytorch-python313-cuda12_8-sm{sm}-avx
{{ pkgs ? import <nixpkgs> {{}} }}:
let
{_pinned(NEW_REV, "cudaPackages_12_8")}
  pytorch = import ./pytorch-python313-cuda12_8-sm{sm}-avx.nix {{ inherit pkgs; }};
  gpuArchSM = "sm_{sm}";
  cpuFlags = [
{_flags("avx")}
  ];
in
  (nixpkgs_pinned.python3Packages.{package}.override {{ torch = pytorch; }}).overrideAttrs (oldAttrs: {{
    pname = "{pname}";
    meta = oldAttrs.meta // {{ platforms = [ "x86_64-linux" ]; }};
  }})
"""


def write_mixed_branch(root: Path) -> list[str]:
    """The 201 recipes of the mixed branch under `root`; their file names, sorted."""
    root.mkdir(parents=True, exist_ok=True)
    files = {}
    for cuda, (sms, isas, gpu, overlay, rev, pkgset) in MIXED.items():
        for sm in sms:
            for isa in isas:
                pname = f"pytorch-python313-cuda{cuda}-sm{sm}-{isa}"
                files[pname] = gpu_recipe(pname, gpu(sm), isa, overlay, rev, pkgset, src_override=cuda == "13_1")
    for isa in CPU_ISAS:
        files[f"pytorch-python313-cpu-{isa}"] = cpu_recipe(f"pytorch-python313-cpu-{isa}", isa)
    files["pytorch-python313-darwin-mps"] = DARWIN
    for package in ("torchvision", "torchaudio"):
        for sm in ("61", "75"):
            files[f"{package}-python313-cuda12_8-sm{sm}-avx"] = companion_recipe(package, sm)
    for name, text in files.items():
        (root / f"{name}.nix").write_text(text)
    return sorted(f"{name}.nix" for name in files)


FLOX_GPUS = ("75", "80", "86", "89", "90", "100", "120")


def flox_recipe(sm: str, isa: str) -> str:
    """The seed's main-branch recipe shape: everything comes from the caller's arguments."""
    pname = f"pytorch-python313-cuda12_8-sm{sm}-{isa}"
    return f"""# .flox/pkgs/{pname}.nix
{{ python3Packages, lib, config, cudaPackages, addDriverRunpath }}:
let
  # GPU target: SM{sm}
  gpuArchNum = "{sm}"; # For CMAKE_CUDA_ARCHITECTURES
  gpuArchSM = "sm_{sm}"; # For TORCH_CUDA_ARCH_LIST
  cpuFlags = [
{_flags(isa)}
  ];
in
# Two-stage override
(python3Packages.pytorch.override {{
  cudaSupport = true;
  gpuTargets = [ gpuArchSM ];
}}).overrideAttrs (oldAttrs: {{
  pname = "{pname}";
  preConfigure = (oldAttrs.preConfigure or "") + ''
    export CXXFLAGS="$CXXFLAGS ${{lib.concatStringsSep " " cpuFlags}}"
  '';
  meta = oldAttrs.meta // {{ platforms = [ "{_platform(isa)}" ]; }};
}})
"""


def write_flox_branch(root: Path) -> list[str]:
    """50 Flox function-argument recipes and 1 pinned recipe under `root`; their file names, sorted."""
    root.mkdir(parents=True, exist_ok=True)
    files = {f"pytorch-python313-cuda12_8-sm{sm}-{isa}": flox_recipe(sm, isa) for sm in FLOX_GPUS for isa in ALL_ISAS}
    files["pytorch-python313-cuda12_8-sm61-avx"] = flox_recipe("61", "avx")
    pinned = "pytorch-python313-cuda12_8-sm61-avx2"
    files[pinned] = gpu_recipe(pinned, 'gpuArchNum = "61";\n  gpuArchSM = "sm_61";', "avx2", "cudaPackages_12_8",
                               NEW_REV, "python313Packages", src_override=False)
    for name, text in files.items():
        (root / f"{name}.nix").write_text(text)
    return sorted(f"{name}.nix" for name in files)
