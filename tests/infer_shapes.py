"""The commits maintainers of recipe repositories actually make (issue 34), built by hand for infer's tests.

Each builder makes a real git repository with a `base` branch and a `target` branch whose commit is
written the way the issue describes the hand-made one (text edited in Python here, never by pinshift):

- `add_cuda_variants`: "Add CUDA 12.x variants": CUDA 12.8 copies of the CUDA 12.9 recipes (another
  `cudaPackages_X_Y` overlay, name and CUDA text), and SM121 copies of the SM120 ones (another GPU target);
- `companion_binding`: a binding added to every torchvision/torchaudio recipe, some of which build their
  PyTorch inline with a nested `overrideAttrs`;
- `vllm_python_branch`: a vLLM branch's Python version changed: files renamed, the let-bound interpreter
  `python312Custom` renamed with its references, `nixpkgs_pinned.python312` and the Python text with it;
- `vllm_version_bump`: vLLM 0.15.1 -> 0.16.0 with the header comments, the source hash, the description;
- `flox_to_pinned`: the Flox-args -> pinned conversion of 62 files by hand, torchvision/torchaudio companions
  whose `import ./pytorch-….nix { inherit … }` becomes `import ./pytorch-….nix {}`;
- `three_notations`: new GPU-target variants whose target appears as `gpuArchNum = "90"`,
  `gpuArchSM = "sm_90"` and `SM90` in comments and strings;
- `clone_and_bump`: variants cloned and the nixpkgs pin bumped in one commit.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pinshift.demo.build import demo_files
from pinshift.demo.flox_args import flox_args_files
from pinshift.demo.matrix import GPUS, ISAS, NEW_REV, OLD_REV

PKGS = ".flox/pkgs"


def git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {result.stderr}")
    return result.stdout


def _write(root: Path, files: dict[str, str | bytes | None]) -> None:
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode() if isinstance(text, str) else text)


def make_repository(directory: Path, base: dict, target: dict, subject: str = "by hand") -> Path:
    """A repository whose `base` branch holds `base` and whose `target` branch adds the commit `target`
    (path -> text, None to delete) on top of it, `base` checked out."""
    directory.mkdir(parents=True)
    git(directory, "init", "-q", "-b", "base")
    for key, value in (("user.name", "Test"), ("user.email", "test@example.com"), ("commit.gpgsign", "false")):
        git(directory, "config", key, value)
    _write(directory, base)
    git(directory, "add", "-A")
    git(directory, "commit", "-q", "-m", "base")
    git(directory, "switch", "-q", "-c", "target")
    _write(directory, target)
    git(directory, "add", "-A")
    git(directory, "commit", "-q", "-m", subject)
    git(directory, "switch", "-q", "base")
    return directory


def _text(files: dict[str, bytes]) -> dict[str, str]:
    return {path: data.decode() for path, data in files.items()}


# --- "Add CUDA 12.x variants" -----------------------------------------------------------------------


def cuda_12_8_copy(text: str) -> str:
    """A CUDA 12.9 recipe of the demo made into its CUDA 12.8 variant, as a maintainer edits the copy."""
    text = text.replace("cuda12_9", "cuda12_8")
    text = text.replace("final.cudaPackages_12_9", "final.cudaPackages_12_8")
    text = text.replace("with CUDA 12.9", "with CUDA 12.8")
    text = text.replace('echo "CUDA: 12.9 (', 'echo "CUDA: 12.8 (')
    return text.replace("- CUDA: 12.9 with", "- CUDA: 12.8 with")


def sm121_copy(text: str) -> str:
    """An SM120 (RTX 5090) recipe made into the SM121 (DGX Spark) variant: name, GPU target and its words."""
    text = text.replace("sm120", "sm121").replace("SM120", "SM121").replace("RTX 5090", "DGX Spark")
    text = text.replace('gpuArchNum = "120";', 'gpuArchNum = "121";').replace('gpuArchSM = "12.0";', 'gpuArchSM = "12.1";')
    return text.replace("compute capability 12.0", "compute capability 12.1")


def add_cuda_variants(directory: Path) -> Path:
    base = _text(demo_files())
    new = {}
    for path, text in base.items():
        if "-cuda12_9-" in path and "-sm103-" not in path:  # CUDA 12.8's nvcc has no SM103
            new[path.replace("cuda12_9", "cuda12_8")] = cuda_12_8_copy(text)
        if "-cuda12_9-sm120-" in path:
            new[path.replace("sm120", "sm121")] = sm121_copy(text)
    return make_repository(directory, base, new, "Add CUDA 12.x variants")


# --- companions: torchvision/torchaudio built on a PyTorch recipe --------------------------------------


_PIN = """  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";
  }}) {{
    config = {{
      allowUnfree = true;
      cudaSupport = true;
    }};
    overlays = [
      (final: prev: {{ cudaPackages = final.cudaPackages_12_9; }})
    ];
  }};
