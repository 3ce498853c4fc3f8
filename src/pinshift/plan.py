"""What a migration will do, as plain values: per step, per file, edits and warnings.

Data flows one way: recipe -> Plan -> files written -> commits -> report. The
report renders the same Plan the commits were made from; nothing here prints,
writes or runs git.
"""

from __future__ import annotations

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


@dataclass
class FileChange:
    """One file's outcome in one step. `before`/`after` hold bytes only when it changed."""

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
