"""What the user's git settings say about committing in a repository: an identity, signing, hooks.

`Config` is part of pinshift.git.repo.Repository: it runs the repository's commands (`self.git`,
pinshift.git.run.Git) and knows its `root` and `common_dir`. Nothing here writes to the repository.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pinshift.errors import GitError
from pinshift.git.run import GitFailed, first_line, run


class Config:
    """The settings a commit obeys, checked before anything is created."""

    def check_identity(self) -> None:
        """Committing needs a user identity; say so before anything is created."""
        try:
            self.git("var", "GIT_COMMITTER_IDENT")
            self.git("var", "GIT_AUTHOR_IDENT")
        except GitFailed as error:
            raise GitError(f"git cannot commit here: {first_line(error)} (set user.name and user.email)") from None

    def check_signing(self) -> None:
        """With `commit.gpgSign` set, sign a throwaway commit before anything is created; git's message when it
        cannot (a missing key, no agent). The commit goes to a temporary object folder: the repository gets nothing.
        """
        if not self.config_bool("commit.gpgSign"):
            return
        objects = self.git("rev-parse", "--git-path", "objects")
        with tempfile.TemporaryDirectory(prefix="pinshift-sign-") as scratch:
            env = dict(os.environ, GIT_OBJECT_DIRECTORY=scratch,
                       GIT_ALTERNATE_OBJECT_DIRECTORIES=str(self.root / objects) if not os.path.isabs(objects)
                       else objects)
            tree = run(["mktree"], cwd=self.root, env=env, data=b"")
            done = run(["commit-tree", "-S", "-m", "pinshift: can git sign here?", tree.stdout.decode().strip()],
                       cwd=self.root, env=env) if tree.returncode == 0 else tree
        if done.returncode != 0:
            raise GitError(f"git cannot sign commits here (commit.gpgSign is set): {first_line(done)}; fix the "
                           "signing key (user.signingKey) or turn commit.gpgSign off for this repository")

    def hooks_path(self) -> str | None:
        """`core.hooksPath` made absolute when it is relative, else None (git finds the hooks as usual).

        git resolves a relative hooks path against the work tree the hook runs in: in pinshift's
        temporary worktree that would be the base commit's copy, not the user's hooks.
        """
        try:
            value = self.git("config", "--get", "core.hooksPath")
        except GitFailed:
            return None
        if not value or os.path.isabs(value) or value.startswith("~"):
            return None
        return str(self.root / value)

    def hooks_dir(self) -> Path:
        """Where `git commit` in the user's checkout looks for hooks: core.hooksPath (made absolute), else .git/hooks."""
        try:
            value = self.git("config", "--get", "core.hooksPath")
        except GitFailed:
            value = ""
        if not value:
            return Path(self.common_dir) / "hooks"
        return self.root / os.path.expanduser(value)

    def config_bool(self, key: str) -> bool:
        """A boolean git setting as git reads it (`true`, `yes`, `on`, `1`...); False when unset."""
        try:
            return self.git("config", "--type=bool", "--get", key) == "true"
        except GitFailed:
            return False
