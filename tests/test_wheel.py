"""The built wheel ships recipes/ and migrations/ and works from a fresh venv that has only the wheel.

Slow (a wheel build and a venv with the runtime dependencies from the package index),
but it is the only test that catches packaging mistakes an editable install hides.
The build runs on a copy of the sources so the shared checkout gets no build/ or egg-info.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "syntax" / "valid" / "seed_recipe_shape.nix"
BROKEN = ROOT / "tests" / "fixtures" / "syntax" / "invalid" / "missing_semicolon.nix"
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def shipped_files(directory: str) -> list[str]:
    """Repository files of recipes/ or migrations/ that must appear in the wheel."""
    return sorted(p.name for p in (ROOT / directory).iterdir() if p.is_file() and p.suffix in (".py", ".toml"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("src", "recipes", "migrations"):
        shutil.copytree(ROOT / name, source / name, ignore=IGNORE)
    run(sys.executable, "-m", "build", "--wheel", "--outdir", work / "dist", source)
    (built,) = (work / "dist").glob("pinshift-*.whl")
    return built


def test_wheel_contains_bundled_recipes_and_migrations(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "pinshift/bundled_recipes/__init__.py" in names and "pinshift/recipes.py" in names
    assert not any(n.startswith("pinshift/recipes/") for n in names)  # a package there would shadow recipes.py
    assert "pinshift/migrations/__init__.py" in names
    for directory, package in (("recipes", "bundled_recipes"), ("migrations", "migrations")):
        for name in shipped_files(directory):
            assert f"pinshift/{package}/{name}" in names, f"{directory}/{name} is missing from the wheel"
    assert "pinshift/syntax/document.py" in names and "pinshift/cli.py" in names
    assert not any(n.startswith(("tests/", "src/")) for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "pinshift = pinshift.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_wheel_installs_in_a_fresh_venv_and_runs(wheel, tmp_path):
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python, pinshift = venv / "bin" / "python", venv / "bin" / "pinshift"
    run(python, "-m", "pip", "install", "-q", wheel)

    # The venv must use the wheel, not this checkout: run from a directory without sources.
    located = run(python, "-c", "import pinshift; print(pinshift.__file__)", cwd=tmp_path).stdout
    assert str(venv) in located and str(ROOT) not in located

    assert run(pinshift, "--version", cwd=tmp_path).stdout.startswith("pinshift, version ")
    clean = run(pinshift, "parse", FIXTURE, cwd=tmp_path)
    assert clean.stdout == "" and "1 files parsed, 0 problems" in clean.stderr
    broken = subprocess.run([str(pinshift), "parse", "-q", str(BROKEN)], capture_output=True, text=True, cwd=tmp_path)
    assert broken.returncode == 1 and ":3:11: syntax error" in broken.stdout

    listing = run(
        python, "-c",
        "import importlib.resources as r\n"
        "for package in ('pinshift.bundled_recipes', 'pinshift.migrations'):\n"
        "    print(package, sorted(p.name for p in r.files(package).iterdir() if p.is_file()))",
        cwd=tmp_path,
    ).stdout.splitlines()
    recipes = listing[0].removeprefix("pinshift.bundled_recipes ")
    migrations = listing[1].removeprefix("pinshift.migrations ")
    for name in shipped_files("recipes"):
        assert repr(name) in recipes
    for name in shipped_files("migrations"):
        assert repr(name) in migrations


def test_demo_runs_the_bundled_recipe_from_the_wheel(wheel, tmp_path):
    """The README's first command, from a venv that has only the wheel: recipes, step kinds, git layer."""
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", wheel)
    found = run(
        python, "-c",
        "from pinshift.recipes import find_recipe\n"
        "recipe = find_recipe('pytorch-2.10-cuda12_9')\n"
        "print(len(recipe.steps))",
        cwd=tmp_path,
    )
    assert int(found.stdout) == 4
    demo = run(venv / "bin" / "pinshift", "demo", "--dir", tmp_path / "demo", cwd=tmp_path)
    assert "4/4" in demo.stdout and "rename-attr" not in demo.stderr
    log = run("git", "-C", tmp_path / "demo", "log", "--format=%s", "pytorch-2.9..pytorch-2.10-cuda12_9").stdout
    assert len(log.splitlines()) == 4
