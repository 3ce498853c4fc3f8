"""Reading and writing recipe files safely: where they are, which to skip, how to replace them.

A `SourceTree` is anything that lists repository-relative POSIX paths and reads
their bytes: a directory on disk here, a git commit in the git layer. Reading
refuses to follow a symlink out of the tree, opens every folder below the root
relative to its parent's handle without following a link (`open_folder`: git's
index may list `pkgs/a.nix` while `pkgs` is now a link elsewhere), never opens
anything but a regular file (a fifo would block, a device could act on being
opened) and skips binary and oversized files with a reason. Writing is atomic (temp file + rename) and
keeps the file's mode, owner and group; a new file gets the mode the umask gives.
Replacing several files all or nothing is `pinshift.files.replace`.
"""

from __future__ import annotations

import errno
import functools
import itertools
import os
import stat
import secrets
import struct
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from pinshift.files.content import DEFAULT_MAX_BYTES, NulFile, SkippedFile, check_content
from pinshift.errors import UsageError

__all__ = [
    "DEFAULT_MAX_BYTES", "DirectoryTree", "LinkedFolder", "NulFile", "SkippedFile", "SourceTree", "check_content",
    "display_path", "file_kind", "folder_of", "inode_flags", "nix_files", "open_folder", "read_inside", "temp_beside",
    "write_atomic",
]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a fifo"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symlink"))


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages: 'a fifo', 'a directory', ..."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


# --- folders opened one component at a time, never through a link -------------------------------------------

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC


class LinkedFolder(OSError):
    """A folder below the root that is a symbolic link (or no folder at all): `where` names it."""

    def __init__(self, where: str, what: str):
        super().__init__(errno.ELOOP, f"{where} is {what}")
        self.where, self.what = where, what


def open_folder(root: Path, folder: str) -> int:
    """A handle (fd) on `root`/`folder`, each component opened from its parent's handle with O_NOFOLLOW, from
    `/` down: LinkedFolder when one is a symbolic link or not a folder, OSError when one is missing.

    `root` must be a real path (no link in it: `DirectoryTree.root` is resolved once, when the tree is
    made), so a folder swapped for a link later, the root itself included, is refused rather than
    followed; `..` is refused like a link.
    """
    parts = _root_parts(os.path.abspath(root))
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    done: list[str] = []
    steps = [(name, True) for name in parts]
    steps += [(name, False) for name in folder.split("/") if name not in ("", ".")]

    def where(name: str, in_root: bool) -> str:  # for the message only
        return str(Path("/", *done, name)) if in_root else "/".join([*done[len(parts):], name])

    try:
        for name, in_root in steps:
            if name == "..":
                raise LinkedFolder(where(name, in_root), "outside the folder")
            try:
                child = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                info = os.lstat(name, dir_fd=fd)
                raise LinkedFolder(where(name, in_root), "a symbolic link" if stat.S_ISLNK(info.st_mode)
                                   else file_kind(info.st_mode)) from None
            os.close(fd)
            fd = child
            done.append(name)
    except BaseException:
        os.close(fd)
        raise
    return fd


@functools.lru_cache(maxsize=64)
def _root_parts(root: str) -> tuple[str, ...]:
    """The names of the folders of an absolute path below `/` (`Path(root).parts[1:]`), worked out once per root."""
    return Path(root).parts[1:]


@contextmanager
def folder_of(root: Path, relative: str) -> Iterator[tuple[int, str]]:
    """(handle on the folder holding `relative`, its last name), the folders opened by `open_folder`."""
    folder, _, name = relative.rpartition("/")
    fd = open_folder(root, folder)
    try:
        yield fd, name
    finally:
        os.close(fd)


def _linked_reason(path: str, error: LinkedFolder) -> str:
    if error.what == "a symbolic link":
        return f"{path}: {error.where} is a symbolic link; pinshift does not follow a linked folder"
    return f"{path}: {error.where} is {error.what}"


