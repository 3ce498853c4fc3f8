"""status, scan and lint count recipes, not the helpers beside them (issue 41: "false facts").

On repositories of build-vllm's, build-comfyui's and build-pytorch's shapes (tests/flox_shapes.py, real git
repositories, the real CLI): a file in a lib/ folder or only imported is no recipe (variants, pins, `?`, the
package column, drift and the naming rules leave it out), CPU flags an import gives a recipe count for L006,
a version stated in the package set's overlay is the package's, and status and scan say the same drift.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import git
from flox_shapes import (
    CPU_ISA, OLD_PIN, PIN, comfyui_files, overlay_version_files, repository, vllm_files,
)
from status_repos import commit_branch

SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "status-schema.json").read_text())
LIB = {".flox/pkgs/lib/cpu-isa.nix": "in a lib/ folder", ".flox/pkgs/lib/custom-torch.nix": "in a lib/ folder"}


@pytest.fixture(autouse=True)
def no_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # whole lines are read; fitting is tests/test_output_fits.py's


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> Path:
    parent = tmp_path_factory.mktemp("shapes")
    repository(parent, "build-vllm", {"main": vllm_files(), "v0.14.1": vllm_files(OLD_PIN)})
    repository(parent, "build-comfyui", {"main": comfyui_files()})
    repository(parent, "build-pytorch", {"pytorch-2.10-python313": overlay_version_files()})
    return parent


def status_json(run_cli, *repos: Path) -> list[dict]:
    result = run_cli("status", *(arg for repo in repos for arg in ("--repo", str(repo))), "--format", "json")
    assert (result.exit_code, result.stderr) == (0, ""), result
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    return report["branches"]


def scan_json(run_cli, root: Path) -> dict:
    result = run_cli("scan", "--format", "json", ".flox/pkgs", cwd=root)
    assert result.exit_code == 0, result
    return json.loads(result.stdout)


def test_vllm_rows_count_the_vllm_recipes_alone(run_cli, repos):
    rows = status_json(run_cli, repos / "build-vllm")
    assert [(r["branch"], r["variants"], r["files"]) for r in rows] == [("main", 4, 6), ("v0.14.1", 4, 6)]
    for row, pin in zip(rows, (PIN, OLD_PIN)):
        assert [(p["revision"], p["recipes"]) for p in row["pins"]] == [(pin, 4)]
        assert (row["uses_caller_nixpkgs"], row["drift"]) == (0, [])
        assert [p["package"] for p in row["packages"]] == ["vllm"]
        assert [(c["version"], c["recipes"]) for c in row["cuda"]] == [("12.9", 4)]
        assert [(c["version"], c["recipes"]) for c in row["python"]] == [("3.13", 4)]
        assert [c["target"] for c in row["gpu"]] == ["sm90", "sm100", "sm120"]  # no sm? of custom-torch.nix
        assert {h["path"]: h["why"] for h in row["helpers"]} == LIB
    text = run_cli("status", "--repo", str(repos / "build-vllm"), "--format", "markdown").stdout
    assert "caller's nixpkgs" not in text and "custom-torch" not in text and "pin drift" not in text


def test_scan_leaves_the_helpers_out_and_says_which(run_cli, repos):
    root = repos / "build-vllm"
    report = scan_json(run_cli, root)
    assert len(report["recipes"]) == 6  # every file is read (its facts listed)
    assert [(m["package"], m["count"]) for m in report["matrices"]] == [("vllm", 4)]
    assert report["uses_caller_nixpkgs"] == [] and report["pin_drift"]["drift"] is False
    assert report["package_set_drift"]["groups"] == {"python313.override": 4}  # no (none) group of a helper
    assert report["helpers"] == LIB
    text = run_cli("scan", ".flox/pkgs", cwd=root).stdout
    assert "4 recipes" in text and "custom-torch (" not in text
    assert "not recipes: 2 helper files, not counted: .flox/pkgs/lib/cpu-isa.nix (in a lib/ folder)" in text


def test_lint_runs_no_naming_rule_on_helpers_and_reads_imported_cpu_flags(run_cli, repos):
    result = run_cli("lint", ".flox/pkgs", cwd=repos / "build-vllm")
    assert (result.exit_code, result.stdout) == (0, ""), result
    assert result.stderr == "6 files linted, 0 findings\n"  # no L000/L001 on lib/, no L006 on the recipes


def test_imported_cpu_flags_that_contradict_the_name_are_an_error(run_cli, tmp_path):
    """Both spellings of an imported table: `(import ./lib/cpu-isa.nix).avx512` and a table that is a function
    (`(import ./lib/isa.nix { inherit lib; }).avx512`); the flags are the table's, so a name saying avx2 is wrong."""
    files = vllm_files()
    wrong = files.pop(".flox/pkgs/vllm-python313-cuda12_9-sm90-avx512.nix")
    files[".flox/pkgs/vllm-python313-cuda12_9-sm90-avx2.nix"] = wrong.replace(
        "vllm-python313-cuda12_9-sm90-avx512", "vllm-python313-cuda12_9-sm90-avx2")
    files[".flox/pkgs/lib/isa.nix"] = "{ lib }:\n" + CPU_ISA
    called = files[".flox/pkgs/vllm-python313-cuda12_9-sm100-avx512.nix"]
    files[".flox/pkgs/vllm-python313-cuda12_9-sm100-avx512.nix"] = called.replace(
        "(import ./lib/cpu-isa.nix).avx512", "(import ./lib/isa.nix { inherit lib; }).avx2")
    root = repository(tmp_path, "build-vllm", {"main": files})
    result = run_cli("lint", ".flox/pkgs", cwd=root)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        ".flox/pkgs/vllm-python313-cuda12_9-sm100-avx512.nix:17:52: L006 name says avx512 but the CPU flags target avx2",
        ".flox/pkgs/vllm-python313-cuda12_9-sm90-avx2.nix:17:39: L006 name says avx2 but the CPU flags target avx512",
    ]
    report = scan_json(run_cli, root)
    assert report["matrices"][0]["cells"]["sm90/12.9/avx512"] == 1  # the ISA the flags say, not the name's


