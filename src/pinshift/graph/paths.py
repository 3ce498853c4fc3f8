"""A path literal resolved against the tree it is written in, and the literal that names a moved file.

Nix resolves a relative path literal against the directory of the file it is written in and
normalizes it lexically (`./a/../b` is `./b`). `import ./dir` and `callPackage ./dir { }` mean
`./dir/default.nix`; a bare `./dir` names the directory. Tree paths are POSIX, relative to the
tree's root, as pinshift's trees list them.

Examples:
    >>> resolve(".flox/pkgs/torchvision.nix", "./pytorch.nix")
    '.flox/pkgs/pytorch.nix'
    >>> resolve(".flox/pkgs/a.nix", "../../lib/x.nix")
    'lib/x.nix'
    >>> moved_literal("./pytorch-python313-cpu.nix", "pkgs/pytorch-python312-cpu.nix", "pkgs/x.nix")
    './pytorch-python312-cpu.nix'
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass


def resolve(source: str, literal: str) -> str | None:
    """The tree path `literal` names from the file at `source` ("" for the root), or None when it names
    nothing a tree can hold (absolute, `~/…`, `<…>`)."""
    if not literal or literal.startswith(("/", "~", "<")):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), literal))
    return "" if joined == "." else joined


def outside(path: str) -> bool:
    """Whether a resolved path climbs above the tree's root (`../x`): the tree cannot say what is there."""
    return path == ".." or path.startswith("../")


class PathIndex:
    """Which tree paths are files and which are directories (every directory holding a file)."""

    def __init__(self, paths: Iterable[str]):
        self.files = set(paths)
        self.directories = {""}
        for path in self.files:
            directory = posixpath.dirname(path)
            while directory not in self.directories:
                self.directories.add(directory)
                directory = posixpath.dirname(directory)

    def kind(self, path: str) -> str | None:
        """"file", "directory", or None when the tree holds nothing there."""
        if path in self.files:
            return "file"
        if path in self.directories:
            return "directory"
        return None


@dataclass(frozen=True)
class Target:
    """What a reference names in a tree: `path` (the file, `dir/default.nix` for an imported directory),
    and `state`: "file", "directory" (a bare path naming one), "missing" (nothing there), "outside"
    (above the tree's root, or absolute), "computed" (not resolved)."""

    path: str | None
    state: str

    @property
    def found(self) -> bool:
        return self.state in ("file", "directory")


def target(source: str, literal: str, how: str, index: PathIndex, computed: bool = False) -> Target:
    """The Target a reference (`literal`, used as `how`) written in `source` has in the tree `index` lists."""
    if computed:
        return Target(None, "computed")
    resolved = resolve(source, literal)
    if resolved is None or outside(resolved):
        return Target(resolved, "outside")
    kind = index.kind(resolved)
    if kind == "directory" and how != "path":
        resolved = posixpath.join(resolved, "default.nix") if resolved else "default.nix"
        kind = index.kind(resolved)
    return Target(resolved, kind or "missing")


def moved_literal(literal: str, new_target: str, new_source: str) -> str:
    """The literal naming `new_target` from `new_source`, written like `literal` where it can be.

    File-level steps keep a file in its directory, so the literal keeps its directory part and only
    its last component changes (`./a/old.nix` -> `./a/new.nix`); a literal naming a directory for its
    `default.nix` gets the new name appended (`./dir` -> `./dir/new.nix`); anything else is written
    relative to the source, with a leading `./`.
    """
    name = posixpath.basename(new_target)
    head, _, last = literal.rpartition("/")
    if head and last and last not in (".", ".."):
        candidate = f"{head}/{name}"
    elif last in (".", ".."):
        candidate = f"{literal}/{name}" if last == ".." else f"{head}/{name}"
    else:
        candidate = f"{literal}/{name}"
    if resolve(new_source, candidate) == new_target:
        return candidate
    relative = posixpath.relpath(new_target, posixpath.dirname(new_source) or ".")
    return relative if relative.startswith("../") else f"./{relative}"
