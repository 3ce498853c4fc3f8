"""The built wheel ships every module of src/pinshift, recipes/ and migrations/, and every command works from a
fresh venv that has only the wheel (what `pip install .`, README's first command, installs).

Slow (a wheel build and one venv with the runtime dependencies from the package index),
but it is the only test that catches packaging mistakes an editable install hides (issue 28 §7:
`pinshift.infer` was left out of a hand-written package list). The build runs on a copy of the
sources so the shared checkout gets no build/ or egg-info.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import require_nix

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
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("src", "recipes", "migrations"):
        shutil.copytree(ROOT / name, source / name, ignore=IGNORE)
    run(sys.executable, "-m", "build", "--wheel", "--outdir", work / "dist", source)
    (built,) = (work / "dist").glob("pinshift-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed (not -e), shared by the tests below, which only read it."""
    venv = tmp_path_factory.mktemp("venv") / "venv"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel)
    return venv


def source_modules() -> dict[str, str]:
    """Every file of the source tree the wheel must hold, by its name in the wheel."""
    wanted = {}
    for directory, package in (("src/pinshift", "pinshift"), ("migrations", "pinshift/migrations"),
                               ("recipes", "pinshift/bundled_recipes")):
        for path in (ROOT / directory).rglob("*.py"):
            if "__pycache__" not in path.parts:
                wanted[f"{package}/{path.relative_to(ROOT / directory).as_posix()}"] = str(path.relative_to(ROOT))
    for path in (ROOT / "recipes").glob("*.toml"):
        wanted[f"pinshift/bundled_recipes/{path.name}"] = str(path.relative_to(ROOT))
    for path in (ROOT / "src" / "pinshift" / "demo").iterdir():
        if path.suffix in (".toml", ".nix", ".md", ".txt"):
            wanted[f"pinshift/demo/{path.name}"] = str(path.relative_to(ROOT))
    for path in (ROOT / "src" / "pinshift" / "evaluation" / "standin").glob("*.nix"):  # the stand-in nixpkgs (data)
        wanted[f"pinshift/evaluation/standin/{path.name}"] = str(path.relative_to(ROOT))
    return wanted


def test_wheel_holds_every_module_of_the_source_tree(wheel):
    """Every .py under src/pinshift and migrations/ (packages found, never listed by hand), the recipes and the
    demo's data files; nothing else at the top level."""
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = source_modules()
    assert len(wanted) > 120 and "pinshift/infer/engine.py" in wanted and "pinshift/migrations/pin_swap.py" in wanted
    missing = sorted(source for name, source in wanted.items() if name not in names)
    assert missing == [], f"not in the wheel: {missing}"
    assert {name.split("/")[0] for name in names} == {"pinshift", next(n for n in names if ".dist-info/" in n)
                                                      .split("/")[0]}


