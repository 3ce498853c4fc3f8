"""Files written under one folder through directory file descriptors, never following a link at any level.

The snapshots Nix evaluates (pinshift.evaluation.snapshots) are written here: each path is checked again with
git's rules (pinshift.git.entry_names) whatever its caller checked, every folder is opened relative to its
parent's descriptor (`O_DIRECTORY | O_NOFOLLOW`, made with `mkdir(dir_fd=...)`), every file created
`O_CREAT | O_EXCL | O_NOFOLLOW` relative to its folder's, and shared files are hard links made with
`linkat` (`os.link` with both descriptors, `follow_symlinks=False`). A folder swapped for a link is refused,
never followed: nothing lands outside the root, even where a check upstream were missed.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from pinshift.errors import PinshiftError
from pinshift.git.entry_names import reason, shown


def folder_order(path: str) -> list[str]:
    """Paths sorted by their components: each folder's files come together, so a writer opens each folder once."""
    return path.split("/")


class SnapshotWriter:
    """Writes files under `root` through directory file descriptors, never following a link at any level.

    Each folder is opened (`O_DIRECTORY | O_NOFOLLOW`) relative to its parent's descriptor, made with
    `mkdir(dir_fd=...)` when missing; each file is created `O_CREAT | O_EXCL | O_NOFOLLOW` relative to its
    folder's. A path is checked again here (`entry_names.reason`, and no empty, `.` or `..` component
    whatever that says): even a check missed upstream cannot write outside `root`, and a folder replaced by
    a link is refused, not followed. The descriptors of the current folder chain are kept (at most
    `OPEN_FOLDERS` open; write paths in `folder_order`), so a 10,000-file tree does not reopen its folders per
    file; `close` (or leaving the `with`) closes them. `create=False`: a tree only read (`link`'s source).
    """

    OPEN_FOLDERS = 64

    def __init__(self, root: Path, create: bool = True):
        self.root, self.create = root, create
        self._root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        self._chain: list[list] = []  # [name, descriptor or None (closed to stay under OPEN_FOLDERS)] per level

    def __enter__(self) -> "SnapshotWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for entry in self._chain:
            if entry[1] is not None:
                os.close(entry[1])
        self._chain = []
        if self._root_fd is not None:
            os.close(self._root_fd)
            self._root_fd = None

    def _failed(self, path: str, error: OSError) -> PinshiftError:
        why = {errno.ELOOP: "a link on the way (never followed)", errno.ENOTDIR: "a link or a file where a folder "
               "should be (never followed)", errno.EEXIST: "something is there already (a link is never written "
               "through)"}.get(error.errno, error.strerror or str(error))
        return self._refuse(path, why)

    def _refuse(self, path: str, why: str) -> PinshiftError:
        return PinshiftError(f"cannot write {shown(path)} into the snapshot {self.root}: {why}; the check stopped "
                             "(nothing outside that folder was written)")

    def _split(self, path: str) -> list[str]:
        why = reason(path)
        parts = path.split("/")
        if why is None and any(part in ("", ".", "..") or "\0" in part for part in parts):
            why = "an empty, '.' or '..' component"
        if why is not None:
            raise self._refuse(path, why)
        return parts

    def _open(self, parent: int, name: str, create: bool) -> int:
        if create:
            try:
                os.mkdir(name, 0o755, dir_fd=parent)
            except FileExistsError:
                pass  # made earlier, or a link or file in its place: the open below refuses those
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)

    def _level(self, depth: int) -> int:
        """The descriptor of the chain's folder at `depth` (0: the root), reopened from the nearest open one."""
        if depth == 0:
            return self._root_fd
        if self._chain[depth - 1][1] is None:
            start = depth - 1
            while start > 0 and self._chain[start - 1][1] is None:
                start -= 1
            fd, opened = self._level(start), None
            for name, _ in self._chain[start:depth]:
                fd = self._open(fd, name, False)
                if opened is not None:
                    os.close(opened)
                opened = fd
            self._chain[depth - 1][1] = fd
        return self._chain[depth - 1][1]

    def _folder(self, parts: list[str], create: bool) -> int:
        """The descriptor of the folder `parts` (made when `create`), the chain moved there."""
        same = 0
        while same < len(self._chain) and same < len(parts) and self._chain[same][0] == parts[same]:
            same += 1
        for entry in self._chain[same:]:
            if entry[1] is not None:
                os.close(entry[1])
        del self._chain[same:]
        fd = self._level(same)
        for name in parts[same:]:
            fd = self._open(fd, name, create)
            self._chain.append([name, fd])
            extra = len(self._chain) - 1 - self.OPEN_FOLDERS
            if extra >= 0 and self._chain[extra][1] is not None:
                os.close(self._chain[extra][1])
                self._chain[extra][1] = None
        return fd

    def write(self, path: str, data: bytes) -> None:
        """Create `path` (it must not exist yet) holding `data`."""
        parts = self._split(path)
        try:
            folder = self._folder(parts[:-1], self.create)
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=folder)
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
        except OSError as error:
            raise self._failed(path, error) from None

    def link(self, source: "SnapshotWriter", path: str) -> None:
        """A hard link to `source`'s `path` (a copy where the file system cannot link); nothing when `source`
        has no such file (one above the size limit)."""
        parts = self._split(path)
        try:
            origin = source._folder(parts[:-1], False)
            os.stat(parts[-1], dir_fd=origin, follow_symlinks=False)
        except FileNotFoundError:
            return
        except OSError as error:
            raise self._failed(path, error) from None
        try:
            folder = self._folder(parts[:-1], self.create)
            try:
                os.link(parts[-1], parts[-1], src_dir_fd=origin, dst_dir_fd=folder, follow_symlinks=False)
                return
            except OSError as error:
                if error.errno not in (errno.EXDEV, errno.EMLINK, errno.EPERM, errno.ENOTSUP):
                    raise
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=origin)
            with os.fdopen(fd, "rb") as stream:
                data = stream.read()
        except OSError as error:
            raise self._failed(path, error) from None
        self.write(path, data)