"""

_COMPANION_IMPORT = """# {Name} for NVIDIA {family} (SM{sm}) + {isa_desc}
# Package name: {name}-python313-cuda12_9-sm{sm}-{isa}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
{pin}
  # The matching PyTorch build, shared through the Nix store
  customPytorch = import ./pytorch-python313-cuda12_9-sm{sm}-{isa}.nix {{ }};
in
  (nixpkgs_pinned.python3Packages.{name}.override {{
    torch = customPytorch;
  }}).overrideAttrs (oldAttrs: {{
    pname = "{name}-python313-cuda12_9-sm{sm}-{isa}";

    meta = oldAttrs.meta // {{
      description = "{Name} for NVIDIA {hardware} (SM{sm}) + {isa_desc}";
      platforms = [ "x86_64-linux" ];
    }};
  }})
"""

_COMPANION_INLINE = """# {Name} for NVIDIA {family} (SM{sm}) + {isa_desc}, with its PyTorch build inline
# Package name: {name}-python313-cuda12_9-sm{sm}-{isa}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
{pin}
  # The PyTorch build {name} links: SM{sm} and the CPU flags of pytorch-python313-cuda12_9-sm{sm}-{isa}
  customPytorch = (nixpkgs_pinned.python3Packages.torch.override {{
    cudaSupport = true;
    gpuTargets = [ "{cap}" ];
  }}).overrideAttrs (oldAttrs: {{
    pname = "pytorch-python313-cuda12_9-sm{sm}-{isa}";
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS {flags}"
    '';
  }});
in
  (nixpkgs_pinned.python3Packages.{name}.override {{
    torch = customPytorch;
  }}).overrideAttrs (oldAttrs: {{
    pname = "{name}-python313-cuda12_9-sm{sm}-{isa}";

    meta = oldAttrs.meta // {{
      description = "{Name} for NVIDIA {hardware} (SM{sm}) + {isa_desc}";
      platforms = [ "x86_64-linux" ];
    }};
  }})
