"""Build a `pytorch-2.9-python312` recipe branch: the branch `pytorch-2.9-python311` is made from.

The 66 variants of `pinshift.demo.matrix` built for Python 3.12 the way the real
python312 branches are: file names and `pname`s `pytorch-python312-…`, the header
comment `# Package name: pytorch-python312-…`, `nixpkgs_pinned.python312Packages.torch`,
and in `meta.longDescription` `- Python: 3.12` followed by a paragraph about the
vLLM 0.14.0 pin that holds for Python 3.12 only. A 67th recipe, the AVX-only CPU
variant, carries what a file rename must get right: its sibling `…-cpu-avx2` whose
name starts with its own, look-alike names, an identifier spelling its name, and the
package set named in a comment. `pinshift demo --python312` migrates this branch with
the bundled recipe `pytorch-2.9-python311`.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

from pinshift.demo.build import MAIN_README, MANIFEST, _write
from pinshift.demo.matrix import Variant, render_recipe, variants
from pinshift.errors import UsageError

BRANCH = "pytorch-2.9-python312"
RECIPE = "pytorch-2.9-python311"
RECIPE_FILE = Path(__file__).with_name(f"{RECIPE}.toml")  # rename-files, rename-attr, 2 x replace-in-strings

PARAGRAPH = ("\n"
             "        Python 3.12 builds share the nixpkgs pin of vLLM 0.14.0, so\n"
             "        vLLM can load this torch as its own.\n")

_AVX_NOTES = ("# Sibling build for Haswell and newer: pytorch-python312-cpu-avx2 (not this file).\n"
              "# Look-alikes that are other names: my-pytorch-python312-cpu-avx, pytorch-python312-cpu-avx_old.\n"
              "# Uses python312Packages from the pinned nixpkgs; see pytorch-python312-cpu-avx.nix.\n")
_AVX_BINDINGS = ("\n"
                 "  # The variant's name as the build scripts know it\n"
                 "  variantName = \"pytorch-python312-cpu-avx\";\n"
                 "  pytorch-python312-cpu-avx = variantName;  # an identifier spelling the name\n")

README = f"""# PyTorch Custom Builds

> You are on the **`{BRANCH}`** branch — PyTorch 2.9.1 + CUDA 12.9, Python 3.12 (67 variants)

Each recipe under `.flox/pkgs/` builds one variant with `nixpkgs_pinned.python312Packages.torch`.
"""


def python312_recipe(variant: Variant) -> tuple[str, str]:
    """(file name, text) of one variant on the python312 branch."""
    pname = variant.pname.replace("-python313-", "-python312-")
    text = render_recipe(variant, package_set="python312Packages").replace(variant.pname, pname)
    text = text.replace("        - Python: 3.13\n", "        - Python: 3.12\n" + PARAGRAPH)
    if variant == Variant("cpu", "avx"):
        header = f"# Package name: {pname}\n"
        text = text.replace(header, header + _AVX_NOTES).replace("  ];\nin\n", "  ];\n" + _AVX_BINDINGS + "in\n")
    return f"{pname}.nix", text


def python312_variants() -> list[Variant]:
    """The 66 seed variants plus the AVX-only CPU variant."""
    return variants() + [Variant("cpu", "avx")]


def python312_files() -> dict[str, bytes]:
    """Path -> bytes of the `pytorch-2.9-python312` branch: 67 recipes, README.md, the Flox manifest."""
    files = {}
    for variant in python312_variants():
        name, text = python312_recipe(variant)
        files[f".flox/pkgs/{name}"] = text.encode()
    files["README.md"] = README.encode()
    files[".flox/env/manifest.toml"] = MANIFEST.replace('"pytorch-2.9"', f'"{BRANCH}"').encode()
    return files


def build_python312_demo(directory: Path) -> Path:
    """Create the repository in `directory` (new or empty), `pytorch-2.9-python312` checked out; its path."""
    from pinshift.git.repo import commit_everything, init_repository

    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(f"--dir {directory}: exists and is not empty; give a new or empty directory")
    directory.mkdir(parents=True, exist_ok=True)
    repository = init_repository(directory, "main")
    _write(directory, {"README.md": MAIN_README.encode()})
    commit_everything(repository, "main: PyTorch 2.8.0 + CUDA 12.8")
    (directory / "README.md").unlink()
    _write(directory, python312_files())
    commit_everything(repository, f"{BRANCH}: 67 variants, PyTorch 2.9.1 + CUDA 12.9, Python 3.12", BRANCH)
    return directory
