"""Issue 34: `pinshift infer` learns the commits maintainers actually make.

Each repository is built by hand from the issue's descriptions (tests/infer_shapes.py: the commit is text
edited in Python, never pinshift's output). For each: the inferred steps equal the ones written here by hand
(the files a step runs on compared as the set of files its globs select), replaying the recipe from BASE
gives TARGET's tree byte for byte, no replayed file ends as neither BASE nor TARGET has it, and the titles
read as words (distinct, no regular expression, plurals right).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

import infer_shapes as shapes
from conftest import FIXTURES, git
from pinshift.cli import main
from pinshift.files.globs import matches
from pinshift.infer.blocks import first_mixed_block

PKGS = shapes.PKGS


def pinshift(*args: str) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _):
        code = main(list(args))
        return code, out.getvalue().decode(), err.getvalue().decode()


class Inferred:
    """infer BASE TARGET on a shape's repository, and the replay of its recipe onto branch `replay`."""

    def __init__(self, root: Path, target: str = "target"):
        self.root = root
        self.output = root.parent / f"{root.name}.toml"
        self.code, self.out, err = pinshift("infer", "base", target, "--repo", str(root), "--output", str(self.output))
        assert "Traceback" not in self.out + err, self.out + err
        self.recipe = tomllib.loads(self.output.read_text())
        code, out, err = pinshift("migrate", str(self.output), "--repo", str(root), "--from", "base",
                                  "--branch", "replay")
        assert code == 0, out + err

    @property
    def steps(self) -> list[dict]:
        return self.recipe["steps"]

    def show(self, ref: str, path: str) -> bytes:
        return git(self.root, "show", f"{ref}:{path}").encode()

    def paths(self, ref: str) -> list[str]:
        return git(self.root, "ls-tree", "-r", "--name-only", ref).split()

    def selected(self, globs, ref: str = "base") -> set[str]:
        return {p for p in self.paths(ref) if matches(p, globs)}


def tree(root: Path, ref: str) -> str:
    return git(root, "rev-parse", f"{ref}^{{tree}}").strip()


def check_replay(run: Inferred) -> None:
    """Byte for byte on every file, none half-changed, and the titles read as words."""
    assert run.code == 0, run.out
    assert tree(run.root, "replay") == tree(run.root, "target")
    for path in git(run.root, "diff", "--name-only", "base", "replay").split():
        if path in run.paths("base") and path in run.paths("target"):
            base, target, replay = run.show("base", path), run.show("target", path), run.show("replay", path)
            assert first_mixed_block(base, target, replay) is None, path
    check_titles(run.steps)
    assert run.recipe["name"] == "target"  # TARGET's branch


def check_titles(steps: list[dict]) -> None:
    titles = [step["title"] for step in steps]
    assert len(set(titles)) == len(titles), titles
    for title in titles:
        assert not re.search(r"\(\?|\\[dDwWsSbB.]|\\\\|\^\(|\[\^", title), title  # no regular expression
        assert not re.search(r"\b1 (copies|files|variants|recipes)\b|and the like|\bmores\b", title), title
        assert len(title) <= 120, title
    for step in steps:  # the commit message starts with the title and says the rest in words
        assert step["message"].startswith(step["title"] + "\n\n")
        assert "(?" not in step["message"] and "\\d" not in step["message"]


def params_without(step: dict, *keys: str) -> dict:
    return {k: v for k, v in step["params"].items() if k not in keys}


# --- "Add CUDA 12.x variants" ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cuda_variants(tmp_path_factory):
    return Inferred(shapes.add_cuda_variants(tmp_path_factory.mktemp("cuda") / "repo"))


def test_new_cuda_variants_are_cloned_with_the_innermost_overlay_value(cuda_variants):
    run = cuda_variants
    check_replay(run)
    assert "proof: 59 of 59 changed files reproduced byte for byte" in run.out
    kinds = [step["kind"] for step in run.steps]
    assert kinds == ["clone-files", "clone-files"] + ["replace-in-strings"] * 4
    cuda, sm121 = run.steps[:2]
    # the overlay's own binding, not `overlays` or `nixpkgs_pinned` around it (they overlap: refused before)
    assert params_without(cuda, "select") == {"from": "cuda12_9", "to": "cuda12_8",
                                               "values": {"cudaPackages": "final.cudaPackages_12_8"}}
    gpu = {p for p in run.paths("base") if "-cuda12_9-" in p}
    assert run.selected(cuda["params"]["select"]) == {p for p in gpu if "-sm103-" not in p}
    assert params_without(sm121, "select") == {"from": "sm120", "to": "sm121",
                                                "values": {"gpuArchNum": '"121"', "gpuArchSM": '"12.1"'}}
    assert run.selected(sm121["params"]["select"]) == {p for p in gpu if "-sm120-" in p}
    assert cuda["title"] == "Add 52 cuda12_8 variants of the cuda12_9 recipes"


