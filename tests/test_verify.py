"""`pinshift verify` against a stub nixpkgs git repository with two revisions (tests/fixtures/checks/stub-nixpkgs).

In the second revision the torch function renames `gpuTargets` to `gpuTargetList`
and python-packages.nix no longer binds `numpy`. Every finding is proven here,
statically and (with Nix on PATH, always in CI) by real `nix-instantiate --eval`.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES, git, require_nix
from pinshift.demo.matrix import OLD_REV, Variant, render_recipe, variants

STUB = FIXTURES / "checks" / "stub-nixpkgs"
GPU = [v for v in variants() if v.gpu not in ("cpu", "darwin")]


@pytest.fixture
def nixpkgs(tmp_path):
    """The stub nixpkgs clone: (directory, first revision, second revision); HEAD at the second."""
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
    git(root, "commit", "-q", "-m", "second: torch renames gpuTargets, numpy removed")
    return root, first, git(root, "rev-parse", "HEAD").strip()


def write_tree(root, rev, chosen=None, package_set="python313Packages"):
    root.mkdir(exist_ok=True)
    for variant in chosen or variants():
        (root / variant.filename).write_text(render_recipe(variant, rev, package_set))
    return root


def verify_json(run_cli, *args):
    result = run_cli("verify", "--format", "json", *args)
    return result, json.loads(result.stdout)


def test_seed_tree_is_compatible_with_first_revision(run_cli, nixpkgs, tmp_path):
    clone, first, _ = nixpkgs
    tree = write_tree(tmp_path / "pkgs", first)
    result = run_cli("verify", str(tree), "--nixpkgs", str(clone))
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.endswith("66 files verified, 0 errors, 0 warnings\n")


def test_renamed_parameter_is_one_finding_naming_every_gpu_recipe(run_cli, nixpkgs, tmp_path):
    clone, _, second = nixpkgs
    tree = write_tree(tmp_path / "pkgs", second)
    result, report = verify_json(run_cli, str(tree), "--nixpkgs", str(clone))
    assert result.exit_code == 1
    [finding] = report["findings"]
    assert finding["code"] == "V104" and finding["severity"] == "error"
    assert finding["message"] == (
        f".override argument gpuTargets is not a parameter of python313Packages.torch at {second[:7]} "
        "(pkgs/development/python-modules/torch/default.nix) (renamed to gpuTargetList?): "
        "evaluation fails with 'unexpected argument'")
    assert sorted(finding["files"]) == sorted(str(tree / v.filename) for v in GPU) and len(GPU) == 59
    first_file = tree / sorted(v.filename for v in GPU)[0]
    line = first_file.read_text().splitlines()[finding["line"] - 1]
    assert finding["path"] == str(first_file) and line[finding["column"] - 1:].startswith("gpuTargets = ")


def test_renamed_parameter_text_line(run_cli, nixpkgs, tmp_path):
    clone, _, second = nixpkgs
    tree = write_tree(tmp_path / "pkgs", second, [Variant("90", "avx512"), Variant("80", "avx2")])
    result = run_cli("verify", "--nixpkgs", str(clone), ".", cwd=tree)
    assert result.exit_code == 1
    assert result.stdout == (
        f"pytorch-python313-cuda12_9-sm80-avx2.nix:32:5: V104 .override argument gpuTargets is not a parameter "
        f"of python313Packages.torch at {second[:7]} (pkgs/development/python-modules/torch/default.nix) "
        "(renamed to gpuTargetList?): evaluation fails with 'unexpected argument' "
        "(also in pytorch-python313-cuda12_9-sm90-avx512.nix)\n")


def test_missing_attribute_only_on_second_revision(run_cli, nixpkgs, tmp_path):
    clone, first, second = nixpkgs
    text = render_recipe(Variant("cpu", "avx2"), second, "python313Packages").replace(".torch.", ".numpy.")
    (tmp_path / "numpy-cpu.nix").write_text(text)
    result, report = verify_json(run_cli, str(tmp_path / "numpy-cpu.nix"), "--nixpkgs", str(clone))
    assert result.exit_code == 1
    assert [(f["code"], f["message"]) for f in report["findings"]] == [
        ("V103", f"python313Packages.numpy does not exist in nixpkgs at {second[:7]} "
                 "(not bound in pkgs/top-level/python-packages.nix)")]
    result = run_cli("verify", str(tmp_path / "numpy-cpu.nix"), "--nixpkgs", str(clone), "--rev", first)
    assert (result.exit_code, result.stdout) == (0, "")


def test_missing_package_set_names_its_recipes(run_cli, nixpkgs, tmp_path):
    clone, first, _ = nixpkgs
    chosen = [Variant("cpu", "avx2"), Variant("darwin", "")]
    tree = write_tree(tmp_path / "pkgs", first, chosen, package_set="python314Packages")
    result, report = verify_json(run_cli, str(tree), "--nixpkgs", str(clone))
    assert result.exit_code == 1
    [finding] = report["findings"]
    assert finding["code"] == "V102"
    assert finding["message"].startswith(f"package set python314Packages does not exist in nixpkgs at {first[:7]}")
    assert sorted(finding["files"]) == sorted(str(tree / v.filename) for v in chosen)


def test_missing_revision_names_every_recipe(run_cli, nixpkgs, tmp_path):
    clone, _, _ = nixpkgs
    tree = write_tree(tmp_path / "pkgs", OLD_REV, [Variant("cpu", "avx2"), Variant("90", "avx2")])
    result, report = verify_json(run_cli, str(tree), "--nixpkgs", str(clone))
    assert result.exit_code == 1
    [finding] = report["findings"]
    assert finding["code"] == "V101" and len(finding["files"]) == 2
    assert finding["message"] == (f"nixpkgs revision {OLD_REV} is not in {clone}; fetch it there "
                                  f"(git -C {clone} fetch origin {OLD_REV})")


def test_checkout_work_tree_untouched(run_cli, nixpkgs, tmp_path):
    clone, first, second = nixpkgs
    (clone / "local-note.txt").write_text("untracked\n")
    (clone / "lib.nix").write_text("# edited, not committed\n")
    status = git(clone, "status", "--porcelain")
    tree = write_tree(tmp_path / "pkgs", first, [Variant("90", "avx2")])
    assert run_cli("verify", str(tree), "--nixpkgs", str(clone), "--rev", first).exit_code == 0
    assert git(clone, "status", "--porcelain") == status
    assert git(clone, "rev-parse", "HEAD").strip() == second


def test_syntax_problem_is_reported_and_not_checked_further(run_cli, tmp_path):
    (tmp_path / "broken.nix").write_bytes(b"{ pname = \"x\" \n")
    result = run_cli("verify", str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{tmp_path / 'broken.nix'}:") and " V001 " in result.stdout
    assert "note: static compatibility not checked: pass --nixpkgs DIR" in result.stderr


def test_nix_parse_rejection(run_cli, tmp_path):
    require_nix()
    # pinshift's parse accepts a name nothing in the file binds (a caller may provide it); Nix's parser does not
    (tmp_path / "free.nix").write_text("{ pname = \"a\"; src = fetchFromGitHub { }; }\n")
    result = run_cli("verify", str(tmp_path / "free.nix"))
    assert result.exit_code == 1
    assert " V002 nix-instantiate --parse: undefined variable 'fetchFromGitHub'" in result.stdout


def test_repeated_attribute_is_a_syntax_problem_before_nix_is_asked(run_cli, tmp_path):
    (tmp_path / "twice.nix").write_text("{ pname = \"a\"; pname = \"b\"; }\n")
    result = run_cli("verify", str(tmp_path / "twice.nix"))
    assert result.exit_code == 1
    assert f"{tmp_path / 'twice.nix'}:1:16: V001 syntax error: attribute 'pname' already defined" in result.stdout
    assert "V002" not in result.stdout


def test_not_a_git_clone_is_a_usage_error(run_cli, tmp_path):
    write_tree(tmp_path / "pkgs", OLD_REV, [Variant("cpu", "avx2")])
    (tmp_path / "plain").mkdir()
    result = run_cli("verify", str(tmp_path / "pkgs"), "--nixpkgs", str(tmp_path / "plain"))
    assert result.exit_code == 2
    assert result.stderr == (f"pinshift: error: --nixpkgs {tmp_path / 'plain'}: not a git repository; pass --nixpkgs DIR "
                             "(a local nixpkgs git clone) or set PINSHIFT_NIXPKGS\n")


def test_eval_first_revision_gives_pname_and_version(run_cli, nixpkgs, tmp_path):
    require_nix()
    clone, first, _ = nixpkgs
    chosen = [Variant("90", "avx512"), Variant("cpu", "armv9"), Variant("darwin", "")]
    tree = write_tree(tmp_path / "pkgs", first, chosen)
    result, report = verify_json(run_cli, str(tree), "--nixpkgs", str(clone), "--eval")
    assert (result.exit_code, report["findings"]) == (0, [])
    assert report["evaluations"] == {str(tree / v.filename): {"pname": v.pname, "version": "2.9.1"} for v in chosen}


def test_eval_second_revision_fails_gpu_recipes_like_nix_does(run_cli, nixpkgs, tmp_path):
    require_nix()
    clone, _, second = nixpkgs
    chosen = [Variant("90", "avx512"), Variant("120", "armv9"), Variant("cpu", "avx2")]
    tree = write_tree(tmp_path / "pkgs", second, chosen)
    result, report = verify_json(run_cli, str(tree), "--nixpkgs", str(clone), "--eval")
    assert result.exit_code == 1
    by_code = {f["code"]: f for f in report["findings"]}
    assert set(by_code) == {"V104", "V201"}
    evaluated = by_code["V201"]
    assert "called with unexpected argument 'gpuTargets'" in evaluated["message"]
    assert f"<nixpkgs {second[:7]}>/pkgs/development/python-modules/torch/default.nix" in evaluated["message"]
    assert sorted(evaluated["files"]) == sorted(str(tree / v.filename) for v in chosen[:2])
    assert report["evaluations"] == {str(tree / "pytorch-python313-cpu-avx2.nix"):
                                     {"pname": "pytorch-python313-cpu-avx2", "version": "2.10.0"}}


def test_eval_reports_pins_it_cannot_shadow(run_cli, nixpkgs, tmp_path):
    require_nix()
    clone, first, _ = nixpkgs
    (tmp_path / "github.nix").write_text(
        "{ fetchFromGitHub }:\nlet\n  np = import (fetchFromGitHub {\n    owner = \"NixOS\";\n    repo = \"nixpkgs\";\n"
        f"    rev = \"{first}\";\n    hash = \"\";\n  }}) {{ }};\nin\nnp.python313Packages.torch\n")
    result, report = verify_json(run_cli, str(tmp_path / "github.nix"), "--nixpkgs", str(clone), "--eval")
    assert result.exit_code == 0
    assert [(f["code"], f["severity"], f["message"]) for f in report["findings"]] == [
        ("V202", "warning", "not evaluated: the pin uses fetchFromGitHub, only fetchTarball pins can be "
                            "replaced offline")]


def test_markdown_lists_findings_and_evaluations(run_cli, nixpkgs, tmp_path):
    clone, _, second = nixpkgs
    tree = write_tree(tmp_path / "pkgs", second, [Variant("90", "avx2")])
    result = run_cli("verify", "--format", "markdown", str(tree), "--nixpkgs", str(clone))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:4] == ["## pinshift verify", "", "| location | code | severity | message |", "|---|---|---|---|"]
    assert lines[4].startswith(f"| `{tree / Variant('90', 'avx2').filename}:32:5` | V104 | error |")


def _recipe_repo(make_repo, tmp_path, new_rev):
    chosen = [Variant("90", "avx512"), Variant("cpu", "avx2")]
    repo = make_repo({f".flox/pkgs/{v.filename}": render_recipe(v, OLD_REV, "python313Packages") for v in chosen},
                     branch="pytorch-2.9")
    recipe = tmp_path / "to-stub.toml"
    recipe.write_text(f'name = "to-stub"\nbase = "pytorch-2.9"\ntarget = "on-stub"\nfiles = [".flox/pkgs/**/*.nix"]\n\n'
                      f'[[steps]]\nkind = "pin-swap"\ntitle = "Pin the stub"\n[steps.params]\nold = "6a030d5"\n'
                      f'new = "{new_rev}"\n')
    return repo, recipe


def test_migrate_verify_refuses_to_commit_onto_a_renamed_parameter(run_cli, make_repo, nixpkgs, tmp_path):
    clone, _, second = nixpkgs
    repo, recipe = _recipe_repo(make_repo, tmp_path, second)
    result = run_cli("migrate", str(recipe), "--repo", str(repo), "--verify", "--nixpkgs", str(clone))
    assert result.exit_code == 1
    assert "verify: .flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix:34:5: V104 .override argument " \
           "gpuTargets is not a parameter" in result.stderr
    assert "verify: 1 error on the migrated recipes; nothing committed" in result.stderr
    assert "on-stub" not in git(repo, "branch", "--list")


def test_migrate_verify_commits_when_compatible(run_cli, make_repo, nixpkgs, tmp_path):
    clone, first, _ = nixpkgs
    repo, recipe = _recipe_repo(make_repo, tmp_path, first)
    result = run_cli("migrate", str(recipe), "--repo", str(repo), "--verify", "--nixpkgs", str(clone))
    assert result.exit_code == 0, result
    assert "verify: migrated recipes verified, 0 warnings" in result.stderr
    assert first in git(repo, "show", "on-stub:.flox/pkgs/pytorch-python313-cpu-avx2.nix")


def test_migrate_verify_checks_the_files_as_renamed_and_removed(run_cli, make_repo, nixpkgs, tmp_path):
    """A recipe that removes the incompatible recipe and renames the other verifies (and commits) what remains."""
    clone, _, second = nixpkgs
    repo, recipe = _recipe_repo(make_repo, tmp_path, second)
    with recipe.open("a") as handle:
        handle.write('\n[[steps]]\nkind = "remove-files"\n[steps.params]\nselect = [".flox/pkgs/*-sm90-*.nix"]\n'
                     '\n[[steps]]\nkind = "rename-files"\n[steps.params]\nfrom = "python313"\nto = "python3xx"\n')
    result = run_cli("migrate", str(recipe), "--repo", str(repo), "--verify", "--nixpkgs", str(clone))
    assert result.exit_code == 0, result
    assert "verify: migrated recipes verified, 0 warnings" in result.stderr
    assert git(repo, "ls-tree", "-r", "--name-only", "on-stub").split() == [".flox/pkgs/pytorch-python3xx-cpu-avx2.nix"]
