"""Nix's processes are bounded and leave nothing behind (issue 39, items 4 and 8): the real `pinshift diff` started
as a process, its `nix-instantiate` children read from /proc (namespace, memory limit, environment), `kill -9`,
and what a later run removes of a dead run's folders (only this user's, never through a link).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from build_repos import PKGS, commit
from conftest import git, require_nix
from pinshift.sandbox.scratch_dirs import LOCK, remove_dead

PINSHIFT = str(Path(sys.executable).parent / "pinshift")
TOKEN = "ghp_secret123"
SLOW = ('let spin = n: builtins.foldl\' (a: _: builtins.hashString "sha256" a) "x" (builtins.genList (x: x) n); '
        "in { x = builtins.foldl' (a: _: spin 3000) \"\" (builtins.genList (x: x) 30000); }\n")


def namespaces_work() -> bool:
    """Whether this machine lets a process have a network namespace of its own (as root, or mapped to root)."""
    unshare = shutil.which("unshare")
    return unshare is not None and any(
        subprocess.run([unshare, *flags, "true"], capture_output=True).returncode == 0
        for flags in (["--net"], ["--map-root-user", "--net"]))


def nix_children(pid: int) -> list[int]:
    """The nix-instantiate processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), None)
        # not the `unshare --net nix-instantiate --version` probe pinshift runs once to learn whether namespaces work
        if parent == str(pid) and b"nix-instantiate" in command and b"--version" not in command.split(b"\0"):
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "Z" not in state.split()[1]  # a zombie has stopped, waiting for init to reap it


