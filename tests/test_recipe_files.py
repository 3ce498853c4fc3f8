"""A repository's recipe files are regular files inside it, of at most 1 MiB (issue 45 §4).

A committed `.pinshift/recipes/zero.toml -> /dev/zero` made `pinshift recipes` die with MemoryError, a fifo
blocked it forever, a link to any readable file was opened and parsed. Such a file is now never opened:
`pinshift recipes` skips it with one note, naming it (`migrate`/`show NAME`) refuses it in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RECIPE = """name = "{name}"
description = "{description}"
base = "main"
target = "t"

[[steps]]
kind = "metadata-rev"
"""


def pinshift(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The real console entry point in a subprocess; a hang becomes a test failure after 60 s."""
    return subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def _outside_recipe(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "outside" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RECIPE.format(name=name, description="from outside the repository"))
    return path


def _special(kind: str, path: Path, tmp_path: Path) -> str:
    """Make `path` one kind of file that is no recipe; the reason pinshift gives for it."""
    if kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
        return "a symlink, not a regular file"
    if kind == "link to a recipe elsewhere":
        path.symlink_to(_outside_recipe(tmp_path, path.stem))
        return "a symlink, not a regular file"
    if kind == "fifo":
        os.mkfifo(path)
        return "a fifo, not a regular file"
    if kind == "over 1 MiB":
        path.write_text(RECIPE.format(name=path.stem, description="big") + "#" * (1 << 20) + "\n")
        return "larger than 1048576 bytes"
    raise AssertionError(kind)


KINDS = ["link to /dev/zero", "link to a recipe elsewhere", "fifo", "over 1 MiB"]


@pytest.fixture
def repo(make_repo) -> Path:
    return make_repo({".pinshift/recipes/good.toml": RECIPE.format(name="good", description="the good one"),
                      "a.nix": "{ }\n"})


@pytest.mark.parametrize("kind", KINDS)
def test_recipes_lists_the_regular_ones_and_skips_the_other_with_one_note(repo, tmp_path, kind):
    reason = _special(kind, repo / ".pinshift/recipes/zero.toml", tmp_path)
    result = pinshift(repo, "recipes")
    assert result.returncode == 0, result
    assert "Traceback" not in result.stderr
    assert "good" in result.stdout and "the good one" in result.stdout
    assert "from outside the repository" not in result.stdout
    notes = [line for line in result.stdout.splitlines() if "zero.toml" in line]
    assert notes == [f"note: skipped .pinshift/recipes/zero.toml: {reason}; a repository's recipes are read only "
                     "from regular files of at most 1 MiB inside it, never through a link"], result.stdout


@pytest.mark.parametrize("kind", KINDS)
def test_a_recipe_named_that_is_no_regular_file_is_refused_in_one_line(repo, tmp_path, kind):
    reason = _special(kind, repo / ".pinshift/recipes/zero.toml", tmp_path)
    for command in (("show", "zero"), ("migrate", "zero", "--dry-run")):
        result = pinshift(repo, *command)
        assert result.returncode == 2, result
        assert result.stderr.splitlines() == [f"pinshift: error: .pinshift/recipes/zero.toml: {reason}; a "
                                              "repository's recipes are read only from regular files of at most 1 "
                                              "MiB inside it, never through a link"], result


@pytest.mark.parametrize("link", [".pinshift/recipes", ".pinshift"])
def test_a_linked_recipes_folder_is_not_read(make_repo, tmp_path, link):
    root = make_repo({"a.nix": "{ }\n"})
    outside = _outside_recipe(tmp_path, "away").parent
    if link == ".pinshift":
        (outside / "recipes").mkdir()
        os.rename(outside / "away.toml", outside / "recipes" / "away.toml")
    else:
        (root / ".pinshift").mkdir()
    os.symlink(outside, root / link)
    listed = pinshift(root, "recipes")
    assert listed.returncode == 0, listed
    assert "from outside the repository" not in listed.stdout
    assert f"note: skipped .pinshift/recipes/away.toml: {link} is a symbolic link; pinshift does not follow a " \
           "linked folder" in listed.stdout, listed
    shown = pinshift(root, "show", "away")
    assert shown.returncode == 2, shown
    assert f"{link} is a symbolic link" in shown.stderr and len(shown.stderr.splitlines()) == 1


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_recipe_path_the_user_names_must_be_a_regular_file(tmp_path, kind):
    path = tmp_path / "r.toml"
    if kind == "fifo":
        os.mkfifo(path)
        what = "a fifo"
    else:
        path.symlink_to("/dev/zero")  # the user's own link is followed: to a device, still refused
        what = "a character device"
    result = pinshift(tmp_path, "show", "./r.toml")
    assert result.returncode == 2, result
    assert result.stderr.splitlines() == [f"pinshift: error: r.toml: {what}, not a regular file; a recipe is a "
                                          "TOML file"], result


@pytest.mark.parametrize("kind", KINDS)
def test_the_lint_config_is_read_only_from_a_regular_file_inside_the_repository(repo, tmp_path, kind):
    """The same rule for `.pinshift/config.toml`, the other file pinshift reads from a repository's `.pinshift/`."""
    reason = _special(kind, repo / ".pinshift/config.toml", tmp_path)
    result = pinshift(repo, "lint", ".")
    assert result.returncode == 2, result
    assert result.stderr.splitlines() == [f"pinshift: error: .pinshift/config.toml: {reason}; the lint config is read "
                                          "only from a regular file of at most 1 MiB inside the repository, never "
                                          "through a link"], result
