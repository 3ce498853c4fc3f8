"""Reading and writing recipe files safely: where they are, which to skip, how to replace them.

A `SourceTree` is anything that lists repository-relative POSIX paths and reads
their bytes: a directory on disk here, a git commit in the git layer. Reading
refuses to follow a symlink out of the tree, never opens anything but a regular
file (a fifo would block, a device could act on being opened) and skips binary
and oversized files with a reason. Writing is atomic (temp file + rename) and
keeps the file's mode, owner and group; a new file gets the mode the umask gives.
Replacing several files all or nothing is `pinshift.files.replace`.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
import struct
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from pinshift.files.content import DEFAULT_MAX_BYTES, NulFile, SkippedFile, check_content
from pinshift.errors import UsageError

__all__ = [
    "DEFAULT_MAX_BYTES", "DirectoryTree", "NulFile", "SkippedFile", "SourceTree", "check_content", "display_path",
    "file_kind", "inode_flags", "nix_files", "temp_beside", "write_atomic",
]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a fifo"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symlink"))


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages: 'a fifo', 'a directory', ..."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


class SourceTree(Protocol):
    def paths(self) -> list[str]: ...

    def read(self, path: str) -> bytes: ...


Listing = Callable[[Path], "list[str] | None"]  # a directory's files as its version control lists them, or None


class DirectoryTree:
    """Files of a directory on disk: those `listing` names (git's list, honouring .gitignore, when the caller
    passes pinshift.git.repo.listed_files and the directory is a work tree), else every file under it."""

    fork_safe = True  # plain file reads: forked workers of pinshift.planning.pool may read on their own

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES, listing: Listing | None = None):
        self.root = Path(root).resolve()
        self.max_bytes = max_bytes
        self.listing = listing
        self._paths: list[str] | None = None

    def paths(self) -> list[str]:
        if self._paths is None:
            listed = self.listing(self.root) if self.listing is not None else None
            if listed is None:
                listed = sorted(_walk(self.root))
            self._paths = [p for p in listed if os.path.lexists(self.root / p)]
        return self._paths

    def resolve(self, path: str) -> Path:
        """The real file behind `path`; SkippedFile when a symlink loops, dangles or leads out of the tree.

        Listed paths never pass through a symlinked directory (git lists the link
        itself, the walk does not follow links), so one lstat of the file decides.
        """
        full = self.root / path
        if not os.path.islink(full):
            return full
        try:
            real = Path(os.path.realpath(full, strict=True))
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise SkippedFile(f"{path}: symlink loop; skipped") from None
            if error.errno == errno.ENOENT:
                raise SkippedFile(f"{path}: symlink to a missing file; skipped") from None
            raise SkippedFile(f"{path}: cannot read ({error.strerror or error}); skipped") from None
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
        """The bytes of a regular file; anything else (fifo, socket, device, directory) is skipped unopened."""
        real = self.resolve(path)
        try:
            mode = os.stat(real).st_mode
            if not stat.S_ISREG(mode):
                raise SkippedFile(f"{path}: {file_kind(mode)}, not a regular file; skipped")
            # O_NONBLOCK: should a fifo take the file's place after the stat, opening it cannot hang
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise SkippedFile(f"{path}: {file_kind(info.st_mode)}, not a regular file; skipped")
                if info.st_size > self.max_bytes:
                    raise SkippedFile(
                        f"{path}: larger than {self.max_bytes} bytes; skipped (raise --max-bytes to include it)"
                    )
                data = handle.read()
        except OSError as error:
            raise SkippedFile(f"{path}: cannot read ({error.strerror or error}); skipped") from None
        check_content(path, data, self.max_bytes)
        return data

    def write(self, path: str, data: bytes) -> None:
        write_atomic(self.resolve(path), data)


def nix_files(paths: tuple[str, ...], max_bytes: int, listing: Listing | None = None) -> list[tuple[DirectoryTree, str]]:
    """(tree, relative path) of every .nix file named or found under a directory (as `listing` lists it)."""
    found = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            tree = DirectoryTree(path, max_bytes, listing)
            found.extend((tree, p) for p in tree.paths() if p.endswith(".nix"))
        elif path.exists() or path.is_symlink():
            found.append((DirectoryTree(path.parent, max_bytes), path.name))
        else:
            raise UsageError(f"{raw}: no such file or directory")
    return found


def display_path(tree: DirectoryTree, relative: str) -> str:
    full = tree.root / relative
    try:
        return str(full.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(full)


def _walk(root: Path) -> Iterable[str]:
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            yield (Path(directory) / name).relative_to(root).as_posix()


_FS_IOC_GETFLAGS = (2 << 30) | (struct.calcsize("l") << 16) | (ord("f") << 8) | 1  # _IOR('f', 1, long)
_FLAGS = ((0x10, "immutable"), (0x20, "append-only"))  # FS_IMMUTABLE_FL, FS_APPEND_FL


def inode_flags(path: Path) -> set[str]:
    """The `chattr` flags of `path` that forbid replacing it: {'immutable', 'append-only'}.

    Empty where the file system or platform has no such flags. Opens `path` read-only
    without blocking; call it on a regular file or a directory only.
    """
    try:
        import fcntl

        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (ImportError, OSError):
        return set()
    try:
        raw = fcntl.ioctl(fd, _FS_IOC_GETFLAGS, bytes(8))
    except OSError:
        return set()
    finally:
        os.close(fd)
    value = struct.unpack("i", raw[:4])[0]
    return {name for bit, name in _FLAGS if value & bit}


def current_umask() -> int:
    """The process umask (read by setting it and putting it back: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_beside(target: Path, data: bytes | Iterable[bytes], like: os.stat_result | None, durable: bool = True,
                suffix: str = ".pinshift-new") -> Path:
    """A new file holding `data` in `target`'s directory, ready to be renamed over it.

    It gets the mode, owner and group of `like` (the file it replaces), or, for a new
    file, the mode any program creating a file gets (0666 less the umask). Raises
    OSError (with no temp file left) when it cannot be written.
    """
    fd, temp = _create_beside(target, suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in (data,) if isinstance(data, bytes) else data:  # bytes, or pieces written as they come
                handle.write(piece)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if like is None:
            os.chmod(temp, 0o666 & ~current_umask())
        else:
            own = os.stat(temp)
            if (own.st_uid, own.st_gid) != (like.st_uid, like.st_gid):
                os.chown(temp, like.st_uid, like.st_gid)  # before chmod: chown clears set-id bits
            os.chmod(temp, stat.S_IMODE(like.st_mode))
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


_TEMP_NUMBERS = itertools.count()


def _create_beside(target: Path, suffix: str) -> tuple[int, Path]:
    """A new, empty, exclusively created file `.NAME.<pid>-<n><suffix>` beside `target` (mkstemp's name if taken).

    A counter instead of mkstemp's random names: thousands of files are prepared per run.
    """
    name = target.parent / f".{target.name}.{os.getpid()}-{next(_TEMP_NUMBERS)}{suffix}"
    try:
        return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600), name
    except FileExistsError:
        fd, other = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
        return fd, Path(other)


def write_atomic(target: Path, data: bytes | Iterable[bytes], durable: bool = True) -> None:
    """Replace `target` with `data` via a temp file in the same directory, keeping mode, owner and group.

    A new file gets the umask's mode (0644 under umask 022), like a file written by
    any other program. `durable=False` skips the fsync, for scratch trees (migrate's
    temporary worktree) whose bytes git stores anyway.
    """
    try:
        like = target.stat()
    except FileNotFoundError:
        like = None
    temp = temp_beside(target, data, like, durable)
    try:
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
