"""The stand-in nixpkgs (src/pinshift/evaluation/standin) evaluated by the real nix-instantiate: what each recipe builds.

Expected summaries are written by hand from the recipes (tests/fixtures/builds/expected/*.json): the pin and its
config and overlays recorded, the package path, the overrides in order with the names each sets, the final
attributes, symbolic values as `«path»`. Then the semantics the issue names, one test each: overlays and
packageOverrides as nixpkgs applies them (final/prev, `python3Packages = python3.pkgs`), `lib` for real, fetchers
recorded, pins recorded not fetched, companions imported for real, the nested self-reference's infinite recursion.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from build_repos import BUILDS, PKGS, fixture_files
from conftest import require_nix
from pinshift.evaluation.build_diff import EvaluationStats, evaluate_snapshots
from pinshift.evaluation.evaluation import Evaluator, Job, names_of, universe
from pinshift.evaluation.snapshots import Scratch, Snapshot
from pinshift.evaluation.summary_memo import SummaryMemo
from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe
from pinshift.planning.memo import blob_id

EXPECTED = BUILDS / "expected"
PIN = """  nixpkgs_pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";
  }}) {{ config = {{ allowUnfree = true; }}; overlays = [ {overlays} ]; }};
"""


def tree(tmp_path: Path, files: dict[str, str | bytes]) -> Snapshot:
    root = tmp_path / "tree"
    blobs = {}
    for path, data in files.items():
        data = data.encode() if isinstance(data, str) else data
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
        blobs[path] = blob_id(data)
    return Snapshot("tree", root, blobs)


def evaluate(tmp_path: Path, files: dict[str, str | bytes], paths=None, stats=None) -> dict:
    """path -> Evaluation of `files` written as a tree (every .nix file, or `paths`)."""
    nix = require_nix()
    snapshot = tree(tmp_path, files)
    with Scratch() as scratch:
        found = evaluate_snapshots(nix, SummaryMemo(None), scratch, [(snapshot, paths or snapshot.nix_paths())], stats)
    return {path: evaluation for (_, path), evaluation in found.items()}


def summary(tmp_path: Path, files: dict[str, str | bytes], path: str) -> dict:
    evaluation = evaluate(tmp_path, files, [path])[path]
    assert evaluation.error is None, evaluation.error
    return evaluation.summary


def pinned(body: str, overlays: str = "", rev: str = OLD_REV, head: str = "") -> str:
    return "{ pkgs ? import <nixpkgs> {} }:\nlet\n" + PIN.format(rev=rev, overlays=overlays) + head + "in\n" + body + "\n"


# --- hand-written summaries of the seed shapes -----------------------------------------------------------------------


def test_the_seed_gpu_recipe_is_summarised_as_written_by_hand(tmp_path):
    text = render_recipe(Variant("90", "avx512"))
    got = summary(tmp_path, {f"{PKGS}/x.nix": text}, f"{PKGS}/x.nix")
    assert got == json.loads((EXPECTED / "seed-sm90-avx512.json").read_text())


def test_a_flox_args_recipe_is_called_with_the_callers_set(tmp_path):
    path = f"{PKGS}/pytorch-python313-cuda12_8-sm89-avx512.nix"
    got = summary(tmp_path, fixture_files("flox"), path)
    assert got == json.loads((EXPECTED / "flox-sm89-avx512.json").read_text())


def test_python313_override_with_package_overrides_is_the_package_set_of_its_pkgs(tmp_path):
    path = f"{PKGS}/vllm-python313-cuda12_9-sm90.nix"
    got = summary(tmp_path, fixture_files("vllm"), path)
    assert got == json.loads((EXPECTED / "vllm-sm90.json").read_text())


# --- overlays, scopes and packageOverrides as nixpkgs applies them ---------------------------------------------------

SOURCE = {"fetchFromGitHub": {"owner": "pytorch", "repo": "pytorch", "rev": "v2.10.0", "fetchSubmodules": True,
                              "hash": "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}


def test_an_overlay_on_python3Packages_reaches_python3Packages_torch_only(tmp_path):
    files = fixture_files("overlay")
    path = f"{PKGS}/pytorch-python313-cuda12_9-sm90-avx512.nix"
    renamed = files[path].decode().replace("nixpkgs_pinned.python3Packages.torch", "nixpkgs_pinned.python313Packages.torch")
    files[f"{PKGS}/renamed.nix"] = renamed
    found = evaluate(tmp_path, files, [path, f"{PKGS}/renamed.nix"])
    before, after = found[path].summary, found[f"{PKGS}/renamed.nix"].summary
    assert (before["package"], before["version"], before["src"]) == ("python3Packages.torch", "2.10.0", SOURCE)
    assert before["package_set"] == [{"torch": {"package": "python3Packages.torch", "version": "2.10.0", "src": SOURCE,
                                                "overrides": [{"overrideAttrs": ["src", "version"]}]}}]
    assert before["overrides"] == [{"override": ["cudaSupport", "gpuTargets"]},  # the overlay's own is the set's
                                   {"overrideAttrs": ["buildInputs", "pname", "preConfigure"]}]
    assert (after["package"], after["version"], after["src"]) == (
        "python313Packages.torch", "«python313Packages.torch.version»", "«python313Packages.torch.src»")
    assert after["package_set"] == []
    # the overlays given to nixpkgs are recorded either way: the cudaPackages one, then the scope override
    assert before["nixpkgs"]["overlays"] == after["nixpkgs"]["overlays"]
    assert before["nixpkgs"]["overlays"][0] == {"cudaPackages": "«cudaPackages_12_9»"}
    assert before["nixpkgs"]["config"] == {"allowUnfree": True, "cudaSupport": True, "cudaCapabilities": ["9.0"]}
    assert before["override"] == {"cudaSupport": True, "gpuTargets": ["9.0"]}  # config.cudaCapabilities, read for real
    assert before["buildInputs"] == ["«python3Packages.torch.buildInputs»", "«cudaPackages_12_9.cudnn»"]


@pytest.mark.parametrize("overlay, reaches", [
    # python3Packages is python3.pkgs: packageOverrides of the interpreter reach it, not python313Packages
    ("(final: prev: { python3 = prev.python3.override { packageOverrides = pf: pp: { torch = pp.torch-bin; }; }; })",
     {"python3Packages"}),
    # pythonPackagesExtensions reach every Python package set
    ("(final: prev: { pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [ (pf: pp: { torch = pp.torch-bin; }) ]; })",
     {"python3Packages", "python313Packages"}),
    # a package set's own override reaches only it
    ("(final: prev: { python313Packages = prev.python313Packages.override { overrides = pf: pp: { torch = pp.torch-bin; }; }; })",
     {"python313Packages"}),
])
def test_python_package_set_overrides_reach_the_sets_nixpkgs_says(tmp_path, overlay, reaches):
    files = {f"{name}.nix": pinned(f"nixpkgs_pinned.{name}.vllm", overlay) for name in ("python3Packages", "python313Packages")}
    found = evaluate(tmp_path, files)
    for name in ("python3Packages", "python313Packages"):
        got = found[f"{name}.nix"].summary
        assert got["package"] == f"{name}.vllm"
        expected = [{"torch": f"«{name}.torch-bin»"}] if name in reaches else []
        assert got["package_set"] == expected, name


def test_overlays_see_final_and_prev(tmp_path):
    overlays = ("(final: prev: { cudaPackages = final.cudaPackages_12_9; }) "
                "(final: prev: { magma = prev.magma.override { cudaPackages = final.cudaPackages; }; })")
    got = summary(tmp_path, {"m.nix": pinned("nixpkgs_pinned.magma", overlays)}, "m.nix")
    # final.cudaPackages is the first overlay's value; prev.magma the set's own, overridden here: the set's override
    assert got["package"] == "magma" and got["override"] == {"cudaPackages": "«cudaPackages_12_9»"}
    assert got["overrides"] == []  # made by the overlay: shown in package_set/nixpkgs.overlays, not as the recipe's
    assert got["nixpkgs"]["overlays"][1] == {"magma": {"package": "magma", "override": {"cudaPackages": "«cudaPackages_12_9»"},
                                                       "overrides": [{"override": ["cudaPackages"]}]}}


def test_config_package_overrides_are_applied_to_the_set(tmp_path):
    files = {"p.nix": (BUILDS.parent / "steps" / "rename-attr" / "package-overrides.nix").read_text()}
    got = summary(tmp_path, files, "p.nix")
    numpy = {"package": "python3Packages.numpy", "doCheck": False, "overrides": [{"overridePythonAttrs": ["doCheck"]}]}
    assert got["nativeBuildInputs"] == ["«python3Packages.torch.nativeBuildInputs»", numpy]
    assert got["package_set"] == [{"numpy": numpy}]
    assert got["nixpkgs"]["config"] == {"allowUnfree": True, "packageOverrides": "«function»"}


def test_override_attrs_with_final_and_prev_sees_the_final_attributes(tmp_path):
    body = ('nixpkgs_pinned.python3Packages.torch.overrideAttrs (finalAttrs: prev: {\n'
            '  version = "2.10.0";\n  name = "torch-${finalAttrs.version}";\n  old = prev.version;\n})')
    got = summary(tmp_path, {"f.nix": pinned(body)}, "f.nix")
    assert (got["version"], got["name"], got["old"]) == ("2.10.0", "torch-2.10.0", "«python3Packages.torch.version»")


def test_stdenv_mkDerivation_and_fetchers_record_their_arguments(tmp_path):
    body = """nixpkgs_pinned.stdenv.mkDerivation (finalAttrs: {
  pname = "tool";
  version = "1.2";
  src = nixpkgs_pinned.fetchurl { url = "https://example.org/tool-${finalAttrs.version}.tar.gz"; hash = "sha256-x"; };
  patches = [ ./fix.patch ];
  buildInputs = [ nixpkgs_pinned.zlib ];
})"""
    got = summary(tmp_path, {"d/t.nix": pinned(body), "d/fix.patch": "x"}, "d/t.nix")
    assert got["package"] == "stdenv.mkDerivation"
    assert got["overrides"] == [{"call": ["buildInputs", "patches", "pname", "src", "version"]}]
    assert got["src"] == {"fetchurl": {"url": "https://example.org/tool-1.2.tar.gz", "hash": "sha256-x"}}
    assert got["patches"] == ["./d/fix.patch"]  # a path: repository-relative, never copied to the store
    assert got["buildInputs"] == ["«zlib»"]


# --- lib works for real ----------------------------------------------------------------------------------------------


def test_lib_functions_recipes_use_compute_for_real(tmp_path):
    body = """with nixpkgs_pinned.lib; {
  joined = concatStringsSep " " [ "-mavx2" "-mfma" ];
  mapped = concatMapStringsSep "," (x: "sm_" + x) [ "80" "90" ];
  opts = optionals true [ "a" ] ++ optionals false [ "b" ] ++ optional true "c";
  str = optionalString false "no" + optionalString true "yes";
  attrs = optionalAttrs true { x = 1; } // optionalAttrs false { y = 2; };
  prefix = hasPrefix "cuda" "cuda_cudart";
  suffix = removeSuffix ".nix" "a.nix";
  split = splitString "." "12.9.1";
  newer = versionAtLeast "2.10.0" "2.9.1";
  older = versionOlder "2.10.0" "2.9.1";
  mm = versions.majorMinor "12.9.1";
  upper = toUpper "sm90a";
  pairs = mapAttrsToList (n: v: "${n}=${toString v}") { a = 1; b = 2; };
  filtered = filter (x: x > 1) [ 1 2 3 ];
  found = elem "9.0" [ "8.9" "9.0" ];
  flat = flatten [ 1 [ 2 [ 3 ] ] ];
  uniq = unique [ 1 2 1 3 ];
  rec' = recursiveUpdate { a = { b = 1; c = 2; }; } { a = { b = 3; }; };
  gen = genAttrs [ "x" "y" ] (n: n + n);
  cmake = cmakeFeature "CMAKE_CUDA_ARCHITECTURES" "90";
  bool = cmakeBool "USE_CUDA" true;
}"""
    got = summary(tmp_path, {"lib.nix": pinned(body)}, "lib.nix")["value"]
    assert got == {
        "joined": "-mavx2 -mfma", "mapped": "sm_80,sm_90", "opts": ["a", "c"], "str": "yes", "attrs": {"x": 1},
        "prefix": True, "suffix": "a", "split": ["12", "9", "1"], "newer": True, "older": False, "mm": "12.9",
        "upper": "SM90A", "pairs": ["a=1", "b=2"], "filtered": [2, 3], "found": True, "flat": [1, 2, 3],
        "uniq": [1, 2, 3], "rec'": {"a": {"b": 3, "c": 2}}, "gen": {"x": "xx", "y": "yy"},
        "cmake": "-DCMAKE_CUDA_ARCHITECTURES=90", "bool": "-DUSE_CUDA:BOOL=TRUE",
    }


def test_a_lib_function_the_stand_in_lacks_is_a_recorded_call(tmp_path):
    got = summary(tmp_path, {"u.nix": pinned('{ x = nixpkgs_pinned.lib.someFutureFunction "a"; }')}, "u.nix")
    assert got["value"] == {"x": {"lib.someFutureFunction": "a"}}


# --- pins: recorded, never fetched ------------------------------------------------------------------------------------


@pytest.mark.parametrize("pin, expected", [
    ('import (builtins.fetchTarball { url = "https://github.com/NixOS/nixpkgs/archive/%s.tar.gz"; sha256 = "0abc"; }) {}' % NEW_REV,
     {"rev": NEW_REV, "source": "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz", "hash": "0abc"}),
    ('import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/%s.tar.gz") {}' % NEW_REV,
     {"rev": NEW_REV, "source": "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz", "hash": None}),
    ('import ((import <nixpkgs> {}).fetchFromGitHub { owner = "NixOS"; repo = "nixpkgs"; rev = "%s"; hash = "sha256-h"; }) {}' % NEW_REV,
     {"rev": NEW_REV, "source": "github:NixOS/nixpkgs", "hash": "sha256-h"}),
    ('import (builtins.fetchGit { url = "https://github.com/NixOS/nixpkgs"; rev = "%s"; }) {}' % NEW_REV,
     {"rev": NEW_REV, "source": "https://github.com/NixOS/nixpkgs", "hash": None}),
    ("import <nixpkgs> {}", {"rev": None, "source": "<nixpkgs>", "hash": None}),
])
def test_each_way_of_pinning_nixpkgs_is_recorded(tmp_path, pin, expected):
    got = summary(tmp_path, {"p.nix": f"let p = {pin}; in p.python313Packages.torch\n"}, "p.nix")
    assert {key: got["nixpkgs"][key] for key in expected} == expected
    assert got["package"] == "python313Packages.torch"


def test_other_sources_are_not_imported(tmp_path):
    files = {"x.nix": 'import (builtins.fetchTarball "https://example.org/thing.tar.gz") {}\n'}
    evaluation = evaluate(tmp_path, files)["x.nix"]
    assert evaluation.summary is None
    assert evaluation.cannot_tell == ("it imports a fetched source (builtins.fetchTarball https://example.org/thing.tar.gz), "
                                      "which the stand-in does not read (it imports nixpkgs only)")
    assert evaluation.error.startswith(f"pinshift's stand-in cannot tell what this builds: {evaluation.cannot_tell}")


# --- companions, errors, batches --------------------------------------------------------------------------------------


def test_a_companion_imports_its_pytorch_recipe_for_real(tmp_path):
    files = fixture_files("companions")
    vision = f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix"
    found = evaluate(tmp_path, files)
    got = found[vision]
    assert got.reads == (vision, f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix")
    assert got.summary["override"] == {"torch": {
        "package": "python3Packages.torch", "override": {"cudaSupport": True, "gpuTargets": ["7.5"]},
        "overrides": [{"override": ["cudaSupport", "gpuTargets"]}, {"overrideAttrs": ["pname"]}],
        "pname": "pytorch-python313-cuda12_9-sm75-avx2"}}


def test_a_flox_companion_gets_its_pytorch_recipe_through_callPackage(tmp_path):
    found = evaluate(tmp_path, fixture_files("flox"))
    got = found[f"{PKGS}/torchvision-python313-cuda12_8-sm89-avx512.nix"].summary
    assert got["override"]["torch"]["pname"] == "pytorch-python313-cuda12_8-sm89-avx512"
    assert got["override"]["torch"]["override"] == {"cudaSupport": True, "gpuTargets": ["«config.cudaCapabilities»"]}


def test_the_nested_self_reference_is_an_infinite_recursion(tmp_path):
    path = f"{PKGS}/torchvision-python313-cuda12_9-sm90-avx512.nix"
    files = fixture_files("nested")
    text = files[path].decode()
    # what set-binding `where = "every"` writes into both overrideAttrs, the nested one included
    binding = '    pname = "pytorch-python313-cuda12_9-sm90-avx512";\n'
    files[path] = text.replace(binding, binding + "    propagatedBuildInputs = (oldAttrs.propagatedBuildInputs or [ ]) "
                                                    "++ [ customPytorch.out ];\n").encode()
    evaluation = evaluate(tmp_path, files)[path]
    assert evaluation.summary is None
    assert evaluation.error == "infinite recursion encountered (while evaluating propagatedBuildInputs)"


def test_an_import_of_a_missing_file_fails_naming_the_tree_path(tmp_path):
    files = fixture_files("companions")
    del files[f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix"]
    found = evaluate(tmp_path, files)
    vision = found[f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix"]
    assert vision.error == (f"getting status of '{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix': No such file or "
                            f"directory (at {PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix:10:13)")
    # the missing file is one of the reads: the evaluation is remembered only while it stays missing
    assert vision.reads[-1] == f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix"


def test_a_failing_recipe_costs_its_batch_one_call_more_and_loses_no_other(tmp_path):
    files = {f"r{n:02}.nix": pinned(f'nixpkgs_pinned.hello.overrideAttrs (o: {{ pname = "r{n}"; }})') for n in range(40)}
    files["r17.nix"] = "{ broken = undefined_variable; }\n"
    nix = require_nix()
    snapshot = tree(tmp_path, files)
    with Scratch() as scratch:
        evaluator = Evaluator(nix, universe(p.read_bytes() for p in snapshot.root.iterdir()), scratch.path,
                              [snapshot.root], workers=1)
        jobs = [Job(snapshot, path) for path in sorted(files)]
        results = evaluator.evaluate(jobs)
    assert [r.summary["pname"] for r in results if r.ok] == [f"r{n}" for n in range(40) if n != 17]
    assert results[17].error == "undefined variable 'undefined_variable' (at r17.nix:1:12)"
    # one core: two batches of 20; the first fails at r17 (its 18th): r17 alone, then r18 and r19; the second batch
    assert evaluator.calls_made == 4


def test_a_recipe_that_does_not_finish_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("PINSHIFT_EVAL_TIMEOUT", "1")
    slow = ('let spin = n: builtins.foldl\' (a: _: builtins.hashString "sha256" a) "x" (builtins.genList (x: x) n); '
            "in { x = builtins.foldl' (a: _: spin 3000) \"\" (builtins.genList (x: x) 3000); }\n")
    found = evaluate(tmp_path, {"slow.nix": slow, "ok.nix": pinned("nixpkgs_pinned.hello")})
    assert found["slow.nix"].error == "evaluation did not finish in 1 s"
    assert found["ok.nix"].summary["package"] == "hello"


def test_reads_outside_the_tree_and_directory_listings_are_never_remembered(tmp_path):
    files = {"in.nix": '{ x = builtins.readFile ./data.txt; }\n', "data.txt": "text",
             "dir.nix": "{ x = builtins.attrNames (builtins.readDir ./.); }\n"}
    found = evaluate(tmp_path, files, ["in.nix", "dir.nix"])
    assert found["in.nix"].summary == {"value": {"x": "text"}} and found["in.nix"].reads == ("in.nix", "data.txt")
    assert found["in.nix"].cacheable and not found["dir.nix"].cacheable


def test_the_names_a_file_selects_are_the_universe(tmp_path):
    text = b'{ a, b ? 1, ... }: let x = a.python313Packages."torch-bin"; in { inherit (b) lib cuda; t = b ? sm; s = "c.d"; }'
    assert names_of(text) == {"a", "b", "python313Packages", "torch-bin", "lib", "cuda", "sm", "d"}
    with_text = b'with pkgs; [ cudnn openblas ] # comment words\n'
    assert {"pkgs", "cudnn", "openblas", "with"} <= names_of(with_text) and "comment" not in names_of(with_text)


def test_identical_files_in_two_trees_are_evaluated_once(tmp_path):
    nix = require_nix()
    text = pinned("nixpkgs_pinned.hello")
    first = tree(tmp_path / "a", {"x.nix": text})
    second = tree(tmp_path / "b", {"x.nix": text})
    second.name = "second"
    stats = EvaluationStats()
    with Scratch() as scratch:
        found = evaluate_snapshots(nix, SummaryMemo(None), scratch, [(first, ["x.nix"]), (second, ["x.nix"])], stats)
    assert found[("tree", "x.nix")] is found[("second", "x.nix")]
    assert (stats.evaluated, stats.remembered) == (1, 1)


def test_evaluation_is_offline_with_every_proxy_pointing_nowhere(tmp_path, monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("NIX_PATH", "nixpkgs=/nonexistent")
    text = render_recipe(Variant("90", "avx512"))
    got = summary(tmp_path, {"x.nix": text}, "x.nix")
    assert got == json.loads((EXPECTED / "seed-sm90-avx512.json").read_text())
    assert os.environ["NIX_PATH"] == "nixpkgs=/nonexistent"  # the caller's environment is left as it was


def test_the_machines_nix_configuration_does_not_change_the_answer(tmp_path, monkeypatch):
    """A nix.conf with `pure-eval = true` (where fetchTarball without a hash and absolute paths are refused) in
    NIX_CONF_DIR and the user's files: every call runs with an empty configuration directory instead."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "nix.conf").write_text("pure-eval = true\nrestrict-eval = true\n")
    monkeypatch.setenv("NIX_CONF_DIR", str(conf))
    monkeypatch.setenv("NIX_USER_CONF_FILES", str(conf / "nix.conf"))
    text = render_recipe(Variant("90", "avx512"))
    got = summary(tmp_path, {"x.nix": text}, "x.nix")
    assert got == json.loads((EXPECTED / "seed-sm90-avx512.json").read_text())


