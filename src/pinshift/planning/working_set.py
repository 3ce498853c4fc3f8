"""The files of a tree as the steps so far have left them: the overlay every stage of planning reads.

Bytes a step changed, paths a file-level step added or took away; nothing is written to the tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pinshift.errors import PinshiftError
from pinshift.files.fileops import FileOp
from pinshift.files.tree import SourceTree
from pinshift.planning.plan import FileChange


class WorkingSet:
    """The files of a tree as the steps so far have left them.

    An overlay over the tree: `changed` holds new bytes by path; a file-level step
    adds paths (`added`: new path -> the tree path whose file it is, renamed or
    cloned) and takes paths away (`removed`: path -> what took it away, for errors
    that name a path a later step still names). `paths()` and `read()` reflect
    both; reading a removed path raises.
    """

    def __init__(self, tree: SourceTree):
        self.tree = tree
        self.changed: dict[str, bytes] = {}
        self.added: dict[str, str] = {}
        self.removed: dict[str, str] = {}

    def paths(self) -> list[str]:
        if not self.added and not self.removed:
            return self.tree.paths()
        return sorted({p for p in self.tree.paths() if p not in self.removed} | set(self.added))

    def _origin(self, path: str) -> str:
        if path in self.added:
            return self.added[path]
        if path in self.removed:
            raise PinshiftError(f"{path} {self.removed[path]}; a later step cannot read it")
        return path

    def read(self, path: str) -> bytes:
        if path in self.changed:
            held = self.changed[path]
            return held.after if isinstance(held, FileChange) else held
        return self.tree.read(self._origin(path))

    def mode(self, path: str) -> str:
        """The git mode of `path` ("100644", "100755", "120000" for a symlink); "100644" when the tree cannot say."""
        hook = getattr(self.tree, "mode", None)
        found = hook(self._origin(path)) if hook is not None else None
        return found or "100644"

    def memo_id(self, path: str) -> str | None:
        """The blob id of `path`'s bytes when the tree knows it without reading them (an unchanged git file), else None."""
        if path in self.changed or path in self.removed:
            return None
        hook = getattr(self.tree, "memo_id", None)
        return hook(self.added.get(path, path)) if hook is not None else None

    def prefetch(self, paths: Sequence[str]) -> None:
        """Let the tree read `paths` in bulk if it can (git objects: one batch instead of a read per file)."""
        hook = getattr(self.tree, "prefetch", None)
        if hook is not None:
            hook([self.added.get(p, p) for p in paths if p not in self.changed and p not in self.removed])

    def apply_ops(self, ops: Sequence[FileOp], why: Callable[[FileOp], str]) -> None:
        """Move paths as one step's file operations say, all at once (`a → b` and `b → c` in one step work).

        `why(op)` is what a later read or glob of a path taken away will be told.
        """
        changed, added = dict(self.changed), dict(self.added)
        for op in ops:
            if op.action in ("rename", "remove"):
                self.changed.pop(op.path, None)
                self.added.pop(op.path, None)
                self.removed[op.path] = why(op)
        for op in ops:
            if op.target is None:
                continue
            if op.path in changed:
                self.changed[op.target] = changed[op.path]
            else:
                self.changed.pop(op.target, None)
            self.added[op.target] = added.get(op.path, op.path)
            self.removed.pop(op.target, None)
