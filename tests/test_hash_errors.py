"""`pinshift hash`: every way the clone can be wrong is one line and exit 2; the cache per revision.

attack → outcome: no clone, a directory that is not one, a revision the clone lacks (also shallow), a
clone missing objects (deleted object, partial clone: nothing is fetched), a name two remotes disagree
on; a corrupt or unwritable cache never changes the answer.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import git
from test_archive_hash import PLAIN, build, oracle


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("PINSHIFT_NIXPKGS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # to see that nothing is left behind
    root = tmp_path / "repo"
    build(root, PLAIN, executable=["bin/tool"])
    return root


def one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result
    assert "Traceback" not in result.stderr
    return result.stderr.strip()


def leftovers(tmp_path: Path) -> list[str]:
    return os.listdir(tmp_path / "tmp")


def test_no_clone_given(run_cli, repo):
    assert one_line_error(run_cli("hash", "HEAD")) == (
        "pinshift: error: pinshift hash needs a local nixpkgs clone: pass --nixpkgs DIR (a local nixpkgs git "
        "clone) or set PINSHIFT_NIXPKGS")


def test_environment_names_the_clone(run_cli, repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PINSHIFT_NIXPKGS", str(repo))
    result = run_cli("hash", "master")
    assert result.exit_code == 0 and result.stdout.strip() == oracle(repo, "master", tmp_path)


@pytest.mark.parametrize("where, message", [
    ("missing-dir", "--nixpkgs {0}/missing-dir: no such directory; pass --nixpkgs DIR"),
    ("plain-dir", "--nixpkgs {0}/plain-dir: not a git repository; pass --nixpkgs DIR"),
])
def test_not_a_clone(run_cli, repo, tmp_path, where, message):
    (tmp_path / "plain-dir").mkdir()
    line = one_line_error(run_cli("hash", "HEAD", "--nixpkgs", str(tmp_path / where)))
    assert line.startswith("pinshift: error: " + message.format(tmp_path))


def test_a_file_is_not_a_clone_either(run_cli, repo, tmp_path):
    (tmp_path / "file").write_text("x")
    line = one_line_error(run_cli("hash", "HEAD", "--nixpkgs", str(tmp_path / "file")))
    assert "is a file" in line


@pytest.mark.parametrize("rev", ["nixos-unstable", "f" * 40, "deadbeef"])
def test_revision_not_in_the_clone(run_cli, repo, rev):
    assert one_line_error(run_cli("hash", rev, "--nixpkgs", str(repo))) == (
        f"pinshift: error: nixpkgs revision '{rev}' is not in {repo}; fetch it there (git -C {repo} fetch origin {rev})")


def test_shallow_clone_without_the_revision_says_so(run_cli, repo, tmp_path):
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "second").write_text("2")
    git(repo, "add", "second")
    git(repo, "commit", "-q", "-m", "second")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    assert one_line_error(run_cli("hash", first, "--nixpkgs", str(shallow))) == (
        f"pinshift: error: nixpkgs revision '{first}' is not in {shallow}, a shallow clone; fetch it "
        f"(git -C {shallow} fetch --depth 1 origin {first}) or the whole history (git -C {shallow} fetch --unshallow)")


def test_shallow_clone_with_the_revision_hashes_it(run_cli, repo, tmp_path):
    """A shallow clone holds the whole tree of its commits: the common `git clone --depth 1` of nixpkgs works."""
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    assert (shallow / ".git" / "shallow").exists()
    result = run_cli("hash", "origin/master", "--nixpkgs", str(shallow))
    assert result.exit_code == 0 and result.stdout.strip() == oracle(repo, "master", tmp_path)


def _loose_object(repo: Path, sha: str) -> Path:
    return repo / ".git" / "objects" / sha[:2] / sha[2:]


def test_a_missing_blob_names_the_file_and_leaves_nothing_behind(run_cli, repo, tmp_path):
    sha = git(repo, "rev-parse", "HEAD:lib/default.nix").strip()
    _loose_object(repo, sha).unlink()
    line = one_line_error(run_cli("hash", "HEAD", "--nixpkgs", str(repo)))
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert line.startswith(f"pinshift: error: {repo} is missing objects of {commit[:12]} (lib/default.nix: object {sha}")
    assert line.endswith("a partial (--filter) or damaged clone; hash from a full clone "
                         "(git clone https://github.com/NixOS/nixpkgs)")
    assert leftovers(tmp_path) == []
    assert not (Path(os.environ["XDG_CACHE_HOME"]) / "pinshift" / "hashes" / f"{commit}.json").exists()


def test_a_missing_tree_is_missing_objects_too(run_cli, repo):
    sha = git(repo, "rev-parse", "HEAD:lib/deep").strip()
    _loose_object(repo, sha).unlink()
    line = one_line_error(run_cli("hash", "HEAD", "--nixpkgs", str(repo)))
    assert "is missing objects of" in line and "cannot list the tree" in line


def test_partial_clone_is_missing_objects_and_nothing_is_fetched(run_cli, repo, tmp_path):
    git(repo, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{repo}", str(partial)],
                   check=True)
    missing = subprocess.run(["git", "rev-list", "--objects", "--missing=print", "HEAD"], cwd=partial,
                             capture_output=True, text=True, check=True).stdout.count("?")
    assert missing > 0
    line = one_line_error(run_cli("hash", "HEAD", "--nixpkgs", str(partial)))
    assert f"{partial} is missing objects of" in line
    after = subprocess.run(["git", "rev-list", "--objects", "--missing=print", "HEAD"], cwd=partial,
                           capture_output=True, text=True, check=True).stdout.count("?")
    assert after == missing  # pinshift fetched nothing (git would lazily fetch from the promisor remote)


def test_remote_tracking_branch_and_two_remotes_that_disagree(run_cli, repo, tmp_path):
    git(repo, "branch", "nixos-unstable")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", f"file://{repo}", str(clone)], check=True)
    result = run_cli("hash", "nixos-unstable", "--nixpkgs", str(clone))
    commit = git(repo, "rev-parse", "nixos-unstable").strip()
    assert result.exit_code == 0
    assert result.stderr.startswith(f"nixos-unstable = {commit} (origin/nixos-unstable): computed from ")
    (repo / "moved").write_text("m")
    git(repo, "add", "moved")
    git(repo, "commit", "-q", "-m", "moved on")
    git(repo, "branch", "-f", "nixos-unstable", "HEAD")
    git(clone, "remote", "add", "mirror", f"file://{repo}")
    git(clone, "fetch", "-q", "mirror")
    line = one_line_error(run_cli("hash", "nixos-unstable", "--nixpkgs", str(clone)))
    assert line.startswith(f"pinshift: error: nixpkgs revision 'nixos-unstable' is ambiguous in {clone} "
                           f"(mirror/nixos-unstable = ")
    assert line.endswith("name the remote too (origin/nixos-unstable)")
    assert run_cli("hash", "mirror/nixos-unstable", "--nixpkgs", str(clone)).exit_code == 0


# --- the cache --------------------------------------------------------------------------------


def entry_of(commit: str) -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "pinshift" / "hashes" / f"{commit}.json"


def test_second_run_is_cached_and_says_so(run_cli, repo, tmp_path):
    commit = git(repo, "rev-parse", "HEAD").strip()
    first = run_cli("hash", "master", "--nixpkgs", str(repo))
    assert f"computed from {len(PLAIN)} files" in first.stderr
    entry = json.loads(entry_of(commit).read_text())
    assert entry == {"format": "pinshift.archive-hash/1", "commit": commit, "sha256": first.stdout.strip(),
                     "files": len(PLAIN)}
    second = run_cli("hash", "master", "--nixpkgs", str(repo))
    assert second.stdout == first.stdout and second.stderr == f"master = {commit}: cached\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("damage", [
    lambda text, commit: text[: len(text) // 2],  # cut short
    lambda text, commit: "\0\1 not json",
    lambda text, commit: text.replace(commit, "0" * 40),  # an entry for another commit
    lambda text, commit: text.replace('"sha256": "', '"sha256": "e'),  # not a hash
    lambda text, commit: "[]",
])
def test_a_corrupt_cache_entry_is_ignored_and_written_again(run_cli, repo, tmp_path, damage):
    commit = git(repo, "rev-parse", "HEAD").strip()
    good = run_cli("hash", commit, "--nixpkgs", str(repo)).stdout
    text = entry_of(commit).read_text()
    entry_of(commit).write_text(damage(text, commit))
    again = run_cli("hash", commit, "--nixpkgs", str(repo))
    assert again.exit_code == 0 and again.stdout == good and "computed from" in again.stderr
    assert entry_of(commit).read_text() == text


def test_an_unwritable_cache_costs_time_not_the_answer(run_cli, repo, tmp_path, monkeypatch):
    (tmp_path / "not-a-dir").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-dir"))
    result = run_cli("hash", "HEAD", "--nixpkgs", str(repo))
    assert result.exit_code == 0 and result.stdout.strip() == oracle(repo, "HEAD", tmp_path)


def test_default_cache_is_under_home(run_cli, repo, monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert run_cli("hash", "HEAD", "--nixpkgs", str(repo)).exit_code == 0
    assert (tmp_path / "home" / ".cache" / "pinshift" / "hashes" / f"{commit}.json").is_file()


def test_ctrl_c_while_hashing_leaves_no_scratch_directory_and_no_cache_entry(run_cli, repo, tmp_path, monkeypatch):
    """An interrupt in the middle of the blob stream: exit 130, the private git dir gone, nothing cached."""
    from pinshift.git.repo import ObjectStore

    real = ObjectStore.blobs

    def interrupted(self, shas):
        stream = real(self, shas)
        for count, data in enumerate(stream):
            if count == 3 and len(shas) > 5:
                stream.close()
                raise KeyboardInterrupt
            yield data

    monkeypatch.setattr(ObjectStore, "blobs", interrupted)
    result = run_cli("hash", "HEAD", "--nixpkgs", str(repo))
    assert (result.exit_code, result.stderr.strip()) == (130, "pinshift: interrupted")
    assert leftovers(tmp_path) == []
    assert not (Path(os.environ["XDG_CACHE_HOME"]) / "pinshift").exists()


def test_a_cache_entry_that_is_a_fifo_or_a_link_never_blocks_and_is_left_alone(repo, tmp_path):
    """hashes/<commit>.json a fifo (was: `pinshift hash` hung forever reading it) or a link to a file elsewhere
    (was: read through, and replaced): the hash is computed, right, and the thing stays as it was. A real process
    with a timeout, so a hang fails the test instead of the suite."""
    import sys

    commit = git(repo, "rev-parse", "HEAD").strip()
    expected = oracle(repo, "HEAD", tmp_path)
    entry_of(commit).parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"format": "pinshift.archive-hash/1", "commit": commit, "sha256": "0" * 52}))
    for make in (lambda path: os.mkfifo(path), lambda path: path.symlink_to(elsewhere)):
        make(entry_of(commit))
        for _ in range(2):
            result = subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", "hash", commit,
                                     "--nixpkgs", str(repo)], capture_output=True, text=True, timeout=60)
            assert (result.returncode, result.stdout.strip()) == (0, expected), result.stderr
            assert "computed from" in result.stderr
        assert entry_of(commit).is_symlink() or stat.S_ISFIFO(entry_of(commit).lstat().st_mode)
        entry_of(commit).unlink()
    assert json.loads(elsewhere.read_text())["sha256"] == "0" * 52


def test_a_linked_cache_directory_is_not_written_through(run_cli, repo, tmp_path, monkeypatch):
    """$XDG_CACHE_HOME/pinshift/hashes a link to a directory elsewhere: the hash is right, nothing is written there."""
    commit = git(repo, "rev-parse", "HEAD").strip()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    entry_of(commit).parent.parent.mkdir(parents=True)
    entry_of(commit).parent.symlink_to(elsewhere, target_is_directory=True)
    expected = oracle(repo, "HEAD", tmp_path)
    for _ in range(2):
        result = run_cli("hash", "HEAD", "--nixpkgs", str(repo))
        assert result.exit_code == 0 and result.stdout.strip() == expected
        assert "computed from" in result.stderr
    assert list(elsewhere.iterdir()) == []
