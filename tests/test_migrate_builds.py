"""migrate checks what the recipes build after planning: no step may break evaluation unseen.

Through the real CLI on real repositories, evaluated by the real nix-instantiate: the seed-shaped migration is
summarised as pin + package set; a rename past an overlay that overrides python3Packages is a warning on every
file with the lost version and src; removing an imported file refuses the step (exit 1, no branch) unless
--allow-broken (then the report says so); set-binding's `where = "every"` on a companion with its PyTorch inline
is refused with "infinite recursion"; a recipe that never evaluated is no regression; without Nix, a note.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest

from build_repos import PKGS, fixture_files
from conftest import FIXTURES as BUILDS_DIR, git, require_nix
from migrate_repo import FILES, MIGRATIONS, SWAPS
from pinshift.evaluation.build_check import intended, unintended
from pinshift.evaluation.build_changes import Change
from pinshift.demo.build import demo_files
from pinshift.steps.registry import bundled_kinds

ROOT = Path(__file__).resolve().parent.parent
REPORT_SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text())
SOURCE = 'fetchFromGitHub { owner = "pytorch"; repo = "pytorch"; rev = "v2.10.0"; fetchSu…'  # 79 characters, then …


def recipe(tmp_path: Path, steps: str, files: str = ".flox/pkgs/**/*.nix") -> str:
    path = tmp_path / "recipe.toml"
    path.write_text(f'name = "check"\ndescription = "a test recipe"\nfiles = ["{files}"]\n\n{steps}')
    return str(path)


PIN_AND_RENAME = """[[steps]]
kind = "pin-swap"
title = "Pin nixpkgs to 0182a36"
[steps.params]
old = "6a030d5"
new = "0182a361324364ae3f436a63005877674cf45efb"