@pytest.mark.parametrize("shape", [b"/* " * 20000, b'"' + b"a" * 40000, b"''" + b"x" * 40000, b"inherit (" * 8000,
                                   b"inherit " * 8000 + b"with x;"])
def test_reading_the_names_of_a_hostile_file_is_linear(shape):
    """A comment, string or `inherit` never closed matches to the end of the file where it starts: the patterns never
    scan ahead and fail at each of 10,000s of positions (counted: the matches a search makes, at most a handful)."""
    from pinshift.evaluation import evaluation

    data = shape + b" with pkgs; [ x ]"
    assert len(evaluation._STRINGS.findall(data)) <= 2
    assert len(evaluation._INHERITED.findall(data)) <= 1
    names_of(data)  # finishes: the same patterns


def test_snapshots_go_to_a_memory_file_system_unless_tmpdir_says_otherwise(tmp_path, monkeypatch):
    """Scratch trees are thousands of small files: in /dev/shm when it is a writable directory with room, never
    when $TMPDIR names a place, nor through a symbolic link or into a missing directory; always mode 0700."""
    from pinshift.evaluation.snapshots import scratch_parent

    monkeypatch.delenv("TMPDIR", raising=False)
    assert scratch_parent(tmp_path) == str(tmp_path)
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    assert scratch_parent(tmp_path, files=free // 16384 + 1) is None  # no room for that many files
    assert scratch_parent(tmp_path / "missing") is None
    (tmp_path / "link").symlink_to(tmp_path)
    assert scratch_parent(tmp_path / "link") is None
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # Python reads $TMPDIR once, at the first temporary file
    assert scratch_parent(tmp_path) is None
    with Scratch() as scratch:
        assert scratch.path.parent == tmp_path and (scratch.path.stat().st_mode & 0o777) == 0o700
    assert not scratch.path.exists()
