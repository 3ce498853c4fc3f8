"""status, scan and lint on repositories of every kind (issue 33): PyTorch, vLLM, ONNX Runtime, ComfyUI.

Four repositories are committed from the fixtures of tests/fixtures/kinds (their facts are proven one
by one in test_facts_kinds.py). The rows, matrices and findings below are written by hand from those
files:

| repository | branch | recipes (pin) |
|---|---|---|
| build-comfyui | main | comfyui sm89 (12.8 overlay), cpu (python313.withPackages), sm120 (cudaVersion 12.8); 0182a36 |
| build-onnxruntime | ort-1.18 | sm75 avx2, sm86 avx512, cpu avx2 (lists aarch64-linux); 9a1b2c3, ortVersion 1.18.1 |
| build-onnxruntime | ort-1.24 | sm90 avx512; 0182a36, 1.24.2 |
| build-pytorch | main | Flox args: pytorch sm89 avx512, torchvision sm61 avx (imports its pytorch) |
| build-pytorch | pytorch-2.9 | sm90, cpu avx2, darwin, sm100 (src.rev 2.9.1), torchaudio sm75 (0182a36); sm120 python312 (46336d4) |
| build-pytorch | pytorch-2.10 | sm110 armv9, cudaPackages_13, torchVersion 2.10.0; 6a030d5 |
| build-vllm | main | sm90, sm90a (python313.override), cpu avx512 (python313Packages); 0182a36 |
| build-vllm | v0.14.0 | sm89 (python312Custom, vllmVersion 0.14.0), sm120 (python311 via pythonEnv); 46336d4 |
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from conftest import FIXTURES, git
from status_repos import commit_branch

KINDS = FIXTURES / "kinds"
SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "status-schema.json").read_text())
LAYOUT = {
    "build-comfyui": {"main": ["comfyui/comfyui-python312-cuda12_8-sm89.nix", "comfyui/comfyui-python313-cpu.nix",
                               "comfyui/comfyui-python312-cuda12_8-sm120.nix"]},
    "build-onnxruntime": {
        "ort-1.18": ["onnxruntime/onnxruntime-python312-cuda12_4-sm75-avx2.nix",
                     "onnxruntime/onnxruntime-python312-cuda12_4-sm86-avx512.nix",
                     "onnxruntime/onnxruntime-python312-cpu-avx2.nix"],
        "ort-1.24": ["onnxruntime/onnxruntime-python313-cuda12_9-sm90-avx512.nix"]},
    "build-pytorch": {
        "main": ["pytorch/pytorch-python313-cuda12_8-sm89-avx512.nix", "pytorch/torchvision-python313-cuda12_8-sm61-avx.nix"],
        "pytorch-2.9": ["pytorch/pytorch-python313-cuda12_9-sm90-avx512.nix", "pytorch/pytorch-python313-cpu-avx2.nix",
                        "pytorch/pytorch-python313-darwin-mps.nix", "pytorch/pytorch-python313-cuda12_9-sm100-avx512.nix",
                        "pytorch/torchaudio-python313-cuda12_9-sm75-avx2.nix",
                        "pytorch/pytorch-python312-cuda12_8-sm120-avx2.nix"],
        "pytorch-2.10": ["pytorch/pytorch-python313-cuda13_0-sm110-armv9.nix"]},
    "build-vllm": {
        "main": ["vllm/vllm-python313-cuda12_9-sm90.nix", "vllm/vllm-python313-cuda12_9-sm90a.nix",
                 "vllm/vllm-python313-cpu-avx512.nix"],
        "v0.14.0": ["vllm/vllm-python312-cuda12_8-sm89.nix", "vllm/vllm-python311-cuda12_8-sm120.nix"]},
}
ORDER = ("build-comfyui", "build-onnxruntime", "build-pytorch", "build-vllm")

HEADER = ("| Repo | Branch | Nixpkgs Pin | Package | CUDA | Python | GPU | Package Set | Recipe Pattern | Variants "
          "| Drift |")
ROWS = (
    "| `build-comfyui` | `main` | `0182a36` | comfyui 0.3.40 (recipe, 2) / 0.3.43 (recipe, 1) | 12.8 "
    "| 3.12 (2) / 3.13 (1) | sm89 / sm120 | `python312Packages` (2) / `python313.withPackages` (1) "
    "| self-contained fetchTarball + own source | 3 | – |",
    "| `build-onnxruntime` | `ort-1.18` | `9a1b2c3` | onnxruntime 1.18.1 (override) | 12.4 | 3.12 | sm75 / sm86 "
    "| `python312Packages` | self-contained fetchTarball + source override (2) / self-contained fetchTarball (1) "
    "| 3 | – |",
    "| `build-onnxruntime` | `ort-1.24` | `0182a36` | onnxruntime 1.24.2 (override) | 12.9 | 3.13 | sm90 "
    "| `python313Packages` | self-contained fetchTarball | 1 | – |",
    "| `build-pytorch` | `main` | caller's nixpkgs | pytorch ?[^1]; torchvision ?[^1] | 12.8 | 3.13[^2] | sm61 / sm89 "
    "| `python3Packages` | Flox function args | 2 | – |",
    "| `build-pytorch` | `pytorch-2.9` | `0182a36` (5) / `46336d4` (1) "
    "| pytorch 2.9.1 (override, 1) / ?[^3] (4); torchaudio ?[^3] | 12.9 (3) / 12.8[^4] (1) | 3.13 (5) / 3.12 (1) "
    "| sm75 / sm90 / sm100 / sm120 | `python313Packages` (5) / `python312Packages` (1) "
    "| self-contained fetchTarball (5) / self-contained fetchTarball + source override (1) | 6 | pin drift |",
    "| `build-pytorch` | `pytorch-2.10` | `6a030d5` | pytorch 2.10.0 (override) | 13.0[^5] | 3.13[^2] | sm110 "
    "| `python3Packages` | self-contained fetchTarball + source override | 1 | – |",
    "| `build-vllm` | `main` | `0182a36` | vllm ?[^3] | 12.9 | 3.13 | sm90 / sm90a "
    "| `python313.override` (2) / `python313Packages` (1) | self-contained fetchTarball | 3 | package-set drift |",
    "| `build-vllm` | `v0.14.0` | `46336d4` | vllm 0.14.0 (override, 1) / ?[^3] (1) | 12.8 | 3.11 (1) / 3.12 (1) "
    "| sm89 / sm120 | `python311.override` (1) / `python312.override` (1) "
    "| self-contained fetchTarball (1) / self-contained fetchTarball + source override (1) | 2 | – |",
)
FOOTNOTES = (
    "[^1]: version ?: not stated in the recipes; they use their caller's nixpkgs",
    "[^2]: Python 3.13: read from the file names; python3Packages is the pin's default",
    "[^3]: version ?: not stated in the recipes; --nixpkgs DIR reads it from each pin",
    "[^4]: CUDA 12.8: cudaPackages_12 overlay, minor from the file name cuda12_8",
    "[^5]: CUDA 13.0: cudaPackages_13 overlay, minor from the file name cuda13_0",
)


@pytest.fixture(autouse=True)
def no_columns(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(scope="module")
def kinds(tmp_path_factory) -> Path:
    """The four repositories side by side, each branch a root commit of its recipes under .flox/pkgs/."""
    parent = tmp_path_factory.mktemp("kinds")
    for name in ORDER:
        root = parent / name
        root.mkdir()
        git(root, "init", "-q", "-b", "placeholder")
        git(root, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "start")
        for branch, files in LAYOUT[name].items():
            commit_branch(root, branch, {f".flox/pkgs/{Path(f).name}": (KINDS / f).read_text() for f in files})
        git(root, "switch", "-q", "main" if "main" in LAYOUT[name] else next(iter(LAYOUT[name])))
        git(root, "branch", "-q", "-D", "placeholder")
    return parent


def repos(kinds: Path) -> list[str]:
    return [arg for name in ORDER for arg in ("--repo", str(kinds / name))]


def test_markdown_rows_are_the_hand_written_ones(run_cli, kinds):
    result = run_cli("status", *repos(kinds), "--format", "markdown")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == HEADER and lines[2:10] == list(ROWS)
    assert lines[10:] == ["", *FOOTNOTES]  # every unknown or file-name value explained, each once


def test_json_carries_each_value_with_its_sources(run_cli, kinds):
    result = run_cli("status", *repos(kinds), "--format", "json")
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    rows = {(r["repository"], r["branch"]): r for r in report["branches"]}
    ort = rows[("build-onnxruntime", "ort-1.18")]
    assert ort["gpu"] == [{"target": "sm75", "recipes": 1, "sources": [{"source": "gpuArchCMake", "recipes": 1}]},
                          {"target": "sm86", "recipes": 1, "sources": [
                              {"source": "CMAKE_CUDA_ARCHITECTURES in a string", "recipes": 1}]}]
    assert ort["cuda"] == [{"version": "12.4", "recipes": 2, "sources": [
        {"source": "cudaPackages_12_4 overlay", "recipes": 2}]}]  # the CPU recipe's overlay is not counted
    assert ort["packages"] == [{"package": "onnxruntime", "recipes": 3, "attribute": "onnxruntime", "versions": [
        {"version": "1.18.1", "origin": "override", "recipes": 3,
         "sources": [{"source": "version via ortVersion", "recipes": 2}, {"source": "version", "recipes": 1}]}]}]
    assert ort["kinds"] == [{"kind": "gpu", "recipes": 2}, {"kind": "cpu", "recipes": 1}]
    vllm = rows[("build-vllm", "v0.14.0")]
    assert vllm["python"] == [
        {"version": "3.11", "recipes": 1, "sources": [{"source": "python311.override via pythonPackages, pythonEnv",
                                                       "recipes": 1}]},
        {"version": "3.12", "recipes": 1, "sources": [{"source": "python312.override via python312Custom",
                                                       "recipes": 1}]}]
    assert vllm["gpu"][0] == {"target": "sm89", "recipes": 1, "sources": [
        {"source": "config.cudaCapabilities via gpuCapabilities", "recipes": 1}]}
    pytorch = rows[("build-pytorch", "pytorch-2.9")]
    assert [(p["package"], p["recipes"]) for p in pytorch["packages"]] == [("pytorch", 5), ("torchaudio", 1)]
    assert pytorch["packages"][0]["versions"] == [
        {"version": "2.9.1", "origin": "override", "recipes": 1, "sources": [{"source": "src.rev", "recipes": 1}]},
        {"version": "?", "origin": None, "recipes": 4,
         "sources": [{"source": "--nixpkgs DIR reads it from each pin", "recipes": 4}]}]
    assert [c["version"] for c in rows[("build-pytorch", "pytorch-2.10")]["cuda"]] == ["13.0"]  # never a bare 13


def test_text_fits_the_default_width_and_says_what_it_left_out(run_cli, kinds):
    result = run_cli("status", *repos(kinds))
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[2].split() == ["Branch", "Nixpkgs", "Pin", "Package", "CUDA", "Python"]
    row = next(line for line in lines if line.startswith("  pytorch-2.10 "))
    assert row.split() == ["pytorch-2.10", "6a030d5", "pytorch", "2.10.0", "(override)", "13.0[5]", "3.13[2]"]
    assert ("(left out: Package Set, GPU, Recipe Pattern, Drift, Variants; abbreviated: Package, CUDA, Python; "
            "cut: Package; to fit 100 columns; --wide shows every column)"
            in result.stdout.replace("\n    ", " "))
    assert "drift: build-pytorch@pytorch-2.9: pin drift" in lines  # what the Drift column would have said
    assert "[5] CUDA 13.0: cudaPackages_13 overlay, minor from the file name cuda13_0" in lines


@pytest.mark.parametrize("columns", ["40", "60", "80", "140", "250"])
def test_text_fits_columns(run_cli, kinds, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    lines = run_cli("status", *repos(kinds)).stdout.splitlines()
    assert max(map(len, lines)) <= int(columns)
    assert lines[2].split()[:2] == ["Branch", "Nixpkgs" if int(columns) > 60 else lines[2].split()[1]]
    assert lines[2].split()[1].startswith("Nixp")  # narrowed, never left out (Branch keeps the names apart first)


def test_wide_keeps_every_column_in_full(run_cli, kinds, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    lines = run_cli("status", *repos(kinds), "--wide").stdout.splitlines()
    assert lines[2].split() == ["Branch", "Nixpkgs", "Pin", "Package", "CUDA", "Python", "GPU", "Package", "Set",
                                "Recipe", "Pattern", "Variants", "Drift"]
    row = next(line for line in lines if line.startswith("  pytorch-2.9 "))
    assert "pytorch 2.9.1 (override, 1) / ?[3] (4); torchaudio ?[3]" in row
    assert "sm75–sm120 (4)" in row and row.rstrip().endswith("pin drift")  # text: a span past three targets
    assert not any(line.startswith("(left out") for line in lines)


# --- scan: a matrix per package, the same axes ------------------------------------------------------


def test_scan_matrix_per_package_on_the_facts_axes(run_cli, kinds):
    checkout = kinds / "build-pytorch"
    git(checkout, "switch", "-q", "pytorch-2.9")
    report = json.loads(run_cli("scan", "--format", "json", str(checkout / ".flox/pkgs")).stdout)
    git(checkout, "switch", "-q", "main")
    matrices = {m["package"]: m for m in report["matrices"]}
    assert list(matrices) == ["pytorch", "torchaudio"]
    assert matrices["pytorch"]["cells"] == {"sm90/12.9/avx512": 1, "sm100/12.9/avx512": 1, "sm120/12.8/avx2": 1,
                                            "cpu/-/avx2": 1, "darwin/-/-": 1}
    assert matrices["torchaudio"]["cells"] == {"sm75/12.9/avx2": 1}


@pytest.mark.parametrize("kind, cells", [
    ("onnxruntime", {"onnxruntime": {"sm75/12.4/avx2": 1, "sm86/12.4/avx512": 1, "sm90/12.9/avx512": 1,
                                     "cpu/-/avx2": 1}}),
    ("vllm", {"vllm": {"sm89/12.8/-": 1, "sm90/12.9/-": 1, "sm90a/12.9/-": 1, "sm120/12.8/-": 1,
                       "cpu/-/avx512": 1}}),
    ("comfyui", {"comfyui": {"sm89/12.8/-": 1, "sm120/12.8/-": 1, "cpu/-/-": 1}}),
])
def test_scan_puts_gpu_recipes_of_every_kind_in_their_gpu_rows(run_cli, kind, cells):
    report = json.loads(run_cli("scan", "--format", "json", str(KINDS / kind)).stdout)
    assert {m["package"]: m["cells"] for m in report["matrices"]} == cells


# --- lint: no false L001/L005, severities --------------------------------------------------------------


def test_lint_has_no_false_l001_or_l005_on_any_kind(run_cli):
    report = json.loads(run_cli("lint", "--format", "json", "--select", "L", str(KINDS)).stdout)
    found = {(Path(f["path"]).name, f["code"], f["severity"]) for f in report["findings"]}
    assert found == {
        # real: x86 ISA on aarch64-linux (the ONNX Runtime bug, kept as an error)
        ("onnxruntime-python312-cpu-avx2.nix", "L007", "error"),
        # real but no wrong build: python3Packages where the name says python313
        ("pytorch-python313-cuda12_8-sm89-avx512.nix", "L003", "warning"),
        ("pytorch-python313-cuda13_0-sm110-armv9.nix", "L003", "warning"),
        ("torchvision-python313-cuda12_8-sm61-avx.nix", "L003", "warning"),
    }
    assert {(Path(n["path"]).name, n["code"]) for n in report["notes"]} == {
        ("pytorch-python312-cuda12_8-sm120-avx2.nix", "L004"), ("pytorch-python313-cuda13_0-sm110-armv9.nix", "L004")}


def test_lint_catches_what_the_notations_contradict(run_cli, tmp_path):
    """The same shapes with the name changed: every notation is compared, at error severity."""
    cases = {
        "onnxruntime/onnxruntime-python312-cuda12_4-sm75-avx2.nix": ("onnxruntime-python312-cuda12_4-sm80-avx2",
                                                                     "L005", 'gpuArchCMake = "75" targets sm75'),
        "vllm/vllm-python312-cuda12_8-sm89.nix": ("vllm-python312-cuda12_8-sm90",
                                                  "L005", 'config.cudaCapabilities via gpuCapabilities = "8.9"'),
        "vllm/vllm-python313-cuda12_9-sm90.nix": ("vllm-python312-cuda12_9-sm90",
                                                  "L002", "uses python313 (through python313.override via python)"),
        "pytorch/torchvision-python313-cuda12_8-sm61-avx.nix": ("torchvision-python313-cuda12_8-sm75-avx",
                                                                "L005", "the imported recipe"),
    }
    for source, (stem, _, _) in cases.items():
        text = (KINDS / source).read_text().replace(Path(source).stem, stem)
        (tmp_path / f"{stem}.nix").write_text(text)
    report = json.loads(run_cli("lint", "--format", "json", "--select", "L002,L005", str(tmp_path)).stdout)
    found = {Path(f["path"]).stem: (f["code"], f["severity"], f["message"]) for f in report["findings"]}
    for stem, code, words in cases.values():
        assert found[stem][:2] == (code, "error") and words in found[stem][2], found[stem]


def test_status_reads_the_same_shapes_from_a_copy_unchanged(run_cli, kinds, tmp_path):
    """Nothing is written: the repositories are byte-identical after status (checked on a copy)."""
    copy = tmp_path / "build-vllm"
    shutil.copytree(kinds / "build-vllm", copy)
    before = git(copy, "for-each-ref", "--format=%(refname) %(objectname)")
    status = git(copy, "status", "--porcelain")
    assert run_cli("status", "--repo", str(copy), "--format", "json").exit_code == 0
    assert git(copy, "for-each-ref", "--format=%(refname) %(objectname)") == before
    assert git(copy, "status", "--porcelain") == status


# --- --nixpkgs: the version of each package's attribute at each recipe's pin ---------------------------


@pytest.fixture
def package_nixpkgs(tmp_path):
    """A nixpkgs-shaped clone whose one commit has vllm 0.15.1 (python-packages.nix), onnxruntime 1.24.2
    (all-packages.nix's callPackage) and comfyui 0.3.50 (pkgs/by-name): (clone, commit)."""
    root = tmp_path / "nixpkgs"
    files = {
        "pkgs/top-level/python-packages.nix": "self: super: {\n  vllm = callPackage ../development/python-modules/vllm "
                                              "{ };\n}\n",
        "pkgs/development/python-modules/vllm/default.nix": '{ buildPythonPackage }:\nbuildPythonPackage rec {\n'
                                                            '  pname = "vllm";\n  version = "0.15.1";\n}\n',
        "pkgs/top-level/all-packages.nix": "{ callPackage }: {\n  onnxruntime = callPackage "
                                           "../development/libraries/onnxruntime { };\n}\n",
        "pkgs/development/libraries/onnxruntime/default.nix": '{ stdenv }:\nstdenv.mkDerivation {\n'
                                                              '  pname = "onnxruntime";\n  version = "1.24.2";\n}\n',
        "pkgs/by-name/co/comfyui/package.nix": '{ stdenv }:\nstdenv.mkDerivation {\n  pname = "comfyui";\n'
                                               '  version = "0.3.50";\n}\n',
    }
    root.mkdir()
    git(root, "init", "-q", "-b", "master")
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "packages")
    return root, git(root, "rev-parse", "HEAD").strip()


