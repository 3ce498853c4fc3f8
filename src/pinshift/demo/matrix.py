"""The variant matrix of a `pytorch-2.9` recipe branch, and the recipe text for each variant.

The seed documents describe a branch of 66 self-contained recipes: GPU variants
(two-stage `.override { ... }).overrideAttrs`), CPU-only variants and one Darwin
MPS variant (single-stage `overrideAttrs`), all pinning nixpkgs with
`builtins.fetchTarball` and using `nixpkgs_pinned.python3Packages.torch`.
The demo, the test fixtures and the benchmarks all build their trees from here.
"""

from __future__ import annotations

from dataclasses import dataclass

OLD_REV = "6a030d535719c5190187c4cec156f335e95e3211"
NEW_REV = "0182a361324364ae3f436a63005877674cf45efb"

# SM number -> (compute capability, family, example hardware, minimum driver)
GPUS = {
    "61": ("6.1", "Pascal", "GTX 1070/1080 Ti", "390+"),
    "75": ("7.5", "Turing", "T4/RTX 2080 Ti", "418+"),
    "80": ("8.0", "Ampere DC", "A100/A30", "450+"),
    "86": ("8.6", "Ampere", "RTX 3090/A40", "470+"),
    "89": ("8.9", "Ada Lovelace", "RTX 4090/L40", "520+"),
    "90": ("9.0", "Hopper", "H100/L40S", "525+"),
    "100": ("10.0", "Blackwell DC", "B100/B200", "550+"),
    "103": ("10.3", "Blackwell Ultra", "B300", "550+"),
    "120": ("12.0", "Blackwell", "RTX 5090", "570+"),
}

# ISA -> (compiler flags, platform, description)
ISAS = {
    "avx": (["-mavx"], "x86_64-linux", "AVX (Sandy Bridge+)"),
    "avx2": (["-mavx2", "-mfma", "-mf16c"], "x86_64-linux", "AVX2 (Haswell+)"),
    "avx512": (["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma"], "x86_64-linux", "AVX-512"),
    "avx512bf16": (["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mavx512bf16", "-mfma"], "x86_64-linux", "AVX-512 BF16"),
    "avx512vnni": (["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mavx512vnni", "-mfma"], "x86_64-linux", "AVX-512 VNNI"),
    "armv8_2": (["-march=armv8.2-a+fp16+dotprod"], "aarch64-linux", "ARMv8.2 (Graviton2)"),
    "armv9": (["-march=armv9-a+sve2"], "aarch64-linux", "ARMv9 (Grace, Graviton3+)"),
}

SM61_ISAS = ("avx", "avx2", "avx512")
FULL_ISAS = ("avx", "avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9")
CPU_ISAS = ("avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9")


@dataclass(frozen=True)
class Variant:
    """One recipe: `gpu` is an SM number, "cpu" or "darwin"; `isa` is empty for Darwin."""

    gpu: str
    isa: str
    metadata_rev: int = 1

    @property
    def pname(self) -> str:
        if self.gpu == "darwin":
            return "pytorch-python313-darwin-mps"
        if self.gpu == "cpu":
            return f"pytorch-python313-cpu-{self.isa}"
        return f"pytorch-python313-cuda12_9-sm{self.gpu}-{self.isa}"

    @property
    def filename(self) -> str:
        return f"{self.pname}.nix"


def variants() -> list[Variant]:
    """The 66 variants of the seed's `pytorch-2.9` branch, in a stable order."""
    found = []
    for sm in GPUS:
        for isa in SM61_ISAS if sm == "61" else FULL_ISAS:
            found.append(Variant(sm, isa))
    found.extend(Variant("cpu", isa) for isa in CPU_ISAS)
    found.append(Variant("darwin", ""))
    return found


_PIN = """  # Import nixpkgs at a specific revision with CUDA 12.9
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";
    # You can add the sha256 here once known for reproducibility
  }}) {{
    config = {{
      allowUnfree = true;
      cudaSupport = {cuda};
    }};
    overlays = [
      (final: prev: {{ cudaPackages = final.cudaPackages_12_9; }})
    ];
  }};
"""

