"""The one place pinshift starts git, and how git's failures read.

`run` runs a command to its end with its output captured; `stream` starts one whose input or output is
streamed (`git fast-import`, `git cat-file --batch`). Both take git's arguments and the caller's working
directory and environment as they are: what a command sees (the user's configuration and hooks for a
commit, an empty configuration for a clone read through its objects) is the caller's decision, spelled
where it calls. git never reads the terminal: its input is the bytes given, or nothing.

`Git` runs the commands of one repository as pinshift always ran them (through GitPython until issue
43): in its work tree (its git directory when bare), with the caller's environment plus `LANGUAGE=C` and
`LC_ALL=C`, so that git's messages are the English ones pinshift reads (`refused_by_owner`); the output
is text with its one trailing newline removed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from pinshift.errors import GitError

ENGLISH = {"LANGUAGE": "C", "LC_ALL": "C"}


def run(args: list, *, cwd: Path | str | None = None, env: dict | None = None, data: bytes | str | None = None,
        text: bool = False) -> subprocess.CompletedProcess:
    """`git ARGS`, run to its end: its exit code, stdout and stderr (bytes, or str with `text`)."""
    return subprocess.run(["git", *args], cwd=cwd, env=env, input=data, capture_output=True, text=text,
                          stdin=None if data is not None else subprocess.DEVNULL)


def stream(args: list, *, cwd: Path | str | None = None, env: dict | None = None, **streams) -> subprocess.Popen:
    """`git ARGS` started with the `streams` given (stdin, stdout, stderr, process_group...), for the caller to
    feed, read and wait for."""
    return subprocess.Popen(["git", *args], cwd=cwd, env=env, **streams)


class GitFailed(Exception):
    """A git command of `Git` that exited with an error; `stderr` and `stdout` as git wrote them."""

    def __init__(self, args: tuple, done: subprocess.CompletedProcess):
        super().__init__(f"git {' '.join(map(str, args))} failed (exit code {done.returncode})")
        self.status, self.stderr, self.stdout = done.returncode, done.stderr, done.stdout


class Git:
    """The commands of one repository (see the module's docstring): `git(*args)` is their output."""

    def __init__(self, cwd: Path | str):
        self.cwd = cwd

    def __call__(self, *args: str, strip_newline: bool = True) -> str:
        """The command's stdout as text (`surrogateescape`: any byte survives); GitFailed when it fails."""
        done = run(list(args), cwd=self.cwd, env=dict(os.environ, **ENGLISH))
        if done.returncode != 0:
            raise GitFailed(args, done)
        output = done.stdout.decode("utf-8", "surrogateescape")
        return output[:-1] if strip_newline and output.endswith("\n") else output

    def ok(self, *args: str) -> bool:
        """Whether the command succeeds (`merge-base --is-ancestor`, `show-ref --verify`)."""
        try:
            self(*args)
        except GitFailed:
            return False
        return True


_DUBIOUS = "detected dubious ownership in repository at '"


def refused_by_owner(stderr: str | bytes | None) -> GitError | None:
    """git's refusal of a repository another user owns (its `safe.directory` check), as one line saying how
    the user allows it; None for any other failure. pinshift never sets safe.directory itself."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else (stderr or "")
    start = text.find(_DUBIOUS)
    if start < 0:
        return None
    path = text[start + len(_DUBIOUS):].split("'", 1)[0]
    import shlex

    return GitError(f"{path}: git refuses to work in a repository owned by another user; if you trust it, allow it "
                    f"with `git config --global --add safe.directory {shlex.quote(path)}` and run pinshift again")


def checked_git(error) -> Exception:
    """The error to raise for a failed git command: the ownership refusal as one line, else the command's error."""
    return refused_by_owner(getattr(error, "stderr", None)) or error


def first_line(error) -> str:
    """The first meaningful line git printed for a failed command (`error`: a GitFailed, a finished command, or
    git's text)."""
    if isinstance(error, bytes):
        error = error.decode("utf-8", "replace")
    if isinstance(error, str):
        text = error
    else:
        text = getattr(error, "stderr", "") or getattr(error, "stdout", "") or str(error)
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
    text = str(text).strip()
    lines = [line.strip().removeprefix("stderr: ").strip("'").strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("hint:", "Cmd('git')"))]
    return lines[0] if lines else "git failed"
