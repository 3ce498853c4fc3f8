"""Start-up imports only the step kinds a command uses (issue 44): the bundled kinds are listed by their modules'
names and imported when asked for, each module's NAME being its name with `-` for `_`."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pinshift.migrations as package
from conftest import git
from pinshift.steps.registry import bundled_kinds


def test_each_bundled_kind_is_named_as_its_module():
    modules = [info.name for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_")]
    assert len(modules) >= 10
    kinds = bundled_kinds()
    assert list(kinds) == sorted(name.replace("_", "-") for name in modules)
    for name in modules:
        module = importlib.import_module(f"pinshift.migrations.{name}")
        assert module.NAME == name.replace("_", "-")
        assert kinds[module.NAME].module is module and kinds[module.NAME].origin == "bundled"
    assert "no-such-kind" not in kinds and len(kinds) == len(modules)


def test_a_migration_imports_only_the_kinds_its_recipe_names(make_repo, tmp_path):
    root = make_repo({".flox/pkgs/a.nix": '{ pkgs }: pkgs.hello.overrideAttrs (old: { pname = "a"; })\n',
                      "README.md": "# recipes\n"})
    recipe = tmp_path / "recipe.toml"
    recipe.write_text('name = "one"\ndescription = "one step"\nfiles = [".flox/pkgs/**/*.nix"]\n\n[[steps]]\n'
                      'kind = "set-binding"\ntitle = "t"\n[steps.params]\npath = "doCheck"\nvalue = "false"\n'
                      'after = "pname"\nwhere = "result"\n')
    script = ("import sys\nfrom pinshift.cli import main\n"
              f"code = main(['migrate', {str(recipe)!r}, '--repo', {str(root)!r}, '--from', 'main', '--branch', 'n', "
              "'--dry-run', '--no-build-check', '--format', 'json', '--output', 'report.json'])\n"
              "print(code, *sorted(m for m in sys.modules if m.startswith(('pinshift.migrations.', 'markdown_it'))))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    code, *imported = done.stdout.split()
    assert code == "0" and (tmp_path / "report.json").exists()
    kinds = [m for m in imported if not m.split(".")[-1].startswith("_")]
    # set_binding, the recipe's kind; pin_swap only as the library that finds pins (pinshift.facts.facts reads it)
    assert "pinshift.migrations.set_binding" in kinds and set(kinds) <= {"pinshift.migrations.set_binding",
                                                                          "pinshift.migrations.pin_swap"}, imported
    assert not any(m.startswith("markdown_it") for m in imported)
    assert git(root, "branch", "--list", "n") == ""
