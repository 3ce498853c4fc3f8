"""File-level operations a step plans before any content is touched: renames, clones, removals.

A file-level step kind (rename-files, clone-files, remove-files) defines
`plan_paths(paths, params) -> list[FileOp]`: from the paths its `files` globs select,
the operations it wants, as plain values (no I/O). `check_file_ops` validates them
against the tree as the earlier steps left it, before anything is read, planned or
written, and refuses with one message naming both paths. The runner then moves the
paths in its WorkingSet, so later steps see the new names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pinshift.errors import StepFailed
from pinshift.files.globs import matches

# A new file name pinshift writes: no quotes, `$`, `\`, `*`, spaces or control characters, so an
# updated self-reference can never end a string or comment or start an interpolation.
PLAIN_NAME = re.compile(r"[A-Za-z0-9._+-]+\Z")


@dataclass(frozen=True)
class FileOp:
    """Rename or clone `path` to `target`, or remove `path` (then `target` is None)."""

    action: Literal["rename", "clone", "remove"]
    path: str
    target: str | None = None

    def __str__(self) -> str:
        if self.action == "rename":
            return f"{self.path} → {self.target}"
        if self.action == "clone":
            return f"{self.path} ⇒ {self.target}"
        return f"{self.path} (removed)"


def rename(path: str, target: str) -> FileOp:
    return FileOp("rename", path, target)


def clone(path: str, target: str) -> FileOp:
    return FileOp("clone", path, target)


def remove(path: str) -> FileOp:
    return FileOp("remove", path)


def _refuse(where: str, op: FileOp, why: str, what_to_do: str) -> StepFailed:
    """`step 1/4 (rename-files): cannot rename A to B, which already exists; nothing was written (...)`."""
    return StepFailed(f"{where}: cannot {op.action} {op.path} to {op.target}{why}; nothing was written "
                      f"({what_to_do})")


def check_file_ops(ops: Sequence[FileOp], paths: Iterable[str], globs: Sequence[str], where: str) -> None:
    """Refuse (StepFailed, exit 1) operations that would lose or clobber a file, naming both paths.

    Refused: two operations onto one name; a rename onto a file that exists and is not
    itself moved away by this step; a new name outside the step's `files` globs, or not
    a plain file name (letters, digits, `.`, `_`, `+`, `-`); a new path under an existing
    file. A clone onto an existing file is decided later, once its bytes are planned: a
    byte-identical target is a no-op, any other is refused (see runner).
    """
    existing = set(paths)
    vacated = {op.path for op in ops if op.action in ("rename", "remove")}
    taken: dict[str, FileOp] = {}
    for op in ops:
        if op.path not in existing:
            raise StepFailed(f"{where}: {op.path} does not exist; nothing was written")
        if op.target is None:
            continue
        name = op.target.rsplit("/", 1)[-1]
        if not PLAIN_NAME.match(name) or name in (".", ".."):
            raise _refuse(where, op, f": '{name}' is not a plain file name (letters, digits, '.', '_', '+', '-')",
                          "change 'to'")
        parts = op.target.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in existing:
                raise _refuse(where, op, f": {parent} is a file", "change 'to'")
        if not matches(op.target, globs):
            raise _refuse(where, op, f", a name outside the step's files ({', '.join(globs)})",
                          "choose a 'to' that keeps the name inside them, or widen the step's files")
        if op.target in taken:
            first = taken[op.target]
            raise StepFailed(f"{where}: {first.path} and {op.path} would both become {op.target}; nothing was "
                             f"written (make 'to' give them different names, or narrow the step's files)")
        taken[op.target] = op
        if op.action == "rename" and op.target in existing and op.target not in vacated:
            raise _refuse(where, op, ", which already exists",
                          "remove it in an earlier step, or choose another 'to'")
