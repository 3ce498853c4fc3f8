"""Trees Nix can read: a commit's files (or a planned step's) written into a private temporary directory.

`nix-instantiate` imports files from disk, and pinshift never checks anything out: the blobs of a commit are
read from git's objects (`CommitTree.contents`) and written under a directory only this user can read
(`tempfile.mkdtemp`, mode 0700; in `/dev/shm` when that memory file system is there with room, unless $TMPDIR
is set), removed when the check is done (`Scratch`, also on Ctrl-C; after a `kill -9`, by the next run), and only when something must be
evaluated: a tree whose every summary is remembered is never written. A later state (the
tree after a planned step) hard-links every file it shares with the state before it and writes only what the
step changed. Symbolic links and submodules are not written (a recipe importing through one does
not evaluate), nor files above the size limit.

Paths come from a commit anyone can write: `CommitTree` has already refused a tree holding `..`, `.git` or
another path git would not check out (pinshift.git.entry_names), and `tree_writer.SnapshotWriter` checks
each path again and opens every folder and file relative to its parent's descriptor without following a
link, so nothing is ever written outside the snapshot's folder.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.sandbox.scratch_dirs import LockedDirectory, remove_dead
from pinshift.sandbox.tree_writer import SnapshotWriter, folder_order
from pinshift.planning.memo import blob_id


UNWRITTEN = {"120000": "a symbolic link, which pinshift does not follow",
             "160000": "a submodule, which pinshift does not read"}


@dataclass
class Snapshot:
    """One tree on disk: `root` holds its files; `files` maps each written path to its git blob id."""

    name: str
    root: Path
    files: dict[str, str] = field(default_factory=dict)
    # entries of the tree that are not written, and why (a symbolic link is not followed, a submodule not read):
    # a recipe that reads one is `cannot tell`, never broken (standin/default.nix)
    unwritten: dict[str, str] = field(default_factory=dict)
    written: frozenset[str] = frozenset()  # the paths the step this tree follows wrote or removed (Scratch.after)
    _directories: set[str] | None = field(default=None, repr=False)
    _pending: Callable[[], None] | None = field(default=None, repr=False)  # writes the files, once, when asked

    def materialise(self) -> None:
        """Write the files (a snapshot whose every summary is remembered is never written)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending()

    def fingerprint(self, path: str) -> str | None:
        """What `path` is in this tree, for a remembered summary: its blob id, an entry not written (a symbolic link,
        a submodule, or a path inside one), "dir", or None (absent)."""
        found = self.files.get(path)
        if found is not None:
            return found
        if self.unwritten:  # a symbolic link or a submodule, or a path inside one: what the stand-in said depends on it
            for entry in (path, *_parents(path)):
                if entry in self.unwritten:
                    return f"unwritten {entry} {self.unwritten[entry]}"
        if self._directories is None:
            self._directories = {parent for p in self.files for parent in _parents(p)}
        return "dir" if path in self._directories else None

    def nix_paths(self) -> list[str]:
        """The recipes of the tree, each evaluated on its own: its `.nix` files but the helpers their place names
        (pinshift.facts.recipe_set.helper_by_path: in a `lib/` folder, or below `.flox/pkgs/`'s top level and
        no `default.nix`); a helper is evaluated through the recipes that import it."""
        from pinshift.facts.recipe_set import helper_by_path

        return sorted(p for p in self.files if p.endswith(".nix") and helper_by_path(p) is None)


def _parents(path: str) -> Iterable[str]:
    parts = path.split("/")[:-1]
    for end in range(1, len(parts) + 1):
        yield "/".join(parts[:end])
    yield ""


SHARED_MEMORY = Path("/dev/shm")
ROOM = 512 * 1024 * 1024  # free bytes a memory file system must have left for the snapshots to go there
PER_FILE = 16 * 1024  # what one file of one snapshot may take there, at most (a page, and the directory's share)


def scratch_parent(shared: Path = SHARED_MEMORY, files: int = 0) -> str | None:
    """Where snapshots go: $TMPDIR when the user set it; else a memory file system (`/dev/shm`) when it is a
    writable directory with room for `files` files (ROOM at least; creating thousands of small files there costs
    about a fiftieth of a disk's: docs/performance.md); else None, the system's temporary directory (a
    container's 64 MB /dev/shm is passed over)."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        if not shared.is_dir() or shared.is_symlink() or not os.access(shared, os.W_OK | os.X_OK):
            return None
        found = os.statvfs(shared)
    except OSError:
        return None
    return str(shared) if found.f_bavail * found.f_frsize >= max(ROOM, files * PER_FILE) else None


class Scratch:
    """A private temporary directory for snapshots (mode 0700, `pinshift-eval-*`), removed on `close` (a context
    manager); it holds its lock while open, so that a later run removes it if this one dies
    (pinshift.sandbox.scratch_dirs, which each run asks first)."""

    def __init__(self, files: int = 0):
        """`files`: how many files the snapshots may hold in all (each tree's files, once per tree)."""
        remove_dead()
        try:
            self._locked = LockedDirectory("pinshift-eval-", scratch_parent(files=files))
        except OSError:
            self._locked = LockedDirectory("pinshift-eval-")
        self.path = self._locked.path
        self.count = 0

    def __enter__(self) -> "Scratch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._locked.close()

    def _directory(self) -> Path:
        self.count += 1
        directory = self.path / str(self.count)
        directory.mkdir()
        return directory

    def commit(self, name: str, tree) -> Snapshot:
        """The files of `tree` (a `git.objects.CommitTree`), written from git's objects when `materialise`d."""
        regular = [p for p in tree.paths() if tree.mode(p) in ("100644", "100755")]
        snapshot = Snapshot(name, self._directory(), {path: tree.blob_id(path) for path in regular},
                            {p: UNWRITTEN[tree.mode(p)] for p in tree.paths() if tree.mode(p) in UNWRITTEN})

        def write() -> None:
            with SnapshotWriter(snapshot.root) as writer:
                for path, data in tree.contents(sorted(regular, key=folder_order)):
                    writer.write(path, data)

        snapshot._pending = write
        return snapshot

    def after(self, name: str, before: Snapshot,
              writes: Mapping[str, bytes | None] | Callable[[], Iterable[tuple[str, bytes | None]]]) -> Snapshot:
        """`before` with `writes` applied (path -> new bytes, None: removed; or a function yielding those pairs
        afresh at each call, so that a step of 40,000 files is never held: its bytes are hashed one file at a time
        here and made again, one at a time, when the snapshot is `materialise`d); `Snapshot.written` names the
        paths written or removed. Once `materialise`d, the files it shares with `before` are hard links."""
        pairs = writes.items if isinstance(writes, Mapping) else writes
        files = dict(before.files)
        written = set()
        for path, data in pairs():
            written.add(path)
            if data is None:
                files.pop(path, None)
            else:
                files[path] = blob_id(data)
        snapshot = Snapshot(name, self._directory(), files,
                            {path: why for path, why in before.unwritten.items() if path not in written},
                            written=frozenset(written))

        def write() -> None:
            before.materialise()
            with SnapshotWriter(before.root, create=False) as source, SnapshotWriter(snapshot.root) as writer:
                for path in sorted(before.files, key=folder_order):
                    if path not in written:
                        writer.link(source, path)
                for path, data in pairs():
                    if data is not None:
                        writer.write(path, data)

        snapshot._pending = write
        return snapshot
