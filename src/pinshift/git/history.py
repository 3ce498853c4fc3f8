"""Commits of a repository as pinshift reads them: a commit's files (`tree`: pinshift.git.objects), what
changed between two commits, the commits of a migration branch with their Pinshift trailers.

`History` is part of pinshift.git.repo.Repository: it runs the repository's commands (`self.git`,
pinshift.git.run.Git).
"""

from __future__ import annotations

from dataclasses import dataclass

from pinshift.errors import GitError
from pinshift.files.content import DEFAULT_MAX_BYTES
from pinshift.git.objects import UNREADABLE, CommitTree
from pinshift.git.run import GitFailed, first_line


@dataclass(frozen=True)
class StepRecord:
    """A commit on a migration branch as git reads it, unvetted: its parents, its subject, and the values of
    its `Pinshift-Recipe` and `Pinshift-Step` trailers (git's trailer parsing, each value as written; none
    when the commit has no such trailer). What they must say is pinshift.branches.resume's concern."""

    commit: str
    parents: tuple[str, ...]
    subject: str
    recipes: tuple[str, ...]
    steps: tuple[str, ...]

    @property
    def has_trailers(self) -> bool:
        return bool(self.recipes or self.steps)


@dataclass(frozen=True)
class FileStatus:
    """One path of `git diff --name-status` between two commits.

    `status`: "A" added, "D" deleted, "M" modified, "T" type changed, "R" renamed from `source`,
    "C" copied from `source` (which stays). `path` is the path in the later commit (for "D": the
    deleted path).
    """

    status: str
    path: str
    source: str | None = None


class History:
    """Commits: their ids, subjects, parents and files, and how two of them differ."""

    def short(self, commit: str) -> str:
        return self.git("rev-parse", "--short", commit)

    def first_parent(self, commit: str) -> str | None:
        """The commit `commit` was made on (None for a root commit or when git cannot tell)."""
        try:
            return self.git("rev-parse", "--verify", "-q", f"{commit}^1")
        except GitFailed:
            return None

    def subject(self, commit: str) -> str:
        """The first line of `commit`'s message (empty when git cannot read it)."""
        try:
            return self.git("log", "-1", "--format=%s", commit)
        except GitFailed:
            return ""

    def tree(self, commit: str, max_bytes: int = DEFAULT_MAX_BYTES) -> CommitTree:
        """The files of `commit`; a GitError when git cannot list them (a missing or damaged object)."""
        return CommitTree(self, commit, max_bytes)

    def changed_files(self, base: str, target: str) -> list[FileStatus]:
        """How the files of commit `target` differ from those of `base`, as git sees it: one FileStatus per
        added, deleted, modified, renamed or copied path (`git diff --name-status -M -C --find-copies-harder`).

        The user's diff configuration (external diff, textconv, `diff.renames`) does not apply: the
        statuses are git's own rename and copy detection at its default similarity (50%).
        """
        try:
            output = self.git("diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", "-C",
                              "--find-copies-harder", base, target, "--")
        except GitFailed as error:  # a damaged or hand-made tree git cannot read
            raise GitError(f"cannot compare the files of {base[:12]} and {target[:12]}: "
                           f"{first_line(error)}; {UNREADABLE}") from None
        fields = output.split("\0")
        found, index = [], 0
        while index < len(fields) and fields[index]:
            status = fields[index]
            if status[:1] in ("R", "C"):
                found.append(FileStatus(status[:1], fields[index + 2], fields[index + 1]))
                index += 3
            else:
                found.append(FileStatus(status[:1], fields[index + 1], None))
                index += 2
        return found

    def step_records(self, base: str, tip: str) -> list[StepRecord]:
        """Commits in base..tip, newest first (no parent before its child), with their parents, subjects and
        Pinshift trailer values.

        Fields are NUL-separated (`-z`): a subject or trailer may hold any other byte, and a commit whose
        fields do not come out as five (a NUL smuggled into a message) is a GitError, never a guess.
        """
        fmt = "%H%x00%P%x00%s%x00%(trailers:key=Pinshift-Recipe,valueonly,separator=%x01)%x00" \
              "%(trailers:key=Pinshift-Step,valueonly,separator=%x01)"
        try:
            output = self.git("log", "-z", "--topo-order", f"--format={fmt}", f"{base}..{tip}", strip_newline=False)
        except GitFailed as error:
            raise GitError(f"cannot read the commits of {base[:12]}..{tip[:12]}: {first_line(error)}") from None
        fields = output.split("\x00")
        if fields and fields[-1] == "":
            fields.pop()
        if len(fields) % 5:
            raise GitError(f"cannot read the commits of {base[:12]}..{tip[:12]}: a commit message holds a NUL byte")
        records = []
        for index in range(0, len(fields), 5):
            commit, parents, subject, recipe, step = fields[index:index + 5]
            if len(commit) not in (40, 64) or any(c not in "0123456789abcdef" for c in commit):
                raise GitError(f"cannot read the commits of {base[:12]}..{tip[:12]}: a commit message holds a NUL byte")
            records.append(StepRecord(commit, tuple(parents.split()), subject,
                                      tuple(v for v in recipe.split("\x01") if v) if recipe else (),
                                      tuple(v for v in step.split("\x01") if v) if step else ()))
        return records
