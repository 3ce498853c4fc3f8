"""`pinshift status --nixpkgs DIR`: each recipe's version as Nix evaluates it at its real pin, exported from a
nixpkgs-shaped repository of real derivations (tests/real_nixpkgs.py), offline; without a clone the JSON says
what was not checked."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import git, require_nix
from real_nixpkgs import build_nixpkgs
from pinshift.demo.matrix import OLD_REV, Variant, render_recipe

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "status-schema.json").read_text())
PKGS = ".flox/pkgs"
GPU, CPU = Variant("90", "avx512"), Variant("cpu", "avx2")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    require_nix()
    top = tmp_path_factory.mktemp("status-real")
    commits = build_nixpkgs(top / "nixpkgs")
    repo = top / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "first")
    for number, (branch, rev) in enumerate((("first", commits["first"]), ("renamed", commits["renamed"]),
                                            ("missing", OLD_REV))):
        if number:
            git(repo, "checkout", "-q", "-b", branch, "first")
        (repo / PKGS).mkdir(parents=True, exist_ok=True)
        for variant in (GPU, CPU):
            (repo / PKGS / variant.filename).write_text(render_recipe(variant, rev, "python3Packages"))
        # a recipe that states a version of its own: Nix's answer at the pin wins over what the text says
        (repo / PKGS / "pytorch-python313-cpu-avx512.nix").write_text(
            render_recipe(Variant("cpu", "avx512"), rev, "python3Packages").replace(
                "pname = \"pytorch-python313-cpu-avx512\";", "pname = \"pytorch-python313-cpu-avx512\";\n"
                "    version = \"2.9.1-custom\";"))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", branch)
    return top / "nixpkgs", commits, repo


def versions(report) -> dict[str, list[tuple[str, str | None, int]]]:
    return {r["branch"]: [(v["version"], v["origin"], v["recipes"]) for v in r["packages"][0]["versions"]]
            for r in report["branches"]}


def test_versions_are_what_nix_evaluates_at_each_real_pin(world, run_cli):
    clone, commits, repo = world
    result = run_cli("status", "--repo", str(repo), "--nixpkgs", str(clone), "--format", "json")
    assert result.exit_code == 0, result
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    assert report["real"] == {"checked": True, "unchecked": []}
    assert versions(report) == {
        "first": [("2.9.1", "real", 2), ("2.9.1-custom", "real", 1)],
        "missing": [("2.9.1-custom", "override", 1), ("?", None, 2)],  # not in the clone: what the text says
        # the GPU recipe fails at the pin (gpuTargets renamed): the static read of the pin, and a note
        "renamed": [("2.10.0", "real", 1), ("2.10.0", "pin", 1), ("2.9.1-custom", "real", 1)],
    }
    assert "repo@renamed: 1 recipe fail at their real pins (pinshift diff --nixpkgs DIR says where)" in report["notes"]


def test_without_a_clone_json_says_the_versions_were_not_checked(world, run_cli, monkeypatch):
    _, _, repo = world
    monkeypatch.delenv("PINSHIFT_NIXPKGS", raising=False)
    report = json.loads(run_cli("status", "--repo", str(repo), "--format", "json").stdout)
    jsonschema.validate(report, SCHEMA)
    assert report["real"] == {"checked": False, "unchecked": [
        "the versions each recipe builds at its real pin (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"]}
    assert versions(report)["first"] == [("2.9.1-custom", "override", 1), ("?", None, 2)]


def test_pinshift_nixpkgs_names_the_clone_for_status(world, run_cli, monkeypatch):
    clone, _, repo = world
    monkeypatch.setenv("PINSHIFT_NIXPKGS", str(clone))
    report = json.loads(run_cli("status", "--repo", str(repo), "--format", "json").stdout)
    assert report["real"]["checked"] is True and versions(report)["first"][0] == ("2.9.1", "real", 2)


def test_a_bad_nixpkgs_folder_is_one_line_for_status(world, run_cli, tmp_path):
    _, _, repo = world
    result = run_cli("status", "--repo", str(repo), "--nixpkgs", str(tmp_path / "nowhere"))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"pinshift: error: --nixpkgs {tmp_path / 'nowhere'}: no such directory; pass --nixpkgs "
                             "DIR (a local nixpkgs git clone) or set PINSHIFT_NIXPKGS\n")


def test_one_version_from_two_origins_that_show_alike_is_one_cell_part():
    """Evaluated at the real pin for one recipe, read from the pin's files for another (it failed there): both show
    without an origin, so the cell says the version once with both recipes, not `2.9.1 (1) / 2.9.1 (1)`."""
    from pinshift.status.status import PackageStatus, Version
    from pinshift.status.status_report import Footnotes, _versions

    package = PackageStatus("pytorch", 3, "torch", versions=(
        Version("2.9.1", "real", 1), Version("2.9.1", "pin", 1), Version("2.10.0", "override", 1)))
    assert _versions(package, Footnotes(False), short=False) == "2.9.1 (2) / 2.10.0 (override, 1)"
    assert _versions(package, Footnotes(False), short=True) == "2.9.1 / 2.10.0 (override)"
