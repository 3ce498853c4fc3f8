"""Committing a migration's steps: through git's plumbing, or in a scratch worktree when hooks must run.

Part of the git layer: it speaks in trees, paths and bytes, never in steps. `open_committer` picks how:

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
The scratch worktree is pinshift.git.worktree's: locked with the run's pid/start/host, removed by
path (never `git worktree prune`); a later run removes the worktrees of killed runs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from pinshift.errors import GitError
from pinshift.git.repo import Repository
from pinshift.git.run import first_line, run, stream
from pinshift.git.worktree import (Worktree, WorktreeOwner, _process_start, add_worktree, admin_dir,
                                   remove_stale_worktrees)
from pinshift.interrupts import deferred

# callers and tests import the worktree's names from here too
__all__ = ["BlobStream", "Change", "Committer", "PlumbingCommits", "WorktreeCommits", "blob_id", "commit_hooks",
           "open_committer", "remove_stale_index_dirs", "remove_stale_worktrees", "stripspace",
           "Worktree", "_process_start", "add_worktree", "admin_dir"]

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
