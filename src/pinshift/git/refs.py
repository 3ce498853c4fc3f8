"""Branches and other names of a repository: reading them, refusing a branch name git would refuse, moving
a branch only from where it was, pushing one.

`Refs` is part of pinshift.git.repo.Repository: it runs the repository's commands (`self.git`,
pinshift.git.run.Git) and knows its `root` and `common_dir`.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from pinshift.errors import GitError, IncompleteRun
from pinshift.git.run import GitFailed, first_line

ZERO = "0" * 40
LOCK_SUFFIX = ".lock"  # git writes `<ref>.lock` beside a loose ref before renaming it into place


class Refs:
    """The names of a repository: branches, commits named any way git reads, and branch updates."""

    # --- names and commits -------------------------------------------------------------------

    def local_branches(self) -> list[tuple[str, str]]:
        """(name, commit) of every local branch, in name order."""
        output = self.git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads")
        found = []
        for line in output.splitlines():
            commit, _, ref = line.partition(" ")
            found.append((ref.removeprefix("refs/heads/"), commit))
        return sorted(found)

    def commit_of(self, name: str) -> str | None:
        """The commit of a local branch, a remote-tracking branch or any commit-ish git's rev-parse reads
        (`HEAD~2`, `v1^{commit}`, `:/message`, `@{u}`); None when none is.

        The name is resolved first and peeled to a commit after: `:/msg^{commit}` would search for the message
        `msg^{commit}`. Callers refuse a name that starts with `-` before this (never an option to git).
        """
        for candidate in (f"refs/heads/{name}", f"refs/remotes/{name}", name):
            try:
                found = self.git("rev-parse", "--verify", "-q", "--end-of-options", candidate)
                return self.git("rev-parse", "--verify", "-q", "--end-of-options", f"{found}^{{commit}}")
            except GitFailed:
                continue
        return None

    def closest_branches(self, name: str, limit: int = 5) -> list[str]:
        """Branch names that start with `name` or look like it (for "no such branch" messages)."""
        names = self.branches()
        close = [n for n in names if n.startswith(name) and n != name]
        close += [n for n in difflib.get_close_matches(name, names, n=limit, cutoff=0.6) if n not in close]
        return close[:limit]

    def branches(self) -> list[str]:
        """Local and remote-tracking branch names (`main`, `origin/main`)."""
        output = self.git("for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes")
        names = []
        for ref in output.splitlines():
            if ref.endswith("/HEAD"):
                continue
            names.append(ref.removeprefix("refs/heads/").removeprefix("refs/remotes/"))
        return names

    def current_branch(self) -> str | None:
        """The checked-out branch, or None when HEAD is detached."""
        try:
            return self.git("symbolic-ref", "-q", "--short", "HEAD")
        except GitFailed:
            return None

    def branch_commit(self, name: str) -> str | None:
        """The commit a local branch points at, or None when there is no such branch."""
        try:
            return self.git("rev-parse", "--verify", "-q", f"refs/heads/{name}^{{commit}}")
        except GitFailed:
            return None

    def local_branch_of(self, name: str) -> str | None:
        """The local branch a base named `name` is read from (`HEAD`: the checked-out one; `refs/heads/x`: `x`),
        or None for anything else (a tag, a commit, a remote-tracking branch)."""
        if name in ("HEAD", "@"):
            return self.current_branch()
        for branch in dict.fromkeys((name, name.removeprefix("refs/heads/"))):
            if self.branch_commit(branch) is not None:
                return branch
        return None

    def has_ref(self, ref: str) -> bool:
        """Whether the full ref name `ref` (`refs/tags/v1`, `refs/remotes/origin/x`) exists."""
        return self.git.ok("show-ref", "--verify", "-q", "--", ref)

    def resolve_base(self, name: str) -> str:
        """The commit of a local branch, a remote-tracking branch or any commit-ish.

        A missing name is an error that lists the closest branch names, since
        branches get renamed (`pytorch-2.9` became `pytorch-2.9-python313`).
        """
        return self.resolve_commit(name, "base", "pass one with --from")

    def resolve_commit(self, name: str, role: str, hint: str) -> str:
        """`resolve_base` for any role: the error says "`role` 'name' is not a branch or commit ... (`hint`)"."""
        if name.startswith("-") or not name.strip():  # never an option to git, never an empty revision
            raise GitError(f"{role} '{name}' is not a branch or commit of {self.root} ({hint})")
        commit = self.commit_of(name)
        if commit is not None:
            return commit
        close = self.closest_branches(name)
        where = f"; closest branches: {', '.join(close)}" if close else f"; branches: {', '.join(self.branches()[:10])}"
        raise GitError(f"{role} '{name}' is not a branch or commit of {self.root}{where} ({hint})")

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Whether commit `older` is `newer` or one of its ancestors (`git merge-base --is-ancestor`)."""
        return self.git.ok("merge-base", "--is-ancestor", older, newer)

    def remotes(self) -> list[str]:
        return self.git("remote").split()

    def checked_out_at(self, branch: str) -> str | None:
        """The worktree (the user's or another) that has `branch` checked out, if any."""
        current = None
        for line in self.git("worktree", "list", "--porcelain").splitlines():
            if line.startswith("worktree "):
                current = line[len("worktree "):]
            elif line == f"branch refs/heads/{branch}":
                return current
        return None

    # --- a new branch ------------------------------------------------------------------------

    def check_branch_name(self, name: str) -> None:
        """Refuse, before any work, a branch name git would refuse (or read as something else) at the end.

        `@`, `@{-1}` and `HEAD` name other commits, `refs/...` would make `refs/heads/refs/...`, and a
        branch `a/b` cannot exist beside a branch `a` (nor `a` beside `a/b`): git's refs are files.
        """
        hint = "choose another name with --branch"
        if name in ("@", "HEAD") or "@{" in name or name.startswith(("refs/", "-")):
            raise GitError(f"'{name}' is not a plain branch name (git reads it as something else); {hint}")
        try:
            spelled = self.git("check-ref-format", "--branch", name)
        except GitFailed:
            raise GitError(f"'{name}' is not a valid branch name; {hint}") from None
        if spelled != name:
            raise GitError(f"'{name}' is not a plain branch name (git reads it as '{spelled}'); {hint}")
        self._check_storable(name, hint)
        existing = self.git("for-each-ref", "--format=%(refname)", "refs/heads/").splitlines()
        parts = name.split("/")
        for prefix in ("/".join(parts[:i]) for i in range(1, len(parts))):
            if f"refs/heads/{prefix}" in existing:
                raise GitError(f"branch '{name}' cannot be created: branch '{prefix}' exists, and git cannot "
                               f"have both; {hint}")
        below = [ref for ref in existing if ref.startswith(f"refs/heads/{name}/")]
        if below:
            raise GitError(f"branch '{name}' cannot be created: branch '{below[0].removeprefix('refs/heads/')}' "
                           f"exists, and git cannot have both; {hint}")

    def _check_storable(self, name: str, hint: str) -> None:
        """Refuse a name git accepts but cannot store as a file: each part of `a/b/c` is a file or directory
        name in `.git/refs/heads/`, and the last one gets `.lock` appended while it is written.

        The file system's limit (NAME_MAX, 255 bytes on Linux and macOS) less `.lock` is 250 bytes per
        part; the whole path must fit PATH_MAX. Checked on every part, so a name never fails half-way.
        """
        refs = Path(self.common_dir) / "refs" / "heads"
        try:
            name_max = os.pathconf(refs if refs.is_dir() else self.common_dir, "PC_NAME_MAX")
        except (OSError, ValueError):
            name_max = 255
        limit = name_max - len(LOCK_SUFFIX)
        for part in name.split("/"):
            size = len(part.encode("utf-8", "surrogateescape"))
            if size > limit:
                shown = part if len(part) <= 24 else f"{part[:20]}..."
                raise GitError(f"branch name too long: '{shown}' is {size} bytes, and git can store at most "
                               f"{limit} per part of a branch name; {hint}")
        path = os.fsencode(str(refs / f"{name}{LOCK_SUFFIX}"))
        try:
            path_max = os.pathconf("/", "PC_PATH_MAX")
        except (OSError, ValueError):
            path_max = 4096
        if len(path) >= path_max:
            raise GitError(f"branch name too long: with its {len(path)} bytes, the path git would write "
                           f"({refs}/...) exceeds the system's {path_max}; {hint}")

    def set_branch(self, name: str, commit: str, expected: str | None) -> None:
        """Point branch `name` at `commit`, only if it still is at `expected` (None: must not exist)."""
        try:
            self.git("update-ref", "-m", "pinshift migrate", f"refs/heads/{name}", commit, expected or ZERO)
        except GitFailed as error:
            raise GitError(f"cannot update branch {name}: {first_line(error)}") from None

    # --- a remote ----------------------------------------------------------------------------

    def push(self, remote: str, branch: str, force: bool = False) -> None:
        refspec = f"{'+' if force else ''}refs/heads/{branch}:refs/heads/{branch}"
        try:
            self.git("push", "-q", remote, refspec)
        except GitFailed as error:
            raise IncompleteRun(f"branch {branch} was created, but pushing it to {remote} failed: "
                                f"{first_line(error)} (retry with: git push {remote} {branch})") from None

    def check_push(self, remote: str, commit: str, branch: str, force: bool = False) -> None:
        """Before any work: would `git push remote commit:refs/heads/branch` be accepted? (a dry run)"""
        refspec = f"{'+' if force else ''}{commit}:refs/heads/{branch}"
        try:
            self.git("push", "--dry-run", "-q", remote, refspec)
        except GitFailed as error:
            raise GitError(f"--push {remote}: a push would fail: {first_line(error)}; nothing was done "
                           "(fix the remote or drop --push)") from None