def test_nixpkgs_fills_each_package_s_version_at_its_pin(run_cli, tmp_path, package_nixpkgs):
    clone, commit = package_nixpkgs
    root = tmp_path / "build-vllm"
    root.mkdir()
    git(root, "init", "-q", "-b", "placeholder")
    git(root, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "start")
    pinned = {f".flox/pkgs/{Path(f).name}": re.sub(r"[0-9a-f]{40}", commit, (KINDS / f).read_text())
              for f in LAYOUT["build-vllm"]["main"] + LAYOUT["build-vllm"]["v0.14.0"]
              + ["onnxruntime/onnxruntime-python312-cpu-avx2.nix"]}
    commit_branch(root, "main", pinned)
    result = run_cli("status", "--repo", str(root), "--branches", "main", "--nixpkgs", str(clone), "--format",
                     "markdown")
    package = result.stdout.splitlines()[2].split(" | ")[3]
    # 4 vLLM recipes state no version: the pin's 0.15.1; python312Custom's states 0.14.0 (an override);
    # the ONNX Runtime recipe states 1.18.1 itself, so the pin's 1.24.2 (all-packages.nix) is not used
    assert package == "vllm 0.15.1 (4) / 0.14.0 (override, 1); onnxruntime 1.18.1 (override)"
    report = json.loads(run_cli("status", "--repo", str(root), "--branches", "main", "--nixpkgs", str(clone),
                                "--format", "json").stdout)
    jsonschema.validate(report, SCHEMA)
    versions = report["branches"][0]["packages"][0]["versions"]
    assert versions[0] == {"version": "0.15.1", "origin": "pin", "recipes": 4,
                           "sources": [{"source": f"vllm at nixpkgs {commit[:7]}", "recipes": 4}]}


