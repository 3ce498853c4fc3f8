"""A repository's step code runs from the `.py` the user read and consented to, never from bytecode (issue 45 §2).

A committed `.pinshift/migrations/__pycache__/bump.cpython-*.pyc` with an unchecked hash, compiled from other
source, is what Python's importer runs in place of `bump.py`. pinshift reads the `.py` bytes itself, compiles
and executes them, writes no bytecode into the repository, and reads step code only from a regular file
inside the repository (no link at the file, its folder or a folder above).
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
from pathlib import Path

import pytest

from conftest import FIXTURES, git

BUMP = (FIXTURES / "migrations" / "word_swap.py").read_text().replace('NAME = "word-swap"', 'NAME = "bump"')
ARGS = ("apply", "bump", "--set", "old=alpha", "--set", "new=beta", "--trust-repo", "pkgs")


def _evil_source(marker: Path) -> str:
    """bump.py's kind, plus a line that leaves the marker: what must never run."""
    return f"open({str(marker)!r}, 'w').write('bytecode ran')\n" + BUMP


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if ".git" not in p.relative_to(root).parts}


@pytest.fixture
def marker(tmp_path) -> Path:
    return tmp_path / "marker"


@pytest.fixture
def repo(make_repo, tmp_path, marker) -> Path:
    """bump.py as the user reads it, and a committed unchecked-hash .pyc compiled from the evil source."""
    root = make_repo({".pinshift/migrations/bump.py": BUMP, "pkgs/x.nix": "{ alpha = 1; }\n"})
    evil = tmp_path / "evil" / "bump.py"
    evil.parent.mkdir()
    evil.write_text(_evil_source(marker))
    pyc = Path(importlib.util.cache_from_source(str(root / ".pinshift/migrations/bump.py")))
    py_compile.compile(str(evil), cfile=str(pyc), dfile=str(root / ".pinshift/migrations/bump.py"), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    git(root, "add", "-f", "-A")
    git(root, "commit", "-q", "-m", "bytecode")
    return root


def test_the_planted_bytecode_is_what_pythons_importer_would_run(repo, marker):
    """The attack is real: importlib's file loader runs the .pyc, not bump.py (so the next test can fail)."""
    spec = importlib.util.spec_from_file_location("pinshift_test_bump_probe", repo / ".pinshift/migrations/bump.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert marker.read_text() == "bytecode ran"


def test_apply_runs_the_source_never_the_committed_bytecode_and_writes_none(run_cli, repo, marker):
    before = _files(repo)
    result = run_cli(*ARGS, cwd=repo)
    assert result.exit_code == 0, result
    assert f"loading step kind 'bump' from {repo / '.pinshift/migrations/bump.py'}" in result.stderr
    assert not marker.exists()
    assert (repo / "pkgs/x.nix").read_bytes() == b"{ beta = 1; }\n"  # bump.py's behaviour is what ran
    assert _files(repo) == before  # no new __pycache__ or .pyc anywhere in the repository


def test_a_repository_without_bytecode_gets_no_pycache(run_cli, make_repo):
    root = make_repo({".pinshift/migrations/bump.py": BUMP, "pkgs/x.nix": "{ alpha = 1; }\n"})
    result = run_cli(*ARGS, cwd=root)
    assert result.exit_code == 0, result
    assert not any(p.name == "__pycache__" or p.suffix == ".pyc" for p in root.rglob("*"))


def test_the_bytes_executed_are_the_bytes_on_disk(run_cli, make_repo, tmp_path):
    """Consent is to the file the user reads: what runs is compiled from exactly its bytes (read once)."""
    seen = tmp_path / "seen"
    source = BUMP + f"\nopen({str(seen)!r}, 'w').write(open(__file__).read())\n"
    root = make_repo({".pinshift/migrations/bump.py": source, "pkgs/x.nix": "{ alpha = 1; }\n"})
    result = run_cli(*ARGS, cwd=root)
    assert result.exit_code == 0, result
    assert seen.read_text() == source


# where a link sits: the step file itself, its folder, a folder above it
LINKS = {"the file": ".pinshift/migrations/bump.py", "its folder": ".pinshift/migrations", "a folder above": ".pinshift"}


@pytest.mark.parametrize("level", LINKS)
def test_step_code_reached_through_a_link_is_refused_and_never_runs(run_cli, make_repo, tmp_path, marker, level):
    root = make_repo({"pkgs/x.nix": "{ alpha = 1; }\n"})
    link = LINKS[level]
    outside = tmp_path / "outside"
    target = outside / Path(".pinshift/migrations/bump.py").relative_to(link) if level != "the file" else \
        outside / "bump.py"
    target.parent.mkdir(parents=True)
    target.write_text(_evil_source(marker))
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside if level != "the file" else target, root / link)
    result = run_cli(*ARGS, cwd=root)
    assert result.exit_code == 2, result
    [line] = [x for x in result.stderr.splitlines() if x.startswith("pinshift: error:")]
    assert "bump.py" in line and "never through a link" in line, line
    assert not marker.exists()
    assert (root / "pkgs/x.nix").read_bytes() == b"{ alpha = 1; }\n"


@pytest.mark.parametrize("special", ["fifo", "too large"])
def test_step_code_that_is_no_small_regular_file_is_refused(run_cli, make_repo, special):
    root = make_repo({"pkgs/x.nix": "{ alpha = 1; }\n"})
    path = root / ".pinshift/migrations/bump.py"
    path.parent.mkdir(parents=True)
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(BUMP + "#" * (1 << 20))
    result = run_cli(*ARGS, cwd=root)  # a fifo must not block: the test would hang
    assert result.exit_code == 2, result
    reason = "a fifo, not a regular file" if special == "fifo" else "larger than 1048576 bytes"
    assert reason in result.stderr, result
