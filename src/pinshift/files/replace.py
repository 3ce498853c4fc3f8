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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pinshift.errors import RestoreFailed, WriteFailed, WriteInterrupted, WriteRefused
from pinshift.files.tree import current_umask, file_kind, inode_flags, temp_beside
from pinshift.interrupts import deferred

NOTHING_CHANGED = "no file was changed"


@dataclass(frozen=True)
class Replacement:
    """One file to replace, create or remove: where it is, the bytes pinshift planned from, the bytes to write.

    `before` None: a new file (there must be none at `target`), made with git `mode`
    ("100755": executable). `after` None: the file is removed (it must still hold `before`).
    """

    shown: str  # the path as the user reads it
    target: Path  # the file itself (a symlink inside the tree already resolved)
    before: bytes | None
    after: bytes | None
    mode: str | None = None

    @property
    def creates(self) -> bool:
        return self.before is None

    @property
    def removes(self) -> bool:
        return self.after is None


@dataclass
class _Staged:
    item: Replacement
    identity: tuple | None  # what the target looked like when checked (None: there must be none); so when replaced
    like: os.stat_result | None
    temp: Path | None = None
    original: Path | None = None  # the original bytes under a second name, until every file is replaced
    replaced: bool = False
    keep: bool = False  # putting the original back failed: it must survive the cleanup


def _identity(info: os.stat_result) -> tuple:
    # not ctime or nlink: keeping the original as a hard link changes both
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode, info.st_uid, info.st_gid)


# --- 1. check ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Problem:
    reason: str
    system: bool  # True: the system cannot write here (exit 2); False: the file must not be changed (exit 1)


def _read_regular(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _check(item: Replacement) -> _Problem | os.stat_result | None:
    """The target's stat when it may be replaced (None for a new file that may be made), else the problem."""
    shown, target = item.shown, item.target
    if item.creates:
        if os.path.lexists(target):
            return _Problem(f"{shown}: already exists; left alone (move it away first)", False)
        return _may_write_in(shown, target.parent)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return _Problem(f"{shown}: deleted since pinshift read it; not recreated", False)
    except OSError as error:
        return _Problem(f"{shown}: cannot check it ({error.strerror or error})", True)
    if not stat.S_ISREG(info.st_mode):
        return _Problem(f"{shown}: replaced by {file_kind(info.st_mode)} since pinshift read it; left alone", False)
    try:
        current = _read_regular(target)
    except OSError as error:
        return _Problem(f"{shown}: cannot read it again ({error.strerror or error})", True)
    if current != item.before:
        return _Problem(f"{shown}: changed since pinshift read it; run pinshift again", False)
    return _may_write(shown, target, info) or info


def _may_write(shown: str, target: Path, info: os.stat_result) -> _Problem | None:
    """Why `target` must not or cannot be replaced by this user, judged as `chmod`, `chattr` and mounts say.

    Root could write a mode 444 file, and rename over an immutable one's siblings: the mode
    bits and flags are read here, not left to open() or rename() to enforce.
    """
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o222:
        return _Problem(f"{shown}: read-only (mode {mode:04o}); make it writable (chmod u+w) to let pinshift "
                        "change it", False)
    flags = inode_flags(target)
    if flags:
        flag = sorted(flags)[0]
        option = "i" if flag == "immutable" else "a"
        return _Problem(f"{shown}: {flag} (chattr +{option}); remove the flag (chattr -{option}) to let pinshift "
                        "change it", False)
    problem = _may_write_in(shown, target.parent)
    if problem is not None:
        return problem
    if not os.access(target, os.W_OK):
        return _Problem(f"{shown}: not writable by this user (mode {mode:04o}, owner uid {info.st_uid})", False)
    if os.geteuid() != 0 and (info.st_uid != os.geteuid() or info.st_gid not in {os.getegid(), *os.getgroups()}):
        return _Problem(f"{shown}: owned by uid {info.st_uid} gid {info.st_gid}; a rewritten file would change "
                        "hands, so it is left alone", False)
    return None


def _may_write_in(shown: str, directory: Path) -> _Problem | None:
    """Why no file can be made or replaced in `directory` (a read-only mount, chattr +i, permissions)."""
    problem = _directory_problem(directory)
    return _Problem(f"{shown}: {problem.reason}", problem.system) if problem is not None else None


@functools.lru_cache(maxsize=256)
def _directory_problem(directory: Path) -> _Problem | None:
    """`_may_write_in` for one directory, asked once per directory and run (`replace_all` clears the cache)."""
    try:
        read_only_mount = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_mount = False
    if read_only_mount:
        return _Problem("on a read-only file system", True)
    if "immutable" in inode_flags(directory):
        return _Problem(f"its directory {directory} is immutable (chattr +i)", True)
    if not os.path.isdir(directory):
        return _Problem(f"its directory {directory} does not exist", True)
    if not os.access(directory, os.W_OK | os.X_OK):
        return _Problem(f"its directory {directory} is not writable by this user", True)
    return None


def _checked(items: Sequence[Replacement]) -> list[_Staged]:
    staged, problems = [], []
    for item in items:
        result = _check(item)
        if isinstance(result, _Problem):
            problems.append(result)
        else:
            staged.append(_Staged(item, _identity(result) if result is not None else None, result))
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


def _keep_original(entry: _Staged) -> Path:
    """The original under a second name beside it: a hard link, or a copy where links are not possible."""
    target = entry.item.target
    for _ in range(100):
        name = target.parent / f".{target.name}.{secrets.token_hex(4)}.pinshift-orig"
        try:
            os.link(target, name, follow_symlinks=False)
            return name
        except FileExistsError:
            continue
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS,
                                   errno.EXDEV):
                raise
            break
    return temp_beside(target, entry.item.before, entry.like, suffix=".pinshift-orig")


