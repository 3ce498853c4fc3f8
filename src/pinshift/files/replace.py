"""Replacing several files all or nothing (what `pinshift apply` writes with).

Three phases, so that a failure anywhere leaves every file as it was:

1. **check** (nothing written): each target is still the regular file pinshift read,
   with the same bytes; its mode lets someone write it (a mode 444 file is refused,
   even for root, who could write it anyway); it is not immutable or append-only
   (`chattr`); its directory takes new files. Every problem is collected.
2. **prepare** (only new files): for each target, the new bytes in a temporary file
   beside it with the target's mode, owner and group, and the original kept under a
   second name (a hard link, or a copy where the file system has none); then one
   `os.sync()` puts every new text on disk before any rename (not an fsync per file). A failure (disk full, read-only mount) removes what was made.
3. **replace**: each temporary file is renamed over its target (atomic per file),
   after checking that the target is still the file checked in phase 1 and still holds
   the bytes pinshift planned from (read again and compared: a file rewritten in place
   with its size and mtime put back has the same stat). A failure renames the
   originals back over the files already replaced.

Every file is reached from a handle on its folder, each folder below `Replacement.root` opened
without following a link (`pinshift.files.tree.folder_of`): a folder that is, or became, a
symbolic link refuses its files ("pkgs/a.nix: pkgs is a symbolic link; pinshift does not follow a
linked folder; left alone") and nothing outside
the tree is read or written. The temporary file and the kept original are made in that
folder's handle and renamed with it (`src_dir_fd`/`dst_dir_fd`); before each rename the
folder is checked to be the one phase 1 saw (same device and inode).

A file with other hard links is replaced like any other (a new inode), so its other names keep
the old bytes: `replace_all` says so per file in `warnings` (the caller prints them).

Then the kept originals are removed. Ctrl-C, SIGTERM and SIGHUP are held while this
runs (pinshift.interrupts.deferred) and take effect at the next file: whatever was
replaced is put back. Only a SIGKILL or a crash can leave `.NAME.*.pinshift-new` /
`.pinshift-orig` files beside the targets (never matched by `*.nix`); the originals
are never lost.
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import signal
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pinshift.errors import RestoreFailed, WriteFailed, WriteInterrupted, WriteRefused
from pinshift.files.tree import FILE_FLAGS, LinkedFolder, current_umask, file_kind, folder_of, inode_flags, temp_beside
from pinshift.interrupts import deferred

NOTHING_CHANGED = "no file was changed"


@dataclass(frozen=True)
class Replacement:
    """One file to replace, create or remove: where it is, the bytes pinshift planned from, the bytes to write.

    `before` None: a new file (there must be none at `target`), made with git `mode`
    ("100755": executable). `after` None: the file is removed (it must still hold `before`).
    `root`: the tree `target` is in (`target` is `root / path`, no `..`); no folder between them may
    be a link. None: only `target`'s last name is checked (its folder is taken as given).
    """

    shown: str  # the path as the user reads it
    target: Path  # the file itself (a symlink inside the tree already resolved)
    before: bytes | None
    after: bytes | None
    mode: str | None = None
    root: Path | None = None

    @property
    def creates(self) -> bool:
        return self.before is None

    @property
    def removes(self) -> bool:
        return self.after is None

    def place(self) -> tuple[Path, str]:
        """(root, the path below it) from which the file is reached without following a link."""
        if self.root is None:  # the folder as given, resolved (links in it followed) here, once
            return _resolved(self.target.parent), self.target.name
        found = self.__dict__.get("_below")  # the same for every phase: worked out once (not a field)
        if found is None:
            found = self.__dict__["_below"] = self.target.relative_to(self.root).as_posix()
        return self.root, found


@functools.lru_cache(maxsize=256)
def _resolved(folder: Path) -> Path:
    return Path(os.path.realpath(folder))


@dataclass
class _Staged:
    item: Replacement
    identity: tuple | None  # what the target looked like when checked (None: there must be none); so when replaced
    like: os.stat_result | None
    folder: tuple  # (st_dev, st_ino) of the folder holding the target, when checked
    temp: str | None = None  # names in that folder
    original: str | None = None  # the original bytes under a second name, until every file is replaced
    replaced: bool = False
    keep: bool = False  # putting the original back failed: it must survive the cleanup
    held: int | None = None  # a handle on the folder kept from the check, to undo pinshift's own files there


def _identity(info: os.stat_result) -> tuple:
    # not ctime or nlink: keeping the original as a hard link changes both
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode, info.st_uid, info.st_gid)


class _FolderMoved(OSError):
    """The folder holding a target is no longer the one phase 1 checked."""


@contextmanager
def _in_folder(entry: _Staged) -> Iterator[tuple[int, str]]:
    """(folder handle, name) of the entry's target; LinkedFolder or _FolderMoved when that folder changed."""
    root, relative = entry.item.place()
    with folder_of(root, relative) as (fd, name):
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != entry.folder:
            raise _FolderMoved(errno.ESTALE, "its folder was replaced")
        yield fd, name


