"""The plan memo's cache directory is pinshift's alone (issue 28 §2, §4, §5, §6).

Its tidy-up never follows a link and removes only the files pinshift wrote there; a link or
another user's directory in the cache's path turns the memo off, with a note; a memo file
that is not a regular file (a directory, a fifo) is a miss and never hangs a run; a
`migrations/` folder in the working directory never runs; the code fingerprint covers the
bundled step kinds wherever they are installed. Runs that could hang or that depend on
`sys.path` are real processes (`python -c "from pinshift.cli import run; run()"`) with a
timeout; the others use the in-process CLI.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pinshift import plan_memo

ROOT = Path(__file__).resolve().parent.parent
RECIPE = (Path(__file__).parent / "fixtures" / "steps" / "metadata-rev" / "bump.nix").read_text()
FILES = {f"pkgs/p{n}.nix": RECIPE for n in range(3)}
DRY_RUN = ("apply", "metadata-rev", "--dry-run", "--format", "json", "pkgs/p0.nix", "pkgs/p1.nix", "pkgs/p2.nix")
TIMEOUT = 60  # seconds: a run that hangs fails the test instead of the suite


def run_process(args, cwd: Path, cache: Path, command=None, **env) -> subprocess.CompletedProcess:
    """`pinshift ARGS` as a real process with the memo on in `cache` (TimeoutExpired if it hangs)."""
    command = command or [sys.executable, "-c", "from pinshift.cli import run; run()"]
    environment = dict(os.environ, PINSHIFT_CACHE="on", XDG_CACHE_HOME=str(cache), **env)
    return subprocess.run([*command, *args], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=TIMEOUT)


def tree(root: Path) -> dict[str, tuple]:
    """Every entry under `root`, links not followed: kind, bytes of files, target of links."""
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        name = path.relative_to(root).as_posix()
        if stat.S_ISLNK(info.st_mode):
            found[name] = ("link", os.readlink(path))
        elif stat.S_ISREG(info.st_mode):
            found[name] = ("file", path.read_bytes())
        else:
            found[name] = ("other", stat.S_IFMT(info.st_mode))
    return found


@pytest.fixture
def memo_on(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "pinshift" / "plans"


def outside(tmp_path: Path) -> Path:
    """A directory of the user's outside the cache, with files whose names the tidy-up would otherwise take."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("notes.txt", "a" * 32 + ".memo", "." + "b" * 32 + ".abcdefgh.tmp", "c" * 32 + ".pickle"):
        (elsewhere / name).write_text(f"the user's {name}\n")
    return elsewhere


# --- §4: a `migrations/` folder in the working directory never runs ------------------------------------------------


@pytest.mark.parametrize("package", ["with __init__.py", "without __init__.py"])
@pytest.mark.parametrize("how", ["python -c", "PYTHONPATH with an empty entry"])
def test_a_migrations_folder_in_the_working_directory_never_runs(make_repo, tmp_path, package, how):
    """`python -c` puts the current directory first on sys.path, and so does an empty PYTHONPATH entry for the
    installed `pinshift` script: `import migrations` found the repository's folder and ran it (without
    `__init__.py`: exit 3). The bundled kinds are imported as `pinshift.migrations` only."""
    repo = make_repo(FILES)
    marker = tmp_path / "marker"
    folder = repo / "migrations"
    folder.mkdir()
    code = f"open({str(marker)!r}, 'a').write('ran\\n')\n"
    if package == "with __init__.py":
        (folder / "__init__.py").write_text(code)
    for name in ("rename_attr.py", "metadata_rev.py"):
        (folder / name).write_text(code)
    if how == "python -c":
        command, env = None, {}
    else:
        command, env = [str(Path(sys.executable).parent / "pinshift")], {"PYTHONPATH": os.pathsep + str(tmp_path)}
    result = run_process(DRY_RUN, repo, tmp_path / "cache", command, **env)
    assert not marker.exists()
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert '"files_changed"' in result.stdout and result.stderr == ""


# --- §5: the fingerprint covers the bundled step kinds wherever they are ----------------------------------------

FINGERPRINT = """
import importlib.util, sys
copy = sys.argv[1]

class BundledKindsElsewhere:  # what an editable install's finder does: pinshift.migrations lives outside pinshift/
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pinshift.migrations":
            return importlib.util.spec_from_file_location(name, copy + "/__init__.py", submodule_search_locations=[copy])
        return None

sys.meta_path.insert(0, BundledKindsElsewhere)
from pinshift import plan_memo
import pinshift.migrations
assert pinshift.migrations.__file__.startswith(copy), pinshift.migrations.__file__
print(plan_memo.code_fingerprint())
"""


def test_editing_a_bundled_step_kind_changes_the_code_fingerprint(tmp_path):
    """The step kinds mapped outside pinshift's directory (as an editable install maps the repository's
    `migrations/`), fingerprinted from a directory with no `migrations` of its own: an edit to one kind, or a new
    kind, gives another fingerprint (was: the same one, and old plans were served)."""
    copy = tmp_path / "kinds"
    shutil.copytree(ROOT / "migrations", copy, ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def fingerprint() -> str:
        result = subprocess.run([sys.executable, "-c", FINGERPRINT, str(copy)], cwd=elsewhere, capture_output=True,
                                text=True, timeout=TIMEOUT)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    first = fingerprint()
    assert len(first) == 32 and fingerprint() == first
    kind = copy / "rename_attr.py"
    kind.write_text(kind.read_text() + "\n# edited\n")
    edited = fingerprint()
    (copy / "new_kind.py").write_text('"""A new kind."""\n')
    added = fingerprint()
    assert len({first, edited, added}) == 3


def test_every_bundled_step_kind_is_a_source_of_the_fingerprint():
    names = {name for name, _ in plan_memo.source_files()}
    for path in (ROOT / "migrations").glob("*.py"):
        assert f"pinshift.migrations:{path.name}" in names or f"pinshift:migrations/{path.name}" in names
    assert "pinshift:plan_memo.py" in names and "pinshift:syntax/document.py" in names
    assert len(names) == len({path for _, path in plan_memo.source_files()})  # each file once
