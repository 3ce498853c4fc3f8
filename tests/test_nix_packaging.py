"""default.nix and flake.nix, evaluated by the real nix-instantiate against a small stand-in of nixpkgs' Python
builders (a folder written here whose `buildPythonApplication` returns its arguments as a derivation-like set):
the name, version, entry point and dependency list are pyproject.toml's (read with tomllib). A real build needs
the network and a nixpkgs; this proves what the files ask nixpkgs for.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from conftest import require_nix

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# pyproject's names whose nixpkgs package is named otherwise (default.nix's pythonPackageNames)
NIXPKGS_NAMES = {"gitpython": "gitpython", "tree-sitter-nix": "python-tree-sitter-nix", "pyyaml": "pyyaml"}
SYSTEMS = ["x86_64-linux", "aarch64-linux", "x86_64-darwin", "aarch64-darwin"]

STANDIN = r"""
{ ... }:
let
  pkg = pname: { inherit pname; outPath = "/standin/${pname}"; };
  python3Packages = {
    buildPythonApplication = args: args // {
      outPath = "/standin/${args.pname}-${args.version}";
      builtBy = "buildPythonApplication";
    };
    tree-sitter-grammars = { tree-sitter-nix = pkg "python-tree-sitter-nix"; };
  } // builtins.listToAttrs (map (name: { inherit name; value = pkg name; }) [
    "setuptools" "wheel" "click" "gitpython" "libcst" "markdown-it-py" "tomlkit" "tree-sitter" "rich"
    "pytest" "hypothesis" "build" "pyyaml" "jsonschema" "mypy"
  ]);
  getAt = set: name: set.${name};
in {
  inherit python3Packages;
  python3 = { withPackages = f: { pythonPackages = f python3Packages; }; };
  mkShell = args: args // { shell = true; };
  lib = {
    cleanSource = src: src;
    makeBinPath = ps: builtins.concatStringsSep ":" (map (p: "${p}/bin") ps);
    attrByPath = path: default: set:
      builtins.foldl' (found: name: if found ? ${name} then getAt found name else default) set path;
    genAttrs = names: f: builtins.listToAttrs (map (name: { inherit name; value = f name; }) names);
    licenses.mit = { spdxId = "MIT"; };
  };
  git = pkg "git";
  nix = pkg "nix";
  pre-commit = pkg "pre-commit";
}
"""


def normalized(requirement: str) -> str:
    name = re.match(r"[A-Za-z0-9._-]+", requirement).group().lower().replace("_", "-")
    return NIXPKGS_NAMES.get(name, name)


def evaluate(expression: str, cwd: Path) -> object:
    nix = require_nix()
    done = subprocess.run([nix, "--readonly-mode", "--eval", "--strict", "--json", "--expr", expression], cwd=cwd,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd),
                                                               "NIX_PATH": ""})
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    return json.loads(done.stdout)


@pytest.fixture
def standin(tmp_path) -> Path:
    folder = tmp_path / "nixpkgs-standin"
    folder.mkdir()
    (folder / "default.nix").write_text(STANDIN)
    return folder


def package_expression(source: Path, standin: Path) -> str:
    return (f"let p = import {source}/default.nix {{ pkgs = import {standin} {{ }}; }}; in {{ "
            f"inherit (p) pname version pythonRelaxDeps makeWrapperArgs meta builtBy pyproject pythonImportsCheck; "
            f"dependencies = map (d: d.pname) p.dependencies; build = map (d: d.pname) p.build-system; }}")


def test_default_nix_builds_pyprojects_package_with_its_dependencies(standin, tmp_path):
    found = evaluate(package_expression(ROOT, standin), tmp_path)
    project = PYPROJECT["project"]
    assert found["builtBy"] == "buildPythonApplication" and found["pyproject"] is True
    assert (found["pname"], found["version"]) == (project["name"], project["version"])
    assert found["dependencies"] == [normalized(r) for r in project["dependencies"]]
    assert found["build"] == [normalized(r) for r in PYPROJECT["build-system"]["requires"]]
    [(script, entry)] = project["scripts"].items()
    assert found["meta"]["mainProgram"] == script and found["pythonImportsCheck"] == [entry.split(":")[0]]
    assert found["meta"]["license"] == {"spdxId": project["license"]["text"]}
    assert found["meta"]["description"] == project["description"]
    assert found["makeWrapperArgs"] == ["--suffix", "PATH", ":", "/standin/git/bin:/standin/nix/bin"]
    assert set(found["pythonRelaxDeps"]) <= {re.match(r"[A-Za-z0-9._-]+", r).group() for r in project["dependencies"]}


def test_a_dependency_added_to_pyproject_is_asked_of_nixpkgs(standin, tmp_path):
    """The list is read from pyproject.toml, never copied: a new dependency appears, a missing one is an error."""
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "default.nix", source)
    text = (ROOT / "pyproject.toml").read_text()
    (source / "pyproject.toml").write_text(text.replace('    "tomlkit', '    "rich>=13",\n    "tomlkit', 1))
    found = evaluate(package_expression(source, standin), tmp_path)
    assert "rich" in found["dependencies"]
    (source / "pyproject.toml").write_text(text.replace('    "tomlkit', '    "no-such-package>=1",\n    "tomlkit', 1))
    with pytest.raises(AssertionError, match="pinshift: no python3Packages for no-such-package"):
        evaluate(package_expression(source, standin), tmp_path)


def test_the_flake_has_package_app_and_dev_shell_for_each_system(standin, tmp_path):
    flake = (ROOT / "flake.nix").read_text()
    assert 'inputs.nixpkgs.url = "github:NixOS/nixpkgs/' in flake
    expression = f"""
      let
        flake = import {ROOT}/flake.nix;
        pkgs = import {standin} {{ }};
        nixpkgs = {{ inherit (pkgs) lib; legacyPackages = pkgs.lib.genAttrs {json.dumps(SYSTEMS).replace(",", " ")}
                      (system: pkgs); }};
        self = flake.outputs {{ inherit self nixpkgs; }};
        on = system: {{
          package = {{ inherit (self.packages.${{system}}.default) pname version; }};
          app = self.apps.${{system}}.default;
          shell = map (p: p.pname or "python") self.devShells.${{system}}.default.packages;
          python = map (p: p.pname) (builtins.head self.devShells.${{system}}.default.packages).pythonPackages;
        }};
      in {{ description = flake.description; systems = builtins.attrNames self.packages;
           on = pkgs.lib.genAttrs (builtins.attrNames self.packages) on; }}
    """
    found = evaluate(expression, tmp_path)
    assert found["description"] == PYPROJECT["project"]["description"]
    assert sorted(found["systems"]) == sorted(SYSTEMS)
    version = PYPROJECT["project"]["version"]
    test_extras = [normalized(r) for r in PYPROJECT["project"]["optional-dependencies"]["test"]]
    for system, outputs in found["on"].items():
        assert outputs["package"] == {"pname": "pinshift", "version": version}
        assert outputs["app"] == {"type": "app", "program": f"/standin/pinshift-{version}/bin/pinshift"}
        assert outputs["shell"] == ["python", "pre-commit", "git", "nix"]
        python = outputs["python"]
        assert python[:len(PYPROJECT["project"]["dependencies"])] == \
            [normalized(r) for r in PYPROJECT["project"]["dependencies"]]
        assert set(test_extras) <= set(python) | {"pre-commit"}, (system, python)


def test_the_license_file_is_the_one_pyproject_names():
    assert PYPROJECT["project"]["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) ")
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    assert text.rstrip().endswith("OTHER DEALINGS IN THE\nSOFTWARE.")