@contextmanager
def _own_files_folder(entry: _Staged) -> Iterator[tuple[int, str]]:
    """Where pinshift puts back an original or removes its temporary file: the folder handle held since the
    check (wherever that folder has been moved since), else the folder reached again from the root."""
    if entry.held is None:
        with _in_folder(entry) as found:
            yield found
        return
    yield entry.held, entry.item.place()[1].rpartition("/")[2]


_HELD_LIMIT = 256  # folder handles kept open at most; beyond them, undoing reaches the folder from the root again


def _where(entry: _Staged, name: str) -> Path:
    """A file beside the entry's target, as messages name it."""
    return entry.item.target.parent / name


# --- 1. check ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Problem:
    reason: str
    system: bool  # True: the system cannot write here (exit 2); False: the file must not be changed (exit 1)


def _read_regular(name: str, fd: int) -> bytes:
    with os.fdopen(os.open(name, FILE_FLAGS, dir_fd=fd), "rb") as handle:
        return handle.read()


def _linked(shown: str, error: LinkedFolder) -> _Problem:
    if error.what == "a symbolic link":
        return _Problem(f"{shown}: {error.where} is a symbolic link; pinshift does not follow a linked folder; "
                        "left alone", False)
    return _Problem(f"{shown}: {error.where} is {error.what}; left alone", False)


def _check(item: Replacement, held: dict[tuple, int]) -> _Problem | tuple[os.stat_result | None, tuple]:
    """(the target's stat, or None for a new file that may be made; its folder's identity), else the problem.

    A handle on each folder checked is kept in `held` (up to _HELD_LIMIT), keyed by its identity."""
    try:
        root, relative = item.place()
        with folder_of(root, relative) as (fd, name):
            folder = os.fstat(fd)
            result = _check_in(item, fd, name)
            if isinstance(result, _Problem):
                return result
            key = (folder.st_dev, folder.st_ino)
            if key not in held and len(held) < _HELD_LIMIT:
                held[key] = os.dup(fd)
            return result, key
    except LinkedFolder as error:
        return _linked(item.shown, error)
    except FileNotFoundError:
        if item.creates:
            return _Problem(f"{item.shown}: its directory {item.target.parent} does not exist", True)
        return _Problem(f"{item.shown}: deleted since pinshift read it; not recreated", False)
    except OSError as error:
        return _Problem(f"{item.shown}: cannot check it ({error.strerror or error})", True)


def _check_in(item: Replacement, fd: int, name: str) -> _Problem | os.stat_result | None:
    shown = item.shown
    if item.creates:
        try:
            os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            return _may_write_in(item, fd)
        return _Problem(f"{shown}: already exists; left alone (move it away first)", False)
    try:
        info = os.lstat(name, dir_fd=fd)
    except FileNotFoundError:
        return _Problem(f"{shown}: deleted since pinshift read it; not recreated", False)
    if stat.S_ISLNK(info.st_mode):
        return _Problem(f"{shown}: replaced by a symbolic link since pinshift read it; left alone", False)
    if not stat.S_ISREG(info.st_mode):
        return _Problem(f"{shown}: replaced by {file_kind(info.st_mode)} since pinshift read it; left alone", False)
    try:
        current = _read_regular(name, fd)
    except OSError as error:
        return _Problem(f"{shown}: cannot read it again ({error.strerror or error})", True)
    if current != item.before:
        return _Problem(f"{shown}: changed since pinshift read it; run pinshift again", False)
    return _may_write(item, fd, name, info) or info


