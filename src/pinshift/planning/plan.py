"""What a migration will do, as plain values: per step, per file, edits and warnings.

Data flows one way: recipe -> Plan -> files written -> commits -> report. The
report renders the same Plan the commits were made from; nothing here prints,
writes or runs git.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Outcome(str, Enum):
    """What happened to one file in one step."""

    CHANGED = "changed"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    REFUSED = "refused"


@dataclass(frozen=True)
class Warning:
    """Something a human must look at; `path:line:col: message`. Fatal under `--strict`."""

    path: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.column}: {self.message}"
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class AppliedEdit:
    """One edit as a reviewer reads it: where, the bytes it replaced and what it wrote."""

    path: str
    line: int
    column: int
    before: bytes
    after: bytes
    reason: str
    start: int = field(default=-1, compare=False)  # byte offset in the file as the step read it (-1: unknown)


@dataclass
class FileChange:
    """One file's outcome in one step. `before`/`after` hold bytes only when it changed.

    File-level steps (rename-files, clone-files, remove-files) also move paths: a renamed
    file is recorded at its new `path` with `old_path`, a clone at its new `path` with
    `source` (its `before` is the source's bytes, so the diff shows what differs from it),
    a removed file at its `path` with `removed` (and no `after`). `mode` is the git mode
    a new path gets ("100644", "100755"), copied from the file it came from.
    """

    path: str
    outcome: Outcome
    language: str = "nix"
    before: bytes | None = None
    after: bytes | None = None
    edits: list[AppliedEdit] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)
    reason: str = ""
    notes: list[Warning] = field(default_factory=list)  # what the step left alone on purpose (never fails --strict)
    # (facts,) a speculatively prepared step gathered from this file; the runner empties it (see runner.run_jobs)
    survey: tuple | None = field(default=None, repr=False, compare=False)
    old_path: str | None = None  # renamed from this path
    source: str | None = None  # cloned from this path
    removed: bool = False  # the step removes this path
    mode: str | None = None  # git mode of a new path (renamed or cloned), else None
    # the change's -U0 hunks (pinshift.planning.changed_lines.changed_lines), set where the file was planned; None: not computed
    hunks: tuple | None = field(default=None, repr=False, compare=False)
    # (before, after) pinshift.graph FileGraphs (function head, references) when the step changed either, or moved
    # the file; set where it was planned, read by the after-step check (pinshift.planning.references)
    graph: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def operation(self) -> str:
        """"renamed", "cloned", "removed", or "" for an edit in place."""
        if self.removed:
            return "removed"
        if self.old_path is not None:
            return "renamed"
        if self.source is not None:
            return "cloned"
        return ""

    @property
    def label(self) -> str:
        """The file as reviewers read it: `old → new` (renamed), `source ⇒ new` (cloned), `path (removed)`."""
        if self.old_path is not None:
            return f"{self.old_path} → {self.path}"
        if self.source is not None:
            return f"{self.source} ⇒ {self.path}"
        if self.removed:
            return f"{self.path} (removed)"
        return self.path


class _Derived:
    """The marker of a FileChange whose `after` is its `before` with its edits applied (see `derive`)."""

    def __repr__(self) -> str:
        return "DERIVED"

    def __reduce__(self):
        return "DERIVED"


DERIVED = _Derived()


def _before(self) -> bytes | None:
    value = self.__dict__.get("_before")
    return value.after if isinstance(value, FileChange) else value


def _after(self) -> bytes | None:
    value = self.__dict__.get("_after")
    if value is not DERIVED:
        return value
    data, parts, cursor = self.before, [], 0
    for edit in self.edits:
        parts += (data[cursor : edit.start], edit.after)
        cursor = edit.start + len(edit.before)
    parts.append(data[cursor:])
    return b"".join(parts)


def _setter(key: str):
    def put(self, value) -> None:
        self.__dict__[key] = value

    return put


# A plan of 40,000 files cannot hold four copies of each: `before` and `after` are held as a
# reference to the previous step's change and the edits (`derive`), and computed when read.
FileChange.before = property(_before, _setter("_before"), doc="The file's bytes before the step.")
FileChange.after = property(_after, _setter("_after"), doc="The file's bytes after the step (None: unchanged).")


def derive(change: FileChange, base: "FileChange | bytes") -> None:
    """Hold `change`'s bytes as `base` (the previous step's change, or the file's bytes) plus its edits.

    Its `edits` must carry their offsets (`AppliedEdit.start`) in `base`'s bytes, sorted and
    not overlapping, as the runner applied them; `after` then splices them in when read.
    """
    change.__dict__["_before"] = base
    change.__dict__["_after"] = DERIVED


@dataclass
class StepPlan:
    """The planned result of step `index` (1-based) of `total`."""

    index: int
    total: int
    kind: str
    title: str
    params: dict[str, Any]
    message: str = ""
    files: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commit: str | None = None

    @property
    def changed(self) -> list[FileChange]:
        return [f for f in self.files if f.outcome is Outcome.CHANGED]

    @property
    def refused(self) -> list[FileChange]:
        return [f for f in self.files if f.outcome is Outcome.REFUSED]

    @property
    def skipped(self) -> list[FileChange]:
        return [f for f in self.files if f.outcome is Outcome.SKIPPED]

    @property
    def warnings(self) -> list[Warning]:
        return [w for f in self.files for w in f.warnings]

    @property
    def edit_count(self) -> int:
        return sum(len(f.edits) for f in self.changed)

    def operations(self, name: str) -> list[FileChange]:
        """The changed files this step "renamed", "cloned" or "removed"."""
        return [f for f in self.changed if f.operation == name]

    @property
    def operation_counts(self) -> str:
        """`66 renamed`, `7 cloned, 1 removed`: the files the step moved; "" for a step that edits in place."""
        counts = [(len(self.operations(name)), name) for name in ("renamed", "cloned", "removed")]
        return ", ".join(f"{count} {name}" for count, name in counts if count)


@dataclass
class Plan:
    """Every step of one recipe run, with where it ran from and to."""

    recipe: str
    steps: list[StepPlan]
    repository: str = ""
    base: str = ""
    base_commit: str = ""
    target: str = ""
    target_commit: str = ""
    dry_run: bool = True
    notes: list[str] = field(default_factory=list)
    builds: Any = None  # what the recipes build, step by step (pinshift.evaluation.build_check.BuildsCheck); None: unchecked

    @property
    def changed_paths(self) -> list[str]:
        return sorted({f.path for s in self.steps for f in s.changed})

    @property
    def warnings(self) -> list[Warning]:
        return [w for s in self.steps for w in s.warnings]

    @property
    def refused(self) -> list[FileChange]:
        return [f for s in self.steps for f in s.refused]

    @property
    def would_change(self) -> bool:
        return any(s.changed for s in self.steps)


@dataclass(frozen=True)
class TreeChange:
    """One path of the tree a step's commit records: its new bytes, or its deletion (`data` None).

    `mode` is set for a path the step creates (a renamed or cloned file: the mode of the
    file it came from); None keeps the mode of the file already there.
    """

    path: str
    data: bytes | None
    mode: str | None = None


def tree_changes(step: StepPlan) -> list[TreeChange]:
    """What committing `step` does to the tree: writes first, then deletions (paths not also written).

    The one place that turns a StepPlan into paths and bytes; `apply` writes them to disk
    (it needs them all at once), `migrate` commits them one at a time (`iter_tree_changes`).
    """
    return list(iter_tree_changes(step))


def iter_tree_changes(step: StepPlan) -> Iterator[TreeChange]:
    """`tree_changes(step)` one at a time: a file's new bytes are made only when its change is reached, so a
    commit of 40,000 files never holds all of them (a derived `after` is spliced when read)."""
    deletions: list[str] = []
    written: set[str] = set()
    for change in step.changed:
        if change.removed:
            deletions.append(change.path)
            continue
        if change.old_path is not None:
            deletions.append(change.old_path)
        new = change.old_path is not None or change.source is not None
        written.add(change.path)
        yield TreeChange(change.path, change.after, change.mode if new else None)
    for path in deletions:
        if path not in written:
            yield TreeChange(path, None)
