"""Reading and writing recipe files safely: where they are, which to skip, how to replace them.

A `SourceTree` is anything that lists repository-relative POSIX paths and reads
their bytes: a directory on disk here, a git commit in the git layer. Reading
refuses to follow a symlink out of the tree and skips binary and oversized files
with a reason. Writing is atomic (temp file + rename) and keeps the file mode.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from pinshift.errors import PinshiftError

DEFAULT_MAX_BYTES = 10 * 1024 * 1024


class SkippedFile(PinshiftError):
    """A file that is deliberately not read; the message is the reason shown to the user."""


class SourceTree(Protocol):
    def paths(self) -> list[str]: ...

    def read(self, path: str) -> bytes: ...


def check_content(path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Raise SkippedFile for content pinshift must not parse (too large, binary)."""
    if len(data) > max_bytes:
        raise SkippedFile(f"{path}: larger than {max_bytes} bytes; skipped (raise --max-bytes to include it)")
    if b"\0" in data[:8192]:
        raise SkippedFile(f"{path}: binary file (NUL byte); skipped")


class DirectoryTree:
    """Files of a directory on disk; uses git's file list (honouring .gitignore) when it is a work tree."""

    fork_safe = True  # plain file reads: forked workers of pinshift.pool may read on their own

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES, use_git: bool = True):
        self.root = Path(root).resolve()
        self.max_bytes = max_bytes
        self.use_git = use_git
        self._paths: list[str] | None = None

    def paths(self) -> list[str]:
        if self._paths is None:
            listed = None
            if self.use_git:
                from pinshift.gitrepo import listed_files

                listed = listed_files(self.root)
            if listed is None:
                listed = sorted(_walk(self.root))
            self._paths = [p for p in listed if os.path.lexists(self.root / p)]
        return self._paths

    def resolve(self, path: str) -> Path:
        """The real file behind `path`; SkippedFile when a symlink leads out of the tree.

        Listed paths never pass through a symlinked directory (git lists the link
        itself, the walk does not follow links), so one lstat of the file decides.
        """
        full = self.root / path
        if not os.path.islink(full):
            return full
        real = full.resolve()
        if not real.is_relative_to(self.root):
            raise SkippedFile(f"{path}: symlink to {real}, outside the repository; skipped")
        return real

    def mode(self, path: str) -> str | None:
        """The git mode `path` would have: "120000" for a symlink, "100755" if executable, else "100644"."""
        try:
            info = os.lstat(self.root / path)
        except OSError:
            return None
        if stat.S_ISLNK(info.st_mode):
            return "120000"
        return "100755" if info.st_mode & 0o111 else "100644"

    def read(self, path: str) -> bytes:
        real = self.resolve(path)
        try:
            with open(real, "rb") as handle:
                if os.fstat(handle.fileno()).st_size > self.max_bytes:
                    raise SkippedFile(
                        f"{path}: larger than {self.max_bytes} bytes; skipped (raise --max-bytes to include it)"
                    )
                data = handle.read()
        except (PermissionError, IsADirectoryError, FileNotFoundError) as error:
            raise SkippedFile(f"{path}: cannot read ({error.strerror or error}); skipped") from None
        check_content(path, data, self.max_bytes)
        return data

    def write(self, path: str, data: bytes) -> None:
        write_atomic(self.resolve(path), data)


def _walk(root: Path) -> Iterable[str]:
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            yield (Path(directory) / name).relative_to(root).as_posix()


def write_changes(changes: Iterable, locate: Callable[[str], Path]) -> None:
    """Write and delete files for a list of tree changes (`path`, `data` or None to delete, git `mode`), all or nothing.

    Every new content is first written to a temp file next to its target (with the
    target's mode, or for a new file the given git mode) and every deletion is checked;
    only when all are ready are the temp files moved into place and the files deleted.
    A failure while preparing leaves every file as it was. `locate` maps a change's path
    to the file on disk.
    """
    writes: list[tuple[Path, bytes, str | None, str]] = []
    deletions: list[tuple[Path, str]] = []
    for change in changes:
        target = locate(change.path)
        if change.data is None:
            deletions.append((target, change.path))
        else:
            writes.append((target, change.data, change.mode, change.path))
    prepared: list[tuple[str, Path]] = []
    try:
        for target, path in deletions:
            if not os.path.lexists(target):
                raise PinshiftError(f"{path}: cannot remove it: it is no longer there; nothing was written")
        for target, data, mode, path in writes:
            try:
                prepared.append((_temp_copy(target, data, mode), target))
            except OSError as error:
                raise PinshiftError(f"{path}: cannot write ({error.strerror or error}); nothing was written") from None
    except BaseException:
        for temp, _ in prepared:
            os.unlink(temp)
        raise
    for temp, target in prepared:
        os.replace(temp, target)
    for target, _ in deletions:
        os.unlink(target)


def _temp_copy(target: Path, data: bytes, mode: str | None) -> str:
    """A durable temp file holding `data` next to `target`, with `target`'s mode (or git `mode` for a new file)."""
    if mode is not None:
        permissions = 0o755 if mode == "100755" else 0o644
    else:
        permissions = stat.S_IMODE(target.stat().st_mode)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".pinshift", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, permissions)
    except BaseException:
        os.unlink(temp)
        raise
    return temp


def write_atomic(target: Path, data: bytes, durable: bool = True) -> None:
    """Replace `target` with `data` via a temp file in the same directory, keeping its mode.

    `durable=False` skips the fsync, for scratch trees (migrate's temporary worktree)
    whose bytes git stores anyway.
    """
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".pinshift", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