def _may_write(item: Replacement, fd: int, name: str, info: os.stat_result) -> _Problem | None:
    """Why the target must not or cannot be replaced by this user, judged as `chmod`, `chattr` and mounts say.

    Root could write a mode 444 file, and rename over an immutable one's siblings: the mode
    bits and flags are read here, not left to open() or rename() to enforce.
    """
    shown = item.shown
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o222:
        return _Problem(f"{shown}: read-only (mode {mode:04o}); make it writable (chmod u+w) to let pinshift "
                        "change it", False)
    flags = inode_flags(name, dir_fd=fd)
    if flags:
        flag = sorted(flags)[0]
        option = "i" if flag == "immutable" else "a"
        return _Problem(f"{shown}: {flag} (chattr +{option}); remove the flag (chattr -{option}) to let pinshift "
                        "change it", False)
    problem = _may_write_in(item, fd)
    if problem is not None:
        return problem
    if not os.access(name, os.W_OK, dir_fd=fd):
        return _Problem(f"{shown}: not writable by this user (mode {mode:04o}, owner uid {info.st_uid})", False)
    if os.geteuid() != 0 and (info.st_uid != os.geteuid() or info.st_gid not in {os.getegid(), *os.getgroups()}):
        return _Problem(f"{shown}: owned by uid {info.st_uid} gid {info.st_gid}; a rewritten file would change "
                        "hands, so it is left alone", False)
    return None


_FOLDER_PROBLEMS: dict[tuple[int, int], "_Problem | None"] = {}


def _may_write_in(item: Replacement, fd: int) -> _Problem | None:
    """Why no file can be made or replaced in the folder `fd` (a read-only mount, chattr +i, permissions)."""
    info = os.fstat(fd)
    key = (info.st_dev, info.st_ino)
    if key not in _FOLDER_PROBLEMS:  # asked once per folder and run (`replace_all` clears it)
        _FOLDER_PROBLEMS[key] = _folder_problem(item.target.parent, fd)
    problem = _FOLDER_PROBLEMS[key]
    return _Problem(f"{item.shown}: {problem.reason}", problem.system) if problem is not None else None