@pytest.fixture
def slow_run(make_repo, tmp_path):
    """`pinshift diff` started as a process on a recipe that takes minutes; TOKEN in its environment; its scratch
    folders under tmp_path/tmp. Yields (process, its nix-instantiate children once running, the temporary folder)."""
    require_nix()
    root = make_repo({f"{PKGS}/a.nix": "{ x = 1; }\n"})
    commit(root, {f"{PKGS}/a.nix": SLOW}, "slow", branch="target")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TOKEN=TOKEN, TMPDIR=str(scratch), PINSHIFT_EVAL_TIMEOUT="300")
    process = subprocess.Popen([PINSHIFT, "diff", "main", "target", "--repo", str(root)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        children: list[int] = []
        while time.monotonic() < deadline and not children:
            time.sleep(0.1)
            children = nix_children(process.pid)
            assert process.poll() is None, "pinshift diff ended before evaluating"
        assert children, "no nix-instantiate child appeared"
        yield process, children, scratch
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_nix_runs_isolated_and_bounded(slow_run):
    """What the kernel says of a running child: its own network namespace, the memory limit, an environment of
    nothing but what Nix needs (no TOKEN), its options on the command line."""
    _, children, _ = slow_run
    child = children[0]
    if namespaces_work():
        assert os.readlink(f"/proc/{child}/ns/net") != os.readlink("/proc/self/ns/net")
    limits = Path(f"/proc/{child}/limits").read_text()
    line = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    assert line.split()[3:5] == [str(2048 * 1024 * 1024)] * 2
    environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
    names = {item.split(b"=", 1)[0].decode() for item in environ if item}
    assert names == {"PATH", "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR", "NIX_PATH",
                     "NIX_CONF_DIR", "NIX_USER_CONF_FILES", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
                     "GIT_CEILING_DIRECTORIES"}
    assert TOKEN.encode() not in b"".join(environ)
    words = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
    for option, value in ((b"restrict-eval", b"true"), (b"allow-unsafe-native-code-during-evaluation", b"false"),
                          (b"allowed-uris", b""), (b"allow-import-from-derivation", b"false")):
        assert words[words.index(option) + 1] == value
    assert words[words.index(b"--store") + 1] == b"dummy://"
    conf = Path(dict(item.decode().split("=", 1) for item in environ if item)["NIX_CONF_DIR"])
    assert conf.parent.name.startswith("pinshift-nix-") and (conf / "nix.conf").read_bytes() == b""


def test_killing_pinshift_kills_its_nix_and_a_later_run_removes_its_folders(slow_run, make_repo, tmp_path):
    process, children, scratch = slow_run
    left = sorted(p.name for p in scratch.iterdir())
    assert any(name.startswith("pinshift-eval-") for name in left) and \
        any(name.startswith("pinshift-nix-") for name in left)
    process.kill()
    process.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(child) for child in children):
        time.sleep(0.05)
    assert not any(alive(child) for child in children)
    assert sorted(p.name for p in scratch.iterdir()) == left  # what the dead run left, until another run starts
    root = make_repo({f"{PKGS}/b.nix": "{ y = 1; }\n"}, name="other")
    done = subprocess.run([PINSHIFT, "diff", "main", "main", "--repo", str(root)], capture_output=True, text=True,
                          env=dict(os.environ, TMPDIR=str(scratch)))
    assert done.returncode == 0, done.stderr
    assert list(scratch.iterdir()) == []


def test_only_dead_folders_of_this_user_are_removed(tmp_path):
    def folder(name: str, lock: bool = True) -> Path:
        path = tmp_path / name
        path.mkdir(mode=0o700)
        (path / "file").write_text("x")
        if lock:
            (path / LOCK).write_bytes(b"")
        return path

    dead = folder("pinshift-eval-dead")
    dead_nix = folder("pinshift-nix-dead")
    live = folder("pinshift-eval-live")
    held = os.open(live / LOCK, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    young = folder("pinshift-eval-young", lock=False)
    old = folder("pinshift-eval-old", lock=False)
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    other_name = folder("someone-else-eval-x")
    target = folder("target")
    (tmp_path / "pinshift-eval-link").symlink_to(target)
    lock_link = folder("pinshift-eval-locklink", lock=False)
    (lock_link / LOCK).symlink_to(target / LOCK)
    try:
        removed = remove_dead((tmp_path,))
    finally:
        os.close(held)
    assert sorted(p.name for p in removed) == ["pinshift-eval-dead", "pinshift-eval-old", "pinshift-nix-dead"]
    assert not dead.exists() and not dead_nix.exists() and not old.exists()
    assert live.exists() and young.exists() and other_name.exists() and lock_link.exists()
    assert (tmp_path / "pinshift-eval-link").is_symlink() and (target / "file").exists()


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a folder to another user")
def test_another_users_folder_is_never_removed(tmp_path):
    others = tmp_path / "pinshift-eval-others"
    others.mkdir()
    (others / LOCK).write_bytes(b"")
    os.utime(others, (time.time() - 7200, time.time() - 7200))
    os.chown(others / LOCK, 65534, 65534)
    os.chown(others, 65534, 65534)
    assert remove_dead((tmp_path,)) == []
    assert (others / LOCK).exists()


def test_verbose_says_when_nix_has_no_network_namespace(make_repo, tmp_path):
    """No `unshare` on PATH: --verbose says Nix ran without a namespace of its own; without --verbose nothing."""
    nix = require_nix()
    root = make_repo({f"{PKGS}/a.nix": "{ x = 1; }\n"})
    commit(root, {f"{PKGS}/a.nix": "{ x = 2; }\n"}, "two", branch="target")
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("git", nix):
        (tools / Path(tool).name).symlink_to(shutil.which(tool))
    args = [PINSHIFT, "diff", "main", "target", "--repo", str(root)]
    without = dict(os.environ, PATH=str(tools))
    quiet = subprocess.run(args, capture_output=True, text=True, env=without)
    loud = subprocess.run([*args, "--verbose"], capture_output=True, text=True, env=without)
    usual = subprocess.run([*args, "--verbose"], capture_output=True, text=True)
    note = ("pinshift: note: Nix ran without a network namespace of its own (`unshare` is not on PATH; install "
            "util-linux): restricted evaluation alone kept it offline")
    assert quiet.returncode == loud.returncode == usual.returncode == 0, loud.stderr
    assert note in loud.stderr and "network namespace" not in quiet.stderr
    if namespaces_work():
        assert "network namespace" not in usual.stderr
    assert quiet.stdout == loud.stdout == usual.stdout


def test_migrate_verbose_says_it_too(make_repo, tmp_path):
    nix = require_nix()
    root = make_repo({f"{PKGS}/a.nix": "let nixpkgs_pinned = import <nixpkgs> { }; in nixpkgs_pinned.python3Packages.x\n"})
    recipe = tmp_path / "recipe.toml"
    recipe.write_text('name = "check"\ndescription = "a test recipe"\nfiles = [".flox/pkgs/**/*.nix"]\n\n'
                      '[[steps]]\nkind = "rename-attr"\ntitle = "Use python313Packages"\n[steps.params]\n'
                      'from = "python3Packages"\nto = "python313Packages"\nbase = "nixpkgs_pinned"\n')
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("git", nix):
        (tools / Path(tool).name).symlink_to(shutil.which(tool))
    args = [PINSHIFT, "migrate", str(recipe), "--repo", str(root), "--from", "main", "--branch", "next", "--dry-run"]
    without = dict(os.environ, PATH=str(tools))
    loud = subprocess.run([*args, "--verbose"], capture_output=True, text=True, env=without)
    quiet = subprocess.run(args, capture_output=True, text=True, env=without)
    assert loud.returncode == quiet.returncode == 0, loud.stderr
    assert "pinshift: note: Nix ran without a network namespace of its own" in loud.stderr
    assert "network namespace" not in quiet.stderr
    assert "What the recipes build" in loud.stdout