"""

COMPANIONS = [("torchvision", "61", "avx", "import"), ("torchvision", "75", "avx", "inline"),
              ("torchaudio", "61", "avx", "inline"), ("torchaudio", "75", "avx", "import")]
PROPAGATED = "    propagatedBuildInputs = (oldAttrs.propagatedBuildInputs or []) ++ [ customPytorch.out ];\n"


def companion_recipe(name: str, sm: str, isa: str, style: str) -> tuple[str, str]:
    cap, family, hardware, _ = GPUS[sm]
    flags, _, isa_desc = ISAS[isa]
    template = _COMPANION_IMPORT if style == "import" else _COMPANION_INLINE
    text = template.format(Name={"torchvision": "TorchVision", "torchaudio": "TorchAudio"}[name], name=name, sm=sm,
                           isa=isa, family=family, hardware=hardware, cap=cap, isa_desc=isa_desc,
                           flags=" ".join(flags), pin=_PIN.format(rev=OLD_REV))
    return f"{PKGS}/{name}-python313-cuda12_9-sm{sm}-{isa}.nix", text


def companion_binding(directory: Path) -> Path:
    base = _text(demo_files())
    new = {}
    for companion in COMPANIONS:
        path, text = companion_recipe(*companion)
        base[path] = text
        own = text.rindex('    pname = "')  # the companion's own attrset: the last pname
        line_end = text.index("\n", own) + 1
        new[path] = text[:line_end] + PROPAGATED + text[line_end:]
    return make_repository(directory, base, new, "Propagate the linked PyTorch build")


# --- vLLM recipes ---------------------------------------------------------------------------------------

VLLM_SMS = ("70", "75", "80", "86", "89", "90", "100", "103", "120", "121")
VLLM_ISAS = ("avx2", "avx512", "avx512bf16", "avx512vnni", "armv9")
VLLM_HASH = "sha256-Qm9vbGVhbiB2TExNIDAuMTUuMSBzb3VyY2UgdGFyYmFsbCE="
VLLM_NEW_HASH = "sha256-dkxMTSAwLjE2LjAgc291cmNlIHRhcmJhbGwgaXMgaGVyZSE="

_VLLM = """# vLLM {version} for NVIDIA {family} (SM{sm}) + {isa_desc}, Python {dotted}
# Package name: {pname}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";
  }}) {{
    config = {{
      allowUnfree = true;
      cudaSupport = true;
    }};
    overlays = [
      (final: prev: {{ cudaPackages = final.cudaPackages_{cuda}; }})
    ];
  }};

  # Python {dotted} whose torch is built for SM{sm}: vLLM and its dependencies use it
  {py}Custom = nixpkgs_pinned.{py}.override {{
    packageOverrides = self: super: {{
      torch = super.torch.override {{
        cudaSupport = true;
        gpuTargets = [ "{cap}" ];
      }};
    }};
  }};
in
  {py}Custom.pkgs.vllm.overrideAttrs (oldAttrs: {{
    pname = "{pname}";
    version = "{version}";

    src = nixpkgs_pinned.fetchFromGitHub {{
      owner = "vllm-project";
      repo = "vllm";
      tag = "v${{version}}";
      hash = "{hash}";
    }};

    passthru = (oldAttrs.passthru or {{ }}) // {{ python = {py}Custom; }};

    meta = oldAttrs.meta // {{
      description = "vLLM {version} for NVIDIA {hardware} (SM{sm}) + {isa_desc}, Python {dotted}";
      platforms = [ "{platform}" ];
    }};
  }})
"""

_CAPS = dict({sm: GPUS[sm] for sm in GPUS}, **{"70": ("7.0", "Volta", "V100", "390+"),
                                              "121": ("12.1", "Blackwell", "DGX Spark", "570+")})


def vllm_recipe(py: str, cuda: str, sm: str, isa: str, version: str = "0.15.1", hash: str = VLLM_HASH) -> tuple[str, str]:
    cap, family, hardware, _ = _CAPS[sm]
    _, platform, isa_desc = ISAS[isa]
    pname = f"vllm-{py}-cuda{cuda}-sm{sm}-{isa}"
    dotted = f"{py[6]}.{py[7:]}"
    text = _VLLM.format(version=version, family=family, sm=sm, isa_desc=isa_desc, dotted=dotted, pname=pname,
                        rev=NEW_REV, cuda=cuda, py=py, cap=cap, hash=hash, hardware=hardware, platform=platform)
    return f"{PKGS}/{pname}.nix", text


def vllm_files(py: str = "python312", count: int = 100, **kwargs) -> dict[str, str]:
    files = {}
    for cuda in ("12_9", "12_8"):
        for sm in VLLM_SMS:
            for isa in VLLM_ISAS:
                path, text = vllm_recipe(py, cuda, sm, isa, **kwargs)
                files[path] = text
    return dict(list(files.items())[:count])


def python311_by_hand(text: str) -> str:
    """A python312 vLLM recipe as the maintainer made the python311 branch's: the interpreter renamed by hand."""
    text = text.replace("python312Custom", "python311Custom").replace("nixpkgs_pinned.python312.", "nixpkgs_pinned.python311.")
    return text.replace("-python312-", "-python311-").replace("Python 3.12", "Python 3.11")


