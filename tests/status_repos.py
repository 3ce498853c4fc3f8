"""Two demo-built recipe repositories for `pinshift status` and alignment tests (issue 20).

build-pytorch (from pinshift.demo.build_demo with flox_args), five branches on three pins:
  main                    58 Flox-args recipes (no pin: the caller's nixpkgs), CUDA 12.8 by name
  pytorch-2.9             the 66 demo recipes on 6a030d5, python3Packages, CUDA 12.9 overlay
  pytorch-2.9-python312   the 67 python312 demo recipes (pinshift.demo.python_branch) on 6a030d5
  pytorch-2.10-cuda12_9   the 66 demo recipes on 0182a36, python313Packages
  pytorch-2.10            8 recipes, mixed: 6 on 6a030d5 (4 GPU with the cudaPackages_13_0 overlay,
                          2 CPU), 2 GPU on 2017d6d (cudaPackages_13_1); each fetches torch's own
                          source (fetchFromGitHub pytorch v2.10.0): a source override
build-vllm, a sibling whose `main` uses one pin:
  main                    4 vLLM recipes on 0182a36 (python312Packages and python313Packages)
  mixed                   3 recipes on 0182a36, 2 on 6a030d5
  tie                     2 recipes on 0182a36, 2 on 6a030d5
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, git
from pinshift.demo.build import build_demo
from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe, variants
from pinshift.demo.python_branch import python312_files

STUB = FIXTURES / "checks" / "stub-nixpkgs"  # the verify tests' stub nixpkgs (torch 2.9.1, then 2.10.0)
THIRD_REV = "2017d6d5f2a8c1b0e9d8c7b6a5f4e3d2c1b0a9f8"
SOURCE = '''    pname = "{pname}";
    version = "2.10.0";
    src = nixpkgs_pinned.fetchFromGitHub {{
      owner = "pytorch";
      repo = "pytorch";
      rev = "v2.10.0";
      fetchSubmodules = true;
      hash = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    }};
'''


def commit_branch(root: Path, branch: str, files: dict[str, str | bytes], start: str | None = None) -> str:
    """Commit exactly `files` as branch `branch` (a new root commit, or on `start`); the checkout is left
    where it was. The commit id."""
    current = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    if start is None:
        git(root, "switch", "-q", "--orphan", branch)
    else:
        git(root, "switch", "-q", "-c", branch, start)
        git(root, "rm", "-rq", "--ignore-unmatch", ".")
    for child in root.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", f"{branch}: {len(files)} files")
    commit = git(root, "rev-parse", "HEAD").strip()
    git(root, "switch", "-q", "-f", current)
    return commit


def _mixed_recipe(variant: Variant, rev: str, cuda: str) -> str:
    text = render_recipe(variant, rev)
    pname = variant.pname
    new_pname = pname.replace("cuda12_9", f"cuda{cuda}")
    text = text.replace("cudaPackages_12_9", f"cudaPackages_{cuda}").replace(pname, new_pname)
    return text.replace(f'    pname = "{new_pname}";\n', SOURCE.format(pname=new_pname))


def mixed_branch_files() -> dict[str, str]:
    """pytorch-2.10: 6 recipes on 6a030d5 (4 GPU on CUDA 13.0, 2 CPU), 2 GPU on 2017d6d (CUDA 13.1)."""
    chosen = [(Variant("90", "avx512"), OLD_REV, "13_0"), (Variant("90", "armv9"), OLD_REV, "13_0"),
              (Variant("100", "avx512"), OLD_REV, "13_0"), (Variant("100", "armv9"), OLD_REV, "13_0"),
              (Variant("cpu", "avx512"), OLD_REV, "13_0"), (Variant("cpu", "armv9"), OLD_REV, "13_0"),
              (Variant("120", "avx512"), THIRD_REV, "13_1"), (Variant("120", "armv9"), THIRD_REV, "13_1")]
    files = {}
    for variant, rev, cuda in chosen:
        text = _mixed_recipe(variant, rev, cuda)
        name = variant.filename.replace("cuda12_9", f"cuda{cuda}")
        files[f".flox/pkgs/{name}"] = text
    files["README.md"] = "# PyTorch 2.10 (CUDA 13)\n"
    return files


def build_pytorch(directory: Path) -> Path:
    """The recipe repository: main (Flox args) and pytorch-2.9 from build_demo, three branches more."""
    root = build_demo(directory, flox_args=True)
    commit_branch(root, "pytorch-2.9-python312", python312_files())
    aligned = {f".flox/pkgs/{v.filename}": render_recipe(v, NEW_REV, "python313Packages") for v in variants()}
    commit_branch(root, "pytorch-2.10-cuda12_9", {**aligned, "README.md": "# PyTorch 2.10 + CUDA 12.9\n"})
    commit_branch(root, "pytorch-2.10", mixed_branch_files())
    return root


def vllm_recipe(python: str, sm: str, rev: str) -> tuple[str, str]:
    """(path, text) of a vLLM recipe: the demo's GPU recipe building `python3XXPackages.vllm`."""
    variant = Variant(sm, "avx512")
    text = render_recipe(variant, rev, f"python{python}Packages").replace(".torch.override", ".vllm.override")
    pname = variant.pname.replace("pytorch-python313", f"vllm-python{python}")
    return f".flox/pkgs/{pname}.nix", text.replace(variant.pname, pname)


def build_vllm(directory: Path) -> Path:
    """The sibling: `main` on 0182a36 alone; `mixed` (3 + 2) and `tie` (2 + 2) on two pins."""
    root = Path(directory)
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    main = dict(vllm_recipe(py, sm, NEW_REV) for py in ("312", "313") for sm in ("90", "100"))
    for path, text in main.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "vLLM 0.15.1 on nixpkgs 0182a36")
    mixed = dict(main)
    mixed.update([vllm_recipe("313", "120", OLD_REV), vllm_recipe("313", "89", OLD_REV)])
    del mixed[vllm_recipe("312", "100", NEW_REV)[0]]
    commit_branch(root, "mixed", mixed)
    tie = dict(vllm_recipe(py, sm, NEW_REV) for py, sm in (("312", "90"), ("313", "90")))
    tie.update(vllm_recipe(py, sm, OLD_REV) for py, sm in (("312", "100"), ("313", "100")))
    commit_branch(root, "tie", tie)
    return root


@pytest.fixture
def stub_nixpkgs(tmp_path):
    """The verify tests' stub nixpkgs (torch 2.9.1, then 2.10.0): (clone, first commit, second commit)."""
    root = tmp_path / "nixpkgs"
    shutil.copytree(STUB / "first", root)
    git(root, "init", "-q", "-b", "master")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    first = git(root, "rev-parse", "HEAD").strip()
    for child in root.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(STUB / "second", root, dirs_exist_ok=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "second")
    return root, first, git(root, "rev-parse", "HEAD").strip()
