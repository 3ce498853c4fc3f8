"""Committing a migration's steps: through git's plumbing, or in a scratch worktree when hooks must run.

Part of the git layer (with pinshift.git.repo): it speaks in trees, paths and bytes, never
in steps. `open_committer` picks how:

- **Plumbing** (`PlumbingCommits`), when `git commit` would run no hook: the changed blobs go
  into the object store through one `git fast-import`, each step's tree is built from the one
  before with a private index (`GIT_INDEX_FILE`, `git update-index --index-info`, `git
  write-tree`), and `git commit-tree` makes the commit with the user's identity and, when
  `commit.gpgSign` asks, their signature. Nothing is checked out; the message is cleaned
  as `git commit --cleanup=whitespace` cleans it.
- **A scratch worktree** (`Worktree`), when the repository has a `pre-commit`,
  `prepare-commit-msg`, `commit-msg` or `post-commit` hook that `git commit` would run: the
  planned bytes are written into a temporary checkout and committed by `git commit` itself,
  so the hooks see and may change what they would by hand.

Both give the same trees, messages, authors and committers (tests/test_plumbing_commits.py).
The scratch worktree is locked with the run's pid/start/host, removed by path (never
`git worktree prune`), and a later run removes the worktrees of killed runs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pinshift.errors import GitError
from pinshift.git import entry_names
from pinshift.git.repo import Repository
from pinshift.git.run import first_line, run, stream
from pinshift.interrupts import deferred

ZERO = "0" * 40
COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")
SKIPPED_BY_NO_VERIFY = ("pre-commit", "commit-msg")


class Change(Protocol):
    """One path of a step's tree: new bytes (or None: deleted), and a git mode for a new path."""

    path: str
    data: bytes | None
    mode: str | None


class Committer(Protocol):
    def commit(self, changes: Iterable[Change], message: str) -> str: ...

    def close(self) -> None: ...


def commit_hooks(repository: Repository, no_verify: bool = False) -> list[str]:
    """The hooks `git commit` would run here (executable files in the hooks directory), in git's order."""
    directory = repository.hooks_dir()
    skipped = SKIPPED_BY_NO_VERIFY if no_verify else ()
    return [name for name in COMMIT_HOOKS if name not in skipped
            and os.path.isfile(directory / name) and os.access(directory / name, os.X_OK)]


def open_committer(repository: Repository, start: str, no_verify: bool = False) -> Committer:
    """Plumbing commits from `start`, or a scratch worktree when `git commit` would run a hook."""
    if commit_hooks(repository, no_verify):
        return WorktreeCommits(add_worktree(repository, start), no_verify)
    return PlumbingCommits(repository, start)


def stripspace(message: str) -> str:
    """The message as `git commit --cleanup=whitespace` stores it (git's strbuf_stripspace without comments).

    Trailing whitespace of each line goes, runs of empty lines become one, leading and
    trailing empty lines go, and the message ends with one newline (empty stays empty).

    Examples:
        >>> stripspace("\n\nSubject  \n\n\n\nbody\t\n\n")
        'Subject\n\nbody\n'
    """
    out: list[str] = []
    pending_empty = False
    for line in message.split("\n"):
        line = line.rstrip(" \t\n\r\v\f")
        if not line:
            pending_empty = bool(out)
            continue
        if pending_empty:
            out.append("")
            pending_empty = False
        out.append(line)
    return "\n".join(out) + "\n" if out else ""


# --- plumbing -------------------------------------------------------------------------------------


def blob_id(data: bytes) -> str:
    """git's object id of a blob holding `data` (sha1 of `blob <size>\\0<data>`)."""
    import hashlib

    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


