"""Real ways to make writes fail, also for root: a full tmpfs, read-only bind mounts, `chattr +i`.

Each is a context manager that undoes itself, and skips the test with the reason when the
machine does not allow it (not root, no mount permission in a container, a file system
without `chattr` flags). Root ignores permission bits, so these are the honest failures.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True)


def _mount(*args: str) -> None:
    if shutil.which("mount") is None:
        pytest.skip("no mount command on this machine")
    done = _run("mount", *args)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here (mount {' '.join(args)}: {done.stderr.strip() or done.returncode})")


def _umount(path: Path) -> None:
    done = _run("umount", str(path))
    if done.returncode != 0:
        _run("umount", "-l", str(path))


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str = "64k") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` (created); unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    try:
        yield path
    finally:
        _umount(path)


def fill(directory: Path, leave: int) -> None:
    """Fill the file system of `directory` until only `leave` bytes stay free for new data."""
    free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
    if free > leave:
        (directory / ".filler").write_bytes(b"\0" * (free - leave))
    assert os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize <= leave


@contextlib.contextmanager
def read_only_bind(path: Path) -> Iterator[Path]:
    """`path` (a directory) bind-mounted read-only over itself: writes fail with EROFS, for root too."""
    _mount("--bind", str(path), str(path))
    try:
        remount = _run("mount", "-o", "remount,bind,ro", str(path))
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remount.stderr.strip()}")
        yield path
    finally:
        _umount(path)


@contextlib.contextmanager
def bind_file(source: Path, target: Path) -> Iterator[Path]:
    """`source` bind-mounted over the file `target` (as Docker mounts single files): renaming over it fails."""
    _mount("--bind", str(source), str(target))
    try:
        yield target
    finally:
        _umount(target)


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """`chattr +i path` for the duration; skips where the file system has no such flag."""
    if shutil.which("chattr") is None:
        pytest.skip("no chattr command on this machine")
    done = _run("chattr", "+i", str(path))
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not supported here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        _run("chattr", "-i", str(path))
