"""pinshift's cache folders (issue 39 §6): used only when the user alone can write them; installs keep their stores.

A folder of the cache (`$XDG_CACHE_HOME/pinshift` or a store's folder in it) that its group or every user can
write (0770, 0775, 0777, 0757, 0720), or that is a symbolic link, turns that cache off for the run with one
note, and nothing is written in it; the command prints what it prints with the cache off. Two installs of
pinshift (another version, or the same version elsewhere) sharing one cache each find their stores intact
after the other ran: tidying removes only this install's stores of other code and stores no run used for
a month.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import git, require_nix
from pinshift.planning import memo as plan_memo
from pinshift.planning import file_edits

RECIPE = (Path(__file__).parent / "fixtures" / "steps" / "metadata-rev" / "bump.nix").read_text()
FILES = {f"pkgs/p{n}.nix": RECIPE for n in range(3)}
DRY_RUN = ("apply", "metadata-rev", "--dry-run", "--format", "json", "pkgs/p0.nix", "pkgs/p1.nix", "pkgs/p2.nix")
FOLLOWS = ", and pinshift follows no link and uses no shared directory in its cache (fix it, or set PINSHIFT_CACHE=off)"
MODES = [0o770, 0o775, 0o777, 0o757, 0o720]


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "pinshift"


def _why(folder: Path, mode: int) -> str:
    who = "every user" if mode & stat.S_IWOTH else "its group"
    return f"{folder} is writable by {who} (mode {mode:04o})"


def _off(monkeypatch, run):
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    try:
        return run()
    finally:
        monkeypatch.setenv("PINSHIFT_CACHE", "on")


def _entries(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _shared(cache: Path, level: str, mode: int | None, tmp_path: Path) -> Path:
    """`level` (a folder under the cache) made writable by others (`mode`), or a link to a folder elsewhere (None)."""
    folder = cache if level == "pinshift" else cache / level
    folder.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        folder.symlink_to(elsewhere, target_is_directory=True)
    else:
        folder.mkdir(exist_ok=True)
        folder.chmod(mode)
    return folder


@pytest.mark.parametrize("mode", MODES + [None], ids=[f"{m:04o}" for m in MODES] + ["link"])
@pytest.mark.parametrize("level", ["pinshift", "plans"])
def test_a_plan_cache_folder_others_can_write_is_not_used(run_cli, make_repo, cache, monkeypatch, tmp_path, level,
                                                          mode):
    repo = make_repo(FILES)
    off = _off(monkeypatch, lambda: run_cli(*DRY_RUN, cwd=repo))
    folder = _shared(cache, level, mode, tmp_path)
    result = run_cli(*DRY_RUN, cwd=repo)
    assert (result.exit_code, result.stdout) == (off.exit_code, off.stdout)
    why = f"{folder} is a symbolic link" if mode is None else _why(folder, mode)
    assert result.stderr.splitlines() == [f"pinshift: note: the plan cache is not used: {why}{FOLLOWS}"]
    assert _entries(folder.resolve()) == []  # nothing made, nothing written


@pytest.mark.parametrize("mode", [0o770, 0o757, None], ids=["0770", "0757", "link"])
@pytest.mark.parametrize("level", ["pinshift", "facts"])
def test_a_facts_cache_folder_others_can_write_is_not_used(run_cli, make_repo, cache, monkeypatch, tmp_path, level,
                                                           mode):
    repo = make_repo(FILES)
    status = ("status", "--repo", str(repo), "--format", "json")
    off = _off(monkeypatch, lambda: run_cli(*status))
    folder = _shared(cache, level, mode, tmp_path)
    result = run_cli(*status)
    assert (result.exit_code, result.stdout) == (off.exit_code, off.stdout)
    why = f"{folder} is a symbolic link" if mode is None else _why(folder, mode)
    assert result.stderr.splitlines() == [f"pinshift: note: the facts cache is not used: {why}{FOLLOWS}"]
    assert _entries(folder.resolve()) == []


def _diff_repo(make_repo) -> Path:
    repo = make_repo({".flox/pkgs/a.nix": RECIPE, ".flox/pkgs/b.nix": RECIPE})
    git(repo, "switch", "-q", "-c", "target")
    (repo / ".flox/pkgs/b.nix").write_text(RECIPE.replace("metadata-rev", "metadata-rev2", 1))
    git(repo, "commit", "-q", "-am", "target")
    return repo


@pytest.mark.parametrize("mode", [0o770, 0o777], ids=["0770", "0777"])
def test_a_summary_cache_folder_others_can_write_is_not_used(run_cli, make_repo, cache, monkeypatch, tmp_path, mode):
    require_nix()
    repo = _diff_repo(make_repo)
    diff = ("diff", "main", "target", "--repo", str(repo), "--format", "json")
    off = _off(monkeypatch, lambda: run_cli(*diff))
    folder = _shared(cache, "summaries", mode, tmp_path)
    result = run_cli(*diff)
    assert result.exit_code == off.exit_code
    note = f"pinshift: note: the summary cache is not used: {_why(folder, mode)}{FOLLOWS}"
    assert result.stderr.splitlines() == [note]
    assert _entries(folder) == []


def test_a_private_folder_is_used_and_made_private(run_cli, make_repo, cache, tmp_path):
    """0700 (what pinshift makes) and 0755 (readable by others: they cannot change what it holds) are used."""
    repo = make_repo(FILES)
    cache.mkdir(parents=True)
    cache.chmod(0o755)
    result = run_cli(*DRY_RUN, cwd=repo)
    assert result.exit_code == 0 and result.stderr == ""
    assert stat.S_IMODE((cache / "plans").stat().st_mode) == 0o700
    assert list((cache / "plans").glob("*/*.memo"))


# --- two installs sharing one cache -----------------------------------------------------------------------------


def _install(monkeypatch, version: str) -> None:
    """Run as the pinshift of `version` from here on (the code fingerprint and install are computed afresh)."""
    import pinshift

    monkeypatch.setattr(pinshift, "__version__", version)
    monkeypatch.setattr(plan_memo, "_CODE", None)
    monkeypatch.setattr(plan_memo, "_INSTALL", None)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_two_installs_sharing_a_cache_keep_each_others_stores(run_cli, make_repo, cache, monkeypatch):
    """Installs 1.0 and 2.0 run alternately (plan memo, facts, summaries): after each run of one, every store the
    other wrote is still there byte for byte, and the other's next run plans nothing afresh."""
    require_nix()
    repo = _diff_repo(make_repo)
    commands = [("apply", "metadata-rev", "--dry-run", "--format", "json", ".flox/pkgs/a.nix", ".flox/pkgs/b.nix"),
                ("status", "--repo", str(repo), "--format", "json"),
                ("diff", "main", "target", "--repo", str(repo), "--format", "json")]

    def run_all() -> list[str]:
        outputs = []
        for command in commands:
            result = run_cli(*command, cwd=repo)
            assert result.exit_code in (0, 1) and result.stderr == "", result
            outputs.append(result.stdout if command[0] != "diff" else json.loads(result.stdout)["recipes"])
        return outputs

    stores: dict[str, dict[str, bytes]] = {}
    first: dict[str, list[str]] = {}
    for version in ("1.0", "2.0"):
        _install(monkeypatch, version)
        before = _files(cache)
        first[version] = run_all()
        stores[version] = {name: data for name, data in _files(cache).items() if name not in before}
        assert {name.split("/")[0] for name in stores[version]} == {"plans", "facts", "summaries"}
    for version in ("1.0", "2.0"):
        now = _files(cache)
        assert all(now.get(name) == data for name, data in stores[version].items()), version
    planned: list[str] = []
    monkeypatch.setattr(file_edits, "process_file", lambda path, data, jobs: planned.append(path))
    for version in ("1.0", "2.0", "1.0"):
        _install(monkeypatch, version)
        assert run_all() == first[version]
        assert planned == []
    now = _files(cache)
    for version in ("1.0", "2.0"):
        assert all(name in now for name in stores[version])


def test_an_install_replaces_its_own_stores_of_other_code(run_cli, make_repo, cache, monkeypatch):
    """The same install after an upgrade (its code changed, its place not): its old plan memo and facts go."""
    repo = make_repo(FILES)
    _install(monkeypatch, "1.0")
    assert run_cli(*DRY_RUN, cwd=repo).exit_code == 0
    assert run_cli("status", "--repo", str(repo), "--format", "json").exit_code == 0
    old = _files(cache)
    install = plan_memo.install_id()
    monkeypatch.setattr(plan_memo, "_CODE", "0" * 32)  # another code fingerprint, the same install
    assert run_cli(*DRY_RUN, cwd=repo).exit_code == 0
    assert run_cli("status", "--repo", str(repo), "--format", "json").exit_code == 0
    assert plan_memo.install_id() == install
    now = _files(cache)
    assert not set(old) & set(now)
    assert {name.split("/")[1].split(".")[0] for name in now} == {f"{install}-{'0' * 32}"}
    assert os.listdir(cache / "plans") == [f"{install}-{'0' * 32}"]
