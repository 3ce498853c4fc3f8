"""Trees Nix can read: a commit's files (or a planned step's) written into a private temporary directory.

`nix-instantiate` imports files from disk, and pinshift never checks anything out: the blobs of a commit are
read from git's objects (`CommitTree.contents`) and written under a directory only this user can read
(`tempfile.mkdtemp`, mode 0700; in `/dev/shm` when that memory file system is there with room, unless $TMPDIR
is set), removed when the check is done (`Scratch`, also on Ctrl-C), and only when something must be
evaluated: a tree whose every summary is remembered is never written. A later state (the
tree after a planned step) hard-links every file it shares with the state before it and writes only what the
step changed. Symbolic links and submodules are not written (a recipe importing through one does
not evaluate), nor files above the size limit.

Paths come from a commit anyone can write: `CommitTree` has already refused a tree holding `..`, `.git` or
another path git would not check out (pinshift.git.entry_names), and `SnapshotWriter` checks each path again
and opens every folder and file relative to its parent's descriptor without following a link, so nothing
is ever written outside the snapshot's folder.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.errors import PinshiftError
from pinshift.git.entry_names import reason, shown
from pinshift.planning.memo import blob_id


@dataclass
class Snapshot:
    """One tree on disk: `root` holds its files; `files` maps each written path to its git blob id."""

    name: str
    root: Path
    files: dict[str, str] = field(default_factory=dict)
    _directories: set[str] | None = field(default=None, repr=False)
    _pending: Callable[[], None] | None = field(default=None, repr=False)  # writes the files, once, when asked

    def materialise(self) -> None:
        """Write the files (a snapshot whose every summary is remembered is never written)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending()

    def fingerprint(self, path: str) -> str | None:
        """What `path` is in this tree, for a remembered summary: its blob id, "dir", or None (absent)."""
        found = self.files.get(path)
        if found is not None:
            return found
        if self._directories is None:
            self._directories = {parent for p in self.files for parent in _parents(p)}
        return "dir" if path in self._directories else None

    def nix_paths(self) -> list[str]:
        return sorted(p for p in self.files if p.endswith(".nix"))


def _parents(path: str) -> Iterable[str]:
    parts = path.split("/")[:-1]
    for end in range(1, len(parts) + 1):
        yield "/".join(parts[:end])
    yield ""


SHARED_MEMORY = Path("/dev/shm")
ROOM = 512 * 1024 * 1024  # free bytes a memory file system must have left for the snapshots to go there
PER_FILE = 16 * 1024  # what one file of one snapshot may take there, at most (a page, and the directory's share)


def scratch_parent(shared: Path = SHARED_MEMORY, files: int = 0) -> str | None:
    """Where snapshots go: $TMPDIR when the user set it; else a memory file system (`/dev/shm`) when it is a
    writable directory with room for `files` files (ROOM at least; creating thousands of small files there costs
    about a fiftieth of a disk's: docs/performance.md); else None, the system's temporary directory (a
    container's 64 MB /dev/shm is passed over)."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        if not shared.is_dir() or shared.is_symlink() or not os.access(shared, os.W_OK | os.X_OK):
            return None
        found = os.statvfs(shared)
    except OSError:
        return None
    return str(shared) if found.f_bavail * found.f_frsize >= max(ROOM, files * PER_FILE) else None


class Scratch:
    """A private temporary directory for snapshots (mode 0700), removed on `close` (a context manager)."""

    def __init__(self, files: int = 0):
        """`files`: how many files the snapshots may hold in all (each tree's files, once per tree)."""
        try:
            self.path = Path(tempfile.mkdtemp(prefix="pinshift-eval-", dir=scratch_parent(files=files)))
        except OSError:
            self.path = Path(tempfile.mkdtemp(prefix="pinshift-eval-"))
        self.count = 0

    def __enter__(self) -> "Scratch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def _directory(self) -> Path:
        self.count += 1
        directory = self.path / str(self.count)
        directory.mkdir()
        return directory

    def commit(self, name: str, tree) -> Snapshot:
        """The files of `tree` (a `git.repo.CommitTree`), written from git's objects when `materialise`d."""
        regular = [p for p in tree.paths() if tree.mode(p) in ("100644", "100755")]
        snapshot = Snapshot(name, self._directory(), {path: tree.blob_id(path) for path in regular})

        def write() -> None:
            with SnapshotWriter(snapshot.root) as writer:
                for path, data in tree.contents(sorted(regular, key=_folder_order)):
                    writer.write(path, data)

        snapshot._pending = write
        return snapshot

    def after(self, name: str, before: Snapshot, writes: dict[str, bytes | None]) -> Snapshot:
        """`before` with `writes` applied (path -> new bytes, None: removed); once `materialise`d, the files it shares
        with `before` are hard links."""
        files = {path: blob for path, blob in before.files.items() if path not in writes}
        files.update({path: blob_id(data) for path, data in writes.items() if data is not None})
        snapshot = Snapshot(name, self._directory(), files)

        def write() -> None:
            before.materialise()
            with SnapshotWriter(before.root, create=False) as source, SnapshotWriter(snapshot.root) as writer:
                for path in sorted(before.files, key=_folder_order):
                    if path not in writes:
                        writer.link(source, path)
                for path in sorted(writes, key=_folder_order):
                    if writes[path] is not None:
                        writer.write(path, writes[path])

        snapshot._pending = write
        return snapshot


def _folder_order(path: str) -> list[str]:
    """Paths sorted by their components: each folder's files come together, so a writer opens each folder once."""
    return path.split("/")


class SnapshotWriter:
    """Writes files under `root` through directory file descriptors, never following a link at any level.

    Each folder is opened (`O_DIRECTORY | O_NOFOLLOW`) relative to its parent's descriptor, made with
    `mkdir(dir_fd=...)` when missing; each file is created `O_CREAT | O_EXCL | O_NOFOLLOW` relative to its
    folder's. A path is checked again here (`entry_names.reason`, and no empty, `.` or `..` component
    whatever that says): even a check missed upstream cannot write outside `root`, and a folder replaced by
    a link is refused, not followed. The descriptors of the current folder chain are kept (at most
    `OPEN_FOLDERS` open; write paths in `_folder_order`), so a 10,000-file tree does not reopen its folders per
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