def _folder_problem(directory: Path, fd: int) -> _Problem | None:
    try:
        read_only_mount = bool(os.statvfs(fd).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_mount = False
    if read_only_mount:
        return _Problem("on a read-only file system", True)
    if "immutable" in inode_flags(".", dir_fd=fd):
        return _Problem(f"its directory {directory} is immutable (chattr +i)", True)
    if not os.access(".", os.W_OK | os.X_OK, dir_fd=fd):
        return _Problem(f"its directory {directory} is not writable by this user", True)
    return None


def _hard_links(item: Replacement, info: os.stat_result) -> str | None:
    others = info.st_nlink - 1
    if others < 1:
        return None
    links = "its other hard link keeps" if others == 1 else f"its {others} other hard links keep"
    return (f"{item.shown}: {links} the old content (pinshift replaces the file with a new one; "
            "edit the other names the same way, or break the links first)")


def _checked(items: Sequence[Replacement], warnings: list[str], held: dict[tuple, int]) -> list[_Staged]:
    staged, problems = [], []
    for item in items:
        result = _check(item, held)
        if isinstance(result, _Problem):
            problems.append(result)
            continue
        info, folder = result
        staged.append(_Staged(item, _identity(info) if info is not None else None, info, folder,
                              held=held.get(folder)))
        if info is not None and not item.removes and (warning := _hard_links(item, info)):
            warnings.append(warning)
    if not problems:
        return staged
    reasons = [p.reason for p in problems]
    summary = reasons[0] if len(reasons) == 1 else \
        f"{len(reasons)} files cannot be changed safely (first: {reasons[0]})"
    error = (WriteFailed if any(p.system for p in problems) else WriteRefused)(f"{summary}; {NOTHING_CHANGED}")
    error.reasons = reasons
    raise error


# --- signals: held while files are written (pinshift.interrupts.deferred) -----------------------


def _interrupted(signum: int, state: str) -> WriteInterrupted:
    return WriteInterrupted(f"interrupted ({signal.Signals(signum).name}) while writing files; {state}", signum)


# --- 2. prepare ----------------------------------------------------------------------------------


def _keep_original(entry: _Staged, fd: int, name: str) -> str:
    """The original under a second name beside it: a hard link, or a copy where links are not possible."""
    target = entry.item.target
    for _ in range(100):
        kept = f".{target.name}.{secrets.token_hex(4)}.pinshift-orig"
        try:
            os.link(name, kept, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
            return kept
        except FileExistsError:
            continue
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS,
                                   errno.EXDEV):
                raise
            break
    return os.fspath(temp_beside(target, entry.item.before, entry.like, suffix=".pinshift-orig", dir_fd=fd))


def _prepare(staged: list[_Staged], caught: list[int]) -> None:
    for entry in staged:
        if caught:
            raise _interrupted(caught[0], NOTHING_CHANGED)
        try:
            with _in_folder(entry) as (fd, name):
                if not entry.item.removes:
                    entry.temp = os.fspath(temp_beside(entry.item.target, entry.item.after, entry.like,
                                                       durable=False, dir_fd=fd))
                    if entry.item.creates and entry.item.mode == "100755":
                        os.chmod(entry.temp, 0o777 & ~current_umask(), dir_fd=fd)
                if not entry.item.creates:
                    entry.original = _keep_original(entry, fd, name)
        except LinkedFolder as error:
            raise WriteRefused(f"{_linked(entry.item.shown, error).reason}; {NOTHING_CHANGED}") from None
        except _FolderMoved:
            raise WriteRefused(f"{entry.item.shown}: its folder was replaced while pinshift was writing; left alone; "
                               f"{NOTHING_CHANGED}") from None
        except OSError as error:
            raise WriteFailed(f"{entry.item.shown}: cannot write beside it ({error.strerror or error}); "
                              f"{NOTHING_CHANGED}") from None


# --- 3. replace ----------------------------------------------------------------------------------


class _Stopped(Exception):
    """Why the replace phase stopped: a message, its exit code's error class, or a signal."""

    def __init__(self, reason: str, refused: bool = False, signum: int = 0):
        super().__init__(reason)
        self.reason, self.refused, self.signum = reason, refused, signum


def _replace(staged: list[_Staged], caught: list[int]) -> None:
    for entry in staged:
        if caught:
            raise _Stopped("", signum=caught[0])
        changed = _Stopped(f"{entry.item.shown}: changed while pinshift was writing; left alone", refused=True)
        try:
            with _in_folder(entry) as (fd, name):
                if not _unchanged(entry, fd, name):
                    raise changed
                _replace_one(entry, fd, name)
        except (LinkedFolder, _FolderMoved):
            raise changed from None
        except OSError as error:
            verb = "create" if entry.item.creates else "remove" if entry.item.removes else "replace"
            raise _Stopped(f"{entry.item.shown}: cannot {verb} it ({error.strerror or error})") from None
        entry.replaced, entry.temp = True, None


def _replace_one(entry: _Staged, fd: int, name: str) -> None:
    if entry.item.creates:
        # fails, rather than overwrite, should a file appear now
        os.link(entry.temp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
        os.unlink(entry.temp, dir_fd=fd)
    elif entry.item.removes:
        os.unlink(name, dir_fd=fd)
    else:
        os.replace(entry.temp, name, src_dir_fd=fd, dst_dir_fd=fd)


def _unchanged(entry: _Staged, fd: int, name: str) -> bool:
    """The target is still what phase 1 checked: no file for a new one; else the same file with the same bytes.

    Stat identity alone misses a file rewritten in place with its size and mtime put back (issue 28 §3): the
    bytes are read and compared right before the rename, as black does before it writes."""
    if entry.identity is None:
        try:
            os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            return True
        return False
    try:
        handle_fd = os.open(name, FILE_FLAGS, dir_fd=fd)
    except OSError:
        return False
    with os.fdopen(handle_fd, "rb") as handle:
        if _identity(os.fstat(handle_fd)) != entry.identity:
            return False
        try:
            return handle.read() == entry.item.before
        except OSError:
            return False


def _restore(staged: list[_Staged]) -> list[tuple[_Staged, OSError]]:
    """Put the originals back over the files already replaced, last first; the ones that failed (kept)."""
    failed = []
    for entry in reversed([e for e in staged if e.replaced]):
        try:
            with _own_files_folder(entry) as (fd, name):
                if entry.item.creates:
                    os.unlink(name, dir_fd=fd)
                else:
                    os.replace(entry.original, name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as error:
            entry.keep = True
            failed.append((entry, error))
            continue
        entry.replaced, entry.original = False, None
    return failed


def _rolled_back(stop: _Stopped, staged: list[_Staged]) -> Exception:
    """The error to raise after a stopped replace phase: all restored, or exactly which file holds what."""
    replaced = [e.item.shown for e in staged if e.replaced]
    failed = _restore(staged)
    if not failed:
        restored = _put_back(replaced)
        if stop.signum:
            return _interrupted(stop.signum, f"{restored}{NOTHING_CHANGED}")
        error_class = WriteRefused if stop.refused else WriteFailed
        return error_class(f"{stop.reason}; {restored}{NOTHING_CHANGED}")
    cause = stop.reason or f"interrupted ({signal.Signals(stop.signum).name})"
    states = "; ".join(f"{e.item.shown} was created (removing it failed: {why.strerror or why})" if e.item.creates
                       else f"{e.item.shown} holds the NEW content (putting it back failed: {why.strerror or why}; "
                            f"its original is {_where(e, e.original)})" for e, why in failed)
    kept = {e.item.shown for e, _ in failed}
    restored = [shown for shown in replaced if shown not in kept]
    also = f"; put back: {', '.join(restored)}" if restored else ""
    return RestoreFailed(f"{cause}; {states}{also}; every other file is unchanged")


def _put_back(shown: list[str]) -> str:
    if not shown:
        return ""
    if len(shown) == 1:
        return f"put back {shown[0]}, already replaced; "
    if len(shown) <= 3:
        return f"put back {', '.join(shown)}, already replaced; "
    return f"put back the {len(shown)} files already replaced; "


def _cleanup(staged: list[_Staged]) -> list[str]:
    """Remove the temporary files and the originals no longer needed; what could not be removed."""
    left = []
    for entry in staged:
        names = [n for n in (entry.temp, None if entry.keep else entry.original) if n is not None]
        if not names:
            continue
        try:
            with _own_files_folder(entry) as (fd, _):
                for name in names:
                    try:
                        os.unlink(name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
                    except OSError as error:
                        left.append(f"{_where(entry, name)} ({error.strerror or error})")
        except OSError as error:
            left.extend(f"{_where(entry, name)} ({error.strerror or error})" for name in names)
    return left


def _sync_directories(staged: list[_Staged]) -> None:
    done = set()
    for entry in staged:
        if entry.folder in done:
            continue
        done.add(entry.folder)
        try:
            with _own_files_folder(entry) as (fd, _):
                os.fsync(fd)
        except OSError:
            pass


def replace_all(items: Sequence[Replacement], warnings: list[str] | None = None) -> list[str]:
    """Replace every item's target with its new bytes, or none; the leftovers that could not be removed.

    Raises WriteRefused (exit 1: a file must not be changed, so none was; also a folder on the
    way that is a symbolic link), WriteFailed (exit 2: the system refused a write; none was
    changed), RestoreFailed (exit 1: a replacement failed and so did putting a file back; the
    message says which file holds what) or WriteInterrupted (128 + the signal; none was changed).
    `warnings` receives one line per replaced file whose other hard links keep the old content.
    """
    _FOLDER_PROBLEMS.clear()
    _resolved.cache_clear()
    handles: dict[tuple, int] = {}
    try:
        return _replace_checked(_checked(items, warnings if warnings is not None else [], handles))
    finally:
        for fd in handles.values():
            os.close(fd)


def _replace_checked(staged: list[_Staged]) -> list[str]:
    with deferred() as held:
        caught = held.received
        try:
            _prepare(staged, caught)
            os.sync()  # every new text on disk before any rename (one call, not an fsync per file)
            try:
                _replace(staged, caught)
            except _Stopped as stop:
                raise _rolled_back(stop, staged) from None
            except KeyboardInterrupt:  # off the main thread no handler holds Ctrl-C: still put everything back
                raise _rolled_back(_Stopped("", signum=signal.SIGINT), staged) from None
            except BaseException as error:  # a bug: put everything back, then let it surface
                _rolled_back(_Stopped(f"{type(error).__name__}: {error}"), staged)
                raise
            _sync_directories(staged)
            held.take()  # a signal after the last rename: every file is written, and that is what is reported
        finally:
            left = _cleanup(staged)
    return left
