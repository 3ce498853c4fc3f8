"""Acceptance for issue 18: the bundled flox-args-to-pinned recipe on the demo's Flox-args `main` branch.

The branch comes from `build_demo(flox_args=True)` and is migrated with the real CLI. Every
output file must parse with `nix-instantiate --parse`, refer to no former formal (a walk of each
tree by lexical scope), equal the hand-written files in tests/fixtures/flox-args/expected/ for the
CPU, GPU and Darwin shapes, and evaluate, against a stub nixpkgs imported through `scopedImport`
as `verify --eval` does, to what the original evaluated to with the same stub passed as arguments.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, git, require_nix
from migrate_repo import snapshot
from pinshift.evaluation.clone_eval import evaluate, nix_string
from pinshift.cli import main
from pinshift.demo.build import build_demo
from pinshift.demo.flox_args import flox_variants
from pinshift.files.globs import matches
from pinshift.recipes.recipe import find_recipe
from pinshift.syntax.document import parse_document
from pinshift.syntax.queries import functions, unwrap, walk
from pinshift.syntax.scopes import binder_of

FLOX = FIXTURES / "flox-args"
STUB = FLOX / "stub-nixpkgs"
PKGS = ".flox/pkgs"
RECIPE = "flox-args-to-pinned"
TARGET = "main-pinned"
EXPECTED = sorted(p.name for p in (FLOX / "expected").iterdir())


def pinshift(*args: str) -> tuple[int, str, str]:
    """The real entry point, in-process (the module fixture cannot use the function-scoped run_cli)."""
    runner = CliRunner()
    with runner.isolation() as (out, err, _):
        code = main(list(args))
        return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """The demo repository with a Flox-args main, migrated once onto main-pinned."""
    root = build_demo(tmp_path_factory.mktemp("flox") / "demo", flox_args=True)
    code, out, err = pinshift("migrate", RECIPE, "--repo", str(root), "--from", "main", "--branch", TARGET)
    assert code == 0, (out, err)
    return root, out


def show(root: Path, branch: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), "show", f"{branch}:{path}"], capture_output=True, check=True).stdout


def recipes(root: Path) -> list[str]:
    return [p for p in git(root, "ls-tree", "-r", "--name-only", "main", PKGS).split() if p.endswith(".nix")]


def top_function(doc):
    node = unwrap(doc.root.named_children[-1])
    return node if node.type == "function_expression" else None


def test_the_flox_branch_has_every_variant_and_takes_flox_arguments(repo):
    root, _ = repo
    paths = recipes(root)
    assert sorted(paths) == sorted(f"{PKGS}/{v.filename}" for v in flox_variants()) and len(paths) == 58
    kinds = {"gpu": {"python3Packages", "lib", "config", "cudaPackages", "addDriverRunpath"},
             "cpu": {"python3Packages", "lib", "openblas"}, "darwin": {"python3Packages", "lib", "darwin"}}
    for variant in flox_variants():
        doc = parse_document(show(root, "main", f"{PKGS}/{variant.filename}"))
        assert {f.name for f in functions(doc)[0].formals} == kinds[variant.kind]


def test_summary_names_every_step_and_the_branch(repo):
    root, out = repo
    assert f"branch  {TARGET} (" in out and "base    main (" in out
    assert "1/6" in out and "6/6" in out and "51 files" in out and "7 files" in out
    assert len(git(root, "log", "--format=%s", f"main..{TARGET}").splitlines()) == 6
    assert git(root, "diff", "--name-only", f"main..{TARGET}").split() == sorted(recipes(root))


@pytest.mark.parametrize("name", EXPECTED)
def test_output_equals_the_hand_written_file(repo, name):
    root, _ = repo
    assert show(root, TARGET, f"{PKGS}/{name}") == (FLOX / "expected" / name).read_bytes()


def test_every_output_parses_with_nix(repo):
    nix = require_nix()
    root, _ = repo
    for path in recipes(root):
        result = subprocess.run([nix, "--parse", "-"], input=show(root, TARGET, path), capture_output=True)
        assert result.returncode == 0, (path, result.stderr.decode())


def test_no_former_formal_is_left_unqualified(repo):
    """Walk each output by lexical scope: a name that was a formal is never free, `with`-supplied or a formal."""
    root, _ = repo
    for path in recipes(root):
        before = parse_document(show(root, "main", path), path)
        former = {f.name for f in functions(before)[0].formals}
        after = parse_document(show(root, TARGET, path), path)
        assert not after.problems
        function = top_function(after)
        assert {f.name for f in functions(after)[0].formals} == {"pkgs"}
        used = set()
        for variable in walk(after.root, "variable_expression"):
            name = after.text(variable).decode()
            if name in former:
                binder = binder_of(after, variable)
                assert binder.lexical and binder.scope != function, f"{path}: {after.location(variable.start_byte)}"
            if name == "nixpkgs_pinned":
                assert binder_of(after, variable).kind == "let", path
                parent = variable.parent
                used.add(after.text(parent.child_by_field_name("attrpath").child_by_field_name("attr")).decode())
        referenced = {after.text(v).decode() for v in walk(before.root, "variable_expression")} & former
        assert referenced <= used, path  # every former formal in use is now a member of the pinned set


def _stub_arguments(path: str) -> tuple[str, str]:
    """The config and overlays Nix source the recipe's pin-nixpkgs step uses for `path`."""
    recipe = find_recipe(RECIPE)
    for step in recipe.steps:
        if step.kind == "pin-nixpkgs" and matches(path, recipe.files_for(step)):
            return step.params.get("config", "{ }"), step.params.get("overlays", "[ ]")
    raise AssertionError(f"no pin-nixpkgs step takes {path}")