def read_inside(root: Path, relative: str, limit: int) -> bytes:
    """The bytes of the regular file `root`/`relative`, no link followed at any level below `root` (its folders
    and the file itself), at most `limit` bytes; else SkippedFile saying why, as `relative: why`.

    For the files pinshift reads from a repository's `.pinshift/` (recipes, step code): a symlink to
    `/dev/zero`, a fifo or a file elsewhere is never opened. A non-regular file is judged by lstat
    before it is opened; O_NONBLOCK keeps a fifo swapped in afterwards from blocking the open. `root`
    itself is resolved first (the caller named it).
    """
    root = Path(os.path.realpath(root))
    try:
        with folder_of(root, relative) as (folder, name):
            mode = os.lstat(name, dir_fd=folder).st_mode
            if not stat.S_ISREG(mode):
                raise SkippedFile(f"{relative}: {file_kind(mode)}, not a regular file")
            fd = os.open(name, FILE_FLAGS, dir_fd=folder)
    except LinkedFolder as error:
        raise SkippedFile(_linked_reason(relative, error)) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SkippedFile(f"{relative}: a symlink, not a regular file") from None
        raise SkippedFile(f"{relative}: cannot read ({error.strerror or error})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SkippedFile(f"{relative}: {file_kind(info.st_mode)}, not a regular file")
        data = handle.read(limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(data) > limit:
            raise SkippedFile(f"{relative}: larger than {limit} bytes")
    return data


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
        """The real file behind `path` (`root / real_relative(path)`); SkippedFile as `real_relative` says."""
        return self.root / self.real_relative(path)

    def real_relative(self, path: str) -> str:
        """`path`, or the file its symlink leads to, relative to the root; SkippedFile when a folder on the way is
        a link (whatever git's index lists), or the symlink loops, dangles or leads out of the tree.

        Each folder is opened without following a link (`open_folder`), so `pkgs/a.nix` is never read
        or written through `pkgs -> /elsewhere`; the path returned passes through no link either.
        """
        try:
            with folder_of(self.root, path) as (fd, name):
                info = os.lstat(name, dir_fd=fd)
        except LinkedFolder as error:
            raise SkippedFile(f"{_linked_reason(path, error)}; skipped") from None
        except FileNotFoundError:
            return path  # gone: whoever opens it next says so
        except OSError as error:
            raise SkippedFile(f"{path}: cannot read ({error.strerror or error}); skipped") from None
        if not stat.S_ISLNK(info.st_mode):
            return path
        try:
            real = Path(os.path.realpath(self.root / path, strict=True))
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise SkippedFile(f"{path}: symlink loop; skipped") from None
            if error.errno == errno.ENOENT:
                raise SkippedFile(f"{path}: symlink to a missing file; skipped") from None
            raise SkippedFile(f"{path}: cannot read ({error.strerror or error}); skipped") from None
        if not real.is_relative_to(self.root):
            raise SkippedFile(f"{path}: symlink to {real}, outside the repository; skipped")
        return real.relative_to(self.root).as_posix()

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
        """The bytes of a regular file; anything else (fifo, socket, device, directory) is skipped unopened.

        Opened from its folder's handle with O_NOFOLLOW (`folder_of`): a link swapped in anywhere on
        the way after `real_relative` looked is refused, not followed."""
        relative = self.real_relative(path)
        try:
            with folder_of(self.root, relative) as (folder, name):
                mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
                if not stat.S_ISREG(mode):
                    raise SkippedFile(f"{path}: {file_kind(mode)}, not a regular file; skipped")
                # O_NONBLOCK: should a fifo take the file's place after the stat, opening it cannot hang
                fd = os.open(name, FILE_FLAGS, dir_fd=folder)
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise SkippedFile(f"{path}: {file_kind(info.st_mode)}, not a regular file; skipped")
                if info.st_size > self.max_bytes:
                    raise SkippedFile(
                        f"{path}: larger than {self.max_bytes} bytes; skipped (raise --max-bytes to include it)"
                    )
                data = handle.read()
        except LinkedFolder as error:
            raise SkippedFile(f"{_linked_reason(path, error)}; skipped") from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise SkippedFile(f"{path}: became a symbolic link while pinshift read it; skipped") from None
            raise SkippedFile(f"{path}: cannot read ({error.strerror or error}); skipped") from None
        check_content(path, data, self.max_bytes)
        return data

    def write(self, path: str, data: bytes) -> None:
        """Replace the file behind `path` atomically, in its folder's handle (no link followed on the way)."""
        relative = self.real_relative(path)
        with folder_of(self.root, relative) as (fd, name):
            like = os.stat(name, dir_fd=fd, follow_symlinks=False)
            temp = temp_beside(self.root / relative, data, like, dir_fd=fd)
            try:
                os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                os.unlink(temp, dir_fd=fd)
                raise


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


def inode_flags(path: Path | str, dir_fd: int | None = None) -> set[str]:
    """The `chattr` flags of `path` (relative to the folder handle `dir_fd`, if given) that forbid replacing
    it: {'immutable', 'append-only'}.

    Empty where the file system or platform has no such flags. Opens `path` read-only
    without blocking or following a link; call it on a regular file or a directory only.
    """
    try:
        import fcntl

        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
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
                suffix: str = ".pinshift-new", dir_fd: int | None = None) -> Path:
    """A new file holding `data` in `target`'s directory, ready to be renamed over it.

    With `dir_fd` (a handle on the folder, from `folder_of`), it is made in that folder and the
    name returned is relative to it. It gets the mode, owner and group of `like` (the file it
    replaces), or, for a new file, the mode any program creating a file gets (0666 less the
    umask). Raises OSError (with no temp file left) when it cannot be written.
    """
    fd, temp = _create_beside(target, suffix, dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in (data,) if isinstance(data, bytes) else data:  # bytes, or pieces written as they come
                handle.write(piece)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
            if like is None:
                os.fchmod(handle.fileno(), 0o666 & ~current_umask())
            else:
                own = os.fstat(handle.fileno())
                if (own.st_uid, own.st_gid) != (like.st_uid, like.st_gid):
                    os.fchown(handle.fileno(), like.st_uid, like.st_gid)  # before chmod: chown clears set-id bits
                os.fchmod(handle.fileno(), stat.S_IMODE(like.st_mode))
    except BaseException:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    return temp


_TEMP_NUMBERS = itertools.count()
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _create_beside(target: Path, suffix: str, dir_fd: int | None) -> tuple[int, Path]:
    """A new, empty, exclusively created file `.NAME.<pid>-<n><suffix>` beside `target` (a random name if taken).

    A counter instead of random names: thousands of files are prepared per run.
    """
    folder = Path() if dir_fd is not None else target.parent
    name = folder / f".{target.name}.{os.getpid()}-{next(_TEMP_NUMBERS)}{suffix}"
    for _ in range(100):
        try:
            return os.open(name, _NEW_FILE, 0o600, dir_fd=dir_fd), name
        except FileExistsError:
            name = folder / f".{target.name}.{secrets.token_hex(6)}{suffix}"
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(name))


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