def test_their_cuda_and_gpu_text_follows_in_strings_and_comments(cuda_variants):
    run = cuda_variants
    replacements = {(s["params"]["old"], s["params"]["new"]): s for s in run.steps[2:]}
    assert set(replacements) == {("12.9", "12.8"), ("SM120", "SM121"), ("RTX 5090", "DGX Spark"), ("12.0", "12.1")}
    cuda = replacements[("12.9", "12.8")]
    assert cuda["params"] == {"paths": ["preConfigure", "meta.longDescription"], "old": "12.9", "new": "12.8",
                              "comments": True}
    assert run.selected(cuda["files"], "target") == {p for p in run.paths("target") if "-cuda12_8-" in p}
    assert replacements[("12.0", "12.1")]["params"] == {"paths": ["meta.longDescription"], "old": "12.0",
                                                         "new": "12.1"}
    for key in (("SM120", "SM121"), ("RTX 5090", "DGX Spark")):
        assert replacements[key]["params"]["comments"] is True
        assert run.selected(replacements[key]["files"], "target") == {p for p in run.paths("target") if "-sm121-" in p}
    assert cuda["title"] == "Say '12.8' instead of '12.9' in comments, preConfigure and meta.longDescription " \
                            "(*-cuda12_8-*.nix)"


def test_a_recipe_for_a_target_commit_is_named_after_its_subject(cuda_variants):
    commit = git(cuda_variants.root, "rev-parse", "target").strip()
    code, out, err = pinshift("infer", "base", commit, "--repo", str(cuda_variants.root))
    recipe = tomllib.loads(out)
    assert code == 0 and recipe["name"] == "add-cuda-12.x-variants"
    assert recipe["description"].startswith("Add CUDA 12.x variants (inferred by pinshift infer from base to ")


# --- a binding added to every companion recipe ------------------------------------------------------


@pytest.fixture(scope="module")
def companions(tmp_path_factory):
    return Inferred(shapes.companion_binding(tmp_path_factory.mktemp("companions") / "repo"))


def test_a_binding_added_to_each_companion_goes_into_its_own_overrideattrs_only(companions):
    run = companions
    check_replay(run)
    [step] = run.steps
    assert step["kind"] == "set-binding"
    assert step["params"] == {"path": "propagatedBuildInputs", "after": "pname", "blank-line": "none",
                              "value": "(oldAttrs.propagatedBuildInputs or []) ++ [ customPytorch.out ]"}
    assert run.selected(step["files"]) == {p for p in run.paths("base") if "/torch" in p}
    for path in run.selected(step["files"]):  # the inline PyTorch build keeps its attrset as it was
        assert run.show("replay", path).count(b"propagatedBuildInputs = ") == 1


# --- a vLLM Python-version branch ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def python_branch(tmp_path_factory):
    return Inferred(shapes.vllm_python_branch(tmp_path_factory.mktemp("python") / "repo"))


def test_a_python_branch_renames_the_let_bound_interpreter_with_its_references(python_branch):
    run = python_branch
    check_replay(run)
    assert "proof: 100 of 100 changed files reproduced byte for byte" in run.out
    assert [(s["kind"], s["params"]) for s in run.steps] == [
        ("rename-files", {"from": "python312", "to": "python311"}),
        ("rename-attr", {"from": "python312", "to": "python311", "base": "nixpkgs_pinned"}),
        ("rename-binding", {"from": "python312Custom", "to": "python311Custom"}),
        ("replace-in-strings", {"paths": ["meta.description"], "old": "3.12", "new": "3.11", "comments": True}),
    ]
    assert all("files" not in step for step in run.steps)
    assert run.steps[2]["title"] == "Rename python312Custom to python311Custom"


@pytest.fixture(scope="module")
def one_binding_name(tmp_path_factory):
    """Python 3.12 and 3.13 recipes, whose interpreter bindings get one name in every file."""
    base = shapes.vllm_files("python312", count=10)
    base.update(shapes.vllm_files("python313", count=10))
    target = {path: re.sub(r"python31[23]Custom", "pythonCustom", text) for path, text in base.items()}
    return Inferred(shapes.make_repository(tmp_path_factory.mktemp("one-name") / "repo", base, target,
                                           "One name for the interpreter binding"))