class BlobStream:
    """New blobs written into the object store through one `git fast-import` (one new pack), as they come.

    `add(data)` queues `data` unless this stream has queued the same blob already, and returns its id; about
    64 KiB of whole records at a time go to git, each chunk with signals held (`deferred`), so the stream
    always ends on a record's end. Leaving the `with` block ends the stream and waits for git, raising
    GitError if it failed. On an exception (Ctrl-C included) the stream is ended all the same, so git closes
    a valid pack and leaves no temporary file or crash report; nothing refers to its blobs (`git gc` prunes
    them). git runs in a process group of its own: a terminal's Ctrl-C reaches pinshift alone, which ends
    the stream.
    """

    CHUNK = 1 << 16

    def __init__(self, root: Path, env: dict[str, str]):
        self._root, self._env = root, env
        self._sent: set[str] = set()
        self._queued = bytearray()  # whole records not yet sent
        self._process: subprocess.Popen | None = None
        self._errors = None

    def __enter__(self) -> "BlobStream":
        return self

    def add(self, data: bytes) -> str:
        sha = blob_id(data)
        if sha not in self._sent:
            self._queued += b"blob\ndata %d\n%b\n" % (len(data), data)  # one record, appended whole
            self._sent.add(sha)
            if len(self._queued) >= self.CHUNK:
                self._send()
        return sha

    def _send(self) -> None:
        """Send the queued records whole: a signal that arrives meanwhile is raised once they are sent."""
        with deferred():
            if self._process is None:
                self._errors = tempfile.TemporaryFile()  # a file, not a pipe: git's messages can never block it
                self._process = stream(
                    ["-c", "pack.compression=1", "fast-import", "--quiet", "--done"], cwd=self._root,
                    env=self._env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._errors,
                    process_group=0)
            chunk = memoryview(bytes(self._queued))
            self._queued.clear()
            try:
                while chunk:
                    chunk = chunk[os.write(self._process.stdin.fileno(), chunk):]
            except BrokenPipeError:  # git stopped reading: it failed
                self._end(ending=None)

    def _end(self, ending: bytes | None) -> None:
        """Write `ending`, close the stream and wait for git; GitError unless git stored everything."""
        process, self._process = self._process, None
        try:
            if ending is not None:
                os.write(process.stdin.fileno(), ending)
        except BrokenPipeError:
            ending = None
        finally:
            process.stdin.close()
            code = process.wait()
            self._errors.seek(0)
            message = self._errors.read().decode("utf-8", "replace")
            self._errors.close()
        if code != 0 or ending is None:
            raise GitError(f"git fast-import failed: {first_line(message) if message.strip() else f'exit {code}'}")

    def __exit__(self, kind, error, trace) -> None:
        if kind is None:
            if self._queued:
                self._send()
            if self._process is not None:
                with deferred():
                    self._end(b"done\n")
            return
        if self._process is None:
            return
        with deferred() as late:  # an error or interrupt under way: end the stream cleanly, say nothing more
            try:
                self._end(b"done\n")
            except GitError:
                pass
            late.take()


class PlumbingCommits:
    """Commits built from objects: blobs by `git fast-import`, trees from a private index, `git commit-tree`.

    Each `commit(changes, message)` makes one commit on top of the last (the first on
    `start`) and returns its id. `close()` removes the private index.
    """

    def __init__(self, repository: Repository, start: str):
        self.repository, self.head = repository, start
        pid = os.getpid()  # named after this run, so that a later run can tell it was left by a killed one
        self._scratch = Path(tempfile.mkdtemp(prefix=f"pinshift-index-{pid}-{_process_start(pid) or '-'}-"))
        self._env = dict(os.environ, GIT_INDEX_FILE=str(self._scratch / "index"))
        self._modes: dict[str, str] | None = None
        try:
            self._git("read-tree", start)
            self._sign = repository.config_bool("commit.gpgSign")
        except BaseException:
            self.close()
            raise

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        done = run(list(args), cwd=self.repository.root, env=self._env, data=data)
        if done.returncode != 0:
            raise GitError(f"git {args[0]} failed: {first_line(done)}")
        return done.stdout

    def _mode(self, path: str) -> str | None:
        if self._modes is None:
            listing = self._git("ls-files", "-s", "-z")
            self._modes = {}
            for record in listing.split(b"\0"):
                if record:
                    meta, name = record.split(b"\t", 1)
                    self._modes[name.decode("utf-8", "surrogateescape")] = meta.split()[0].decode()
        return self._modes.get(path)

    def commit(self, changes: Iterable[Change], message: str) -> str:
        """Commit `changes` on top of the last commit. They are read once, as they come: each new blob goes
        straight into `git fast-import`, so a step of 40,000 distinct files never holds their bytes at once."""
        lines = bytearray()
        with BlobStream(self.repository.root, self._env) as blobs:
            for change in changes:
                name = change.path.encode("utf-8", "surrogateescape")
                data = change.data
                if data is None:
                    lines += b"0 " + ZERO.encode() + b"\t" + name + b"\0"
                    if self._modes is not None:
                        self._modes.pop(change.path, None)
                    continue
                sha = blobs.add(data)
                mode = change.mode or self._mode(change.path) or "100644"
                lines += mode.encode() + b" " + sha.encode() + b"\t" + name + b"\0"
                if self._modes is not None:
                    self._modes[change.path] = mode
        self._git("update-index", "-z", "--index-info", data=bytes(lines))
        tree = self._git("write-tree").decode().strip()
        args = ["commit-tree", tree, "-p", self.head, "-F", "-"]
        if self._sign:
            args.insert(1, "-S")
        # a file name that is not UTF-8 is shown as `\xff` in the message, as in every report (git wants UTF-8)
        shown = stripspace(message).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        self.head = self._git(*args, data=shown.encode("utf-8")).decode().strip()
        return self.head

    def close(self) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)


