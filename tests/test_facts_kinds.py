"""The facts of recipes of every repository kind (issue 33), each with the source it was read from.

The fixtures in tests/fixtures/kinds/ are written from the shapes issue 33 and the seeds describe
(PyTorch pinned and Flox-args, torchvision/torchaudio companions importing a PyTorch recipe, vLLM with
nixpkgs `config.cudaCapabilities` and `python313.override { packageOverrides … }`, ONNX Runtime with
`gpuArchCMake` and `ortVersion`, ComfyUI) and from shapes it does not (`cudaPackages_12` for cuda12_8,
a let-bound capability list, `"9.0a"`, `python312Custom`, `python311` through `pythonEnv.pkgs`, a version
only in `src.rev`, `with nixpkgs_pinned;`). EXPECTED is written by hand from reading each file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES
from pinshift.facts.collect import recipe_from_bytes
from pinshift.facts.notation import cuda_set_version, name_parts, normalize_sm, sm_targets
from pinshift.facts.resolve import Resolver

KINDS = FIXTURES / "kinds"
FILE = "file name"

# file -> (kind, package, version, target, cuda, python, isa), each value as (value, source) or None
EXPECTED = {
    # --- build-pytorch ---
    "pytorch/pytorch-python313-cuda12_8-sm89-avx512.nix": (
        "gpu", ("pytorch", FILE), None, ("sm89", "gpuArchNum"), ("12.8", "file name cuda12_8"),
        ("3.13", "file name; python3Packages is the pin's default"), ("avx512", "cpuFlags")),
    "pytorch/pytorch-python313-cuda12_9-sm90-avx512.nix": (
        "gpu", ("pytorch", FILE), None, ("sm90", "gpuArchNum"), ("12.9", "cudaPackages_12_9 overlay"),
        ("3.13", "python313Packages"), ("avx512", "cpuFlags")),
    "pytorch/pytorch-python313-cuda13_0-sm110-armv9.nix": (
        "gpu", ("pytorch", FILE), ("2.10.0", "version via torchVersion"), ("sm110", "gpuTargets"),
        ("13.0", "cudaPackages_13 overlay, minor from the file name cuda13_0"),
        ("3.13", "file name; python3Packages is the pin's default"), ("armv9", "cpuFlags")),
    "pytorch/pytorch-python312-cuda12_8-sm120-avx2.nix": (
        "gpu", ("pytorch", FILE), None, ("sm120", "gpuArchSM"),
        ("12.8", "cudaPackages_12 overlay, minor from the file name cuda12_8"), ("3.12", "python312Packages"),
        ("avx2", "env.NIX_CFLAGS_COMPILE")),
    "pytorch/pytorch-python313-cuda12_9-sm100-avx512.nix": (
        "gpu", ("pytorch", FILE), ("2.9.1", "src.rev"), ("sm100", "TORCH_CUDA_ARCH_LIST in a string via gpuArch"),
        ("12.9", "cudaPackages_12_9 (.override argument)"), ("3.13", "python313Packages"),
        ("avx512", "compiler flags in a string")),
    "pytorch/pytorch-python313-cpu-avx2.nix": (
        "cpu", ("pytorch", FILE), None, None, ("12.9", "cudaPackages_12_9 overlay"), ("3.13", "python313Packages"),
        ("avx2", "cpuFlags")),
    "pytorch/pytorch-python313-darwin-mps.nix": (
        "darwin", ("pytorch", FILE), None, None, None, ("3.13", "python313Packages"), None),
    "pytorch/torchvision-python313-cuda12_8-sm61-avx.nix": (
        "gpu", ("torchvision", FILE), None,
        ("sm61", "the imported recipe (callPackage ./pytorch-python313-cuda12_8-sm61-avx.nix)"),
        ("12.8", "the imported recipe (callPackage ./pytorch-python313-cuda12_8-sm61-avx.nix)"),
        ("3.13", "file name; python3Packages is the pin's default"), ("avx", "cpuFlags")),
    "pytorch/torchaudio-python313-cuda12_9-sm75-avx2.nix": (
        "gpu", ("torchaudio", FILE), None, ("sm75", "TORCH_CUDA_ARCH_LIST"), ("12.9", "cudaPackages_12_9 overlay"),
        ("3.13", "python313Packages"), ("avx2", "NIX_CFLAGS_COMPILE")),
    # --- build-vllm ---
    "vllm/vllm-python313-cuda12_9-sm90.nix": (
        "gpu", ("vllm", FILE), None, ("sm90", "config.cudaCapabilities"), ("12.9", "cudaPackages_12_9 overlay"),
        ("3.13", "python313.override via python"), None),
    "vllm/vllm-python312-cuda12_8-sm89.nix": (
        "gpu", ("vllm", FILE), ("0.14.0", "version via vllmVersion"),
        ("sm89", "config.cudaCapabilities via gpuCapabilities"), ("12.8", "cudaPackages_12_8 overlay"),
        ("3.12", "python312.override via python312Custom"), None),
    "vllm/vllm-python313-cuda12_9-sm90a.nix": (
        "gpu", ("vllm", FILE), None, ("sm90a", "config.cudaCapabilities"), ("12.9", "cudaPackages_12_9 overlay"),
        ("3.13", "python313.override via python313"), None),
    "vllm/vllm-python313-cpu-avx512.nix": (
        "cpu", ("vllm", FILE), None, None, None, ("3.13", "python313Packages"), ("avx512", "cpuFlags")),
    "vllm/vllm-python311-cuda12_8-sm120.nix": (
        "gpu", ("vllm", FILE), None, ("sm120", "config.cudaCapabilities via cudaCaps"),
        ("12.8", "cudaPackages_12_8 overlay"), ("3.11", "python311.override via pythonPackages, pythonEnv"), None),
    # --- build-onnxruntime ---
    "onnxruntime/onnxruntime-python312-cuda12_4-sm75-avx2.nix": (
        "gpu", ("onnxruntime", FILE), ("1.18.1", "version via ortVersion"), ("sm75", "gpuArchCMake"),
        ("12.4", "cudaPackages_12_4 overlay"), ("3.12", "python312Packages"), ("avx2", "cpuFlags")),
    "onnxruntime/onnxruntime-python313-cuda12_9-sm90-avx512.nix": (
        "gpu", ("onnxruntime", FILE), ("1.24.2", "version via ortVersion"), ("sm90", "gpuArchCMake"),
        ("12.9", "cudaPackages_12_9 overlay"), ("3.13", "python313Packages"), ("avx512", "cpuFlags")),
    "onnxruntime/onnxruntime-python312-cuda12_4-sm86-avx512.nix": (
        "gpu", ("onnxruntime", FILE), ("1.18.1", "version"), ("sm86", "CMAKE_CUDA_ARCHITECTURES in a string"),
        ("12.4", "cudaPackages_12_4 overlay"), ("3.12", "python312Packages"), ("avx512", "NIX_CFLAGS_COMPILE")),
    "onnxruntime/onnxruntime-python312-cpu-avx2.nix": (
        "cpu", ("onnxruntime", FILE), ("1.18.1", "version via ortVersion"), None, ("12.4", "cudaPackages_12_4 overlay"),
        ("3.12", "python312Packages"), ("avx2", "cpuFlags")),
    # --- build-comfyui ---
    "comfyui/comfyui-python312-cuda12_8-sm89.nix": (
        "gpu", ("comfyui", FILE), ("0.3.40", "version"), ("sm89", "config.cudaCapabilities"),
        ("12.8", "cudaPackages_12_8 overlay"), ("3.12", "python312Packages"), None),
    "comfyui/comfyui-python313-cpu.nix": (
        "cpu", ("comfyui", FILE), ("0.3.43", "version via comfyuiVersion"), None, None,
        ("3.13", "python313.withPackages"), None),
    "comfyui/comfyui-python312-cuda12_8-sm120.nix": (
        "gpu", ("comfyui", FILE), ("0.3.40", "version"), ("sm120", "config.cudaCapabilities"), ("12.8", "cudaVersion"),
        ("3.12", "python312Packages"), None),
}
# file -> (pname as resolved, the package set as status counts it, the attribute built, recipe or override)
BUILT = {
    "pytorch/pytorch-python313-cuda12_8-sm89-avx512.nix": ("python3Packages", "pytorch"),
    "pytorch/pytorch-python313-cuda13_0-sm110-armv9.nix": ("python3Packages", "torch"),
    "pytorch/torchvision-python313-cuda12_8-sm61-avx.nix": ("python3Packages", "torchvision"),
    "vllm/vllm-python313-cuda12_9-sm90.nix": ("python313.override", "vllm"),
    "vllm/vllm-python312-cuda12_8-sm89.nix": ("python312.override", "vllm"),
    "vllm/vllm-python311-cuda12_8-sm120.nix": ("python311.override", "vllm"),
    "onnxruntime/onnxruntime-python312-cuda12_4-sm75-avx2.nix": ("python312Packages", "onnxruntime"),
    "comfyui/comfyui-python312-cuda12_8-sm89.nix": ("python312Packages", None),
    "comfyui/comfyui-python313-cpu.nix": ("python313.withPackages", None),
}


def facts_of(relative: str):
    path = KINDS / relative
    return recipe_from_bytes(relative, path.read_bytes()).facts


def sourced(fact):
    return (fact.value, fact.source) if fact is not None else None


def test_every_fixture_has_expected_facts():
    assert sorted(EXPECTED) == sorted(str(p.relative_to(KINDS)) for p in KINDS.glob("*/*.nix"))


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_facts_and_their_sources(relative):
    facts = facts_of(relative)
    kind, package, version, target, cuda, python, isa = EXPECTED[relative]
    got = (facts.kind, sourced(facts.package), sourced(facts.version), sourced(facts.target), sourced(facts.cuda),
           sourced(facts.python), sourced(facts.isa))
    assert got == (kind, package, version, target, cuda, python, isa)
    assert facts.pname is not None and facts.pname.value == Path(relative).stem  # resolved through let bindings
    assert not facts.problems


@pytest.mark.parametrize("relative", sorted(BUILT))
def test_what_is_built_and_through_which_set(relative):
    facts = facts_of(relative)
    assert (facts.set_shown, facts.attribute.value if facts.attribute else None) == BUILT[relative]


def test_pname_built_from_let_bound_parts_points_at_its_binding():
    facts = facts_of("onnxruntime/onnxruntime-python312-cuda12_4-sm86-avx512.nix")
    assert (facts.pname.value, facts.pname.source) == ("onnxruntime-python312-cuda12_4-sm86-avx512",
                                                       "pname via baseName, cudaTag")
    text = (KINDS / "onnxruntime/onnxruntime-python312-cuda12_4-sm86-avx512.nix").read_bytes()
    assert text[facts.pname.offset:].startswith(b'"${baseName}-${cudaTag}-sm86-avx512"')


def test_every_gpu_notation_is_kept_with_how_it_was_followed():
    facts = facts_of("pytorch/pytorch-python313-cuda12_9-sm90-avx512.nix")
    assert {name: (fact.value, fact.source) for name, fact in facts.gpu.items()} == {
        "gpuArchNum": ("90", "gpuArchNum"), "gpuArchSM": ("9.0", "gpuArchSM"),
        "gpuTargets": ("9.0", "gpuTargets via gpuArchSM")}
    ort = facts_of("onnxruntime/onnxruntime-python313-cuda12_9-sm90-avx512.nix")
    assert {name: (fact.value, fact.source) for name, fact in ort.gpu.items()} == {
        "gpuArchCMake": ("90", "gpuArchCMake"),
        "CMAKE_CUDA_ARCHITECTURES": ("90", "CMAKE_CUDA_ARCHITECTURES (cmakeFeature) via gpuArchCMake")}


def test_a_function_argument_is_not_taken_for_a_let_binding(tmp_path):
    text = b'''{ gpuArch, python3Packages }:
let unrelated = { gpuArch = "8.6"; }; in
(python3Packages.torch.override { gpuTargets = [ gpuArch ]; }).overrideAttrs (old: { pname = "x"; })
'''
    facts = recipe_from_bytes("pytorch-python313-cuda12_9-sm90-avx2.nix", text).facts
    assert facts.gpu["gpuTargets"].value == "[ gpuArch ]"  # as written: the caller decides it
    assert (facts.target.value, facts.target.source) == ("sm90", "file name sm90")


# --- notations --------------------------------------------------------------------------------------


@pytest.mark.parametrize("written, expected", [
    ("9.0", "90"), ("90", "90"), ("sm_90", "90"), ("SM90", "90"), ("sm90", "90"), ("compute_90", "90"),
    ("90-real", "90"), ("9.0+PTX", "90"), ("12.0", "120"), ("120", "120"), ("10.3", "103"), ("9.0a", "90a"),
    ("sm_90a", "90a"), ("90a", "90a"), ("75", "75"), ("7.5", "75"),
    ("native", None), ("all-major", None), ("9", None), ("ampere", None), ("", None)])
def test_gpu_targets_normalise_to_one_notation(written, expected):
    assert normalize_sm(written) == expected


def test_target_lists_split_in_any_separator():
    assert sm_targets("8.6;9.0+PTX") == ("sm86", "sm90")
    assert sm_targets("8.0 8.6 9.0") == ("sm80", "sm86", "sm90")
    assert sm_targets("86;86-real") == ("sm86",)


@pytest.mark.parametrize("name, expected", [
    ("cudaPackages_12_9", ("12", "9")), ("cudaPackages_12", ("12", None)), ("cudaPackages_13", ("13", None)),
    ("cudaPackages", ("", None)), ("cudaPackagesGoogle", None)])
def test_cuda_sets(name, expected):
    assert cuda_set_version(name) == expected


@pytest.mark.parametrize("stem, parts", [
    ("pytorch-python313-cuda12_9-sm90-avx512", ("pytorch", "3.13", "12.9", "sm90", "avx512", True)),
    ("vllm-python313-cuda12_9-sm90a", ("vllm", "3.13", "12.9", "sm90a", None, True)),
    ("onnxruntime-gpu-py312-cu124-sm75", ("onnxruntime-gpu", "3.12", "12.4", "sm75", None, True)),
    ("pytorch-python313-darwin-mps", ("pytorch", "3.13", None, None, None, True)),
    ("comfyui-python313-cpu", ("comfyui", "3.13", None, None, None, True)),
    ("pytorch-cuda13-sm110", ("pytorch", None, "13.x", "sm110", None, True)),
    ("odd-name", ("odd-name", None, None, None, None, False)),
    ("pytorch-python313-cuda12_9-sm90-fast", ("pytorch", "3.13", "12.9", "sm90", None, False)),
])
def test_file_names_read_token_by_token(stem, parts):
    name = name_parts(stem)
    assert (name.project, name.python, name.cuda, name.sm, name.isa, name.convention) == parts


# --- linear in the file's size ------------------------------------------------------------------------


def _many_references(n: int) -> bytes:
    """A let of n names each bound to the next, and n attrsets each naming gpuTargets through the first."""
    chain = "".join(f'  v{i} = v{i + 1};\n' for i in range(n)) + f'  v{n} = "9.0";\n'
    uses = "".join(f'  a{i} = {{ gpuTargets = [ v0 ]; pname = v0; cudaCapabilities = v{i}; }};\n' for i in range(n))
    return f"let\n{chain}in {{\n{uses}}}\n".encode()


def test_name_lookups_are_bounded_whatever_the_file(monkeypatch):
    """Following let-bound names climbs the tree from each reference; a Resolver makes at most BUDGET
    lookups per file, so reading the facts stays linear in the file's size (n and 8n: same count)."""
    counts = {}
    original = Resolver.follow

    def counting(self, node):
        result = original(self, node)
        counts[id(self)] = self.lookups
        return result

    monkeypatch.setattr(Resolver, "follow", counting)
    made = []
    for n in (40, 320):
        counts.clear()
        recipe_from_bytes("pytorch-python313-cuda12_9-sm90-avx2.nix", _many_references(n))
        made.append(max(counts.values()))
    assert made[0] == made[1] <= 256