def test_several_names_renamed_to_one_make_one_regex_step(one_binding_name):
    run = one_binding_name
    check_replay(run)
    [step] = run.steps
    assert (step["kind"], step["params"]) == ("rename-binding", {"from": r"python3\d+Custom", "to": "pythonCustom",
                                                                 "regex": True})
    assert step["title"] == "Rename python312Custom and python313Custom to pythonCustom"


# --- a version bump whose header comments follow ------------------------------------------------------


@pytest.fixture(scope="module")
def version_bump(tmp_path_factory):
    return Inferred(shapes.vllm_version_bump(tmp_path_factory.mktemp("bump") / "repo"))


def test_a_version_bump_replaces_in_strings_and_header_comments_in_one_step(version_bump):
    run = version_bump
    check_replay(run)
    assert "proof: 10 of 10 changed files reproduced byte for byte" in run.out
    assert [(s["kind"], s["params"]) for s in run.steps] == [
        ("replace-in-strings", {"paths": ["version", "meta.description"], "old": "0.15.1", "new": "0.16.0",
                                "comments": True}),
        ("replace-in-strings", {"paths": ["hash"], "old": shapes.VLLM_HASH, "new": shapes.VLLM_NEW_HASH}),
    ]
    assert run.steps[0]["title"] == "Say '0.16.0' instead of '0.15.1' in comments, version and meta.description"
    assert run.steps[1]["title"] == "Say 'sha256-dkxMTSAwL…' instead of 'sha256-Qm9vbGVhb…' in hash"


# --- the Flox-args -> pinned conversion, by hand ------------------------------------------------------


@pytest.fixture(scope="module")
def flox(tmp_path_factory):
    return Inferred(shapes.flox_to_pinned(tmp_path_factory.mktemp("flox") / "repo"))


def test_a_hand_made_conversion_is_pin_nixpkgs_with_its_companions(flox):
    run = flox
    check_replay(run)
    assert "proof: 62 of 62 changed files reproduced byte for byte" in run.out
    kinds = [step["kind"] for step in run.steps]
    assert kinds == ["pin-nixpkgs", "pin-nixpkgs", "rename-attr", "rename-attr", "set-binding", "set-binding"]
    gpu, cpu = run.steps[:2]
    rev = shapes.FLOX_REV
    assert gpu["params"] == {
        "rev": rev, "config": "{\n  allowUnfree = true;\n  cudaSupport = true;\n}",
        "overlays": "[\n  (final: prev: { cudaPackages = final.cudaPackages_12_8; })\n]",
        "map": {"config": "nixpkgs_pinned.config"}, "comment": "Import nixpkgs at a specific revision with CUDA 12.8",
        "companions": "import"}
    assert run.selected(gpu["files"]) == {p for p in run.paths("base") if "-cuda12_8-" in p}  # companions too
    assert cpu["params"] == {"rev": rev, "config": "{\n  allowUnfree = true;\n  cudaSupport = false;\n}",
                             "comment": "Import nixpkgs at a specific revision (no CUDA)"}
    assert [s["params"] for s in run.steps[2:4]] == [
        {"from": "python3Packages", "to": "python313Packages", "base": "nixpkgs_pinned"},
        {"from": "pytorch", "to": "torch", "base": "nixpkgs_pinned"}]
    assert [params_without(s, "value") for s in run.steps[4:]] == [
        {"path": "ninjaFlags", "after": "pname", "comment": "Limit build parallelism to prevent memory saturation"},
        {"path": "requiredSystemFeatures", "after": "ninjaFlags"}]
    pytorch_gpu = {p for p in run.paths("base") if "/pytorch-" in p and "-cuda12_8-" in p}
    assert all(run.selected(s["files"]) == pytorch_gpu for s in run.steps[4:])
    assert not any("files" in s and len(s["files"]) > 4 for s in run.steps)  # no lists of dozens of paths


