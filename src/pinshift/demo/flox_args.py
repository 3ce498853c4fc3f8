"""A Flox function-argument recipe branch, like the seed's `main` (PyTorch 2.8.0 + CUDA 12.8).

Seed 001 describes `main` as "Flox function args": each recipe is a function of the
packages Flox passes it (`{ python3Packages, lib, config, cudaPackages, addDriverRunpath }:`),
resolved against Flox's own nixpkgs, with `python3Packages.pytorch` as the base package.
Seed 002 lists it as the one pattern that has to become self-contained (a pinned
`nixpkgs_pinned` in a `let`) before it can take part in pin migrations; the bundled
recipe `flox-args-to-pinned` does that conversion, and tests/test_flox_args.py runs it here.

The variants are the seed's `main` PyTorch matrix (torchvision/torchaudio companions left out):
CPU-only variants using `openblas` and `lib.filter`, GPU variants using `config`,
`cudaPackages` and `addDriverRunpath`, and the Darwin MPS variant, which has no `let`
and takes its Metal frameworks `with darwin.apple_sdk.frameworks;`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pinshift.demo.matrix import CPU_ISAS, FULL_ISAS, GPUS, ISAS

BRANCH = "main"
RECIPE = "flox-args-to-pinned"  # the bundled recipe that converts the branch
TARGET = "main-pinned"
CUDA = "12_8"
SM61_ISAS = ("avx", "avx2")
SMS = ("61", "75", "80", "86", "89", "90", "100", "120")  # CUDA 12.8 has no SM103


@dataclass(frozen=True)
class FloxVariant:
    """One Flox-args recipe: `gpu` is an SM number, "cpu" or "darwin"; `isa` is empty for Darwin."""

    gpu: str
    isa: str

    @property
    def pname(self) -> str:
        if self.gpu == "darwin":
            return "pytorch-python313-darwin-mps"
        if self.gpu == "cpu":
            return f"pytorch-python313-cpu-{self.isa}"
        return f"pytorch-python313-cuda{CUDA}-sm{self.gpu}-{self.isa}"

    @property
    def filename(self) -> str:
        return f"{self.pname}.nix"

    @property
    def kind(self) -> str:
        return self.gpu if self.gpu in ("cpu", "darwin") else "gpu"


def flox_variants() -> list[FloxVariant]:
    """The Flox-args branch's variants, in a stable order: GPU, then CPU-only, then Darwin."""
    found = [FloxVariant(sm, isa) for sm in SMS for isa in (SM61_ISAS if sm == "61" else FULL_ISAS)]
    found.extend(FloxVariant("cpu", isa) for isa in CPU_ISAS)
    found.append(FloxVariant("darwin", ""))
    return found


