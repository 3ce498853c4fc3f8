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
import time
from pathlib import Path

import pytest

from pinshift.planning import memo as plan_memo

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


# --- §2: the tidy-up never follows a link --------------------------------------------------------------------


def test_the_tidy_up_never_follows_a_link_and_removes_only_what_pinshift_wrote(run_cli, make_repo, memo_on,
                                                                               tmp_path):
    """plans/<32 hex> a link to a directory elsewhere; another fingerprint's directory holding pinshift's files,
    a link to a file elsewhere with a memo's name, and a file of the user's: after a dry run (which saves, then
    tidies) everything outside the cache is as it was, the links are still there, pinshift's own files of the
    old fingerprint are gone, and its directory is kept for the user's file."""
    repo = make_repo(FILES)
    elsewhere = outside(tmp_path)
    before = tree(elsewhere)
    memo_on.mkdir(parents=True)
    (memo_on / ("d" * 32)).symlink_to(elsewhere, target_is_directory=True)
    old = memo_on / ("e" * 32)
    old.mkdir()
    for name in ("1" * 32 + ".memo", "." + "2" * 32 + ".k3j_x9a1.tmp", "3" * 32 + ".pickle"):
        (old / name).write_bytes(b"written by an older pinshift")
    (old / ("4" * 32 + ".memo")).symlink_to(elsewhere / "notes.txt")
    (old / "mine.txt").write_text("the user's own file\n")
    os.utime(old, (time.time() - 31 * 24 * 3600,) * 2)  # an earlier format's, unused for a month: removable

    result = run_cli(*DRY_RUN, cwd=repo)
    assert result.exit_code == 0, result
    assert tree(elsewhere) == before
    assert os.readlink(memo_on / ("d" * 32)) == str(elsewhere)
    assert sorted(p.name for p in old.iterdir()) == ["4" * 32 + ".memo", "mine.txt"]
    assert (old / "mine.txt").read_text() == "the user's own file\n"
    assert len(list((memo_on / plan_memo.store_name()).glob("*.memo"))) == 1  # the run's own memo saved


def test_the_newest_memo_files_are_kept_and_only_pinshifts_own_are_counted(run_cli, make_repo, memo_on, tmp_path):
    """The current fingerprint's directory holds MAX_FILES + 2 old memo files, a link with a memo's name to a file
    elsewhere, and a directory with a memo's name: the two oldest memo files go, nothing else does."""
    repo = make_repo(FILES)
    elsewhere = outside(tmp_path)
    before = tree(elsewhere)
    current = memo_on / plan_memo.store_name()
    current.mkdir(parents=True)
    names = [f"{n:032x}.memo" for n in range(plan_memo.MAX_FILES + 2)]
    for age, name in enumerate(names):
        (current / name).write_bytes(plan_memo.FORMAT)
        os.utime(current / name, (1_000_000 + age, 1_000_000 + age))  # names[0] the oldest
    (current / ("f" * 32 + ".memo")).symlink_to(elsewhere / ("a" * 32 + ".memo"))
    (current / ("9" * 32 + ".memo")).mkdir()

    assert run_cli(*DRY_RUN, cwd=repo).exit_code == 0
    left = {p.name for p in current.iterdir()}
    assert not left & set(names[:3])  # the run's own file is the newest: the three oldest go
    assert set(names[3:]) <= left and {"f" * 32 + ".memo", "9" * 32 + ".memo"} <= left
    assert tree(elsewhere) == before


@pytest.mark.parametrize("level", ["pinshift", "plans", "fingerprint"])
def test_a_link_in_the_caches_path_turns_the_memo_off_with_a_note(run_cli, make_repo, memo_on, monkeypatch,
                                                                   tmp_path, level):
    """$XDG_CACHE_HOME/pinshift, …/plans or …/plans/<this fingerprint> is a link to a directory elsewhere: nothing
    is written there or removed from it, the report is the one the memo gives when off, and one note says why."""
    repo = make_repo(FILES)
    elsewhere = outside(tmp_path)
    link = {"pinshift": memo_on.parent, "plans": memo_on,
            "fingerprint": memo_on / plan_memo.store_name()}[level]
    if level == "fingerprint":  # a directory elsewhere that holds many memo files of its own
        for n in range(plan_memo.MAX_FILES + 2):
            (elsewhere / f"{n:032x}.memo").write_bytes(b"the user's")
    if level != "pinshift":
        (elsewhere / "fingerprint-or-plans").mkdir()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    before = tree(elsewhere)

    result = run_cli(*DRY_RUN, cwd=repo)
    assert result.exit_code == 0, result
    assert tree(elsewhere) == before
    assert result.stderr.splitlines() == [
        f"pinshift: note: the plan cache is not used: {link} is a symbolic link, and pinshift follows no link and "
        "uses no shared directory in its cache (fix it, or set PINSHIFT_CACHE=off)"]
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    off = run_cli(*DRY_RUN, cwd=repo)
    assert off.stdout == result.stdout and off.stderr == ""