def vllm_python_branch(directory: Path) -> Path:
    base = vllm_files("python312")
    new: dict[str, str | None] = {}
    for path, text in base.items():
        new[path] = None
        new[path.replace("-python312-", "-python311-")] = python311_by_hand(text)
    return make_repository(directory, base, new, "vLLM 0.15.1 for Python 3.11")


def vllm_version_bump(directory: Path) -> Path:
    base = vllm_files("python313", count=10)
    new = {path: text.replace("0.15.1", "0.16.0").replace(VLLM_HASH, VLLM_NEW_HASH) for path, text in base.items()}
    return make_repository(directory, base, new, "vLLM 0.16.0")


# --- Flox arguments -> a pinned nixpkgs, by hand ----------------------------------------------------------

FLOX_REV = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"
FLOX_GPU_FORMALS = "{ python3Packages, lib, config, cudaPackages, addDriverRunpath }:"

_FLOX_PIN = """  # Import nixpkgs at a specific revision{with_cuda}
  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";
  }}) {{
    config = {{
      allowUnfree = true;
      cudaSupport = {cuda};
    }};{overlays}
  }};

"""
_OVERLAYS = """
    overlays = [
      (final: prev: { cudaPackages = final.cudaPackages_12_8; })
    ];"""

_FLOX_COMPANION = """# {Name} for NVIDIA {family} (SM{sm}) + AVX, built on the matching PyTorch variant
# Package name: {name}-python313-cuda12_8-sm{sm}-avx
{formals}
let
  # The matching PyTorch build: the same GPU target and CPU flags
  customPytorch = import ./pytorch-python313-cuda12_8-sm{sm}-avx.nix {{
    inherit python3Packages lib config cudaPackages addDriverRunpath;
  }};
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


def flox_companions() -> dict[str, str]:
    files = {}
    for name in ("torchvision", "torchaudio"):
        for sm in ("61", "75"):
            _, family, hardware, _ = GPUS[sm]
            files[f"{PKGS}/{name}-python313-cuda12_8-sm{sm}-avx.nix"] = _FLOX_COMPANION.format(
                Name={"torchvision": "TorchVision", "torchaudio": "TorchAudio"}[name], name=name, sm=sm,
                family=family, hardware=hardware, formals=FLOX_GPU_FORMALS)
    return files


def _qualify(text: str, names: tuple[str, ...]) -> str:
    """Every use of a former Flox argument written as `nixpkgs_pinned.<name>` (the recipes' own spelling);
    comment lines and the shell command `addDriverRunpath $lib/…` in a string stay as they are."""
    lines = []
    for line in text.splitlines(keepends=True):
        if not line.lstrip().startswith("#"):
            for name in names:
                line = re.sub(rf"(?<![\w.$]){name}(?=[.\s;\]}}])", f"nixpkgs_pinned.{name}", line)
            line = line.replace("nixpkgs_pinned.addDriverRunpath $lib", "addDriverRunpath $lib")
        lines.append(line)
    return "".join(lines)


def pinned_by_hand(path: str, text: str) -> str:
    """A Flox-argument recipe converted by hand: the pinned nixpkgs first in the let (one made for Darwin),
    uses of the arguments qualified, torch and python313Packages, build parallelism for the GPU recipes, and a
    companion's PyTorch imported with no arguments."""
    gpu = "-cuda12_8-" in path
    head = text[: text.index("\n{") + 1]
    formals_line = text[len(head) : text.index("\n", len(head)) + 1]
    body = text[len(head) + len(formals_line) :]
    names = tuple(n.strip() for n in formals_line.strip()[1:-2].strip(" {}").split(","))
    body = body.replace("{\n    inherit python3Packages lib config cudaPackages addDriverRunpath;\n  }", "{}")
    body = _qualify(body, tuple(n for n in names if n != "config"))
    body = body.replace("config.cudaSupport", "nixpkgs_pinned.config.cudaSupport")
    body = body.replace("nixpkgs_pinned.python3Packages.pytorch", "nixpkgs_pinned.python313Packages.torch")
    body = body.replace("nixpkgs_pinned.python3Packages.", "nixpkgs_pinned.python313Packages.")
    pin = _FLOX_PIN.format(with_cuda=" with CUDA 12.8" if gpu else " (no CUDA)", rev=FLOX_REV, cuda="true" if gpu else "false",
                           overlays=_OVERLAYS if gpu else "")
    if body.startswith("let\n"):
        body = "let\n" + pin + body[len("let\n"):]
    else:  # Darwin: no let; one is made, the body indented as it was
        body = body.lstrip("\n")
        body = "let\n" + pin.rstrip("\n") + "\nin\n" + body
        body = "\n" + body
    if gpu and "pytorch-" in path:
        pname = body.index("    pname = ")
        line_end = body.index("\n", pname) + 1
        body = (body[:line_end] + "\n    # Limit build parallelism to prevent memory saturation\n"
                "    ninjaFlags = [ \"-j32\" ];\n\n    requiredSystemFeatures = [ \"big-parallel\" ];\n" + body[line_end:])
    return head + "{ pkgs ? import <nixpkgs> {} }:\n" + body


def flox_to_pinned(directory: Path) -> Path:
    base = _text(flox_args_files())
    base.update(flox_companions())
    new = {path: pinned_by_hand(path, text) for path, text in base.items() if path.endswith(".nix")}
    return make_repository(directory, base, new, "Pin nixpkgs fe5e41d in every recipe instead of Flox's arguments")


# --- smaller shapes the issue does not name ------------------------------------------------------------

_NOTATIONS = """# PyTorch for NVIDIA {family} (SM{sm}) + AVX2
# Package name: pytorch-python313-cuda12_8-sm{sm}-{isa}
{{ pkgs ? import <nixpkgs> {{}} }}:
let
  # GPU target: SM{sm} ({family} - {hardware})
  gpuArchNum = "{sm}";        # For CMAKE_CUDA_ARCHITECTURES
  gpuArchSM = "sm_{sm}";      # For TORCH_CUDA_ARCH_LIST
in
  (pkgs.python3Packages.torch.override {{
    cudaSupport = true;
    gpuTargets = [ gpuArchSM ];
  }}).overrideAttrs (oldAttrs: {{
    pname = "pytorch-python313-cuda12_8-sm{sm}-{isa}";
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CMAKE_CUDA_ARCHITECTURES="${{gpuArchNum}}"
      echo "GPU Target: ${{gpuArchSM}} ({family}: {hardware})"
    '';
    meta = oldAttrs.meta // {{
      description = "PyTorch for NVIDIA {hardware} (SM{sm}, {family}) + {isa}";
    }};
  }})
"""


def notations_recipe(sm: str, isa: str) -> tuple[str, str]:
    _, family, hardware, _ = _CAPS[sm]
    return (f"{PKGS}/pytorch-python313-cuda12_8-sm{sm}-{isa}.nix",
            _NOTATIONS.format(sm=sm, isa=isa, family=family, hardware=hardware))


def three_notations(directory: Path) -> Path:
    base = dict(notations_recipe(sm, isa) for sm in ("86", "89") for isa in ("avx2", "avx512", "armv9"))
    new = dict(notations_recipe("90", isa) for isa in ("avx2", "avx512", "armv9"))
    return make_repository(directory, base, new, "Add SM90 variants")


def clone_and_bump(directory: Path) -> Path:
    """SM70 (Volta) variants copied from the SM75 ones, and every recipe moved to the new nixpkgs pin."""
    base = _text(demo_files())
    new = {}
    for path, text in base.items():
        if not path.endswith(".nix"):
            continue
        new[path] = text.replace(OLD_REV, NEW_REV)
        if "-sm75-" in path:
            copy = new[path].replace("sm75", "sm70").replace("SM75", "SM70").replace('gpuArchNum = "75"', 'gpuArchNum = "70"')
            copy = copy.replace('gpuArchSM = "7.5"', 'gpuArchSM = "7.0"').replace("compute capability 7.5",
                                                                                "compute capability 7.0")
            new[path.replace("sm75", "sm70")] = copy.replace("Turing", "Volta").replace("T4/RTX 2080 Ti", "V100")
    return make_repository(directory, base, new, "Add SM70 variants on nixpkgs 0182a36")