_PROJECTION = """{{ pname = v.pname; version = v.version; preConfigure = v.preConfigure or null;
    buildInputs = map (p: p.pname) (v.buildInputs or [ ]); nativeBuildInputs = map (p: p.pname) (v.nativeBuildInputs or [ ]);
    cudaSupport = v.passthru.cudaSupport or null; gpuTargets = v.passthru.gpuTargets or null; platforms = v.meta.platforms; }}"""


def _evaluate_all(expressions: dict[str, str]) -> dict:
    nix = require_nix()
    entries = "\n".join(f"  {nix_string(path)} = {expression};" for path, expression in expressions.items())
    result = subprocess.run([nix, "--readonly-mode", "--eval", "--strict", "--json", "--expr", "{\n" + entries + "\n}"],
                            capture_output=True, env=dict(os.environ, NIX_PATH=""))
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def test_converted_recipes_evaluate_like_the_originals_with_a_stub_nixpkgs(repo, tmp_path):
    """Originals: called like callPackage with the stub's attributes. Converted: imported with `scopedImport`
    shadowing fetchTarball with the stub (as `verify --eval` does) and called with `{ }`."""
    root, _ = repo
    git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "before"), "main")
    git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "after"), TARGET)
    stub = f"(/. + {nix_string(str(STUB))})"
    originals, converted = {}, {}
    for path in recipes(root):
        config, overlays = _stub_arguments(path)
        before = f"(/. + {nix_string(str(tmp_path / 'before' / path))})"
        after = f"(/. + {nix_string(str(tmp_path / 'after' / path))})"
        originals[path] = (f"(let pkgs = import {stub} {{ config = {config}; overlays = {overlays}; }}; f = import {before}; "
                           f"v = f (builtins.intersectAttrs (builtins.functionArgs f) pkgs); in {_PROJECTION.format()})")
        converted[path] = (f"(let s = _: {stub}; v = scopedImport {{ builtins = builtins // {{ fetchTarball = s; }}; "
                           f"fetchTarball = s; }} {after} {{ }}; in {_PROJECTION.format()})")
    want, got = _evaluate_all(originals), _evaluate_all(converted)
    assert got == want
    by_path = {f"{PKGS}/{v.filename}": v for v in flox_variants()}
    assert {path: (value["pname"], value["version"]) for path, value in got.items()} == {
        path: (variant.pname, "2.8.0") for path, variant in by_path.items()}
    assert got[f"{PKGS}/pytorch-python313-cuda12_8-sm90-avx512.nix"]["buildInputs"] == [
        "cuda_cudart", "cuda_cudart", "libcublas", "cudnn"]
    assert got[f"{PKGS}/pytorch-python313-darwin-mps.nix"]["buildInputs"] == [
        "Accelerate", "Metal", "MetalPerformanceShaders"]