[[steps]]
kind = "rename-attr"
title = "Use python313Packages"
[steps.params]
from = "python3Packages"
to = "python313Packages"
base = "nixpkgs_pinned"
"""


@pytest.fixture
def seed(make_repo):
    require_nix()
    return make_repo(demo_files(), branch="pytorch-2.9")


def test_the_seed_shaped_migration_builds_a_new_pin_and_package_set_nothing_else(seed, run_cli, tmp_path):
    result = run_cli("migrate", recipe(tmp_path, PIN_AND_RENAME), "--repo", str(seed), "--from", "pytorch-2.9",
                     "--branch", "next", "--dry-run")
    assert result.exit_code == 0, result
    section = result.stdout.split("What the recipes build\n", 1)[1].split("\n\n", 1)[0]
    assert section == ("66 recipes: nixpkgs 6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; "
                       "nothing else (first: .flox/pkgs/pytorch-python313-cpu-armv8_2.nix; --verbose lists all)\n"
                       "unchecked: the real pins' versions and rebuilds (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)")
    assert "warning:" not in result.stdout  # each step changed only what its kind declares


def test_the_bundled_recipe_on_the_demo_in_every_format(seed, run_cli, tmp_path):
    args = ("migrate", "pytorch-2.10-cuda12_9", "--repo", str(seed), "--dry-run")
    text = run_cli(*args)
    assert text.exit_code == 0, text
    assert ("What the recipes build\n66 recipes: nixpkgs 6a030d5 → 0182a36; python3Packages.torch → "
            "python313Packages.torch; postInstall: …echo 1 > $out/.metadata-rev → …echo 2 > $out/.metadata-rev; "
            "nothing else (first: .flox/pkgs/pytorch-python313-cpu-armv8_2.nix; --verbose lists all)\n") in text.stdout
    data = json.loads(run_cli(*args, "--format", "json").stdout)
    jsonschema.validate(data, REPORT_SCHEMA)
    builds = data["builds"]
    assert (builds["checked"], builds["allow_broken"], builds["notes"]) == (True, False, [])
    assert builds["counts"]["changed"] == 66 and len(builds["recipes"]) == 66
    assert [change["attribute"] for change in builds["recipes"][0]["changes"]] == ["nixpkgs.rev", "package", "postInstall"]
    assert builds["groups"] == [{"status": "changed", "count": 66, "recipes": [r["path"] for r in builds["recipes"]],
                                 "summary": "nixpkgs 6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; "
                                            "postInstall: …echo 1 > $out/.metadata-rev → …echo 2 > $out/.metadata-rev; "
                                            "nothing else"}]
    markdown = run_cli(*args, "--format", "markdown").stdout
    assert "### What the recipes build\n\n66 recipes: 66 changed (evaluated offline against pinshift's stand-in nixpkgs).\n" \
        in markdown
    assert "- **changed** — 66 recipes: `nixpkgs 6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch;" \
        in markdown


def test_the_summary_after_committing_shows_what_the_recipes_build(seed, run_cli, tmp_path):
    result = run_cli("migrate", recipe(tmp_path, PIN_AND_RENAME), "--repo", str(seed), "--from", "pytorch-2.9",
                     "--branch", "next")
    assert result.exit_code == 0, result
    assert ("builds  66 recipes: nixpkgs 6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; nothing "
            "else (first: .flox/pkgs/pytorch-python313-cpu-armv8_2.nix; --verbose lists all)\n") in result.stdout


# --- a rename past an overlay that overrides python3Packages -----------------------------------------------------------

RENAME = """[[steps]]
kind = "rename-attr"
title = "Use python313Packages"
[steps.params]
from = "python3Packages"
to = "python313Packages"
base = "nixpkgs_pinned"
"""
LOST = ("the package set's override of torch (an overlay or packageOverrides on python3Packages) no longer applies "
        "after this rename-attr step: version 2.10.0 → «python313Packages.torch.version»; src " + SOURCE +
        " → «python313Packages.torch.src»")


def test_a_rename_past_an_overriding_overlay_is_warned_on_every_file(make_repo, run_cli, tmp_path):
    require_nix()
    root = make_repo(fixture_files("overlay"))
    args = ("migrate", recipe(tmp_path, RENAME), "--repo", str(root), "--from", "main", "--branch", "next", "--dry-run")
    data = json.loads(run_cli(*args, "--format", "json").stdout)
    jsonschema.validate(data, REPORT_SCHEMA)
    built = [w for w in data["steps"][0]["warnings"] if "package set's override" in w["message"]]
    assert sorted((w["path"], w["message"]) for w in built) == sorted(
        (f"{PKGS}/{name}.nix", LOST) for name in ("pytorch-python313-cpu-avx2", "pytorch-python313-cuda12_9-sm120-avx2",
                                                  "pytorch-python313-cuda12_9-sm90-avx512"))
    text = run_cli(*args)
    assert text.exit_code == 0
    assert f"warning: 3 files: {LOST} (first: {PKGS}/pytorch-python313-cpu-avx2.nix; --verbose lists all)" in text.stdout
    strict = run_cli(*args[:-1], "--strict")
    assert strict.exit_code == 1 and "warning under --strict" in strict.stderr
    assert git(root, "branch", "--list", "next") == ""


def test_a_rename_that_renames_the_overlay_with_its_uses_loses_nothing(make_repo, run_cli, tmp_path):
    """rename-attr's `definitions = "rename"`: the overlay in the file and the selects are renamed together; the
    overlay then overrides python313Packages, which is what the rename means: no warning."""
    require_nix()
    path = f"{PKGS}/inline.nix"
    text = (BUILDS_DIR / "steps" / "rename-attr" / "overlay-torch.nix").read_text()
    root = make_repo({path: text})
    steps = RENAME + 'definitions = "rename"\n'
    result = run_cli("migrate", recipe(tmp_path, steps), "--repo", str(root), "--from", "main", "--branch", "next",
                     "--dry-run", "--format", "json")
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["steps"][0]["files_changed"] == [path]
    assert data["steps"][0]["warnings"] == []
    assert [c["attribute"] for c in data["builds"]["recipes"][0]["changes"]] == [
        "nixpkgs.overlays[1].python313Packages", "nixpkgs.overlays[1].python3Packages", "package"]


# --- a step that breaks evaluation is refused ---------------------------------------------------------------------------

REMOVE = """[[steps]]
kind = "remove-files"
title = "Drop the SM75 PyTorch"
[steps.params]
select = [".flox/pkgs/pytorch-*-sm75-*.nix"]
references = "allow-dangling"  # past the reference graph's own refusal (issue 31): the evaluation is what is tested
"""


def test_removing_an_imported_file_refuses_the_step_and_makes_no_branch(make_repo, run_cli, tmp_path):
    require_nix()
    root = make_repo(fixture_files("companions"))
    result = run_cli("migrate", recipe(tmp_path, REMOVE), "--repo", str(root), "--from", "main", "--branch", "next")
    assert result.exit_code == 1, result
    assert result.stderr == (
        f"pinshift: error: step 1/1 (remove-files) failed: {PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix: no longer "
        f"evaluates after this step: getting status of '{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix': No such "
        f"file or directory (at {PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix:10:13) (pinshift migrate "
        "--allow-broken commits it anyway) (and 1 more); no branch was created\n")
    assert git(root, "branch", "--list", "next") == ""


def test_allow_broken_commits_it_and_the_report_says_so(make_repo, run_cli, tmp_path):
    require_nix()
    root = make_repo(fixture_files("companions"))
    args = ("migrate", recipe(tmp_path, REMOVE), "--repo", str(root), "--from", "main", "--branch", "next",
            "--allow-broken")
    dry = json.loads(run_cli(*args, "--dry-run", "--format", "json").stdout)
    jsonschema.validate(dry, REPORT_SCHEMA)
    assert dry["builds"]["allow_broken"] is True
    assert dry["builds"]["notes"] == ["--allow-broken: 2 recipes no longer evaluate (broken by step 1)"]
    assert dry["builds"]["counts"] == {"broken": 2, "changed": 0, "cannot_tell": 0, "fixed": 0, "failing": 0, "added": 0,
                                       "removed": 1, "same": 0}
    assert len([w for w in dry["steps"][0]["warnings"] if "--allow-broken" in w["message"]]) == 2
    result = run_cli(*args)
    assert result.exit_code == 0, result
    assert "builds  note: --allow-broken: 2 recipes no longer evaluate (broken by step 1)\n" in result.stdout
    assert git(root, "ls-tree", "--name-only", "next", f"{PKGS}/").split() == [
        f"{PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix", f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix"]


EVERY = """[[steps]]
kind = "set-binding"
title = "Propagate the linked PyTorch build"
[steps.params]
path = "propagatedBuildInputs"
value = "(oldAttrs.propagatedBuildInputs or [ ]) ++ [ customPytorch.out ]"
after = "pname"
where = "{where}"
"""


def test_set_binding_into_every_override_attrs_is_refused_as_infinite_recursion(make_repo, run_cli, tmp_path):
    require_nix()
    root = make_repo(fixture_files("nested"))
    result = run_cli("migrate", recipe(tmp_path, EVERY.format(where="every")), "--repo", str(root), "--from", "main",
                     "--branch", "next")
    assert result.exit_code == 1
    assert result.stderr == (
        f"pinshift: error: step 1/1 (set-binding) failed: {PKGS}/torchvision-python313-cuda12_9-sm90-avx512.nix: no "
        "longer evaluates after this step: infinite recursion encountered (while evaluating propagatedBuildInputs) "
        "(pinshift migrate --allow-broken commits it anyway); no branch was created\n")
    fine = run_cli("migrate", recipe(tmp_path, EVERY.format(where="result")), "--repo", str(root), "--from", "main",
                   "--branch", "next", "--dry-run", "--format", "json")
    data = json.loads(fine.stdout)
    assert fine.exit_code == 0 and data["steps"][0]["warnings"] == [] and data["steps"][0]["refused"] == []
    change = data["builds"]["recipes"][0]["changes"]
    assert [c["attribute"] for c in change] == ["overrides[1].overrideAttrs", "propagatedBuildInputs"]


def test_a_recipe_that_never_evaluated_is_no_regression(make_repo, run_cli, tmp_path):
    require_nix()
    files = fixture_files("companions")
    files[f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix"] = b"{ x = undefined_name; }\n"  # fails on the base
    root = make_repo(files)
    result = run_cli("migrate", recipe(tmp_path, REMOVE), "--repo", str(root), "--from", "main", "--branch", "next",
                     "--dry-run", "--format", "json")
    assert result.exit_code == 0, result
    data = json.loads(result.stdout)
    assert data["steps"][0]["refused"] == [] and data["builds"]["counts"]["failing"] == 2
    assert data["builds"]["counts"]["broken"] == 0


def test_without_nix_instantiate_the_check_is_one_note(seed, run_cli, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(bin_dir))
    result = run_cli("migrate", recipe(tmp_path, PIN_AND_RENAME), "--repo", str(seed), "--from", "pytorch-2.9",
                     "--branch", "next")
    assert result.exit_code == 0, result
    assert ("builds  note: what the recipes build was not checked: nix-instantiate is not on PATH (install Nix, "
            "Debian: apt-get install nix-bin, to evaluate each step's recipes offline)\n") in result.stdout
    assert git(seed, "rev-parse", "--verify", "-q", "next").strip()


def test_a_kind_that_declares_nothing_is_noted_not_warned(make_repo, run_cli, tmp_path):
    require_nix()
    # the build check evaluates Flox recipes (issue 46): the swaps' files, moved where recipes live
    root = make_repo({(f".flox/{p}" if p.startswith("pkgs/") else p): text for p, text in FILES.items()}, branch="base")
    swaps = tmp_path / "swaps.toml"
    swaps.write_text(SWAPS.read_text().replace('"pkgs/', '".flox/pkgs/'))
    result = run_cli("migrate", str(swaps), "--repo", str(root), "--migrations", str(MIGRATIONS), "--dry-run",
                     "--format", "json")
    data = json.loads(result.stdout)
    assert data["builds"]["notes"] == [
        "step 1 (word-swap) declares no BUILD_CHANGES: what it changes in the recipes is not checked against an "
        "intent (docs/writing-steps.md)",
        "step 3 (word-swap) declares no BUILD_CHANGES: what it changes in the recipes is not checked against an "
        "intent (docs/writing-steps.md)"]
    assert all(not s["warnings"] for s in data["steps"])


# --- what each kind declares ------------------------------------------------------------------------------------------


def test_every_bundled_kind_declares_what_it_changes_in_what_recipes_build():
    kinds = bundled_kinds()
    assert len(kinds) >= 12
    for name, kind in kinds.items():
        declared = getattr(kind.module, "BUILD_CHANGES", None)
        assert isinstance(declared, tuple) and all(isinstance(p, str) for p in declared), name


def test_declared_patterns_take_the_steps_parameters():
    kinds = bundled_kinds()
    rename = kinds["rename-attr"]
    params = rename.module.Params(from_="python3Packages", to="python313Packages")
    assert intended(rename.module, params) == ("package", "«python3Packages→python313Packages»")
    binding = kinds["set-binding"].module
    assert intended(binding, binding.Params(path="platforms", value="[ ]", at="meta")) == (
        "platforms*", "*.platforms*", "meta.platforms*", "*.meta.platforms*")
    assert intended(binding, binding.Params(path="ninjaFlags", value="[ ]")) == ("ninjaFlags*", "*.ninjaFlags*")


@pytest.mark.parametrize("change, patterns, left", [
    (Change("nixpkgs.rev", "a", "b"), ("nixpkgs.rev",), False),
    (Change("version", "2.10.0", "«python313Packages.torch.version»"), ("package",), True),
    (Change("buildInputs[1]", "«python3Packages.numpy»", "«python313Packages.numpy»"),
     ("package", "«python3Packages→python313Packages»"), False),
    (Change("buildInputs[1]", "«cudaPackages.cudnn»", "«cudaPackages_12_9.cudnn»"),
     ("package", "«python3Packages→python313Packages»"), True),
    (Change("overrides[1].overrideAttrs", ["meta", "pname"], ["meta", "pname", "postInstall"]), ("postInstall",), False),
    (Change("overrides[1].overrideAttrs", ["meta", "pname"], ["meta", "pname", "patches"]), ("postInstall",), True),
    (Change("anything", 1, 2), ("*",), False),
    (Change("anything", 1, 2), None, False),  # a kind that declares nothing is not checked
])
def test_a_change_is_intended_when_a_declared_pattern_covers_it(change, patterns, left):
    assert (unintended([change], patterns) == [change]) is left


def test_the_section_shows_ten_groups_and_counts_the_rest(make_repo, run_cli, tmp_path):
    """Twelve recipes each changed its own way by a replace-in-strings step: ten lines and one that counts the
    other two (--verbose: all twelve)."""
    require_nix()
    files = {f"{PKGS}/r{n:02}.nix": f'{{ pname = "r{n:02}"; description = "old {n:02}"; }}\n' for n in range(12)}
    root = make_repo(files)
    steps = ('[[steps]]\nkind = "replace-in-strings"\ntitle = "new"\n[steps.params]\npaths = ["description"]\n'
             'old = "old"\nnew = "new"\n')
    args = ("migrate", recipe(tmp_path, steps), "--repo", str(root), "--from", "main", "--branch", "next", "--dry-run")
    section = run_cli(*args).stdout.split("What the recipes build\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(section) == 12 and section[11].startswith("unchecked: the real pins' versions")
    assert section[0] == f"{PKGS}/r00.nix: value.description old 00 → new 00; nothing else"
    assert section[10] == "… and 2 more groups of 2 recipes (--verbose or --format json lists them)"
    verbose = run_cli(*args, "--verbose").stdout.split("What the recipes build\n", 1)[1].split("\n\n", 1)[0]
    assert len(verbose.splitlines()) == 13


def test_no_build_check_evaluates_nothing_and_the_report_says_so(make_repo, run_cli, tmp_path, monkeypatch):
    """--no-build-check: the step that breaks two companions is committed, no nix-instantiate runs, and both the
    report and the summary say that what the recipes build was not checked."""
    real = require_nix()
    calls = tmp_path / "calls"
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "nix-instantiate").write_text(f'#!/bin/sh\necho called >> "{calls}"\nexec "{real}" "$@"\n')
    (shim / "nix-instantiate").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    root = make_repo(fixture_files("companions"))
    args = ("migrate", recipe(tmp_path, REMOVE), "--repo", str(root), "--from", "main", "--branch", "next")
    dry = json.loads(run_cli(*args, "--no-build-check", "--dry-run", "--format", "json").stdout)
    jsonschema.validate(dry, REPORT_SCHEMA)
    assert dry["builds"]["checked"] is False
    assert dry["builds"]["notes"][0].startswith("what the recipes build was not checked (--no-build-check)")
    assert not dry["steps"][0]["refused"]
    result = run_cli(*args, "--no-build-check")
    assert result.exit_code == 0, result
    assert "not checked (--no-build-check)" in result.stdout
    assert git(root, "ls-tree", "--name-only", "next", f"{PKGS}/").split() == [
        f"{PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix", f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix"]
    assert not calls.exists()
    checked = run_cli(*args[:-1], "other", "--dry-run")  # the same dry run with the check: the shim is called
    assert checked.exit_code == 1 and "no longer evaluates" in checked.stderr and calls.exists()


def test_a_long_evaluation_says_how_to_skip_it(make_repo, run_cli, tmp_path, monkeypatch):
    """When the check's evaluations take long (thousands of recipes), the report says so and names the way out."""
    require_nix()
    from pinshift.evaluation import build_check

    root = make_repo(fixture_files("companions"))
    args = ("migrate", recipe(tmp_path, REMOVE), "--repo", str(root), "--from", "main", "--branch", "next",
            "--allow-broken", "--dry-run", "--format", "json")
    quick = json.loads(run_cli(*args).stdout)
    assert not any("--no-build-check skips" in note for note in quick["builds"]["notes"])
    monkeypatch.setattr(build_check, "SLOW_SECONDS", 0.0)
    slow = json.loads(run_cli(*args).stdout)
    (note,) = [note for note in slow["builds"]["notes"] if "--no-build-check skips" in note]
    assert note.startswith("evaluating ") and " recipe states took " in note