_GPU = """# PyTorch optimized for NVIDIA {family} (SM{sm}) + {isa_desc}
# Package name: {pname}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
{pin}
  # GPU target: SM{sm} ({family} - {hardware})
  gpuArchNum = "{sm}";        # For CMAKE_CUDA_ARCHITECTURES
  gpuArchSM = "{cap}";        # For gpuTargets (dot notation)

  # CPU optimization: {isa_desc}
  cpuFlags = [
{flags}
  ];
in
  (nixpkgs_pinned.{pkgset}.torch.override {{
    cudaSupport = true;
    gpuTargets = [ gpuArchSM ];
  }}).overrideAttrs (oldAttrs: {{
    pname = "{pname}";

    ninjaFlags = [ "-j32" ];
    requiredSystemFeatures = [ "big-parallel" ];

    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS ${{nixpkgs_pinned.lib.concatStringsSep " " cpuFlags}}"
      export CFLAGS="$CFLAGS ${{nixpkgs_pinned.lib.concatStringsSep " " cpuFlags}}"
      export MAX_JOBS=32

      echo "========================================="
      echo "PyTorch Build Configuration"
      echo "========================================="
      echo "GPU Target: ${{gpuArchSM}} ({family}: {hardware})"
      echo "CPU Features: {isa_desc}"
      echo "CUDA: 12.9 (cudaSupport=true, gpuTargets=[${{gpuArchSM}}])"
      echo "========================================="
    '';

    postInstall = (oldAttrs.postInstall or "") + ''
      echo {metadata_rev} > $out/.metadata-rev
    '';

    meta = oldAttrs.meta // {{
      description = "PyTorch for NVIDIA {hardware} (SM{sm}, {family}) + {isa_desc}";
      longDescription = ''
        Custom PyTorch build with targeted optimizations:
        - GPU: NVIDIA {family} architecture (SM{sm}) - {hardware}
        - CPU: {isa_desc}
        - CUDA: 12.9 with compute capability {cap}
        - Driver: NVIDIA {driver} required
        - BLAS: cuBLAS for GPU operations
        - Python: 3.13
      '';
      platforms = [ "{platform}" ];
    }};
  }})
"""

_CPU = """# PyTorch CPU-only build optimized for {isa_desc}
# Package name: {pname}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
{pin}
  # CPU optimization: {isa_desc}
  cpuFlags = [
{flags}
  ];
in
  nixpkgs_pinned.{pkgset}.torch.overrideAttrs (oldAttrs: {{
    pname = "{pname}";

    # Remove CUDA dependencies from the CPU-only build
    buildInputs = nixpkgs_pinned.lib.filter (p: !(nixpkgs_pinned.lib.hasPrefix "cuda" (p.pname or "")))
      (oldAttrs.buildInputs or [ ]);

    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS ${{nixpkgs_pinned.lib.concatStringsSep " " cpuFlags}}"
      export CFLAGS="$CFLAGS ${{nixpkgs_pinned.lib.concatStringsSep " " cpuFlags}}"
      export USE_CUDA=0
      export BLAS=OpenBLAS
      echo "CPU Features: {isa_desc}"
    '';

    postInstall = (oldAttrs.postInstall or "") + ''
      echo {metadata_rev} > $out/.metadata-rev
    '';

    meta = oldAttrs.meta // {{
      description = "PyTorch CPU-only build for {isa_desc}";
      longDescription = ''
        Custom PyTorch build with targeted optimizations:
        - CPU: {isa_desc}
        - BLAS: OpenBLAS
        - Python: 3.13
      '';
      platforms = [ "{platform}" ];
    }};
  }})
"""

_DARWIN = """# PyTorch for Apple Silicon with Metal Performance Shaders (MPS)
# Package name: {pname}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
{pin}in
  nixpkgs_pinned.{pkgset}.torch.overrideAttrs (oldAttrs: {{
    pname = "{pname}";

    postInstall = (oldAttrs.postInstall or "") + ''
      echo {metadata_rev} > $out/.metadata-rev
    '';

    meta = oldAttrs.meta // {{
      description = "PyTorch for Apple Silicon (M1-M4) with Metal/MPS";
      platforms = [ "aarch64-darwin" ];
    }};
  }})
"""


def render_recipe(variant: Variant, rev: str = OLD_REV, package_set: str = "python3Packages") -> str:
    """The text of one recipe file as it stands on the seed's `pytorch-2.9` branch."""
    is_cuda = variant.gpu not in ("cpu", "darwin")
    pin = _PIN.format(rev=rev, cuda="true" if is_cuda else "false")
    common = dict(pname=variant.pname, pin=pin, pkgset=package_set, metadata_rev=variant.metadata_rev)
    if variant.gpu == "darwin":
        return _DARWIN.format(**common)
    flags, platform, isa_desc = ISAS[variant.isa]
    flag_lines = "\n".join(f'    "{flag}"' for flag in flags)
    if variant.gpu == "cpu":
        return _CPU.format(flags=flag_lines, platform=platform, isa_desc=isa_desc, **common)
    cap, family, hardware, driver = GPUS[variant.gpu]
    return _GPU.format(
        sm=variant.gpu, cap=cap, family=family, hardware=hardware, driver=driver,
        flags=flag_lines, platform=platform, isa_desc=isa_desc, **common,
    )