_GPU = """# PyTorch optimized for NVIDIA {family} (SM{sm}) + {isa_desc}
# Package name: {pname}
{{ python3Packages, lib, config, cudaPackages, addDriverRunpath }}:
let
  # GPU target: SM{sm} ({family} - {hardware})
  gpuArchNum = "{sm}";        # For CMAKE_CUDA_ARCHITECTURES
  gpuArchSM = "{cap}";        # For gpuTargets (dot notation)

  # CPU optimization: {isa_desc}
  cpuFlags = [
{flags}
  ];
in
  # Two-stage override of python3Packages.pytorch (lib, config and cudaPackages come from Flox):
  # 1. Enable CUDA and specify GPU targets
  (python3Packages.pytorch.override {{
    cudaSupport = config.cudaSupport or true;
    gpuTargets = [ gpuArchSM ];
  # 2. Customize build (CPU flags, metadata, etc.)
  }}).overrideAttrs (oldAttrs: {{
    pname = "{pname}";

    buildInputs = (oldAttrs.buildInputs or [ ]) ++ [
      cudaPackages.cuda_cudart
      cudaPackages.libcublas
      cudaPackages.cudnn
    ];

    nativeBuildInputs = (oldAttrs.nativeBuildInputs or [ ]) ++ [ addDriverRunpath ];

    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS ${{lib.concatStringsSep " " cpuFlags}}"
      export CFLAGS="$CFLAGS ${{lib.concatStringsSep " " cpuFlags}}"
      export CMAKE_CUDA_ARCHITECTURES="${{gpuArchNum}}"

      echo "========================================="
      echo "PyTorch Build Configuration"
      echo "========================================="
      echo "GPU Target: ${{gpuArchSM}} ({family}: {hardware})"
      echo "CPU Features: {isa_desc}"
      echo "CUDA: ${{cudaPackages.cudaVersion}} (cudaSupport=true, gpuTargets=[${{gpuArchSM}}])"
      echo "========================================="
    '';

    postFixup = (oldAttrs.postFixup or "") + ''
      addDriverRunpath $lib/lib/libtorch_cuda.so
    '';

    postInstall = (oldAttrs.postInstall or "") + ''
      echo 1 > $out/.metadata-rev
    '';

    meta = oldAttrs.meta // {{
      description = "PyTorch for NVIDIA {hardware} (SM{sm}, {family}) + {isa_desc}";
      longDescription = ''
        Custom PyTorch build with targeted optimizations:
        - GPU: NVIDIA {family} architecture (SM{sm}) - {hardware}
        - CPU: {isa_desc}
        - CUDA: 12.8 with compute capability {cap}
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
{{ python3Packages, lib, openblas }}:
let
  # CPU optimization: {isa_desc}
  cpuFlags = [
{flags}
  ];

  # Use OpenBLAS for CPU linear algebra
  blasBackend = openblas;
in
  python3Packages.pytorch.overrideAttrs (oldAttrs: {{
    pname = "{pname}";

    # Remove CUDA dependencies from the CPU-only build; link OpenBLAS
    buildInputs = lib.filter (p: !(lib.hasPrefix "cuda" (p.pname or "")))
      (oldAttrs.buildInputs or [ ]) ++ [ blasBackend ];

    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS ${{lib.concatStringsSep " " cpuFlags}}"
      export CFLAGS="$CFLAGS ${{lib.concatStringsSep " " cpuFlags}}"
      export USE_CUDA=0
      export BLAS=OpenBLAS
      export OpenBLAS_HOME=${{openblas}}
      echo "CPU Features: {isa_desc}"
    '';

    postInstall = (oldAttrs.postInstall or "") + ''
      echo 1 > $out/.metadata-rev
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
{{ python3Packages, lib, darwin }}:

python3Packages.pytorch.overrideAttrs (oldAttrs: {{
  pname = "{pname}";

  # Metal frameworks from the Apple SDK instead of any CUDA dependency
  buildInputs = lib.filter (p: !(lib.hasPrefix "cuda" (p.pname or ""))) (oldAttrs.buildInputs or [ ])
    ++ (with darwin.apple_sdk.frameworks; [ Accelerate Metal MetalPerformanceShaders ]);

  preConfigure = (oldAttrs.preConfigure or "") + ''
    export USE_MPS=1
    export BLAS=Accelerate
  '';

  postInstall = (oldAttrs.postInstall or "") + ''
    echo 1 > $out/.metadata-rev
  '';

  meta = oldAttrs.meta // {{
    description = "PyTorch for Apple Silicon (M1-M4) with Metal/MPS";
    platforms = [ "aarch64-darwin" ];
  }};
}})
"""


def render_flox_recipe(variant: FloxVariant) -> str:
    """The text of one recipe file as it stands on a Flox-args `main` branch."""
    if variant.gpu == "darwin":
        return _DARWIN.format(pname=variant.pname)
    flags, platform, isa_desc = ISAS[variant.isa]
    flag_lines = "\n".join(f'    "{flag}"' for flag in flags)
    if variant.gpu == "cpu":
        return _CPU.format(pname=variant.pname, flags=flag_lines, platform=platform, isa_desc=isa_desc)
    cap, family, hardware, driver = GPUS[variant.gpu]
    return _GPU.format(pname=variant.pname, sm=variant.gpu, cap=cap, family=family, hardware=hardware,
                       driver=driver, flags=flag_lines, platform=platform, isa_desc=isa_desc)


README = """# PyTorch Custom Builds

> You are on the **`main`** branch — PyTorch 2.8.0 + CUDA 12.8 ({count} variants, Flox function arguments)

The recipes under `.flox/pkgs/` are functions of the packages Flox passes them
(`{{ python3Packages, lib, ... }}:`), so they build against Flox's own nixpkgs. Version branches pin
nixpkgs in each recipe instead; convert this branch with:

```bash
pinshift migrate flox-args-to-pinned --from main --branch main-pinned
```
"""

MANIFEST = """## Flox Environment Manifest -----------------------------------------
##
##   Builds the PyTorch variants under .flox/pkgs/ against Flox's nixpkgs.
##
## -------------------------------------------------------------------
version = 1

[install]
gcc.pkg-path = "gcc"
gnumake.pkg-path = "gnumake"

[options]
systems = ["x86_64-linux", "aarch64-linux", "aarch64-darwin"]
"""


def flox_args_files() -> dict[str, bytes]:
    """Path -> bytes of the Flox-args `main` branch: the recipes, README.md, the Flox manifest."""
    chosen = flox_variants()
    files = {f".flox/pkgs/{v.filename}": render_flox_recipe(v).encode() for v in chosen}
    files["README.md"] = README.format(count=len(chosen)).encode()
    files[".flox/env/manifest.toml"] = MANIFEST.encode()
    return files
