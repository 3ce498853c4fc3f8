"""`pinshift scan`: per-recipe facts and aggregates on hand-made fixtures (goldens) and the seed-shaped tree."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES
from pinshift.demo.matrix import GPUS, NEW_REV, OLD_REV, Variant, render_recipe, variants

CHECKS = FIXTURES / "checks"


@pytest.fixture
def seed_tree(tmp_path):
    """The 66 recipes of the seed's pytorch-2.9 branch, written to a plain directory."""
    root = tmp_path / "pkgs"
    root.mkdir()
    for variant in variants():
        (root / variant.filename).write_text(render_recipe(variant))
    return root


@pytest.mark.parametrize("args, golden", [
    (("--format", "text"), "scan.txt"), (("--format", "markdown"), "scan.md"), (("--verbose",), "scan-verbose.txt")])
def test_scan_fixture_golden(run_cli, args, golden):
    result = run_cli("scan", *args, "recipes", cwd=CHECKS)
    assert result.exit_code == 0, result
    assert result.stdout == (CHECKS / golden).read_text()


def test_scan_fixture_json_facts(run_cli):
    result = run_cli("scan", "--format", "json", "recipes", cwd=CHECKS)
    report = json.loads(result.stdout)
    assert report == json.loads((CHECKS / "scan.json").read_text())
    by_path = {r["path"]: r for r in report["recipes"]}
    sm90 = by_path["recipes/pytorch-python313-cuda12_9-sm90-avx512.nix"]
    assert sm90["pins"] == [{"kind": "builtins.fetchTarball", "revision": NEW_REV, "expression": None, "hash": False}]
    assert (sm90["package_set"], sm90["attribute"]) == ("python313Packages", "torch")
    assert sm90["overrides"] == ["cudaSupport", "gpuTargets"]
    assert sm90["gpu"] == {"gpuArchNum": {"value": "90", "source": "gpuArchNum"},
                           "gpuArchSM": {"value": "9.0", "source": "gpuArchSM"},
                           "gpuTargets": {"value": "9.0", "source": "gpuTargets via gpuArchSM"}}  # followed to the let
    assert (sm90["kind"], sm90["facts"]["target"]) == ("gpu", {"value": "sm90", "source": "gpuArchNum"})
    assert sm90["cpu_flags"][0] == "-mavx512f" and sm90["platforms"] == ["x86_64-linux"]
    assert (sm90["pname"], sm90["metadata_rev"], sm90["cuda_overlay"]) == (
        "pytorch-python313-cuda12_9-sm90-avx512", "1", "cudaPackages_12_9")
    helper = by_path["recipes/helper.nix"]
    assert helper["package_set"] is None and helper["pins"] == []
    # drift: the Darwin recipe keeps the old pin and python3Packages; odd-name pins nothing (its own group)
    assert report["pin_drift"] == {"majority": NEW_REV, "count": 7, "groups": {NEW_REV: 7, OLD_REV: 1},
                                   "others": {OLD_REV: ["recipes/pytorch-python313-darwin-mps.nix"]}, "drift": True}
    assert report["package_set_drift"]["drift"] is True and report["helpers"] == {}
    assert report["uses_caller_nixpkgs"] == ["recipes/odd-name.nix"]
    assert report["package_set_drift"]["others"] == {"python3Packages": ["recipes/pytorch-python313-darwin-mps.nix"]}
    pytorch = report["matrices"][0]
    assert pytorch["package"] == "pytorch"
    assert pytorch["cells"]["sm90/12.9/avx512"] == 3  # sm89 says 90 in its content; cuda12_8's overlay is 12.9


def test_scan_seed_tree_matrix(run_cli, seed_tree):
    report = json.loads(run_cli("scan", "--format", "json", str(seed_tree)).stdout)
    assert len(report["recipes"]) == 66
    (matrix,) = report["matrices"]
    assert matrix["package"] == "pytorch" and matrix["count"] == 66
    assert matrix["rows"] == [{"gpu": f"sm{sm}", "cuda": "12.9"} for sm in GPUS] + [
        {"gpu": "cpu", "cuda": "-"}, {"gpu": "darwin", "cuda": "-"}]
    assert matrix["columns"] == ["avx", "avx2", "avx512", "avx512vnni", "avx512bf16", "armv8_2", "armv9", "-"]
    assert sum(matrix["cells"].values()) == 66
    assert "sm61/12.9/avx512bf16" not in matrix["cells"] and matrix["cells"]["sm120/12.9/armv9"] == 1
    assert matrix["cells"]["darwin/-/-"] == 1 and "cpu/-/avx" not in matrix["cells"]
    assert report["pin_drift"] == {"majority": OLD_REV, "count": 66, "groups": {OLD_REV: 66}, "others": {},
                                   "drift": False}
    assert report["package_set_drift"] == {"majority": "python3Packages", "count": 66,
                                           "groups": {"python3Packages": 66}, "others": {}, "drift": False}


def test_scan_seed_tree_summarises_pin_drift_in_text(run_cli, seed_tree):
    drifted = Variant("75", "avx2")
    (seed_tree / drifted.filename).write_text(render_recipe(drifted, NEW_REV, "python313Packages"))
    result = run_cli("scan", str(seed_tree))
    assert result.exit_code == 0
    path = seed_tree / drifted.filename
    assert "pin drift: 2 revisions among 66 recipes\n" \
           "  6a030d5  65 recipes (majority: 98 % of 66 recipes)\n" \
           f"  0182a36  1 recipe: {path}\n" in result.stdout
    assert "package-set drift: 2 package sets among 66 recipes\n" in result.stdout
    assert result.stdout.startswith("66 files scanned, 66 recipes\n\npytorch (66 recipes)\n")
    assert "  pins " not in result.stdout  # per-recipe facts only with --verbose


def test_scan_reads_crlf_and_broken_recipes(run_cli, tmp_path):
    text = render_recipe(Variant("cpu", "avx2")).replace("\n", "\r\n")
    (tmp_path / "crlf.nix").write_bytes(text.encode())
    (tmp_path / "broken.nix").write_bytes(b'{ pname = "x" \n')
    report = json.loads(run_cli("scan", "--format", "json", str(tmp_path)).stdout)
    by_name = {r["path"].rsplit("/", 1)[-1]: r for r in report["recipes"]}
    assert by_name["crlf.nix"]["pname"] == "pytorch-python313-cpu-avx2"
    assert by_name["crlf.nix"]["cpu_flags"] == ["-mavx2", "-mfma", "-mf16c"]
    assert by_name["broken.nix"]["problems"]  # reported, not raised


def test_scan_missing_path_is_one_line_error(run_cli, tmp_path):
    result = run_cli("scan", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "no such file or directory" in result.stderr