def test_a_step_after_which_the_stand_in_cannot_tell_is_not_refused(make_repo, run_cli, tmp_path):
    """A step that makes a recipe import a fetched source: `cannot_tell` with the reason (counted, listed), the
    step committed (exit 0), never refused as broken."""
    require_nix()
    root = make_repo({f"{PKGS}/r.nix": 'rec { pname = "r"; description = "local"; value = if description == "fetched" '
                                       'then import (builtins.fetchTarball "https://example.org/x.tar.gz") else 1; }\n'})
    steps = ('[[steps]]\nkind = "replace-in-strings"\ntitle = "fetch"\n[steps.params]\npaths = ["description"]\n'
             'old = "local"\nnew = "fetched"\n')
    args = ("migrate", recipe(tmp_path, steps), "--repo", str(root), "--from", "main", "--branch", "next")
    dry = json.loads(run_cli(*args, "--dry-run", "--format", "json").stdout)
    jsonschema.validate(dry, REPORT_SCHEMA)
    assert dry["steps"][0]["refused"] == []
    assert dry["builds"]["counts"]["cannot_tell"] == 1 and dry["builds"]["counts"]["broken"] == 0
    [found] = dry["builds"]["recipes"]
    assert found["status"] == "cannot_tell" and found["reason"].startswith("it imports a fetched source")
    result = run_cli(*args)
    assert result.exit_code == 0, result
    assert git(root, "rev-parse", "--verify", "-q", "next").strip()
