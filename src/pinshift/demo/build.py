"""Build the demo recipe repository: a `pytorch-2.9` branch shaped like the seed's.

The repository has a `main` branch (a README only, or with `flox_args` the seed's
Flox function-argument recipes) and a `pytorch-2.9` branch
with the 66 recipes of `pinshift.demo.matrix` under `.flox/pkgs/`, a README with
the seed's branch tables (this branch in bold with ⬅️, other branches' rows,
one with the same old pin) and a Flox manifest. Everything is generated here,
so the demo works offline right after install.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

from pinshift.demo.matrix import OLD_REV, render_recipe, variants
from pinshift.errors import UsageError

BASE = "pytorch-2.9"
RECIPE = "pytorch-2.10-cuda12_9"

_LINK = "[`{short}`](https://github.com/NixOS/nixpkgs/tree/{rev})"
_MAIN_REV = "fe5e41d0b0b4ad2ea0ae3c96dc3e0bd2ea1e2c43"
_VLLM_REV = "0182a361324364ae3f436a63005877674cf45efb"


def _link(rev: str) -> str:
    return _LINK.format(short=rev[:7], rev=rev)


README = f"""# PyTorch Custom Builds

> You are on the **`{BASE}`** branch — PyTorch 2.9.1 + CUDA 12.9 (66 variants)

This Flox environment builds custom PyTorch variants with targeted optimizations for specific GPU
architectures and CPU instruction sets: smaller binaries, faster startup, one variant per machine.

## Branches

Each branch targets a specific PyTorch + CUDA + Python combination:

- **`main`** — Stable baseline. Conservative PyTorch + CUDA pairing for broad compatibility.
- **`{BASE}`** — PyTorch 2.9.1 on nixpkgs `{OLD_REV[:7]}`, CUDA 12.9.
- **`pytorch-2.9-legacy`** — the same pin as `{BASE}`, kept for old drivers.

| Branch | PyTorch | CUDA | Python | Variants | Key Additions |
|---|---|---|---|---|---|
| `main` | 2.8.0 | 12.8 | 3.13 | 62 | Stable baseline + SM75 + Darwin MPS + torchvision/torchaudio |
| **`{BASE}`** ⬅️ | 2.9.1 | 12.9 | 3.13 | 66 | Full coverage + SM75/SM103 + AVX-only + Darwin MPS |
| `pytorch-2.9-legacy` | 2.9.1 | 12.9 | 3.13 | 66 | Same pin as {BASE} (nixpkgs {OLD_REV[:7]}) |
| `pytorch-2.9-vllm-0.15.1` | 2.9.1 | 12.9 / 12.8 | 3.13 | 117 | vLLM 0.15.1 pin-certified (nixpkgs {_VLLM_REV[:7]}) |
| `pytorch-2.10-python313` | 2.10 | 13.0 | 3.13 | 68 | Full matrix SM75–SM121 + ARM + AVX-only + Darwin MPS |

vLLM-pinned branches use the exact nixpkgs revision that the corresponding vLLM release was built against.

## Version matrix

| Branch | PyTorch | CUDA | cuDNN | Python | Min Driver | Nixpkgs Pin |
|---|---|---|---|---|---|---|
| `main` | 2.8.0 | 12.8 | 9.x | 3.13 | 550+ | {_link(_MAIN_REV)} |
| **`{BASE}`** ⬅️ | 2.9.1 | 12.9 | 9.13.0 | 3.13 | 550+ | {_link(OLD_REV)} |
| `pytorch-2.9-legacy` | 2.9.1 | 12.9 | 9.13.0 | 3.13 | 525+ | {_link(OLD_REV)} |
| `pytorch-2.9-vllm-0.15.1` | 2.9.1 | 12.9 / 12.8 | 9.x | 3.13 | 550+ | {_link(_VLLM_REV)} |
| `pytorch-2.10-python313` | 2.10 | 13.0 | TBD | 3.13 | 570+ | TBD |

## Packages

| GPU Architecture | CPU ISA | Package Name | Primary Use Case |
|---|---|---|---|
| SM90 (Hopper) | AVX-512 | `pytorch-python313-cuda12_9-sm90-avx512` | H100/L40S + general workloads |
| CPU-only | AVX2 | `pytorch-python313-cpu-avx2` | Development, broad x86-64 compatibility |

## Building

```bash
flox build pytorch-python313-cuda12_9-sm90-avx512
flox publish -o <your-org> pytorch-python313-cuda12_9-sm90-avx512
```
"""

MANIFEST = """## Flox Environment Manifest -----------------------------------------
##
##   Builds the PyTorch variants under .flox/pkgs/ (one .nix file each).
##
## -------------------------------------------------------------------
version = 1

[install]
gcc.pkg-path = "gcc"
gnumake.pkg-path = "gnumake"

[vars]
PYTORCH_BRANCH = "pytorch-2.9"

[options]
systems = ["x86_64-linux", "aarch64-linux", "aarch64-darwin"]
"""

MAIN_README = """# PyTorch Custom Builds

> You are on the **`main`** branch — PyTorch 2.8.0 + CUDA 12.8 (62 variants)

Switch to a version branch (`git switch pytorch-2.9`) to see its recipes.
"""


def demo_files() -> dict[str, bytes]:
    """Path -> bytes of the `pytorch-2.9` branch: 66 recipes, README.md, the Flox manifest."""
    files = {f".flox/pkgs/{v.filename}": render_recipe(v).encode() for v in variants()}
    files["README.md"] = README.encode()
    files[".flox/env/manifest.toml"] = MANIFEST.encode()
    return files


def _write(root: Path, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def build_demo(directory: Path, flox_args: bool = False) -> Path:
    """Create the demo repository in `directory` (new or empty), `pytorch-2.9` checked out; its path.

    `flox_args`: `main` holds Flox function-argument recipes (`pinshift.demo.flox_args`, the
    seed's `main`) instead of a README only; the `pytorch-2.9` branch is the same either way.
    """
    from pinshift.git.repo import commit_everything, init_repository

    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(f"--dir {directory}: exists and is not empty; give a new or empty directory")
    directory.mkdir(parents=True, exist_ok=True)
    repository = init_repository(directory, "main")
    main_files, main_message = {"README.md": MAIN_README.encode()}, "main: PyTorch 2.8.0 + CUDA 12.8"
    if flox_args:
        from pinshift.demo.flox_args import flox_args_files

        main_files = flox_args_files()
        main_message += f" ({len(main_files) - 2} recipes taking Flox function arguments)"
    _write(directory, main_files)
    commit_everything(repository, main_message)
    for path in main_files:
        (directory / path).unlink()
    _write(directory, demo_files())
    commit_everything(repository, "pytorch-2.9: 66 variants, PyTorch 2.9.1 + CUDA 12.9 on nixpkgs 6a030d5", BASE)
    return directory