@pytest.mark.parametrize("name", EXPECTED)
def test_verify_eval_reads_pname_and_version_of_the_converted_recipe(repo, name, tmp_path):
    """The product's own `verify --eval` evaluation (pinshift.evaluation.clone_eval) on the converted recipes."""
    nix = require_nix()
    root, _ = repo
    recipe = tmp_path / name
    recipe.write_bytes(show(root, TARGET, f"{PKGS}/{name}"))
    value, error = evaluate(nix, recipe, STUB)
    assert error is None
    assert value == {"pname": name.removesuffix(".nix"), "version": "2.8.0"}


def test_a_second_run_changes_nothing(repo, run_cli):
    root, _ = repo
    result = run_cli("migrate", RECIPE, "--repo", str(root), "--from", TARGET, "--branch", "again", "--dry-run",
                     "--check")
    assert result.exit_code == 0, result
    assert "already pinned (its let binds nixpkgs_pinned): left alone" in result.stdout


@pytest.mark.parametrize("given, missing", [((), "--from BASE and --branch NAME"), (("--from", "main"), "--branch NAME"),
                                            (("--branch", "x"), "--from BASE")])
def test_migrate_names_the_missing_branch_options_in_one_line(make_repo, run_cli, given, missing):
    root = make_repo({".flox/pkgs/a.nix": "{ lib }:\nlib.id\n"})
    before = snapshot(root)
    result = run_cli("migrate", RECIPE, "--repo", str(root), *given)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"pinshift: error: recipe {RECIPE} names no base or target branch (it converts whichever "
                             f"branch you name): give {missing}, e.g. --from main --branch main-pinned\n")
    assert snapshot(root) == before


def test_the_demo_option_leaves_the_pytorch_29_branch_as_the_default_demo_builds_it(tmp_path, repo):
    root, _ = repo
    default = build_demo(tmp_path / "default")
    assert git(default, "rev-parse", "pytorch-2.9^{tree}") == git(root, "rev-parse", "pytorch-2.9^{tree}")
    assert git(default, "ls-tree", "-r", "--name-only", "main").split() == ["README.md"]
    assert git(root, "branch", "--show-current").strip() == "pytorch-2.9"


def test_the_recipe_is_listed_with_its_description(run_cli):
    result = run_cli("recipes")
    assert result.exit_code == 0
    assert any(line.startswith(RECIPE) and "bundled" in line and "--from and --branch" in line
               for line in result.stdout.splitlines())
    data = tomllib.loads((Path(__file__).parents[1] / "recipes" / f"{RECIPE}.toml").read_text())
    assert "base" not in data and "target" not in data


def test_demo_flox_args_runs_the_conversion_as_a_user_would(tmp_path, run_cli):
    result = run_cli("demo", "--flox-args", "--dir", str(tmp_path / "demo"))
    assert result.exit_code == 0, result
    root = tmp_path / "demo"
    assert f"$ pinshift migrate {RECIPE} --from main --branch {TARGET}\n" in result.stdout
    assert f"look around: cd {root} && git log --stat main..{TARGET}" in result.stdout
    assert git(root, "branch", "--format=%(refname:short)").split() == ["main", TARGET, "pytorch-2.9"]
    assert len(git(root, "log", "--format=%s", f"main..{TARGET}").splitlines()) == 6
    name = "pytorch-python313-darwin-mps.nix"
    assert show(root, TARGET, f"{PKGS}/{name}") == (FLOX / "expected" / name).read_bytes()
