"""Private temporary folders that a later run can tell are dead, and removes.

Every folder pinshift hands Nix (the snapshots' `pinshift-eval-*`, Nix's own `pinshift-nix-*`) is made by
`tempfile.mkdtemp` (mode 0700) and holds a lock file, `.pinshift-lock`, locked (`fcntl.flock`, exclusive) for as
long as the folder is in use: the kernel drops the lock when the process dies, however it dies (`kill -9`
included). `remove_dead()` (each run calls it once, before it makes its first folder) removes the folders of
dead runs in the places pinshift makes them (`/dev/shm` and the system's temporary folder): only folders named
`pinshift-eval-*` or `pinshift-nix-*` that are directories (not links), owned by this user, whose lock it can
take; a folder with no lock file at all only once it is an hour old (a run makes its lock file right after
its folder). Another user's folder is never touched.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

LOCK = ".pinshift-lock"
PREFIXES = ("pinshift-eval-", "pinshift-nix-")
PLACES = (Path("/dev/shm"),)  # besides the system's temporary folder
UNLOCKED_AGE = 3600.0  # seconds: a folder without a lock file is a dead run's only after this long

_swept = False


class LockedDirectory:
    """A new private folder `path` (mkdtemp, 0700) whose lock this process holds until `close`, which removes it."""

    def __init__(self, prefix: str, parent: str | None = None):
        self.path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        self._lock: int | None = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                                         | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self._owner = os.getpid()

    def close(self) -> None:
        """Remove the folder (in the process that made it only: a forked worker leaves it to its parent)."""
        if self._lock is None or os.getpid() != self._owner:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._lock)
        self._lock = None


def remove_dead(places: tuple[Path, ...] | None = None) -> list[Path]:
    """Remove the folders of dead runs (see the module's docstring) once per process; the folders removed."""
    global _swept
    if places is None:
        if _swept:
            return []
        _swept = True
        places = (*PLACES, Path(tempfile.gettempdir()))
    removed = []
    for place in dict.fromkeys(places):
        try:
            names = [name for name in os.listdir(place) if name.startswith(PREFIXES)]
        except OSError:
            continue
        for name in names:
            if _remove_if_dead(place / name):
                removed.append(place / name)
    return removed


def _remove_if_dead(path: Path) -> bool:
    try:
        found = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        return False
    try:
        lock = os.open(path / LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        if time.time() - found.st_mtime < UNLOCKED_AGE:
            return False
        shutil.rmtree(path, ignore_errors=True)
        return True
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(lock).st_mode):
            return False
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live run holds it
            return False
        shutil.rmtree(path, ignore_errors=True)  # fd-based: never follows a link inside
        return True
    finally:
        os.close(lock)
