"""pinshift's scratch worktree, where `git commit` runs when hooks must (pinshift.git.commit), and the
worktrees of killed runs.

The scratch worktree is made outside the user's working tree, detached, and locked with the run's
pid/start/host (`owner_mark`); it is removed by path with its own `.git/worktrees/<id>` (never `git worktree
prune`), and a later run removes only the worktrees whose lock names a process that is gone
(`remove_stale_worktrees`). Every other worktree, the user's included, is never touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pinshift.errors import GitError
from pinshift.git import entry_names
from pinshift.git.repo import Repository
from pinshift.git.run import first_line, run
from pinshift.interrupts import deferred


def add_worktree(repository: Repository, start: str) -> Worktree:
    """A temporary worktree, outside the user's working tree, detached at `start`, locked as pinshift's.

    The lock's reason names this process (`pinshift pid=… start=… host=…`), so a later run
    can tell a worktree left by a killed run from a live one (`remove_stale_worktrees`).
    The worktree is recorded as this process's (`remove_own_worktrees`) before git makes any of it, and
    signals wait until git is done: a signal that stops the caller before it holds the `Worktree` (between
    this return and its `try`) still finds it recorded. Any failure removes exactly what was made.
    The scratch checkout runs no post-checkout hook: it is not a checkout of the user's.
    """
    worktree = None
    try:
        with deferred():
            parent = Path(tempfile.mkdtemp(prefix="pinshift-"))
            worktree = Worktree(repository, parent / "worktree", parent)
            _OWN[parent] = (os.getpid(), worktree)
            result = run(["-c", "core.sparseCheckout=false", "-c", f"core.hooksPath={os.devnull}",
                          "worktree", "add", "--detach", "--lock", "--reason", owner_mark(), "-q",
                          str(worktree.path), start], cwd=repository.root, text=True)
        if result.returncode != 0:
            raise GitError(f"cannot create a temporary worktree: {first_line(result)}")
    except BaseException:
        if worktree is not None:
            worktree.remove()
        raise
    return worktree


# The scratch worktrees this process made and has not removed yet: parent directory -> (pid, Worktree). A
# forked fan-out worker inherits its parent's entries; the pid says whose each one is.
_OWN: dict[Path, tuple[int, Worktree]] = {}


def remove_own_worktrees() -> None:
    """Remove every scratch worktree this process made and still holds (`Worktree.remove`), whether or not
    its caller ever got it: what a cleanup runs when a signal may have landed between `add_worktree` and the
    caller's `try`. Worktrees of other processes, and every worktree pinshift did not make, stay."""
    with deferred() as late:
        for parent, (pid, worktree) in list(_OWN.items()):
            if pid == os.getpid():
                worktree.remove()
        late.take()


def admin_dir(repository: Repository, worktree_path: Path) -> Path | None:
    """The `.git/worktrees/<id>` directory git keeps for the worktree at `worktree_path`, if any.

    One git was stopped in before it wrote `gitdir` (a SIGKILL: on SIGINT and SIGTERM git removes it
    itself) is found by its lock: git writes `locked` first, with this process's `owner_mark`, and a process
    makes one worktree at a time.
    """
    wanted = os.path.realpath(worktree_path / ".git")
    mark = owner_mark()
    half_made = None
    for admin in _admin_dirs(repository):
        try:
            gitdir = (admin / "gitdir").read_text().strip()
        except FileNotFoundError:
            try:
                if (admin / "locked").read_text().strip() == mark:
                    half_made = admin
            except OSError:
                pass
            continue
        except OSError:
            continue
        if os.path.realpath(gitdir) == wanted:
            return admin
    return half_made


def _admin_dirs(repository: Repository) -> list[Path]:
    folder = Path(repository.common_dir) / "worktrees"
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


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
            _OWN.pop(self.parent, None)


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