def test_a_cache_directory_writable_by_every_user_or_anothers_is_not_used(run_cli, make_repo, memo_on, tmp_path):
    """Another user could put a pickle there for pinshift to load: plans/ with mode 0777 (and, as root, pinshift/
    owned by uid 1234) turns the memo off with a note; no file is written in it."""
    repo = make_repo(FILES)
    memo_on.mkdir(parents=True)
    memo_on.chmod(0o777)
    result = run_cli(*DRY_RUN, cwd=repo)
    assert result.exit_code == 0, result
    assert result.stderr.startswith(f"pinshift: note: the plan cache is not used: {memo_on} is writable by every "
                                    "user (mode 0777)")
    assert len(result.stderr.splitlines()) == 1
    assert list(memo_on.iterdir()) == []
    if os.geteuid() != 0:
        return
    memo_on.chmod(0o700)
    os.chown(memo_on.parent, 1234, 1234)
    result = run_cli(*DRY_RUN, cwd=repo)
    assert result.stderr.startswith(f"pinshift: note: the plan cache is not used: {memo_on.parent} belongs to uid "
                                    "1234, not to this user (uid 0)")
    assert list(memo_on.iterdir()) == []


# --- §6: a memo file that is not a regular file is a miss --------------------------------------------------------


@pytest.mark.parametrize("shape", ["directory", "fifo"])
def test_a_memo_file_that_is_not_a_regular_file_is_a_miss_and_left_alone(make_repo, tmp_path, shape):
    """The memo file replaced by a directory (was: exit 3, IsADirectoryError) or a fifo (was: the dry run hung
    forever): the warm run prints what the cold one printed, exits as it did, and leaves the thing in place."""
    repo = make_repo(FILES)
    cache = tmp_path / "cache"
    cold = run_process(DRY_RUN, repo, cache)
    assert cold.returncode == 0, cold.stderr
    [memo] = (cache / "pinshift" / "plans").glob("*/*.memo")
    memo.unlink()
    if shape == "directory":
        memo.mkdir()
        (memo / "inside").write_text("kept\n")
    else:
        os.mkfifo(memo)
    for _ in range(2):  # the second run finds it still there
        warm = run_process(DRY_RUN, repo, cache)
        assert (warm.returncode, warm.stdout, warm.stderr) == (0, cold.stdout, cold.stderr)
    if shape == "directory":
        assert memo.is_dir() and (memo / "inside").read_text() == "kept\n"
    else:
        assert stat.S_ISFIFO(memo.lstat().st_mode)


def test_a_memo_file_that_is_a_link_is_a_miss_and_nothing_is_appended_through_it(run_cli, make_repo, memo_on,
                                                                                   tmp_path):
    repo = make_repo(FILES)
    assert run_cli(*DRY_RUN, cwd=repo).exit_code == 0
    [memo] = memo_on.glob("*/*.memo")
    stored = memo.read_bytes()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(stored)  # a memo's bytes: a run that followed the link would use and append to it
    memo.unlink()
    memo.symlink_to(victim)
    (Path(repo) / "pkgs" / "p0.nix").write_text(RECIPE.replace("echo 4", "echo 40"))  # one new plan to save
    result = run_cli(*DRY_RUN, cwd=repo)
    assert result.exit_code == 0, result
    assert victim.read_bytes() == stored and memo.is_symlink()


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
from pinshift.planning import memo as plan_memo
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
    assert "pinshift:planning/memo.py" in names and "pinshift:syntax/document.py" in names
    assert len(names) == len({path for _, path in plan_memo.source_files()})  # each file once
