"""The one module that talks to git. It speaks in paths, branches and commits, never in steps.

GitPython is imported lazily so that commands which never touch git stay fast.
Commits and worktrees go through the git CLI (`repo.git.*`) so that the user's
identity, hooks, signing and configuration apply exactly as they would by hand.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pinshift.files.content import DEFAULT_MAX_BYTES, SkippedFile, check_content
from pinshift.git import entry_names
from pinshift.errors import GitError, IncompleteRun

ZERO = "0" * 40
LOCK_SUFFIX = ".lock"  # git writes `<ref>.lock` beside a loose ref before renaming it into place


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


def _checked_git(error) -> Exception:
    """The error to raise for a failed git command: the ownership refusal as one line, else the command's error."""
    return refused_by_owner(getattr(error, "stderr", None)) or error


def listed_files(directory: Path) -> list[str] | None:
    """Files under `directory` that git tracks or would track (honouring .gitignore), relative to it.

    Returns None when `directory` is not inside a git work tree, so callers can fall back
    to walking the file system. GitError for a `.git` directory (there is no work tree to list)
    and for a repository git refuses to work in (another user's: `refused_by_owner`).
    """
    import git

    try:
        repo = git.Repo(directory, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    if repo.bare or repo.working_tree_dir is None:
        return None
    if Path(directory).resolve().is_relative_to(Path(repo.git_dir).resolve()):
        raise GitError(f"{directory}: inside the repository's .git directory, which holds git's own files; run "
                       f"pinshift in the work tree ({repo.working_tree_dir})")
    # Run in `directory` itself so the paths come out relative to it.
    try:
        output = git.Git(str(directory)).ls_files("-z", "--cached", "--others", "--exclude-standard")
    except git.GitCommandError as error:
        raise _checked_git(error) from None
    return sorted({p for p in output.split("\0") if p})


# what to do when git cannot read an object of a commit (a partial clone whose remote is gone, a damaged clone)
UNREADABLE = ("fetch the objects the clone lacks (git fetch --refetch, or a full clone without --filter) and run "
              "pinshift again")


def _first_line(error) -> str:
    """The first meaningful line git printed for a failed command (`error`: GitPython's error, or git's text)."""
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


def _check_entry(commit: str, path: str, listed: bool, folders: set[str],
                 outcome: str = "nothing was written") -> None:
    """Refuse (entry_names.UnsafeEntry) a path of `commit` that must not be written: git's rules
    (`entry_names.reason`), a path listed twice, or one whose folder is not a tree of the commit (an entry
    whose own name holds `/`); `folders` holds the trees listed so far (`ls-tree -t` lists a tree first)."""
    why = entry_names.reason(path)
    if why is None and listed:
        why = "listed twice: the tree names it more than once"
    if why is None and path.rpartition("/")[0] not in folders:
        why = "a name holding '/': git's fsck refuses it"
    if why is not None:
        raise entry_names.UnsafeEntry(commit, path, why, outcome)


class CommitTree:
    """The files of one commit, read from git's object store: no worktree, nothing written.

    Symlinks and submodules are skipped with a reason: pinshift never edits through a link. A tree holding a
    path git refuses to check out (`..`, `.git`: pinshift.git.entry_names) is refused when it is listed, before
    anything is read or written (`_check_entry`).
    `prefetch(paths)` reads many blobs through one `git cat-file --batch` (one process
    instead of a round trip per file); pinshift.planning.pool calls it for each chunk of files, in
    the process that reads them. A file not prefetched is read through GitPython in the
    process that opened the repository and through a `git cat-file` of its own in any
    other, so forked workers never touch GitPython's reader, which is not fork-safe.
    """

    fork_safe = True

    def __init__(self, repo, commit: str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.max_bytes = max_bytes
        self._repo = repo
        self._pid = os.getpid()
        self._blobs: dict[str, bytes] = {}
        # path -> (mode, size, sha); sizes are asked of git only when a file is read (`_sizes`): `ls-tree --long`
        # makes git read every object's header, a quarter of a second at 10,000 files, for files that a run
        # answered from its plan memo never reads
        self._entries: dict[str, tuple[str, int | None, str]] = {}
        import git

        folders: set[str] = {""}  # the trees listed so far: every path's folder must be one
        try:
            output = repo.git.ls_tree("-r", "-t", "-z", "--full-tree", commit)
        except git.GitCommandError as error:  # a missing, damaged or hand-made tree git cannot read
            raise GitError(f"cannot read the files of {commit[:12]}: {_first_line(error)}; {UNREADABLE}") from None
        for record in output.split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, kind, sha = meta.split()
            _check_entry(commit, path, path in self._entries or path in folders, folders)
            if kind == "tree":
                folders.add(path)
            else:
                self._entries[path] = (mode, None if kind == "blob" else 0, sha)

    def _sizes(self, paths) -> None:
        """Learn the sizes of `paths` (blobs whose size is not known yet) with one `git cat-file --batch-check`."""
        unknown = [p for p in paths if p in self._entries and self._entries[p][1] is None]
        if not unknown:
            return
        for path, line in zip(unknown, self._cat_file("--batch-check", unknown).split(b"\n")):
            fields = line.split()
            if len(fields) != 3:
                raise self._missing(path)
            mode, _, sha = self._entries[path]
            self._entries[path] = (mode, int(fields[2]), sha)

    def _cat_file(self, option: str, paths: Sequence[str]) -> bytes:
        """What `git cat-file OPTION` prints for the blobs of `paths`, asked in one process."""
        shas = b"".join(self._entries[p][2].encode() + b"\n" for p in paths)
        done = subprocess.run(["git", "--git-dir", self._repo.git_dir, "cat-file", option], input=shas,
                              capture_output=True)
        if done.returncode != 0:
            raise GitError(f"git cat-file failed: {_first_line(done.stderr.decode(errors='replace'))}; {UNREADABLE}")
        return done.stdout

    def _missing(self, path: str) -> GitError:
        return GitError(f"{path}: object {self._entries[path][2]} is missing from {self._repo.git_dir} "
                        f"(a partial or damaged clone); {UNREADABLE}")

    def _size(self, path: str) -> int:
        if self._entries[path][1] is None:  # a read without a prefetch: learn every size at once, not one by one
            self._sizes([p for p, entry in self._entries.items() if entry[1] is None])
        return self._entries[path][1]

    def paths(self) -> list[str]:
        return sorted(self._entries)

    def blob_id(self, path: str) -> str | None:
        """The object id of `path` in this commit (equal ids: equal bytes), None when it has no such path."""
        entry = self._entries.get(path)
        return entry[2] if entry else None

    def memo_id(self, path: str) -> str | None:
        """The blob id of a regular file, else None; its size is not asked (a plan memo's key holds `max_bytes`:
        a blob it remembers was read within the same limit)."""
        entry = self._entries.get(path)
        if entry is None or entry[0] not in ("100644", "100755"):
            return None
        return entry[2]

    def prefetch(self, paths) -> None:
        """Read the blobs of `paths` (regular files within the size limit) in one batch."""
        candidates = [p for p in paths if p not in self._blobs and p in self._entries
                      and self._entries[p][0] not in ("120000", "160000")]
        self._sizes(candidates)
        wanted = [p for p in candidates if self._entries[p][1] <= self.max_bytes]
        if not wanted:
            return
        for path, data in self._read_batch(wanted):
            self._blobs[path] = data

    def contents(self, paths, chunk: int = 256) -> Iterator[tuple[str, bytes]]:
        """(path, bytes) of the regular files of `paths` within the size limit, read in batches of `chunk` through
        `git cat-file --batch` and never kept (a 40,000-file tree is never held whole); others are left out."""
        wanted = [p for p in paths if p in self._entries and self._entries[p][0] in ("100644", "100755")]
        for start in range(0, len(wanted), chunk):
            part = wanted[start:start + chunk]
            self._sizes(part)
            part = [p for p in part if self._entries[p][1] <= self.max_bytes]
            if not part:
                continue
            yield from self._read_batch(part)

    def _read_batch(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        """(path, bytes) of each of `paths`, from one `git cat-file --batch`."""
        output, position = self._cat_file("--batch", paths), 0
        for path in paths:
            header_end = output.index(b"\n", position)
            header = output[position:header_end].split()
            if len(header) != 3:
                raise self._missing(path)
            size = int(header[2])
            yield path, output[header_end + 1 : header_end + 1 + size]
            position = header_end + 1 + size + 1

    def mode(self, path: str) -> str | None:
        """The git mode of `path` ("100644", "100755", "120000"...), None when the commit has no such path."""
        entry = self._entries.get(path)
        return entry[0] if entry else None

    def read(self, path: str) -> bytes:
        mode, _, sha = self._entries[path]
        if mode == "120000":
            raise SkippedFile(f"{path}: symlink; skipped")
        if mode == "160000":
            raise SkippedFile(f"{path}: submodule; skipped")
        if path not in self._blobs and self._size(path) > self.max_bytes:
            raise SkippedFile(f"{path}: larger than {self.max_bytes} bytes; skipped (raise --max-bytes to include it)")
        data = self._blobs.get(path)
        if data is None and os.getpid() == self._pid:
            data = self._repo.odb.stream(bytes.fromhex(sha)).read()
        elif data is None:
            data = subprocess.run(["git", "--git-dir", self._repo.git_dir, "cat-file", "blob", sha],
                                  capture_output=True, check=True).stdout
        check_content(path, data, self.max_bytes)
        return data


class Repository:
    """A non-bare, non-shallow git repository with at least one commit, opened for a migration."""

    def __init__(self, repo):
        self.repo = repo
        self.root = Path(repo.working_tree_dir or repo.git_dir)

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path) -> Repository:
        """Open the repository at or above `directory`; GitError for every state pinshift cannot use."""
        import git

        directory = Path(directory)
        if not directory.is_dir():
            raise GitError(f"{directory}: no such directory; pass --repo DIR of your recipe repository")
        try:
            repo = git.Repo(directory, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(f"{directory}: not a git repository; run pinshift inside your recipe repository "
                           "or pass --repo DIR") from None
        if repo.bare or repo.working_tree_dir is None:
            raise GitError(f"{directory}: is a bare repository; clone it (git clone {directory}) and run "
                           "pinshift in the clone") from None
        if os.path.exists(os.path.join(repo.common_dir, "shallow")):
            raise GitError(f"{repo.working_tree_dir}: is a shallow clone; fetch the full history first "
                           "(git fetch --unshallow)")
        if not cls._commits(repo):
            raise GitError(f"{repo.working_tree_dir}: has no commits yet; commit your recipes first")
        return cls(repo)

    @staticmethod
    def _commits(repo) -> str:
        """`git rev-parse --all`: the first git command run on opening; the ownership refusal as one line."""
        import git

        try:
            return repo.git.rev_parse("--all")
        except git.GitCommandError as error:
            raise _checked_git(error) from None

    @classmethod
    def open_to_read(cls, directory: Path, what: str) -> Repository:
        """A repository pinshift only reads (`status`, another repository's pin): bare and shallow clones
        are fine. `what` starts each error (`--repo ../x`, `--align-to ../x@main`) so it names the input."""
        import git

        directory = Path(directory)
        if not directory.is_dir():
            raise GitError(f"{what}: {directory} is not a directory; give a local clone of the repository")
        try:
            repo = git.Repo(directory, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(f"{what}: {directory} is not a git repository; give a local clone of the "
                           "repository") from None
        if not cls._commits(repo):
            raise GitError(f"{what}: {repo.working_tree_dir or repo.git_dir} has no commits yet")
        return cls(repo)

    # --- names and commits -------------------------------------------------------------------

    def local_branches(self) -> list[tuple[str, str]]:
        """(name, commit) of every local branch, in name order."""
        output = self.repo.git.for_each_ref("--format=%(objectname) %(refname)", "refs/heads")
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
        import git

        for candidate in (f"refs/heads/{name}", f"refs/remotes/{name}", name):
            try:
                found = self.repo.git.rev_parse("--verify", "-q", "--end-of-options", candidate)
                return self.repo.git.rev_parse("--verify", "-q", "--end-of-options", f"{found}^{{commit}}")
            except git.GitCommandError:
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
        output = self.repo.git.for_each_ref("--format=%(refname)", "refs/heads", "refs/remotes")
        names = []
        for ref in output.splitlines():
            if ref.endswith("/HEAD"):
                continue
            names.append(ref.removeprefix("refs/heads/").removeprefix("refs/remotes/"))
        return names

    def current_branch(self) -> str | None:
        """The checked-out branch, or None when HEAD is detached."""
        import git

        try:
            return self.repo.git.symbolic_ref("-q", "--short", "HEAD")
        except git.GitCommandError:
            return None

    def branch_commit(self, name: str) -> str | None:
        """The commit a local branch points at, or None when there is no such branch."""
        import git

        try:
            return self.repo.git.rev_parse("--verify", "-q", f"refs/heads/{name}^{{commit}}")
        except git.GitCommandError:
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
        import git

        try:
            self.repo.git.show_ref("--verify", "-q", "--", ref)
        except git.GitCommandError:
            return False
        return True

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

    def check_branch_name(self, name: str) -> None:
        """Refuse, before any work, a branch name git would refuse (or read as something else) at the end.

        `@`, `@{-1}` and `HEAD` name other commits, `refs/...` would make `refs/heads/refs/...`, and a
        branch `a/b` cannot exist beside a branch `a` (nor `a` beside `a/b`): git's refs are files.
        """
        import git

        hint = "choose another name with --branch"
        if name in ("@", "HEAD") or "@{" in name or name.startswith(("refs/", "-")):
            raise GitError(f"'{name}' is not a plain branch name (git reads it as something else); {hint}")
        try:
            spelled = self.repo.git.check_ref_format("--branch", name)
        except git.GitCommandError:
            raise GitError(f"'{name}' is not a valid branch name; {hint}") from None
        if spelled != name:
            raise GitError(f"'{name}' is not a plain branch name (git reads it as '{spelled}'); {hint}")
        self._check_storable(name, hint)
        existing = self.repo.git.for_each_ref("--format=%(refname)", "refs/heads/").splitlines()
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
        refs = Path(self.repo.common_dir) / "refs" / "heads"
        try:
            name_max = os.pathconf(refs if refs.is_dir() else self.repo.common_dir, "PC_NAME_MAX")
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

    def checked_out_at(self, branch: str) -> str | None:
        """The worktree (the user's or another) that has `branch` checked out, if any."""
        current = None
        for line in self.repo.git.worktree("list", "--porcelain").splitlines():
            if line.startswith("worktree "):
                current = line[len("worktree "):]
            elif line == f"branch refs/heads/{branch}":
                return current
        return None

    def remotes(self) -> list[str]:
        return self.repo.git.remote().split()

    def check_identity(self) -> None:
        """Committing needs a user identity; say so before anything is created."""
        import git

        try:
            self.repo.git.var("GIT_COMMITTER_IDENT")
            self.repo.git.var("GIT_AUTHOR_IDENT")
        except git.GitCommandError as error:
            raise GitError(f"git cannot commit here: {_first_line(error)} (set user.name and user.email)") from None

    def check_signing(self) -> None:
        """With `commit.gpgSign` set, sign a throwaway commit before anything is created; git's message when it
        cannot (a missing key, no agent). The commit goes to a temporary object folder: the repository gets nothing.
        """
        if not self.config_bool("commit.gpgSign"):
            return
        objects = self.repo.git.rev_parse("--git-path", "objects")
        with tempfile.TemporaryDirectory(prefix="pinshift-sign-") as scratch:
            env = dict(os.environ, GIT_OBJECT_DIRECTORY=scratch,
                       GIT_ALTERNATE_OBJECT_DIRECTORIES=str(self.root / objects) if not os.path.isabs(objects)
                       else objects)

            def run(*args: str, data: bytes | None = None) -> subprocess.CompletedProcess:
                return subprocess.run(["git", *args], cwd=self.root, env=env, input=data, capture_output=True,
                                      stdin=None if data is not None else subprocess.DEVNULL)

            tree = run("mktree", data=b"")
            done = run("commit-tree", "-S", "-m", "pinshift: can git sign here?", tree.stdout.decode().strip()) \
                if tree.returncode == 0 else tree
        if done.returncode != 0:
            raise GitError(f"git cannot sign commits here (commit.gpgSign is set): {_first_line(done)}; fix the "
                           "signing key (user.signingKey) or turn commit.gpgSign off for this repository")

    def hooks_path(self) -> str | None:
        """`core.hooksPath` made absolute when it is relative, else None (git finds the hooks as usual).

        git resolves a relative hooks path against the work tree the hook runs in: in pinshift's
        temporary worktree that would be the base commit's copy, not the user's hooks.
        """
        import git

        try:
            value = self.repo.git.config("--get", "core.hooksPath")
        except git.GitCommandError:
            return None
        if not value or os.path.isabs(value) or value.startswith("~"):
            return None
        return str(self.root / value)

    def hooks_dir(self) -> Path:
        """Where `git commit` in the user's checkout looks for hooks: core.hooksPath (made absolute), else .git/hooks."""
        import git

        try:
            value = self.repo.git.config("--get", "core.hooksPath")
        except git.GitCommandError:
            value = ""
        if not value:
            return Path(self.repo.common_dir) / "hooks"
        return self.root / os.path.expanduser(value)

    def config_bool(self, key: str) -> bool:
        """A boolean git setting as git reads it (`true`, `yes`, `on`, `1`...); False when unset."""
        import git

        try:
            return self.repo.git.config("--type=bool", "--get", key) == "true"
        except git.GitCommandError:
            return False

    def short(self, commit: str) -> str:
        return self.repo.git.rev_parse("--short", commit)

    def first_parent(self, commit: str) -> str | None:
        """The commit `commit` was made on (None for a root commit or when git cannot tell)."""
        import git

        try:
            return self.repo.git.rev_parse("--verify", "-q", f"{commit}^1")
        except git.GitCommandError:
            return None

    def subject(self, commit: str) -> str:
        """The first line of `commit`'s message (empty when git cannot read it)."""
        import git

        try:
            return self.repo.git.log("-1", "--format=%s", commit)
        except git.GitCommandError:
            return ""

    def tree(self, commit: str, max_bytes: int = DEFAULT_MAX_BYTES) -> CommitTree:
        """The files of `commit`; a GitError when git cannot list them (a missing or damaged object)."""
        import git

        try:
            return CommitTree(self.repo, commit, max_bytes)
        except git.GitCommandError as error:
            raise GitError(f"cannot read the files of {commit[:12]}: {_first_line(error)}; {UNREADABLE}") from None

    def changed_files(self, base: str, target: str) -> list[FileStatus]:
        """How the files of commit `target` differ from those of `base`, as git sees it: one FileStatus per
        added, deleted, modified, renamed or copied path (`git diff --name-status -M -C --find-copies-harder`).

        The user's diff configuration (external diff, textconv, `diff.renames`) does not apply: the
        statuses are git's own rename and copy detection at its default similarity (50%).
        """
        import git

        try:
            output = self.repo.git.diff("--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", "-C",
                                        "--find-copies-harder", base, target, "--")
        except git.GitCommandError as error:  # a damaged or hand-made tree git cannot read
            raise GitError(f"cannot compare the files of {base[:12]} and {target[:12]}: "
                           f"{_first_line(error)}; {UNREADABLE}") from None
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
        import git

        fmt = "%H%x00%P%x00%s%x00%(trailers:key=Pinshift-Recipe,valueonly,separator=%x01)%x00" \
              "%(trailers:key=Pinshift-Step,valueonly,separator=%x01)"
        try:
            output = self.repo.git.log("-z", "--topo-order", f"--format={fmt}", f"{base}..{tip}", strip_newline_in_stdout=False)
        except git.GitCommandError as error:
            raise GitError(f"cannot read the commits of {base[:12]}..{tip[:12]}: {_first_line(error)}") from None
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

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Whether commit `older` is `newer` or one of its ancestors (`git merge-base --is-ancestor`)."""
        import git

        try:
            self.repo.git.merge_base("--is-ancestor", older, newer)
        except git.GitCommandError:
            return False
        return True

    # --- creating things ---------------------------------------------------------------------

    def set_branch(self, name: str, commit: str, expected: str | None) -> None:
        """Point branch `name` at `commit`, only if it still is at `expected` (None: must not exist)."""
        import git

        try:
            self.repo.git.update_ref("-m", "pinshift migrate", f"refs/heads/{name}", commit, expected or ZERO)
        except git.GitCommandError as error:
            raise GitError(f"cannot update branch {name}: {_first_line(error)}") from None

    def push(self, remote: str, branch: str, force: bool = False) -> None:
        import git

        refspec = f"{'+' if force else ''}refs/heads/{branch}:refs/heads/{branch}"
        try:
            self.repo.git.push("-q", remote, refspec)
        except git.GitCommandError as error:
            raise IncompleteRun(f"branch {branch} was created, but pushing it to {remote} failed: "
                                f"{_first_line(error)} (retry with: git push {remote} {branch})") from None

    def check_push(self, remote: str, commit: str, branch: str, force: bool = False) -> None:
        """Before any work: would `git push remote commit:refs/heads/branch` be accepted? (a dry run)"""
        import git

        refspec = f"{'+' if force else ''}{commit}:refs/heads/{branch}"
        try:
            self.repo.git.push("--dry-run", "-q", remote, refspec)
        except git.GitCommandError as error:
            raise GitError(f"--push {remote}: a push would fail: {_first_line(error)}; nothing was done "
                           "(fix the remote or drop --push)") from None


def init_repository(directory: Path, branch: str) -> Repository:
    """A new repository in `directory` whose first branch is `branch` (for `pinshift demo`).

    Gives the repository a local identity only when git has none, so the demo works
    on a fresh machine and still commits as the user where one is configured.
    """
    import git

    repo = git.Repo.init(directory, initial_branch=branch)
    repository = Repository(repo)
    try:
        repository.check_identity()
    except GitError:
        with repo.config_writer() as config:
            config.set_value("user", "name", "pinshift demo")
            config.set_value("user", "email", "demo@pinshift.invalid")
    return repository


def commit_everything(repository: Repository, message: str, branch: str | None = None) -> str:
    """Commit every file of the work tree (on a new `branch` when given); the commit id.

    Scaffolding for fixtures and the demo, not for migrations: no hooks, no signing.
    """
    git_ = repository.repo.git
    if branch is not None:
        git_.switch("-q", "-c", branch)
    git_.add("-A")
    git_.commit("-q", "--no-verify", "--no-gpg-sign", "-m", message)
    return git_.rev_parse("HEAD")


def one_line_log(repository: Repository, base: str, tip: str) -> list[str]:
    """`git log --oneline base..tip`, oldest first: the commit list a summary shows."""
    output = repository.repo.git.log("--reverse", "--format=%h %s", f"{base}..{tip}")
    return output.splitlines()


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a commit's tree, recursively listed: `mode` as git stores it (0o100755, 0o40000...)."""

    path: bytes
    mode: int
    sha: str


class MissingObject(GitError):
    """An object the clone should have but does not (a partial or damaged clone); `sha` names it."""

    def __init__(self, sha: str, message: str):
        super().__init__(message)
        self.sha = sha


def _git_output(args: list, cwd: Path | None = None, env: dict | None = None, data: bytes | None = None) -> bytes | None:
    """stdout of a git command, None when it fails (the callers say what that means)."""
    done = subprocess.run(["git", *args], cwd=cwd, env=env, input=data, capture_output=True)
    return done.stdout if done.returncode == 0 else None


class CloneReader:
    """A local clone (a nixpkgs checkout, bare or not, shallow or not), read and never written.

    Names are resolved in the clone itself (`resolve`). Objects are read through
    `objects()`: a throwaway git directory outside the clone whose only link to it is
    `objects/info/alternates`, so that, as on the server that makes GitHub's archives,
    none of the clone's configuration (`core.autocrlf`, promisor remotes: nothing is
    ever fetched), replace refs, `info/attributes`, nor the user's global or system
    git configuration and attributes apply.
    """

    def __init__(self, directory: Path, common_dir: Path):
        self.directory, self.common_dir = directory, common_dir

    @classmethod
    def open(cls, directory: Path) -> "CloneReader | None":
        """The clone at `directory` (its top or any directory in it), None when it is not a git repository."""
        done = subprocess.run(["git", "-C", str(directory), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                              capture_output=True)
        if done.returncode != 0:
            refused = refused_by_owner(done.stderr)
            if refused is not None:
                raise refused
            return None
        return cls(Path(directory), Path(done.stdout.decode().strip()))

    def shallow(self) -> bool:
        return (self.common_dir / "shallow").exists()

    def resolve(self, name: str) -> tuple[str, str | None] | None:
        """(commit id, full ref name or None for a commit id) of `name`; None when the clone has no such commit.

        `name` is anything `git rev-parse` takes (a commit id, abbreviated or not, a branch or
        a tag, annotated tags peeled); failing that, a remote-tracking branch of that name in
        exactly one remote (`nixos-unstable` is `origin/nixos-unstable` in a fresh clone).
        """
        base = ["-C", str(self.directory), "rev-parse", "--verify", "-q"]
        commit = _git_output([*base, "--end-of-options", f"{name}^{{commit}}"])
        if commit is not None:
            ref = _git_output([*base, "--symbolic-full-name", "--end-of-options", name]) or b""
            return commit.decode().strip(), ref.decode().strip() or None
        found = self.remote_branches(name)
        if len({commit for _, commit in found}) == 1:
            return found[0][1], found[0][0]
        return None

    def object_kind(self, name: str) -> str | None:
        """What `name` names once tags are peeled ("commit", "tree", "blob"); None when the clone has no such
        object."""
        peeled = _git_output(["-C", str(self.directory), "rev-parse", "--verify", "-q", "--end-of-options",
                              f"{name}^{{}}"])
        if peeled is None:
            return None
        kind = _git_output(["-C", str(self.directory), "cat-file", "-t", peeled.decode().strip()])
        return kind.decode().strip() if kind is not None else None

    def remote_branches(self, name: str) -> list[tuple[str, str]]:
        """(ref, commit) of every `refs/remotes/<remote>/<name>`."""
        output = _git_output(["-C", str(self.directory), "for-each-ref", "--format=%(refname) %(objectname)",
                              "refs/remotes/"]) or b""
        found = []
        for line in output.decode().splitlines():
            ref, _, commit = line.partition(" ")
            remote_and_name = ref.removeprefix("refs/remotes/")
            if "/" in remote_and_name and remote_and_name.split("/", 1)[1] == name:
                found.append((ref, commit))
        return found

    def objects(self) -> "ObjectStore":
        return ObjectStore(self.common_dir / "objects")


UNHASHABLE = "no hash was computed: Nix could never unpack an archive of this tree to the same files"


class ObjectStore:
    """Objects of a clone seen through a private, empty git directory (see CloneReader); use as a context manager."""

    def __init__(self, objects: Path):
        self.objects = objects
        self.git_dir: Path | None = None

    def __enter__(self) -> "ObjectStore":
        self.git_dir = Path(tempfile.mkdtemp(prefix="pinshift-objects-"))
        (self.git_dir / "objects" / "info").mkdir(parents=True)
        (self.git_dir / "refs").mkdir()
        (self.git_dir / "HEAD").write_text("ref: refs/heads/none\n")
        (self.git_dir / "objects" / "info" / "alternates").write_text(f"{self.objects.resolve()}\n")
        clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self.env = dict(clean, GIT_DIR=str(self.git_dir), GIT_INDEX_FILE=str(self.git_dir / "index"),
                        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_ATTR_NOSYSTEM="1",
                        GIT_NO_REPLACE_OBJECTS="1", GIT_TERMINAL_PROMPT="0", GIT_LITERAL_PATHSPECS="1")
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.git_dir, ignore_errors=True)

    def _run(self, args: list, data: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-c", f"core.attributesFile={os.devnull}", *args], env=self.env,
                              input=data, capture_output=True)

    def tree(self, commit: str) -> list[TreeEntry]:
        """Every entry of the commit's tree, directories included, in git's order; an entry_names.UnsafeEntry when
        one of its paths is one git refuses to check out (see `_check_entry`)."""
        done = self._run(["ls-tree", "-r", "-t", "-z", "--full-tree", commit])
        if done.returncode != 0:
            raise MissingObject(commit, f"cannot list the tree of {commit}: {done.stderr.decode(errors='replace').strip()}")
        entries, listed, folders = [], set(), {""}
        for record in done.stdout.split(b"\0"):
            if record:
                meta, path = record.split(b"\t", 1)
                mode, _, sha = meta.split(b" ")
                name = path.decode("utf-8", "surrogateescape")
                _check_entry(commit, name, name in listed, folders, UNHASHABLE)
                listed.add(name)
                if mode == b"040000":
                    folders.add(name)
                entries.append(TreeEntry(path, int(mode, 8), sha.decode()))
        return entries

    def attributes(self, commit: str, paths: list[bytes], names: tuple[str, ...]) -> dict[bytes, dict[str, str]]:
        """`git check-attr` of `names` for `paths` ("dir/" for a directory), read from the commit's own
        .gitattributes files as `git archive` reads them: {path: {name: "set"|"unset"|value}}, unspecified left out.
        """
        if self._run(["read-tree", commit]).returncode != 0:
            raise MissingObject(commit, f"cannot read the tree of {commit} into an index")
        done = self._run(["check-attr", "--cached", "-z", "--stdin", *names], b"".join(p + b"\0" for p in paths))
        if done.returncode != 0:
            raise GitError(f"git check-attr failed: {done.stderr.decode(errors='replace').strip()}")
        fields = done.stdout.split(b"\0")
        found: dict[bytes, dict[str, str]] = {}
        for index in range(0, len(fields) - 2, 3):
            path, name, value = fields[index : index + 3]
            if value != b"unspecified":
                found.setdefault(path, {})[name.decode()] = value.decode(errors="replace")
        return found

    def archived(self, commit: str, paths: list[bytes], chunk: int = 500) -> dict[bytes, bytes]:
        """The bytes `git archive` writes for these regular files (export-subst, eol, ident... applied)."""
        import io
        import tarfile

        found: dict[bytes, bytes] = {}
        for start in range(0, len(paths), chunk):
            done = self._run(["archive", "--format=tar", commit, "--", *paths[start : start + chunk]])
            if done.returncode != 0:
                raise GitError(f"git archive failed: {done.stderr.decode(errors='replace').strip()}")
            with tarfile.open(fileobj=io.BytesIO(done.stdout), mode="r:", encoding="utf-8",
                              errors="surrogateescape") as archive:
                for member in archive:
                    if member.isfile():
                        name = member.name.encode("utf-8", "surrogateescape")
                        found[name] = archive.extractfile(member).read()
        return found

    def blobs(self, shas: list[str]) -> Iterator[bytes]:
        """The contents of `shas`, in order, through one `git cat-file --batch` (streamed, never all in memory)."""
        import threading

        process = subprocess.Popen(["git", "cat-file", "--batch", "--buffer"], env=self.env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def feed() -> None:
            try:
                for sha in shas:
                    process.stdin.write(sha.encode() + b"\n")
                process.stdin.close()
            except (BrokenPipeError, ValueError):
                pass  # the reader stopped early (an error, or the consumer let go)

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for sha in shas:
                header = process.stdout.readline()
                parts = header.split()
                if len(parts) != 3 or parts[1] != b"blob":
                    raise MissingObject(sha, f"object {sha} is missing ({header.decode(errors='replace').strip() or 'no answer'})")
                size = int(parts[2])
                data = process.stdout.read(size)
                process.stdout.read(1)
                if len(data) != size:
                    raise MissingObject(sha, f"object {sha} was cut short")
                yield data
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            writer.join()
            process.stdout.close()
