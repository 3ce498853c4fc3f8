"""The one module that talks to git. It speaks in paths, branches and commits, never in steps.

GitPython is imported lazily so that commands which never touch git stay fast.
"""

from __future__ import annotations

from pathlib import Path


def listed_files(directory: Path) -> list[str] | None:
    """Files under `directory` that git tracks or would track (honouring .gitignore), relative to it.

    Returns None when `directory` is not inside a git work tree, so callers can fall back
    to walking the file system.
    """
    import git

    try:
        repo = git.Repo(directory, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    if repo.bare or repo.working_tree_dir is None:
        return None
    # Run in `directory` itself so the paths come out relative to it.
    output = git.Git(str(directory)).ls_files("-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in output.split("\0") if p})