def test_wheel_contains_bundled_recipes_and_migrations(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "pinshift/bundled_recipes/__init__.py" in names and "pinshift/recipes/recipe.py" in names
    # the bundled recipes' TOML ship beside their own package, never inside the code package pinshift.recipes
    assert not any(n.startswith("pinshift/recipes/") and n.endswith(".toml") for n in names)
    assert "pinshift/migrations/__init__.py" in names
    for directory, package in (("recipes", "bundled_recipes"), ("migrations", "migrations")):
        for name in shipped_files(directory):
            assert f"pinshift/{package}/{name}" in names, f"{directory}/{name} is missing from the wheel"
    assert "pinshift/syntax/document.py" in names and "pinshift/cli.py" in names
    assert not any(n.startswith(("tests/", "src/")) for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "pinshift = pinshift.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_wheel_installs_in_a_fresh_venv_and_runs(venv, tmp_path):
    python, pinshift = venv / "bin" / "python", venv / "bin" / "pinshift"

    # The venv must use the wheel, not this checkout: run from a directory without sources.
    located = run(python, "-c", "import pinshift; print(pinshift.__file__)", cwd=tmp_path).stdout
    assert str(venv) in located and str(ROOT) not in located

    assert run(pinshift, "--version", cwd=tmp_path).stdout.startswith("pinshift, version ")
    clean = run(pinshift, "parse", FIXTURE, cwd=tmp_path)
    assert clean.stdout == "" and "1 file parsed, 0 problems" in clean.stderr
    broken = subprocess.run([str(pinshift), "parse", "-q", str(BROKEN)], capture_output=True, text=True, cwd=tmp_path)
    assert broken.returncode == 1 and ":3:11: syntax error" in broken.stdout

    # `python -m pinshift` is the same command from the wheel (src/pinshift/__main__.py is shipped)
    assert run(python, "-m", "pinshift", "--version", cwd=tmp_path).stdout.startswith("pinshift, version ")
    via_module = subprocess.run([str(python), "-m", "pinshift", "parse", "-q", str(BROKEN)], capture_output=True,
                                text=True, cwd=tmp_path)
    assert (via_module.returncode, via_module.stdout) == (broken.returncode, broken.stdout)
    # the completion script and the protocol it speaks, from the installed command
    script = run(pinshift, "completion", "bash", cwd=tmp_path).stdout
    assert "_PINSHIFT_COMPLETE=bash_complete" in script and "complete -o nosort -F _pinshift_completion pinshift" in script
    offered = subprocess.run([str(pinshift)], capture_output=True, text=True, cwd=tmp_path,
                             env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "_PINSHIFT_COMPLETE": "bash_complete",
                                  "COMP_WORDS": "pinshift migrate pytorch-", "COMP_CWORD": "2"})
    assert offered.stdout.splitlines() == ["plain,pytorch-2.10-cuda12_9"], offered.stderr

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


def test_demo_runs_the_bundled_recipe_from_the_wheel(venv, tmp_path):
    """The README's first command, from a venv that has only the wheel: recipes, step kinds, git layer."""
    python = venv / "bin" / "python"
    found = run(
        python, "-c",
        "from pinshift.recipes.recipe import find_recipe\n"
        "recipe = find_recipe('pytorch-2.10-cuda12_9')\n"
        "print(len(recipe.steps))",
        cwd=tmp_path,
    )
    assert int(found.stdout) == 4
    demo = run(venv / "bin" / "pinshift", "demo", "--dir", tmp_path / "demo", cwd=tmp_path)
    assert "4/4" in demo.stdout and "rename-attr" not in demo.stderr
    log = run("git", "-C", tmp_path / "demo", "log", "--format=%s", "pytorch-2.9..pytorch-2.10-cuda12_9").stdout
    assert len(log.splitlines()) == 4


def test_every_command_runs_from_the_wheel(venv, tmp_path):
    """`--help` of every command, then demo, infer on the demo's two branches, status and scan, from the venv
    (was: `pinshift infer` an internal error, `ModuleNotFoundError: pinshift.infer`)."""
    from pinshift.cli import COMMANDS

    pinshift = venv / "bin" / "pinshift"
    listed = run(pinshift, "--help", cwd=tmp_path).stdout
    for command in COMMANDS:
        assert f"  {command} " in listed, f"{command} is missing from pinshift --help"
        shown = run(pinshift, command, "--help", cwd=tmp_path)
        assert shown.stdout.startswith(f"Usage: pinshift {command} "), shown.stdout
    demo = tmp_path / "demo"
    run(pinshift, "demo", "--dir", demo, cwd=tmp_path)
    inferred = run(pinshift, "infer", "pytorch-2.9", "pytorch-2.10-cuda12_9", cwd=demo)
    assert "proof: 67 of 67 changed files reproduced byte for byte" in inferred.stderr
    assert inferred.stdout.count("[[steps]]") == 4
    status = run(pinshift, "status", cwd=demo)
    assert "3 branches in 1 repository" in status.stdout and "pytorch-2.10-cuda12_9" in status.stdout
    scanned = run(pinshift, "scan", cwd=demo)
    assert "66 files scanned, 66 recipes" in scanned.stdout
    require_nix()  # the stand-in nixpkgs is package data: evaluated from the wheel, not from the source tree
    diffed = run(pinshift, "diff", "pytorch-2.9", "pytorch-2.10-cuda12_9", cwd=demo)
    assert ("changed: 66 recipes: nixpkgs 6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; "
            in diffed.stdout), diffed.stdout


def test_the_plan_memo_fingerprints_every_shipped_module(venv, tmp_path):
    """Installed from the wheel, the step kinds sit inside pinshift's directory: each is a source of the code
    fingerprint once (issue 28 §5, whatever the install)."""
    printed = run(venv / "bin" / "python", "-c",
                  "from pinshift.planning.memo import source_files\n"
                  "for name, path in source_files(): print(name, path)", cwd=tmp_path).stdout.splitlines()
    names = [line.split(" ", 1)[0] for line in printed]
    assert len(names) == len(set(names)) and all(str(venv) in line for line in printed)
    for module in (ROOT / "migrations").glob("*.py"):
        assert f"pinshift:migrations/{module.name}" in names
    assert len(names) == sum(1 for name in source_modules() if name.endswith(".py"))
