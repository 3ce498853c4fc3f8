"""pinshift's directories under the user's cache, opened so that nothing outside them is read, written or removed.

`$XDG_CACHE_HOME` (default `~/.cache`) belongs to the user: it may be a symbolic link (to
another disk), and it is followed. Below it, `pinshift/` and every directory pinshift keeps
in it must be a real directory, never a symbolic link, owned by the user running pinshift
and writable by nobody else: not by its group (mode 0770, 0775) nor by every user (0777,
0757). Anyone who can write there could replace a cached result, and a result a cache hands
back is believed (the caches hold data, pinshift.files.data_codec, so nothing in them runs,
but a forged plan or summary would still be reported as pinshift's own). Each is opened with
O_NOFOLLOW, and the files in it are then opened, created, renamed and removed relative to
that descriptor (`dir_fd`), so a link put in its place later is not followed either.

A directory that breaks the rule is `CacheUnsafe`: the cache is not used for the run, and the
command says so in one note. A directory that cannot be made (a read-only disk, a file in its
place) is an `OSError`: the cache only costs the run its time. `open_directory("plans")` is
a descriptor of `$XDG_CACHE_HOME/pinshift/plans`, made (mode 0700) where missing.

Several installs of pinshift may share the cache, each with stores of its own name: a run marks the
stores it uses (`mark_used`, their time refreshed at most once a day), and a tidy-up removes another
install's store only when it is `stale` (no run used it for STALE_SECONDS, a month).
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
STALE_SECONDS = 30 * 24 * 3600  # a store no run used for this long is another install's old one: removable
TEMPORARY_SECONDS = 3600  # a temporary file this old is a killed run's (a save takes seconds)
_TOUCH_SECONDS = 24 * 3600  # a store in use has its time refreshed at most once a day


class CacheUnsafe(Exception):
    """A cache directory pinshift must not use; `str(error)` says which and why."""


def cache_home() -> Path:
    """`$XDG_CACHE_HOME/pinshift` (default `~/.cache/pinshift`)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pinshift"


def open_directory(*parts: str, create: bool = True) -> int:
    """A descriptor of `$XDG_CACHE_HOME/pinshift/<parts…>` (each part one name), made (mode 0700) where missing
    when `create`; the caller closes it. Raises CacheUnsafe, or OSError when it cannot be opened or made."""
    home = cache_home()
    if create:
        os.makedirs(home.parent, exist_ok=True)
    descriptor = os.open(home.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    path = home.parent
    try:
        for name in (home.name, *parts):
            path = path / name
            child = open_child(descriptor, name, path, create)
            os.close(descriptor)
            descriptor = child
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def open_child(parent: int, name: str, path: Path, create: bool = True) -> int:
    """The directory `name` in the directory open as `parent` (`path` is its name for messages), checked as the
    module says; made (mode 0700) when missing and `create`."""
    try:
        descriptor = os.open(name, _DIRECTORY, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            pass  # made at the same moment by another pinshift (or replaced by a link: the open says)
        return open_child(parent, name, path, create=False)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and _is_link(parent, name):
            raise CacheUnsafe(f"{path} is a symbolic link") from None
        raise
    try:
        info = os.fstat(descriptor)
        if info.st_uid != os.geteuid():
            raise CacheUnsafe(f"{path} belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})")
        if info.st_mode & stat.S_IWOTH:
            raise CacheUnsafe(f"{path} is writable by every user (mode {stat.S_IMODE(info.st_mode):04o})")
        if info.st_mode & stat.S_IWGRP:
            raise CacheUnsafe(f"{path} is writable by its group (mode {stat.S_IMODE(info.st_mode):04o})")
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def regular_files(directory: int) -> dict[str, os.stat_result]:
    """The regular files directly in the directory open as `directory`, by name, with their own stat (a link is
    not one, whatever it points to)."""
    found = {}
    with os.scandir(directory) as entries:
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found[entry.name] = info
    return found


def open_regular(name: str, flags: int, directory: int | None) -> int | None:
    """`name` opened with `flags` without following a link and without blocking (a fifo opens at once), relative to
    `directory` (None: as a path); None when it is anything but a regular file. OSError as open() raises it
    (FileNotFoundError when there is none)."""
    try:
        descriptor = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC,
                             dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EOPNOTSUPP, errno.ENODEV):
            return None  # a link, a socket, a fifo with no reader, a directory opened for writing, a device
        raise
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return descriptor


def regular_or_absent(name: str, directory: int | None) -> bool:
    """Whether `name` (relative to `directory`) is a regular file or nothing: what may be replaced by a rename."""
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return True


def stale(info: os.stat_result, seconds: float = STALE_SECONDS) -> bool:
    """Whether what `info` describes was last changed (or marked used, `mark_used`) more than `seconds` ago."""
    return time.time() - info.st_mtime > seconds


def mark_used(descriptor: int) -> None:
    """Refresh the modification time of the store or directory open as `descriptor` (at most once a day), so that
    another install's tidy-up sees it is in use (`stale`); a store that cannot be marked only risks its removal."""
    try:
        if stale(os.fstat(descriptor), _TOUCH_SECONDS):
            os.utime(descriptor)
    except OSError:
        pass