def test_a_helper_with_a_syntax_error_is_still_reported(run_cli, tmp_path):
    files = vllm_files()
    files[".flox/pkgs/lib/cpu-isa.nix"] = CPU_ISA.replace("avx2 = {", "avx2 = {{")
    root = repository(tmp_path, "build-vllm", {"main": files})
    (row,) = status_json(run_cli, root)
    assert row["variants"] == 4 and len(row["problems"]) == 1 and row["problems"][0].startswith(".flox/pkgs/lib/cpu-isa.nix:")
    assert "syntax problems in 1 file (first: .flox/pkgs/lib/cpu-isa.nix:" in run_cli("scan", ".flox/pkgs", cwd=root).stdout
    parse = run_cli("parse", ".flox/pkgs/lib/cpu-isa.nix", cwd=root)
    assert parse.exit_code == 1 and parse.stdout.startswith(".flox/pkgs/lib/cpu-isa.nix:")


def test_where_a_file_sits_decides_whether_flox_builds_it(run_cli, tmp_path):
    """`.flox/pkgs/NAME/default.nix` is a package Flox builds; any other file below the top level is not."""
    files = vllm_files()
    nested = files.pop(".flox/pkgs/vllm-python313-cuda12_9-sm120-avx2.nix")
    files[".flox/pkgs/vllm-python313-cuda12_9-sm120-avx2/default.nix"] = nested.replace("./lib/", "../lib/")
    files[".flox/pkgs/vllm-python313-cuda12_9-sm120-avx2/patched.nix"] = nested.replace("./lib/", "../lib/")
    root = repository(tmp_path, "build-vllm", {"main": files})
    (row,) = status_json(run_cli, root)
    assert row["variants"] == 4 and [c["target"] for c in row["gpu"]] == ["sm90", "sm100", "sm120"]
    assert {h["path"]: h["why"] for h in row["helpers"]} == {
        **LIB, ".flox/pkgs/vllm-python313-cuda12_9-sm120-avx2/patched.nix":
            "below .flox/pkgs/'s top level and no default.nix: not a package Flox builds"}
    (avx2,) = [c for c in scan_json(run_cli, root)["matrices"][0]["cells"] if c.endswith("/avx2")]
    assert avx2 == "sm120/12.9/avx2"  # the default.nix's ISA came from ../lib/cpu-isa.nix