MORE_SHAPES = {
    # several capabilities in a let-bound `config` passed with `inherit config;`, a bare `python3.pkgs`
    "vllm-python313-cuda12_9.nix": (b'''{ pkgs ? import <nixpkgs> {} }:
let
  config = { allowUnfree = true; cudaSupport = true; cudaCapabilities = [ "8.6" "8.9" "9.0" ]; };
  nixpkgs_pinned = import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/0182a361324364ae3f436a63005877674cf45efb.tar.gz") {
    inherit config;
    overlays = [ (final: prev: { cudaPackages = final.cudaPackages_12_9; }) ];
  };
in nixpkgs_pinned.python3.pkgs.vllm.overridePythonAttrs (old: { pname = "vllm-python313-cuda12_9"; })
''', ("gpu", ("sm86+sm89+sm90", "config.cudaCapabilities"), ("12.9", "cudaPackages_12_9 overlay"),
      ("3.13", "file name; python3 is the pin's default"), None)),
    # an interpolated gpuArchSM, CUDA through packageOverrides, pkgsCuda, an -march level, an unresolvable list
    "pytorch-python312-cuda12_6-sm89-avx2.nix": (b'''{ pkgs ? import <nixpkgs> {} }:
let
  gpuArchNum = "89";
  gpuArchSM = "sm_${gpuArchNum}";
  nixpkgs_pinned = import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/0182a361324364ae3f436a63005877674cf45efb.tar.gz") {
    config.packageOverrides = p: { cudaPackages = p.cudaPackages_12_6; };
  };
in (nixpkgs_pinned.pkgsCuda.python312Packages.torch.override { gpuTargets = [ gpuArchSM ]; }).overrideAttrs (old: {
  pname = "pytorch-python312-cuda12_6-sm89-avx2";
  env.NIX_CFLAGS_COMPILE = "-march=x86-64-v3";
  env.TORCH_CUDA_ARCH_LIST = nixpkgs_pinned.lib.concatStringsSep ";" [ "8.9" ];
})
''', ("gpu", ("sm89", "gpuArchNum"), ("12.6", "cudaPackages_12_6 overlay"), ("3.12", "python312Packages"),
      ("avx2", "env.NIX_CFLAGS_COMPILE"))),
}


@pytest.mark.parametrize("name", sorted(MORE_SHAPES))
def test_more_shapes_than_the_issue_names(name):
    text, (kind, target, cuda, python, isa) = MORE_SHAPES[name]
    facts = recipe_from_bytes(name, text).facts
    assert (facts.kind, sourced(facts.target), sourced(facts.cuda), sourced(facts.python), sourced(facts.isa)) == (
        kind, target, cuda, python, isa)


def test_lint_leaves_a_several_target_build_without_sm_in_its_name_alone(run_cli, tmp_path):
    name = "vllm-python313-cuda12_9.nix"
    (tmp_path / name).write_bytes(MORE_SHAPES[name][0])
    report = __import__("json").loads(run_cli("lint", "--format", "json", str(tmp_path)).stdout)
    assert sorted((f["code"], f["severity"]) for f in report["findings"]) == [("L000", "warning"), ("L003", "warning")]
