"""A recipe repository opened for a migration or a read: `Repository`, and the files git lists in a work tree.

`Repository` is what callers hold: it finds and opens the repository (`open`, `open_to_read`), and its
methods come from the modules of each concern: `refs` (branches and names), `history` (commits, their
files and differences), `config` (identity, signing, hooks). Every command runs through
pinshift.git.run; the repository's own (`repository.git`) in its work tree, as pinshift.git.run.Git says.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pinshift.errors import GitError
from pinshift.git.clone import ObjectStore
from pinshift.git.config import Config
from pinshift.git.history import FileStatus, History, StepRecord
from pinshift.git.objects import UNREADABLE, CommitTree
from pinshift.git.refs import Refs
from pinshift.git.run import ENGLISH, Git, GitFailed, checked_git, refused_by_owner, run

# the names callers import from here; the last five live in the modules of their concern
__all__ = ["Place", "Repository", "commit_everything", "init_repository", "listed_files", "locate", "one_line_log",
           "CommitTree", "FileStatus", "ObjectStore", "StepRecord", "UNREADABLE"]


@dataclass(frozen=True)
class Place:
    """Where a repository keeps its files: its work tree (None when it has none: bare, or only its git
    directory was found), its git directory and the git directory its worktrees share."""

    work_tree: str | None
    git_dir: str
    common_dir: str


def locate(directory: Path | str) -> Place | None:
    """The repository at or above `directory` as git finds it (`git rev-parse`); None when there is none, and
    GitError when git refuses to work in it (another user's: `refused_by_owner`).

    Paths are spelled as reached from `directory` (a symbolic link on the way stays in them), as they
    always were in pinshift's messages. Found from inside a `.git` directory, the work tree is its parent.
    """
    here = os.path.abspath(directory)
    done = run(["-C", here, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir",
                "--is-bare-repository", "--show-cdup"], env=dict(os.environ, **ENGLISH))
    if done.returncode != 0:
        refused = refused_by_owner(done.stderr)
        if refused is not None:
            raise refused
        return None
    lines = done.stdout.decode("utf-8", "surrogateescape").split("\n")
    git_dir, common_dir, bare = lines[:3]
    if len(lines) > 4:  # --show-cdup answers only inside a work tree
        work_tree = os.path.normpath(os.path.join(here, lines[3]))
        reached = [os.path.join(work_tree, ".git")]
    else:
        work_tree, reached = None, [here, *map(str, Path(here).parents)]
    real = os.path.realpath(git_dir)
    git_dir = next((path for path in reached if os.path.realpath(path) == real), git_dir)
    common_dir = git_dir if os.path.realpath(common_dir) == real else common_dir
    if work_tree is None and bare != "true" and os.path.basename(git_dir) == ".git":
        work_tree = os.path.dirname(git_dir)
    return Place(work_tree, git_dir, common_dir)


def listed_files(directory: Path) -> list[str] | None:
    """Files under `directory` that git tracks or would track (honouring .gitignore), relative to it.

    Returns None when `directory` is not inside a git work tree, so callers can fall back
    to walking the file system. GitError for a `.git` directory (there is no work tree to list)
    and for a repository git refuses to work in (another user's: `refused_by_owner`).
    """
    place = locate(directory)
    if place is None or place.work_tree is None:
        return None
    if Path(directory).resolve().is_relative_to(Path(place.git_dir).resolve()):
        raise GitError(f"{directory}: inside the repository's .git directory, which holds git's own files; run "
                       f"pinshift in the work tree ({place.work_tree})")
    # Run in `directory` itself so the paths come out relative to it.
    try:
        output = Git(str(directory))("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    except GitFailed as error:
        raise checked_git(error) from None
    return sorted({p for p in output.split("\0") if p})


class Repository(Refs, History, Config):
    """A non-bare, non-shallow git repository with at least one commit, opened for a migration."""

    def __init__(self, place: Place):
        self.root = Path(place.work_tree or place.git_dir)
        self.git_dir, self.common_dir = place.git_dir, place.common_dir
        self.git = Git(self.root)

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path) -> Repository:
        """Open the repository at or above `directory`; GitError for every state pinshift cannot use."""
        directory = Path(directory)
        if not directory.is_dir():
            raise GitError(f"{directory}: no such directory; pass --repo DIR of your recipe repository")
        place = locate(directory)
        if place is None:
            raise GitError(f"{directory}: not a git repository; run pinshift inside your recipe repository "
                           "or pass --repo DIR")
        if place.work_tree is None:
            raise GitError(f"{directory}: is a bare repository; clone it (git clone {directory}) and run "
                           "pinshift in the clone")
        if os.path.exists(os.path.join(place.common_dir, "shallow")):
            raise GitError(f"{place.work_tree}: is a shallow clone; fetch the full history first "
                           "(git fetch --unshallow)")
        repository = cls(place)
        if not repository._commits():
            raise GitError(f"{place.work_tree}: has no commits yet; commit your recipes first")
        return repository

    def _commits(self) -> str:
        """`git rev-parse --all`: the first git command run on opening; the ownership refusal as one line."""
        try:
            return self.git("rev-parse", "--all")
        except GitFailed as error:
            raise checked_git(error) from None

    @classmethod
    def open_to_read(cls, directory: Path, what: str) -> Repository:
        """A repository pinshift only reads (`status`, another repository's pin): bare and shallow clones
        are fine. `what` starts each error (`--repo ../x`, `--align-to ../x@main`) so it names the input."""
        directory = Path(directory)
        if not directory.is_dir():
            raise GitError(f"{what}: {directory} is not a directory; give a local clone of the repository")
        place = locate(directory)
        if place is None:
            raise GitError(f"{what}: {directory} is not a git repository; give a local clone of the "
                           "repository")
        repository = cls(place)
        if not repository._commits():
            raise GitError(f"{what}: {place.work_tree or place.git_dir} has no commits yet")
        return repository


def init_repository(directory: Path, branch: str) -> Repository:
    """A new repository in `directory` whose first branch is `branch` (for `pinshift demo`).

    Gives the repository a local identity only when git has none, so the demo works
    on a fresh machine and still commits as the user where one is configured.
    """
    os.makedirs(directory, 0o755, exist_ok=True)
    Git(directory)("init", f"--initial-branch={branch}")
    repository = Repository(locate(directory))
    try:
        repository.check_identity()
    except GitError:
        repository.git("config", "user.name", "pinshift demo")
        repository.git("config", "user.email", "demo@pinshift.invalid")
    return repository


def commit_everything(repository: Repository, message: str, branch: str | None = None) -> str:
    """Commit every file of the work tree (on a new `branch` when given); the commit id.

    Scaffolding for fixtures and the demo, not for migrations: no hooks, no signing.
    """
    git_ = repository.git
    if branch is not None:
        git_("switch", "-q", "-c", branch)
    git_("add", "-A")
    git_("commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message)
    return git_("rev-parse", "HEAD")


def one_line_log(repository: Repository, base: str, tip: str) -> list[str]:
    """`git log --oneline base..tip`, oldest first: the commit list a summary shows."""
    return repository.git("log", "--reverse", "--format=%h %s", f"{base}..{tip}").splitlines()