class WorktreeCommits:
    """Commits made by `git commit` in a scratch worktree (hooks run as they would by hand)."""

    def __init__(self, worktree: Worktree, no_verify: bool):
        self.worktree, self.no_verify = worktree, no_verify

    def commit(self, changes: Iterable[Change], message: str) -> str:
        paths = []
        for change in changes:
            data = change.data
            if data is None:
                self.worktree.delete(change.path)
            elif change.mode is not None:
                self.worktree.create(change.path, data, change.mode)
            else:
                self.worktree.write(change.path, data)
            paths.append(change.path)
        return self.worktree.commit(paths, message, self.no_verify)

    def close(self) -> None:
        self.worktree.remove()


# --- the scratch worktree -------------------------------------------------------------------------


def add_worktree(repository: Repository, start: str) -> Worktree:
    """A temporary worktree, outside the user's working tree, detached at `start`, locked as pinshift's.

    The lock's reason names this process (`pinshift pid=… start=… host=…`), so a later run
    can tell a worktree left by a killed run from a live one (`remove_stale_worktrees`).
    Signals wait until git is done, and any failure removes exactly what was made.
    The scratch checkout runs no post-checkout hook: it is not a checkout of the user's.
    """
    parent = Path(tempfile.mkdtemp(prefix="pinshift-"))
    worktree = Worktree(repository, parent / "worktree", parent)
    try:
        with deferred():
            result = run(["-c", "core.sparseCheckout=false", "-c", f"core.hooksPath={os.devnull}",
                          "worktree", "add", "--detach", "--lock", "--reason", owner_mark(), "-q",
                          str(worktree.path), start], cwd=repository.root, text=True)
        if result.returncode != 0:
            raise GitError(f"cannot create a temporary worktree: {first_line(result)}")
    except BaseException:
        worktree.remove()
        raise
    return worktree


def admin_dir(repository: Repository, worktree_path: Path) -> Path | None:
    """The `.git/worktrees/<id>` directory git keeps for the worktree at `worktree_path`, if any."""
    wanted = os.path.realpath(worktree_path / ".git")
    for admin in _admin_dirs(repository):
        try:
            gitdir = (admin / "gitdir").read_text().strip()
        except OSError:
            continue
        if os.path.realpath(gitdir) == wanted:
            return admin
    return None


def _admin_dirs(repository: Repository) -> list[Path]:
    folder = Path(repository.common_dir) / "worktrees"
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def remove_stale_index_dirs() -> list[str]:
    """Remove the private index directories (`$TMPDIR/pinshift-index-<pid>-<start>-*`) of runs that were killed."""
    removed = []
    for directory in sorted(Path(tempfile.gettempdir()).glob("pinshift-index-*")):
        parts = directory.name.removeprefix("pinshift-index-").split("-")
        if len(parts) < 3 or not parts[0].isdigit() or not directory.is_dir():
            continue
        owner = WorktreeOwner(int(parts[0]), parts[1], socket.gethostname())
        if not owner.alive():
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(f"removed the commit index left by an earlier pinshift run (pid {owner.pid}, no longer "
                           f"running): {directory}")
    return removed


def remove_stale_worktrees(repository: Repository) -> list[str]:
    """Remove the worktrees earlier pinshift runs left when they were killed; one line per worktree.

    Only worktrees locked with pinshift's mark whose process is gone (same host, no
    process with that pid and start time) are touched; a live run's worktree, and every
    worktree pinshift did not make, stay exactly as they are. Never `git worktree prune`.
    """
    removed = []
    for admin in _admin_dirs(repository):
        try:
            reason = (admin / "locked").read_text().strip()
        except OSError:
            continue
        owner = WorktreeOwner.parse(reason)
        if owner is None or owner.alive():
            continue
        try:
            gitdir = Path((admin / "gitdir").read_text().strip())
        except OSError:
            gitdir = None
        where = str(gitdir.parent) if gitdir is not None else admin.name
        if gitdir is not None and gitdir.parent.name == "worktree" and gitdir.parent.parent.name.startswith("pinshift-"):
            shutil.rmtree(gitdir.parent.parent, ignore_errors=True)
        shutil.rmtree(admin, ignore_errors=True)
        removed.append(f"removed a worktree left by an earlier pinshift run (pid {owner.pid}, no longer "
                       f"running): {where}")
    return removed