def _prepare(staged: list[_Staged], caught: list[int]) -> None:
    for entry in staged:
        if caught:
            raise _interrupted(caught[0], NOTHING_CHANGED)
        try:
            if not entry.item.removes:
                entry.temp = temp_beside(entry.item.target, entry.item.after, entry.like, durable=False)
                if entry.item.creates and entry.item.mode == "100755":
                    os.chmod(entry.temp, 0o777 & ~current_umask())
            if not entry.item.creates:
                entry.original = _keep_original(entry)
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
        if not _unchanged(entry):
            raise _Stopped(f"{entry.item.shown}: changed while pinshift was writing; left alone", refused=True)
        try:
            if entry.item.creates:
                os.link(entry.temp, entry.item.target)  # fails, rather than overwrite, should a file appear now
                os.unlink(entry.temp)
            elif entry.item.removes:
                os.unlink(entry.item.target)
            else:
                os.replace(entry.temp, entry.item.target)
        except OSError as error:
            verb = "create" if entry.item.creates else "remove" if entry.item.removes else "replace"
            raise _Stopped(f"{entry.item.shown}: cannot {verb} it ({error.strerror or error})") from None
        entry.replaced, entry.temp = True, None


def _unchanged(entry: _Staged) -> bool:
    """The target is still what phase 1 checked: no file for a new one; else the same file with the same bytes.

    Stat identity alone misses a file rewritten in place with its size and mtime put back (issue 28 §3): the
    bytes are read and compared right before the rename, as black does before it writes."""
    target = entry.item.target
    if entry.identity is None:
        return not os.path.lexists(target)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        if _identity(os.fstat(fd)) != entry.identity:
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
            if entry.item.creates:
                os.unlink(entry.item.target)
            else:
                os.replace(entry.original, entry.item.target)
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
                            f"its original is {e.original})" for e, why in failed)
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
        for path in (entry.temp, None if entry.keep else entry.original):
            if path is None:
                continue
            try:
                path.unlink(missing_ok=True)
            except OSError as error:
                left.append(f"{path} ({error.strerror or error})")
    return left


def _sync_directories(staged: list[_Staged]) -> None:
    for directory in sorted({e.item.target.parent for e in staged}):
        try:
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def replace_all(items: Sequence[Replacement]) -> list[str]:
    """Replace every item's target with its new bytes, or none; the leftovers that could not be removed.

    Raises WriteRefused (exit 1: a file must not be changed, so none was), WriteFailed
    (exit 2: the system refused a write; none was changed), RestoreFailed (exit 1: a
    replacement failed and so did putting a file back; the message says which file
    holds what) or WriteInterrupted (128 + the signal; none was changed).
    """
    _directory_problem.cache_clear()
    staged = _checked(items)
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