def test_the_conversion_reproduces_hand_written_pinned_files_by_nix_canonical_parse(flox, nix_oracle):
    run = flox
    for path in run.paths("replay"):
        if path.endswith(".nix"):
            ok, replayed = nix_oracle(run.show("replay", path))
            assert ok, (path, replayed)
            assert replayed == nix_oracle(run.show("target", path))[1], path
    for expected in sorted((FIXTURES / "flox-args" / "expected").glob("*.nix")):  # written by hand for issue 21
        assert nix_oracle(run.show("replay", f"{PKGS}/{expected.name}"))[1] == nix_oracle(expected.read_bytes())[1]
    companion = run.show("replay", f"{PKGS}/torchvision-python313-cuda12_8-sm61-avx.nix")
    assert b"customPytorch = import ./pytorch-python313-cuda12_8-sm61-avx.nix {};\n" in companion


# --- shapes the issue does not name -------------------------------------------------------------------


@pytest.fixture(scope="module")
def notations(tmp_path_factory):
    return Inferred(shapes.three_notations(tmp_path_factory.mktemp("notations") / "repo"))


def test_a_gpu_target_in_three_notations_is_two_values_and_a_replacement_in_comments(notations):
    run = notations
    check_replay(run)
    clone = run.steps[0]
    # sm86 and sm89 are equally near sm90: the first by name is taken
    assert (clone["kind"], clone["params"]) == ("clone-files", {"from": "sm86", "to": "sm90", "values": {
        "gpuArchNum": '"90"', "gpuArchSM": '"sm_90"'}})
    replacements = {(s["params"]["old"], s["params"]["new"]): s["params"] for s in run.steps[1:]}
    assert replacements == {
        ("SM86", "SM90"): {"paths": ["meta.description"], "old": "SM86", "new": "SM90", "comments": True},
        ("Ampere", "Hopper"): {"paths": ["preConfigure", "meta.description"], "old": "Ampere", "new": "Hopper",
                               "comments": True},
        ("RTX 3090/A40", "H100/L40S"): {"paths": ["preConfigure", "meta.description"], "old": "RTX 3090/A40",
                                        "new": "H100/L40S", "comments": True},
    }


@pytest.fixture(scope="module")
def clone_and_bump(tmp_path_factory):
    return Inferred(shapes.clone_and_bump(tmp_path_factory.mktemp("clone-bump") / "repo"))


def test_clones_and_a_pin_bump_in_one_commit(clone_and_bump):
    run = clone_and_bump
    check_replay(run)
    clone, swap = run.steps[:2]
    assert (clone["kind"], params_without(clone, "select")) == ("clone-files", {
        "from": "sm75", "to": "sm70", "values": {"gpuArchNum": '"70"', "gpuArchSM": '"7.0"'}})
    assert run.selected(clone["params"].get("select", ["**"])) & {p for p in run.paths("base") if "sm75" in p} == \
        {p for p in run.paths("base") if "sm75" in p}
    # the copies are made from BASE's sources: the pin swap that follows reaches them too
    assert (swap["kind"], swap["params"]) == ("pin-swap", {"old": "6a030d5", "new": shapes.NEW_REV})
    assert "files" not in swap
    assert {(s["params"]["old"], s["params"]["new"]) for s in run.steps[2:]} == {
        ("Turing", "Volta"), ("SM75", "SM70"), ("T4/RTX 2080 Ti", "V100"), ("7.5", "7.0")}


def test_a_new_file_that_is_no_copy_is_residue_not_a_clone_of_an_unrelated_recipe(tmp_path):
    """`magma-cuda12_9-sm90-avx2.nix` is one name change away from `pytorch-python313-cuda12_9-sm90-avx2.nix`,
    but shares none of its lines: no clone-files is proposed for it."""
    base = {f"{PKGS}/pytorch-python313-cuda12_9-sm90-avx2.nix": shapes.vllm_recipe("python313", "12_9", "90", "avx2")[1]}
    magma = '{ callPackage }:\ncallPackage ../../builders/magma.nix { cpuTarget = "avx2"; gpuTarget = "sm90"; }\n'
    root = shapes.make_repository(tmp_path / "repo", base, {f"{PKGS}/magma-cuda12_9-sm90-avx2.nix": magma}, "MAGMA")
    code, out, err = pinshift("infer", "base", "target", "--repo", str(root))
    assert code == 1 and out == ""
    assert "no step reproduces a change byte for byte (each candidate changes what TARGET does not): no " \
        "recipe written; every changed file is to edit by hand" in err
    assert "edit by hand: 1 file a maintainer still edits (no step reproduces any of their changes" in err
    assert f"{PKGS}/magma-cuda12_9-sm90-avx2.nix: TARGET adds this file; no step creates it" in err
