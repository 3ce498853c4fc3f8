"""The files as the steps inferred so far leave them, and what still differs from TARGET.

`State` wraps the runner's `WorkingSet` over BASE's commit tree: a step is planned on it
with the same runner `pinshift migrate` uses (so what infer sees is what a migration
will do), and a step that is not kept is rolled back (`snapshot`/`restore`). `pairs()`
says which file of the current state stands for which file of TARGET: the same path, or
the BASE path git says a TARGET file was renamed from while no step has renamed it yet.
Parsed documents and hunks are cached by content, so each phase only redoes the files
the last step changed.
"""

from __future__ import annotations

from pinshift import languages
from pinshift.errors import PinshiftError
from pinshift.infer.token_hunks import Hunk, hunks
from pinshift.infer.trees import Comparison
from pinshift.planning.working_set import WorkingSet


class State:
    def __init__(self, comparison: Comparison):
        self.comparison = comparison
        self.files = WorkingSet(comparison.base_tree)
        self._docs: dict[tuple[str, bytes], object] = {}
        self._hunks: dict[tuple[bytes, bytes], list[Hunk]] = {}
        self._paths: list[str] | None = None
        self._path_set: set[str] = set()

    # --- the working set ---------------------------------------------------------------------

    def snapshot(self) -> tuple:
        return dict(self.files.changed), dict(self.files.added), dict(self.files.removed)

    def restore(self, snapshot: tuple) -> None:
        self.files.changed, self.files.added, self.files.removed = (dict(part) for part in snapshot)
        self.moved()

    def moved(self) -> None:
        """Forget the cached path list (a file-level step added or took away paths)."""
        self._paths = None

    def paths(self) -> list[str]:
        if self._paths is None:
            self._paths = self.files.paths()
            self._path_set = set(self._paths)
        return self._paths

    def has(self, path: str) -> bool:
        self.paths()
        return path in self._path_set

    def read(self, path: str) -> bytes | None:
        """The current bytes of `path`; None when it is gone or cannot be read (symlink, binary...)."""
        if not self.has(path):
            return None
        try:
            return self.files.read(path)
        except PinshiftError:  # SkippedFile (a symlink, a binary file...), or a path a step took away
            return None

    # --- what still differs ------------------------------------------------------------------

    def counterpart(self, target_path: str) -> str | None:
        """The current path that stands for TARGET's `target_path` (None: TARGET added it)."""
        if self.has(target_path):
            return target_path
        origin = self.comparison.renamed.get(target_path)
        if origin is not None and self.has(origin):
            return origin
        return None

    def pairs(self) -> list[tuple[str, str]]:
        """(current path, TARGET path) of every file whose bytes still differ from TARGET's."""
        found = []
        for target_path in self.comparison.target_paths():
            path = self.counterpart(target_path)
            if path is None:
                continue
            before, after = self.read(path), self.comparison.target_read(target_path)
            if before is not None and after is not None and before != after:
                found.append((path, target_path))
        return found

    def hunks(self, path: str, target_path: str) -> list[Hunk]:
        before, after = self.read(path), self.comparison.target_read(target_path)
        if before is None or after is None:
            return []
        key = (before, after)
        if key not in self._hunks:
            self._hunks[key] = hunks(before, after)
        return self._hunks[key]

    # --- parsed documents --------------------------------------------------------------------

    def doc(self, path: str, data: bytes | None = None):
        """The current file at `path` parsed by its language (None: no parser, unreadable, or syntax problems)."""
        data = self.read(path) if data is None else data
        return self._parse(path, data)

    def target_doc(self, target_path: str):
        return self._parse(target_path, self.comparison.target_read(target_path))

    def _parse(self, path: str, data: bytes | None):
        language = languages.language_for(path)
        if data is None or language is None:
            return None
        key = (path, data)
        if key not in self._docs:
            doc = languages.parse(language, data, path)
            self._docs[key] = None if getattr(doc, "problems", ()) else doc
        return self._docs[key]