def test_comfyui_leads_with_comfyui_and_python3_pkgs_is_python3Packages(run_cli, repos):
    (row,) = status_json(run_cli, repos / "build-comfyui")
    assert row["variants"] == 3
    assert [p["package"] for p in row["packages"]] == ["comfyui", "comfyui-extras", "comfyui-plugins"]
    assert row["helpers"] == [{"path": ".flox/pkgs/color-matcher.nix",
                               "why": "only imported (by .flox/pkgs/comfyui-extras.nix), no variant's name"}]
    assert [(s["name"], s["recipes"]) for s in row["package_sets"]] == [("python3Packages", 3)]
    assert {s["source"] for s in row["package_sets"][0]["sources"]} == {"python3.pkgs", "python3Packages"}
    assert row["drift"] == []
    line = run_cli("status", "--repo", str(repos / "build-comfyui"), "--format", "markdown").stdout.splitlines()[2]
    assert "| comfyui 0.3.68 (recipe); comfyui-extras" in line and "color-matcher" not in line
    report = scan_json(run_cli, repos / "build-comfyui")
    assert report["matrices"][0]["package"] == "comfyui" and report["package_set_drift"]["drift"] is False


def test_a_version_stated_in_the_package_sets_overlay_is_the_packages(run_cli, repos):
    (row,) = status_json(run_cli, repos / "build-pytorch")
    (pytorch,) = row["packages"]
    (version,) = pytorch["versions"]
    assert (version["version"], version["origin"], version["recipes"]) == ("2.10.0", "override", 5)
    assert {(s["source"], s["recipes"]) for s in version["sources"]} == {
        ("version in the torch override (overrideScope)", 3), ("version in the torch override (packageOverrides)", 1),
        ("version in the torch override (overrides)", 1)}
    text = run_cli("status", "--repo", str(repos / "build-pytorch"), "--format", "markdown").stdout
    assert "pytorch 2.10.0 (override)" in text and "not stated in the recipes" not in text


def test_another_packages_version_in_the_overlay_is_not_the_built_ones(run_cli, tmp_path):
    files = {path: text.replace("torch = pyPrev.torch.overrideAttrs", "triton = pyPrev.triton.overrideAttrs")
             .replace("torch = super.torch.overrideAttrs", "triton = super.triton.overrideAttrs")
             .replace("torch = pprev.torch.overrideAttrs", "triton = pprev.triton.overrideAttrs")
             for path, text in overlay_version_files().items()}
    root = repository(tmp_path, "build-pytorch", {"pytorch-2.10-python313": files})
    (row,) = status_json(run_cli, root)
    assert [v["version"] for v in row["packages"][0]["versions"]] == ["?"]


def drift_of_scan(report: dict) -> list[str]:
    return [name for name, key in (("pin drift", "pin_drift"), ("package-set drift", "package_set_drift"))
            if report[key]["drift"]]


