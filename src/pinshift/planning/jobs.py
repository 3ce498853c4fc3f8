"""What a run plans: a recipe step as the pipeline runs it (`StepJob`) and the options of the run (`RunOptions`).

A `StepJob` is built from a recipe step by `pinshift.planning.runner` (kind, parameters, globs, the recipe's
name and step numbers); the segment's preparation (`pinshift.planning.prepare`, `pinshift.planning.survey`)
replaces it with one whose params are prepared and whose file operations and reference facts are known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pinshift.files.fileops import FileOp
from pinshift.files.globs import matches
from pinshift.planning.plan import StepPlan
from pinshift.steps.kind import StepKind


@dataclass(frozen=True)
class RunOptions:
    """Options shared by every command that plans steps.

    `jobs`: worker processes; None picks the number of CPUs for large runs and
    1 for small ones (environment `PINSHIFT_JOBS` overrides the automatic choice).
    `memo`: a `pinshift.planning.memo.PlanMemo`; files it remembers are not read or planned again
    (the command that made it saves it when planning is over).
    """

    strict: bool = False
    progress: Callable[[int, int], None] | None = None
    jobs: int | None = None
    phases: Callable[[str, int, int], None] | None = None  # other phases' progress (what, done, total): the build check
    memo: Any = None  # a plan_memo.PlanMemo: files planned before are looked up, not planned again


@dataclass
class StepJob:
    """One step as the pipeline runs it: the kind, its (prepared) params and where it applies."""

    index: int
    total: int
    kind: StepKind
    params: Any
    globs: tuple[str, ...]
    title: str = ""
    message: str = ""
    recipe: str = ""
    raw_params: Mapping[str, Any] = field(default_factory=dict)
    needles: tuple[bytes, ...] = ()
    survey_params: Any = None  # set while the params are a guess: survey each file with these (see run_jobs)
    # a file-level step, once its paths are planned: new path -> the rename or clone that made it
    file_ops: Mapping[str, FileOp] | None = None
    existing: Mapping[str, bytes] = field(default_factory=dict)  # clone targets already there: their bytes
    ops: tuple[FileOp, ...] = ()  # a file-level step's operations, once planned (the after-step check reads them)
    tree_globs: tuple[str, ...] = ()  # the recipe's files: what a step may edit for references (() = every file)
    # what the kind's plan_references said: path -> its facts (context.references), pairs left dangling on purpose
    references: Mapping[str, tuple] = field(default_factory=dict)
    dangling: frozenset = frozenset()

    def applies_to(self, path: str, language: str | None) -> bool:
        if self.kind.plans_paths:  # the files it renamed or cloned (and those referring to them), whatever their language
            return (self.file_ops is not None and path in self.file_ops) or path in self.references
        return language is not None and language in self.kind.languages and matches(path, self.globs)

    @property
    def label(self) -> str:
        """How errors name the step: `step 2/4 (rename-files)` in a recipe, the kind alone for `apply`."""
        return f"step {self.index}/{self.total} ({self.kind.name})" if self.recipe else self.kind.name

    def new_plan(self) -> StepPlan:
        step = StepPlan(
            index=self.index, total=self.total, kind=self.kind.name,
            title=self.title or self.kind.name, params=dict(self.raw_params), message=self.message,
        )
        if self.kind.origin != "bundled":
            step.notes.append(f"step kind '{self.kind.name}' loaded from {self.kind.origin}")
        return step