def test_top_level_and_by_name_versions_are_read_from_the_clone(package_nixpkgs):
    from pinshift.nixpkgs.checkout import NixpkgsCheckout

    clone, commit = package_nixpkgs
    revision = NixpkgsCheckout(clone).at(commit)
    assert (revision.version("vllm"), revision.version("onnxruntime"), revision.version("comfyui"),
            revision.version("torch")) == ("0.15.1", "1.24.2", "0.3.50", None)


def test_scan_counts_interpreter_package_sets_as_status_does(run_cli):
    report = json.loads(run_cli("scan", "--format", "json", str(KINDS / "vllm")).stdout)
    assert report["package_set_drift"]["groups"] == {"python313.override": 2, "python311.override": 1,
                                                     "python312.override": 1, "python313Packages": 1}
    assert report["package_set_drift"]["majority"] == "python313.override"


def test_lint_finds_what_the_kinds_fixtures_import_and_do_not_hold(run_cli):
    """The fixtures are single files taken from their repositories: the companions' PyTorch recipes and the
    CUDA 13.0 recipe's patch are not there, so their references name no file (R001, issue 31), and only those."""
    report = json.loads(run_cli("lint", "--format", "json", "--select", "R", str(KINDS)).stdout)
    found = {(Path(f["path"]).name, f["code"], f["message"].split(",")[0]) for f in report["findings"]}
    assert found == {
        ("pytorch-python313-cuda13_0-sm110-armv9.nix", "R001", "names ./magma-clockrate.patch"),
        ("torchaudio-python313-cuda12_9-sm75-avx2.nix", "R001", "imports ./pytorch-python313-cuda12_9-sm75-avx2.nix"),
        ("torchvision-python313-cuda12_8-sm61-avx.nix", "R001", "calls ./pytorch-python313-cuda12_8-sm61-avx.nix"),
    }
