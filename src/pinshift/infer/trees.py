"""The two commits infer compares: their files, which paths changed and how git pairs them.

git's own rename and copy detection (pinshift.git.repo.Repository.changed_files) says which
file of TARGET came from which file of BASE (and a removed and an added file whose names differ
by one consistent change and whose lines are at least 30% alike are a rename too, which git misses
in small files); `--files` globs limit what is compared. Files
are read from the commits' objects (the user's checkout is never read), and a file that
cannot be compared (a symlink, a binary or oversized file) is set aside with its reason.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from dataclasses import dataclass, field

from pinshift.files.content import SkippedFile
from pinshift.files.globs import matches
from pinshift.infer.names import name_change

SIMILAR = 0.3  # lines alike for a removed and an added file of matching names to count as a rename
MAX_PAIRINGS = 250_000  # removed x added files beyond which names are not compared


@dataclass
class Comparison:
    """BASE and TARGET of one `pinshift infer` run, as git sees them.

    `renamed`/`copied`: TARGET path -> the BASE path git says it came from; `added`: TARGET paths
    with no origin; `removed`: BASE paths gone in TARGET; `modified`: paths in both that differ.
    Only paths within `scope` (the --files globs; empty: every path) are listed; `outside` counts
    the changed paths left out.
    """

    repository: object
    base: str
    target: str
    base_commit: str
    target_commit: str
    base_tree: object
    target_tree: object
    scope: tuple[str, ...] = ()
    renamed: dict[str, str] = field(default_factory=dict)
    copied: dict[str, str] = field(default_factory=dict)
    added: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    modified: set[str] = field(default_factory=set)
    outside: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # path -> why it is not compared
    _target_bytes: dict[str, bytes | None] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, repository, base: str, target: str, base_commit: str, target_commit: str,
           scope: tuple[str, ...] = ()) -> "Comparison":
        found = cls(repository, base, target, base_commit, target_commit, repository.tree(base_commit),
                    repository.tree(target_commit), tuple(scope))
        for change in repository.changed_files(base_commit, target_commit):
            paths = [change.path] + ([change.source] if change.status == "R" else [])
            if not any(found.in_scope(p) for p in paths):
                found.outside += 1
                continue
            if change.status == "R":
                found.renamed[change.path] = change.source
            elif change.status == "C":
                found.copied[change.path] = change.source
            elif change.status == "A":
                found.added.add(change.path)
            elif change.status == "D":
                found.removed.add(change.path)
            else:
                found.modified.add(change.path)
        found._pair_by_name()
        found.target_tree.prefetch(found.target_paths())
        found.base_tree.prefetch(sorted(found.modified | set(found.renamed.values()) | set(found.copied.values())
                                        | found.removed))
        return found

    def _pair_by_name(self) -> None:
        """Removed and added files git did not pair (small files change more than its 50% similarity allows)
        are renames when one name change turns the old names into the new ones and their lines are at least
        30% alike."""
        if not self.added or not self.removed or len(self.added) * len(self.removed) > MAX_PAIRINGS:
            return
        options: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
        for added in sorted(self.added):
            for removed in sorted(self.removed):
                if added.rpartition("/")[0] == removed.rpartition("/")[0]:
                    change = name_change(removed.rpartition("/")[2], added.rpartition("/")[2])
                    if change is not None:
                        options[change].append((removed, added))
        taken: set[str] = set()
        for _, pairs in sorted(options.items(), key=lambda item: (-len(item[1]), item[0])):
            for removed, added in pairs:
                if removed not in taken and added not in taken and self._alike(removed, added):
                    self.renamed[added] = removed
                    taken.update((removed, added))
        self.added -= taken
        self.removed -= taken

    def _alike(self, removed: str, added: str) -> bool:
        try:
            before, after = self.base_tree.read(removed), self.target_tree.read(added)
        except SkippedFile:
            return False
        matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
        return matcher.ratio() >= SIMILAR

    def in_scope(self, path: str) -> bool:
        return not self.scope or matches(path, self.scope)

    @property
    def changed(self) -> bool:
        return bool(self.renamed or self.copied or self.added or self.removed or self.modified)

    def target_paths(self) -> list[str]:
        """Every TARGET path that differs from BASE (modified, renamed, copied, added)."""
        return sorted(self.modified | set(self.renamed) | set(self.copied) | self.added)

    def origin(self, path: str) -> str | None:
        """The BASE path a TARGET path came from (itself when modified), None for an added file."""
        if path in self.modified:
            return path
        return self.renamed.get(path) or self.copied.get(path)

    def target_read(self, path: str) -> bytes | None:
        """TARGET's bytes at `path`; None (reason in `skipped`) when it has none or they cannot be compared."""
        if path not in self._target_bytes:
            try:
                self._target_bytes[path] = self.target_tree.read(path) if self.target_tree.mode(path) else None
            except SkippedFile as skipped:
                self.skipped[path] = str(skipped)
                self._target_bytes[path] = None
        return self._target_bytes[path]

    def base_paths_in_scope(self) -> list[str]:
        return [p for p in self.base_tree.paths() if self.in_scope(p)]
