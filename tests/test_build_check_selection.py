"""migrate's build check evaluates what builds (issue 46): the Flox recipes, never every `.nix` file of a
repository, and one line when nothing there is a recipe (a home-manager-shaped repository evaluated all
3,496 files for over 10 minutes)."""

from __future__ import annotations

from pathlib import Path

from conftest import require_nix
from pinshift.evaluation.build_check import NO_RECIPES, recipe_paths

REWRITE = """[[steps]]
kind = "rewrite"
title = "Call toString by its full name"
[steps.params]
pattern = "toString $X"
replacement = "builtins.toString $X"
"""


def _recipe(tmp_path: Path, files: str) -> str:
    path = tmp_path / "recipe.toml"
    path.write_text(f'name = "modules"\ndescription = "a test recipe"\nfiles = ["{files}"]\n\n{REWRITE}')
    return str(path)


def test_only_recipes_are_evaluated():
    # Flox builds .flox/pkgs/NAME.nix and .flox/pkgs/NAME/default.nix; a nested file or a lib/ file is a helper
    # (pinshift.facts.recipe_set, the definition status, scan and lint share), evaluated through its importers.
    assert recipe_paths(["modules/a.nix", ".flox/pkgs/x.nix", ".flox/pkgs/sub/y.nix", ".flox/pkgs/sub/default.nix",
                         ".flox/pkgs/lib/isa.nix", "default.nix"]) == [".flox/pkgs/x.nix", ".flox/pkgs/sub/default.nix"]


def test_a_repository_without_recipes_is_not_evaluated_and_says_so(make_repo, run_cli, tmp_path):
    require_nix()
    files = {f"modules/m{n:03}.nix": f"{{ lib, ... }}:\n{{\n  x{n} = toString {n};\n}}\n" for n in range(40)}
    files["modules/broken.nix"] = "{ lib }: undefined_name\n"  # would be a finding if it were evaluated
    root = make_repo(files)
    result = run_cli("migrate", _recipe(tmp_path, "modules/**/*.nix"), "--repo", str(root), "--from", "main", "--branch", "next",
                     "--dry-run")
    assert result.exit_code == 0, result
    assert NO_RECIPES in result.output
    assert result.output.count("no file here is a Flox recipe") == 1
    assert "+  x0 = builtins.toString 0;" in result.output


def test_recipes_beside_other_files_are_the_ones_evaluated(make_repo, run_cli, tmp_path):
    require_nix()
    files = {".flox/pkgs/hello.nix": '{ }:\n{ pname = "hello"; version = toString 1; }\n',
             "modules/other.nix": "{ }:\n{ v = toString 2; }\n"}
    root = make_repo(files)
    result = run_cli("migrate", _recipe(tmp_path, "**/*.nix"), "--repo", str(root), "--from", "main", "--branch", "next", "--dry-run")
    assert result.exit_code == 0, result
    section = result.stdout.split("What the recipes build\n", 1)[1].split("\n\n", 1)[0]
    assert ".flox/pkgs/hello.nix" in section and "modules/other.nix" not in section
    assert NO_RECIPES not in result.output
