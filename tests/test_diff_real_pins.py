"""`pinshift diff BASE TARGET --nixpkgs DIR`: each recipe evaluated at the real pin it fetches, exported from a
nixpkgs-shaped git repository whose packages are real derivations (tests/real_nixpkgs.py), by the real
`nix-instantiate`, offline: the versions, rebuild by .drv path, broken with Nix's message, cannot tell."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import git, require_nix
from real_nixpkgs import build_nixpkgs
from pinshift.demo.matrix import OLD_REV, Variant, render_recipe

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "diff-schema.json").read_text())
PKGS = ".flox/pkgs"
GPU, CPU = Variant("90", "avx512"), Variant("cpu", "avx2")
UNCHECKED = "unchecked: the real pins' versions and rebuilds (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """(nixpkgs clone, its commits, a recipe repository): branch `base` pins `first`; branches `same`, `patched`,
    `renamed` pin those commits; `missing` pins a revision the clone does not have; `flox` drops the pin."""
    require_nix()
    top = tmp_path_factory.mktemp("real")
    commits = build_nixpkgs(top / "nixpkgs")
    repo = top / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "base")

    def write(rev: str, chosen=(GPU, CPU)) -> None:
        (repo / PKGS).mkdir(parents=True, exist_ok=True)
        for variant in chosen:
            (repo / PKGS / variant.filename).write_text(render_recipe(variant, rev, "python3Packages"))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", rev[:7])

    write(commits["first"])
    for name in ("same", "patched", "renamed"):
        git(repo, "checkout", "-q", "-b", name, "base")
        write(commits[name])
    git(repo, "checkout", "-q", "-b", "missing", "base")
    write(OLD_REV, (CPU,))
    git(repo, "checkout", "-q", "base")
    return top / "nixpkgs", commits, repo


def diff_json(run_cli, repo, *args):
    result = run_cli("diff", *args, "--repo", str(repo), "--format", "json")
    data = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    return result, data


def real_of(data) -> dict[str, dict]:
    return {recipe["path"].rsplit("/", 1)[-1]: recipe for recipe in data["real"]["recipes"]}


def test_a_new_build_of_the_same_version_is_a_rebuild_with_the_real_versions(world, run_cli):
    clone, commits, repo = world
    result, data = diff_json(run_cli, repo, "base", "patched", "--nixpkgs", str(clone))
    assert result.exit_code == 0, result
    real = real_of(data)
    assert {name: r["status"] for name, r in real.items()} == {GPU.filename: "rebuild", CPU.filename: "rebuild"}
    for recipe in real.values():
        before, after = recipe["before"]["build"], recipe["after"]["build"]
        assert (before["version"], after["version"]) == ("2.9.1", "2.9.1")
        assert before["drvPath"] != after["drvPath"] and after["drvPath"].endswith("-2.9.1.drv")
        assert recipe["after"]["pins"] == [commits["patched"][:7]]
    assert data["real"]["groups"] == [{"status": "rebuild", "count": 2, "recipes": sorted(
        f"{PKGS}/{v.filename}" for v in (GPU, CPU)), "summary": "rebuild: torch 2.9.1 → 2.9.1"}]
    text = run_cli("diff", "base", "patched", "--repo", str(repo), "--nixpkgs", str(clone)).stdout.splitlines()
    assert text[-2:] == [f"real: 2 recipes rebuild: torch 2.9.1 → 2.9.1 (first: {PKGS}/{CPU.filename}; --verbose "
                         "lists all)", "2 recipes at the real pins: 2 rebuild"]


def test_an_unchanged_derivation_is_no_rebuild_though_the_pin_moved(world, run_cli):
    clone, commits, repo = world
    result, data = diff_json(run_cli, repo, "base", "same", "--nixpkgs", str(clone))
    assert result.exit_code == 0
    assert data["counts"]["changed"] == 2  # the stand-in sees the pin move ...
    assert data["real"]["counts"]["no rebuild"] == 2  # ... the real pin builds the very same derivations
    for recipe in real_of(data).values():
        assert recipe["before"]["build"]["drvPath"] == recipe["after"]["build"]["drvPath"]
    text = run_cli("diff", "base", "same", "--repo", str(repo), "--nixpkgs", str(clone)).stdout
    assert "real: 2 recipes no rebuild (the same derivation): torch 2.9.1 → 2.9.1" in text


def test_a_renamed_parameter_is_broken_with_nix_message_and_exit_1(world, run_cli):
    clone, commits, repo = world
    result, data = diff_json(run_cli, repo, "base", "renamed", "--nixpkgs", str(clone))
    assert result.exit_code == 1
    real = real_of(data)
    gpu, cpu = real[GPU.filename], real[CPU.filename]
    assert gpu["status"] == "broken" and gpu["after"]["build"] is None
    assert gpu["after"]["error"] == (
        f"anonymous function at <nixpkgs {commits['renamed'][:7]}>/pkgs/development/python-modules/torch/default.nix"
        f":1:1 called with unexpected argument 'gpuTargets' (at {PKGS}/{GPU.filename}:32:4)")
    assert (cpu["status"], cpu["after"]["build"]["version"]) == ("rebuild", "2.10.0")
    text = run_cli("diff", "base", "renamed", "--repo", str(repo), "--nixpkgs", str(clone)).stdout
    assert "real: .flox/pkgs/pytorch-python313-cpu-avx2.nix: rebuild: torch 2.9.1 → 2.10.0" in text
    assert f"real: {PKGS}/{GPU.filename}: broken at the real pin: anonymous function at <nixpkgs" in text
    assert "/tmp" not in text and "pinshift-verify" not in text and "pinshift-eval" not in text  # no scratch path


def test_a_pin_the_clone_does_not_have_cannot_be_told(world, run_cli):
    clone, _, repo = world
    result, data = diff_json(run_cli, repo, "base", "missing", "--nixpkgs", str(clone))
    assert result.exit_code == 0  # not broken: nothing is known
    cpu = real_of(data)[CPU.filename]
    assert cpu["status"] == "cannot tell" and cpu["after"]["build"] is None and cpu["after"]["error"] is None
    assert cpu["after"]["unknown"] == (f"nixpkgs {OLD_REV[:12]} is not in the --nixpkgs clone {clone}; fetch it "
                                       f"there (git -C {clone} fetch origin {OLD_REV})")
    assert cpu["before"]["build"]["version"] == "2.9.1"
    assert real_of(data)[GPU.filename]["status"] == "no rebuild"  # the same bytes on both sides


def test_a_recipe_without_a_pin_of_its_own_cannot_be_told(world, run_cli, tmp_path):
    clone, _, repo = world
    git(repo, "checkout", "-q", "-b", "flox", "base")
    (repo / PKGS / CPU.filename).write_text("{ python3Packages }:\npython3Packages.torch\n")
    git(repo, "commit", "-q", "-am", "flox args")
    git(repo, "checkout", "-q", "base")
    result, data = diff_json(run_cli, repo, "base", "flox", "--nixpkgs", str(clone))
    assert real_of(data)[CPU.filename]["after"]["unknown"] == "no nixpkgs pin of its own (it uses its caller's nixpkgs)"
    assert real_of(data)[CPU.filename]["status"] == "cannot tell"


def test_without_a_clone_the_report_is_as_before_and_says_what_is_unchecked(world, run_cli, monkeypatch):
    clone, _, repo = world
    monkeypatch.delenv("PINSHIFT_NIXPKGS", raising=False)
    plain = run_cli("diff", "base", "renamed", "--repo", str(repo))
    assert plain.exit_code == 0  # the stand-in cannot know the pin renamed a parameter
    lines = plain.stdout.splitlines()
    assert lines[-1] == UNCHECKED
    assert lines[-2] == "2 recipes: 2 changed" and not any(line.startswith("real:") for line in lines)
    result, data = diff_json(run_cli, repo, "base", "renamed")
    assert data["real"] == {"checked": False, "unchecked": [UNCHECKED.removeprefix("unchecked: ")]}
    markdown = run_cli("diff", "base", "renamed", "--repo", str(repo), "--format", "markdown").stdout
    assert markdown.endswith("\n\n> Unchecked: " + UNCHECKED.removeprefix("unchecked: ") + "\n")


def test_pinshift_nixpkgs_names_the_clone(world, run_cli, monkeypatch):
    clone, _, repo = world
    monkeypatch.setenv("PINSHIFT_NIXPKGS", str(clone))
    result, data = diff_json(run_cli, repo, "base", "renamed")
    assert result.exit_code == 1 and data["real"]["checked"] is True
    assert data["real"]["counts"]["broken"] == 1


def test_markdown_has_the_real_section(world, run_cli):
    clone, _, repo = world
    text = run_cli("diff", "base", "patched", "--repo", str(repo), "--nixpkgs", str(clone), "--format",
                   "markdown").stdout
    assert "### At the real pins" in text
    assert "- **rebuild** — 2 recipes: `rebuild: torch 2.9.1 → 2.9.1`" in text


@pytest.mark.parametrize("where, message", [
    ("missing-dir", "--nixpkgs {0}/missing-dir: no such directory; pass --nixpkgs DIR (a local nixpkgs git clone) "
                    "or set PINSHIFT_NIXPKGS"),
    ("plain-dir", "--nixpkgs {0}/plain-dir: not a git repository; pass --nixpkgs DIR (a local nixpkgs git clone) "
                  "or set PINSHIFT_NIXPKGS"),
])
@pytest.mark.parametrize("command", ["diff", "verify", "hash"])
def test_a_bad_nixpkgs_folder_is_one_line_exit_2_in_the_words_of_every_command(world, run_cli, tmp_path, where,
                                                                               message, command):
    _, _, repo = world
    (tmp_path / "plain-dir").mkdir(exist_ok=True)
    args = {"diff": ["diff", "base", "renamed", "--repo", str(repo)], "verify": ["verify", str(repo / PKGS)],
            "hash": ["hash", "HEAD"]}[command]
    result = run_cli(*args, "--nixpkgs", str(tmp_path / where))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"pinshift: error: {message.format(tmp_path)}\n"


def test_a_recipe_reads_nothing_but_its_tree_and_its_pin_and_the_clone_stays_as_it_was(world, run_cli, tmp_path):
    """A commit is hostile input: at the real pin, a recipe still runs in the sandbox (restricted evaluation, no
    environment, no network): the clone's .git, a file of the user's, another URL and the environment are out of
    reach, and the clone's work tree, index and refs are untouched."""
    clone, commits, repo = world
    secret = tmp_path / "secret.txt"
    secret.write_text("token")
    (clone / "untracked.txt").write_text("mine")
    before = (git(clone, "status", "--porcelain"), git(clone, "show-ref"))
    pin = f'import (builtins.fetchTarball {{ url = "https://github.com/NixOS/nixpkgs/archive/{commits["first"]}.tar.gz"; }}) {{ }}'
    attempts = {
        "home.nix": f'let p = {pin}; in p.python3Packages.torch.overrideAttrs (o: {{ version = builtins.readFile {secret}; }})',
        "gitconfig.nix": f'let p = {pin}; in p.python3Packages.torch.overrideAttrs (o: {{ version = builtins.readFile {clone}/.git/config; }})',
        "url.nix": f'let p = {pin}; q = builtins.fetchTarball "https://example.com/archive/{commits["first"]}.tar.gz"; '
                   'in p.python3Packages.torch.overrideAttrs (o: { version = builtins.readFile "${q}/README"; })',
        "env.nix": f'let p = {pin}; in p.python3Packages.torch.overrideAttrs (o: {{ version = "x" + builtins.getEnv "HOME"; }})',
    }
    git(repo, "checkout", "-q", "-b", "hostile", "base")
    for name, text in attempts.items():
        (repo / PKGS / name).write_text(text + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hostile")
    git(repo, "checkout", "-q", "base")
    result, data = diff_json(run_cli, repo, "base", "hostile", "--nixpkgs", str(clone))
    real = real_of(data)
    assert real["env.nix"]["after"]["build"]["version"] == "x"  # an empty environment
    for name in ("home.nix", "gitconfig.nix"):
        assert "forbidden in restricted mode" in real[name]["after"]["error"], real[name]
    assert "token" not in result.stdout and "[core]" not in result.stdout
    # the stand-in's URL shadow does not apply here: pinshift's own fetchTarball hands out only the exports
    assert real["url.nix"]["after"]["build"] is None
    assert "not a nixpkgs pin exported from the --nixpkgs clone" in real["url.nix"]["after"]["error"]
    assert (git(clone, "status", "--porcelain"), git(clone, "show-ref")) == before