class Worktree:
    """pinshift's temporary checkout where a migration writes and commits; `remove()` leaves no trace.

    Every git command here runs with sparse checkout off (the scratch checkout holds every
    file whatever the user's sparse patterns) and with the user's hooks: a relative
    `core.hooksPath` is resolved against the user's work tree, as their own commit would.
    """

    def __init__(self, repository: Repository, path: Path, parent: Path):
        self.repository, self.path, self.parent = repository, path, parent

    def _settings(self) -> list[str]:
        settings = ["-c", "core.sparseCheckout=false"]
        hooks = self.repository.hooks_path()
        if hooks is not None:
            settings += ["-c", f"core.hooksPath={hooks}"]
        return settings

    def _git(self, *args: str) -> str:
        result = run([*self._settings(), *args], cwd=self.path, text=True)
        if result.returncode != 0:
            raise GitError(f"git {args[0]} failed: {first_line(result)}")
        return result.stdout.strip()

    def _checked(self, path: str) -> str:
        """`path`, when git's rules let it become a file of this checkout (entry_names); else a GitError."""
        why = entry_names.reason(path)
        if why is not None:
            raise GitError(f"cannot write {entry_names.shown(path)} in the scratch worktree: {why}; "
                           "nothing was committed")
        return path

    def write(self, path: str, data: bytes) -> None:
        """Overwrite a checked-out file in place (it keeps its mode).

        No temp file, rename or fsync: this checkout is ours alone and thrown away, and git
        stores the bytes at commit time; O_NOFOLLOW keeps the write off any symlink.
        """
        fd = os.open(self.path / self._checked(path), os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)

    def create(self, path: str, data: bytes, mode: str) -> None:
        """Write a file the commit adds (a renamed or cloned recipe) with git mode `mode`, creating directories.

        No directory on the way may be a symlink: a new file never lands outside this checkout.
        """
        target = self.path / self._checked(path)
        directory = self.path
        for part in Path(path).parts[:-1]:
            directory = directory / part
            if directory.is_symlink():
                raise GitError(f"cannot write {path}: {directory.relative_to(self.path)} is a symlink")
            directory.mkdir(exist_ok=True)
        permissions = 0o755 if mode == "100755" else 0o644
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, permissions)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), permissions)
            handle.write(data)

    def delete(self, path: str) -> None:
        """Remove a checked-out file (the link itself for a symlink) and the directories it leaves empty."""
        target = self.path / self._checked(path)
        os.unlink(target)
        directory = target.parent
        while directory != self.path and not any(directory.iterdir()):
            directory.rmdir()
            directory = directory.parent

    def commit(self, paths: list[str], message: str, no_verify: bool = False) -> str:
        """Stage `paths` (changes, additions and deletions) and commit them through git; the new commit id.

        Hooks, identity and signing apply. Paths are literal: `[` or `*` in a name is not a glob.
        """
        self._git("add", "-A", "--", *[f":(literal){p}" for p in paths])
        args = ["commit", "-q", "--cleanup=whitespace", "-m", message]
        if no_verify:
            args.append("--no-verify")
        try:
            self._git(*args)
        except GitError as error:
            raise GitError(f"git commit failed: {str(error).removeprefix('git commit failed: ')}") from None
        return self.head()

    def head(self) -> str:
        return self._git("rev-parse", "HEAD")

    def remove(self) -> None:
        """Remove this worktree's directory and its own `.git/worktrees/<id>`, nothing else (no prune).

        Signals wait until both are gone: a stop arriving in between (a fan-out's worker gets SIGTERM while it
        cleans up after a Ctrl-C) left `.git/worktrees/<id>` behind with its directory removed."""
        with deferred():
            admin = admin_dir(self.repository, self.path)
            shutil.rmtree(self.parent, ignore_errors=True)
            if admin is not None:
                shutil.rmtree(admin, ignore_errors=True)


# --- who made a worktree ----------------------------------------------------------------------


def _process_start(pid: int) -> str:
    """The start time of process `pid` (clock ticks since boot, from /proc), or "" where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return ""
    fields = data.rsplit(b")", 1)[-1].split()
    return fields[19].decode() if len(fields) > 19 else ""


def owner_mark() -> str:
    """The lock reason of this process's worktrees: `pinshift pid=<pid> start=<ticks> host=<name>`."""
    pid = os.getpid()
    return f"pinshift pid={pid} start={_process_start(pid) or '-'} host={socket.gethostname()}"


@dataclass(frozen=True)
class WorktreeOwner:
    """The pinshift process a worktree's lock names."""

    pid: int
    start: str
    host: str

    @classmethod
    def parse(cls, reason: str) -> WorktreeOwner | None:
        words = reason.split()
        if not words or words[0] != "pinshift":
            return None
        fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if not fields.get("pid", "").isdigit() or "host" not in fields:
            return None
        return cls(int(fields["pid"]), fields.get("start", "-"), fields["host"])

    def alive(self) -> bool:
        """False only when this host has no process `pid` that started when the owner did."""
        if self.host != socket.gethostname():
            return True  # another machine's run (a shared file system): cannot tell, leave it
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        started = _process_start(self.pid)
        return not (self.start != "-" and started and started != self.start)


# --- a clone read through its objects only (pinshift hash, pin-swap hash = "compute") -------------


