"""`pinshift status` remembers each (path, blob id)'s facts across runs (pinshift.facts.facts_memo).

The memo may only change how long status takes: every output is byte-identical cold, warm, with a
damaged store and with the memo off; a warm run parses nothing; a store it cannot write costs nothing.
"""

from __future__ import annotations

import os
import stat

import pytest

from conftest import FIXTURES, git
from pinshift.facts import branch_recipes as branches_module
from pinshift.facts.facts_memo import FORMAT, FactsMemo
from status_repos import commit_branch

KINDS = FIXTURES / "kinds"


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "build-onnxruntime"
    root.mkdir()
    git(root, "init", "-q", "-b", "placeholder")
    git(root, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "start")
    for branch, kind in (("main", "onnxruntime"), ("vllm", "vllm"), ("pytorch", "pytorch")):
        commit_branch(root, branch, {f".flox/pkgs/{p.name}": p.read_text() for p in (KINDS / kind).glob("*.nix")})
    git(root, "switch", "-q", "main")
    return root


@pytest.fixture
def memo_on(monkeypatch, tmp_path):
    """The memo on, in a cache directory of the test's own (the suite runs with PINSHIFT_CACHE=off)."""
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "pinshift" / "facts"


def stores(directory):
    return sorted(directory.glob("*.store"))


def outputs(run_cli, repo) -> list[str]:
    return [run_cli("status", "--repo", str(repo), "--format", fmt).stdout for fmt in ("json", "markdown", "text")]


def test_warm_run_parses_nothing_and_prints_the_same(run_cli, repo, memo_on, monkeypatch):
    cold = outputs(run_cli, repo)
    [store] = stores(memo_on)
    assert store.read_bytes().startswith(FORMAT)

    def no_parsing(*args):
        raise AssertionError("a remembered blob was parsed again")

    monkeypatch.setattr(branches_module, "_facts", no_parsing)
    assert outputs(run_cli, repo) == cold
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    monkeypatch.undo()  # _facts back; the memo off: the same bytes again
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert outputs(run_cli, repo) == cold


def test_a_new_blob_is_parsed_and_appended(run_cli, repo, memo_on):
    run_cli("status", "--repo", str(repo), "--format", "json")
    [store] = stores(memo_on)
    before = store.stat().st_size
    commit_branch(repo, "comfyui", {f".flox/pkgs/{p.name}": p.read_text() for p in (KINDS / "comfyui").glob("*.nix")})
    result = run_cli("status", "--repo", str(repo), "--format", "markdown")
    assert "| `comfyui` | `0182a36` | comfyui 0.3.40 (recipe, 2) / 0.3.43 (recipe, 1) |" in result.stdout
    assert store.stat().st_size > before and len(FactsMemo(store.name).index) == 18 + 3  # 4 + 5 + 9 fixtures, then 3


@pytest.mark.parametrize("damage", ["truncated", "garbage", "not a store", "flipped payload"])
def test_a_damaged_store_is_a_miss_never_an_error(run_cli, repo, memo_on, damage):
    cold = outputs(run_cli, repo)
    [store] = stores(memo_on)
    data = store.read_bytes()
    if damage == "truncated":
        store.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        store.write_bytes(data + b"PF\xff\xff\xff\xff" + b"x" * 30)
    elif damage == "not a store":
        store.write_bytes(b"something else\n" + data)
    else:  # a record whose payload does not decompress
        middle = len(data) // 2
        store.write_bytes(data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64]) + data[middle + 64:])
    assert outputs(run_cli, repo) == cold
    assert outputs(run_cli, repo) == cold  # and after the run rewrote or appended to it
    if damage == "truncated":  # the run parsed what it lost, and rewrote the store without the damaged end
        memo = FactsMemo(store.name)
        assert memo.store.valid_end == len(memo.store.data) and len(memo.index) == 18


def test_a_store_that_cannot_be_written_costs_nothing(run_cli, repo, memo_on):
    memo_on.parent.mkdir(parents=True)
    memo_on.write_text("a file where the directory should be")
    cold = outputs(run_cli, repo)
    os.chmod(memo_on, stat.S_IRUSR)
    assert outputs(run_cli, repo) == cold and memo_on.is_file()


def test_only_stores_of_no_use_are_removed(run_cli, repo, memo_on):
    """This install's store of another code fingerprint goes at once; another install's, or an earlier format's,
    only once no run used it for a month (issue 39: two installs sharing a cache kept deleting each other's)."""
    from pinshift.planning.memo import install_id, store_name

    memo_on.mkdir(parents=True)
    month = 31 * 24 * 3600
    names = {"mine-old": f"{install_id()}-{'1' * 32}.store", "other": f"{'f' * 16}-{'2' * 32}.store",
             "other-unused": f"{'f' * 16}-{'3' * 32}.store", "old-format": f"{'4' * 32}.store",
             "old-format-unused": f"{'5' * 32}.store", "temporary": f".{'f' * 16}-{'2' * 32}.store.{'6' * 16}.tmp"}
    for what, name in names.items():
        (memo_on / name).write_bytes(FORMAT)
        if what.endswith("unused"):
            os.utime(memo_on / name, (os.path.getmtime(memo_on / name) - month,) * 2)
    run_cli("status", "--repo", str(repo), "--format", "json")
    left = {p.name for p in memo_on.iterdir()}
    assert left == {f"{store_name()}.store", names["other"], names["old-format"], names["temporary"]}


def test_a_linked_facts_directory_turns_the_memo_off_with_a_note_and_nothing_outside_is_touched(
        run_cli, repo, memo_on, tmp_path):
    """The facts store follows no link below XDG_CACHE_HOME (as the plan memo): a `facts` link to a directory
    elsewhere is not read, written or emptied, and stderr says once why the cache is not used."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    precious = elsewhere / "0123456789abcdef0123456789abcdef.store"
    precious.write_bytes(b"mine")
    memo_on.parent.mkdir(parents=True)
    memo_on.symlink_to(elsewhere)
    result = run_cli("status", "--repo", str(repo), "--format", "json")
    assert result.exit_code == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == [precious.name] and precious.read_bytes() == b"mine"
    notes = [line for line in result.stderr.splitlines() if "facts cache is not used" in line]
    assert len(notes) == 1 and "is a symbolic link" in notes[0]


@pytest.mark.parametrize("what", ["fifo", "link", "directory"])
def test_a_store_that_is_not_a_regular_file_is_a_miss_and_left_alone(repo, memo_on, tmp_path, what):
    """A fifo, a link or a directory where the store should be: never read through, never blocking (a real
    process with a timeout), never written or removed; a foreign file beside it is not removed either."""
    import subprocess
    import sys

    from pinshift.planning.memo import store_name

    memo_on.mkdir(parents=True)
    store = memo_on / f"{store_name()}.store"
    outside = tmp_path / "outside.store"
    outside.write_bytes(FORMAT)
    if what == "fifo":
        os.mkfifo(store)
    elif what == "link":
        store.symlink_to(outside)
    else:
        store.mkdir()
    stranger = memo_on / "notes.txt"
    stranger.write_text("not pinshift's")
    done = subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", "status", "--repo", str(repo),
                           "--format", "json"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PINSHIFT_CACHE="on", XDG_CACHE_HOME=str(tmp_path / "cache")))
    assert done.returncode == 0, done.stderr
    assert outside.read_bytes() == FORMAT and stranger.read_text() == "not pinshift's"
    kind = os.lstat(store).st_mode
    assert {"fifo": stat.S_ISFIFO, "link": stat.S_ISLNK, "directory": stat.S_ISDIR}[what](kind)