def test_status_and_scan_say_the_same_drift(run_cli, repos, tmp_path):
    """One definition (pinshift.facts.matrix.drift_markers): each branch's Drift cell is what scan says of
    the same files, on branches with none, pin drift only beside the caller's nixpkgs, and package-set drift."""
    root = repository(tmp_path, "mixed", {"main": vllm_files()})
    flox = comfyui_files()[".flox/pkgs/comfyui-plugins.nix"]
    pinned = vllm_files()[".flox/pkgs/vllm-python313-cuda12_9-sm90-avx512.nix"]
    commit_branch(root, "caller-beside-pin", {**vllm_files(), ".flox/pkgs/comfyui-plugins.nix": flox})
    commit_branch(root, "two-sets", {
        **vllm_files(), ".flox/pkgs/vllm-python313-cuda12_9-sm89-avx512.nix": pinned.replace(
            "python313Custom.pkgs.vllm", "nixpkgs_pinned.python3Packages.vllm").replace("sm90", "sm89")})
    commit_branch(root, "python3-pkgs", comfyui_files())
    expected = {"main": [], "caller-beside-pin": ["pin drift"], "two-sets": ["package-set drift"],
                "python3-pkgs": []}
    rows = {r["branch"]: r for r in status_json(run_cli, root)}
    for branch, markers in expected.items():
        git(root, "switch", "-q", branch)
        assert rows[branch]["drift"] == markers == drift_of_scan(scan_json(run_cli, root)), branch
    for shape in ("build-vllm", "build-comfyui", "build-pytorch"):
        for row in status_json(run_cli, repos / shape):
            git(repos / shape, "switch", "-q", row["branch"])
            assert row["drift"] == drift_of_scan(scan_json(run_cli, repos / shape)), (shape, row["branch"])
        git(repos / shape, "switch", "-q", "main" if shape != "build-pytorch" else "pytorch-2.10-python313")


def test_diff_and_the_build_check_evaluate_recipes_and_read_helpers_through_them(run_cli, tmp_path):
    """`pinshift diff` (and migrate's build check: the same snapshots) evaluates the recipes, not lib/: a change of
    the ISA table shows on the recipes that select it, by the real nix-instantiate against the stand-in."""
    files = vllm_files()
    root = repository(tmp_path, "build-vllm", {"main": files})
    table = files[".flox/pkgs/lib/cpu-isa.nix"].replace('"-mavx512bw" "-mfma"', '"-mavx512bw" "-mavx512cd" "-mfma"')
    commit_branch(root, "cd", {**files, ".flox/pkgs/lib/cpu-isa.nix": table}, start="main")
    result = run_cli("diff", "main", "cd", "--format", "json", cwd=root)
    assert result.exit_code == 0, result
    recipes = {r["path"]: r["status"] for r in json.loads(result.stdout)["recipes"]}
    assert recipes == {f".flox/pkgs/vllm-python313-cuda12_9-{name}.nix": status for name, status in (
        ("sm90-avx512", "changed"), ("sm100-avx512", "changed"), ("sm90-armv9", "changed_untold"), ("sm120-avx2", "changed_untold"))}
    # the other two read the changed table but select an entry that did not change: the stand-in evaluates them
    # alike, and a file they read changed in meaning, so diff cannot say `same` (issue 41)


def test_imports_outside_the_tree_or_computed_name_no_file_and_change_nothing(run_cli, tmp_path):
    """A recipe anyone can write may import `../../../x.nix`, `/etc/x.nix`, `<nixpkgs/x.nix>` or a path that
    climbs back in (`./../pkgs/./vllm-….nix`): nothing is read, only a file of the set can be made a helper."""
    files = vllm_files()
    path = ".flox/pkgs/vllm-python313-cuda12_9-sm90-armv9.nix"
    files[path] = files[path].replace("in\n", "  a = import ../../../outside.nix;\n  b = import /etc/x.nix;\n"
                                      "  c = import <nixpkgs/x.nix>;\n  d = import ./../pkgs/./color-matcher.nix;\n"
                                      "  e = import ./vllm-python313-cuda12_9-sm100-avx512.nix;\nin\n", 1)
    files[".flox/pkgs/color-matcher.nix"] = comfyui_files()[".flox/pkgs/color-matcher.nix"]
    root = repository(tmp_path, "build-vllm", {"main": files})
    (row,) = status_json(run_cli, root)
    assert row["variants"] == 4 and row["drift"] == []
    assert {h["path"]: h["why"] for h in row["helpers"]} == {
        **LIB, ".flox/pkgs/color-matcher.nix": f"only imported (by {path}), no variant's name"}
