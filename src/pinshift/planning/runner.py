"""Turn a recipe (or one step) into a Plan, entirely in memory.

Steps run in order; each step reads the files as the previous step left them,
so the Plan holds exactly the bytes each commit will contain. Nothing here
writes files, runs git or prints.

Files flow through the steps one at a time (file-major): a file is parsed once,
each step plans edits on the current tree, the edits are applied in one pass
and the tree is re-parsed incrementally for the next step. Trees are dropped as
soon as a file is done, so memory stays flat however large the repository, and
files are independent, so a process pool can share them out (see
`pinshift.planning.pool`). The one thing that needs every file at once is a step kind's
`prepare` (pin-swap resolving an abbreviated revision): such a step starts a new
*segment*, and the files are surveyed, as the steps before it left them, before
the segment runs. Results are merged in path order, so serial and parallel runs
give identical plans.

A file-level step (rename-files, clone-files, remove-files: a kind with
`plan_paths`) also starts a segment. Its paths are planned first, from the paths
as the steps before it left them, and checked (`pinshift.files.fileops.check_file_ops`)
before any content is planned; the WorkingSet then moves them, and the segment's
content pass runs the step's `plan` on each new path (its self-references)
before the later steps, which see the new paths. A later step whose globs name
only paths taken away is a recipe error.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pinshift import languages
from pinshift.planning import memo as plan_memo
from pinshift.planning import pool
from pinshift.edits import apply_to_document, normalize_edits
from pinshift.errors import EditConflict, EditRefused, PinshiftError, RecipeError, StepFailed, StepScriptError
from pinshift.files.fileops import FileOp, check_file_ops, remove
from pinshift.files.tree import SkippedFile, SourceTree
from pinshift.files.globs import matches
from pinshift.planning.hunks import changed_lines
from pinshift.graph.tree import file_graph
from pinshift.planning.plan import DERIVED, AppliedEdit, FileChange, Outcome, Plan, StepPlan, Warning, derive
from pinshift.planning.references import check_segment, plan_references
from pinshift.recipes.recipe import Recipe, RecipeStep
from pinshift.steps.kind import StepContext, StepKind, StepOutput


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


# --- one file through a segment of steps ----------------------------------------------------


def _applied(doc: Any, edits) -> list[AppliedEdit]:
    out = []
    for edit in edits:
        line, column = doc.position(edit.start)
        out.append(AppliedEdit(doc.path, line, column, doc.data[edit.start : edit.end], edit.replacement, edit.reason,
                               edit.start))
    return out


def _warnings(doc: Any, items) -> list[Warning]:
    out = []
    for warning in items:
        line, column = doc.position(warning.offset) if warning.offset >= 0 else (0, 0)
        out.append(Warning(doc.path, line, column, warning.message))
    return out


def _refusal(doc: Any) -> str:
    return f"{doc.problems[0]}; fix the file or exclude it from the step's files"


def process_file(path: str, data: bytes, jobs: Sequence[StepJob]) -> list[FileChange | None]:
    """Run `jobs` in order on one file; one FileChange per job (None where the job does not apply).

    The file is parsed at most once; after each changing step the tree is
    re-parsed incrementally from the edits. For a file a file-level step has just
    renamed or cloned, that step's FileChange is always `changed` (the path moved),
    with the self-reference edits its `plan` made.
    """
    language = languages.language_for(path)
    results: list[FileChange | None] = []
    doc = None
    shape = None  # the FileGraph of `doc` (its function head and references), once asked
    last: FileChange | bytes = data  # what the next changing step's bytes derive from (plan.derive)
    for job in jobs:
        if not job.applies_to(path, language):
            results.append(None)
            continue
        op = job.file_ops.get(path) if job.file_ops is not None else None
        moved = _moved(op)
        current = doc.data if doc is not None else data
        if op is not None and language not in job.kind.languages:
            note = Warning(path, 0, 0, f"not a {'/'.join(job.kind.languages) or 'parsed'} file: moved as it is, "
                                       "self-references not updated")
            results.append(FileChange(path, Outcome.CHANGED, language or "", before=current, after=current,
                                      notes=[note], **moved))
            continue
        if op is None and job.needles and not any(n in current for n in job.needles):
            results.append(FileChange(path, Outcome.UNCHANGED, language))
            continue
        if doc is None:
            doc = languages.parse(language, data, path)
        if doc.problems:
            results.append(FileChange(path, Outcome.REFUSED, language, reason=_refusal(doc), **moved))
            continue
        facts = job.references.get(path, ())
        context = StepContext(path=path, recipe=job.recipe, step_index=job.index, source=op.path if op else "",
                              references=facts)
        if job.kind.plans_paths and op is None:  # a file that refers to one the step moves: its references only
            output = job.kind.plan(doc, job.params, context) if facts else StepOutput()
        else:
            output = job.kind.plan(doc, job.params, context)
        change = FileChange(path, Outcome.UNCHANGED, language, warnings=_warnings(doc, output.warnings),
                            notes=_warnings(doc, getattr(output, "notes", ())), **moved)
        if job.survey_params is not None:
            change.survey = (job.kind.survey(doc, job.survey_params),)
        refusals = getattr(output, "refusals", ())
        if refusals:
            first = _warnings(doc, refusals[:1])[0]
            more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
            change.outcome, change.reason = Outcome.REFUSED, f"{first}{more}"
            results.append(change)
            continue
        try:
            edits = normalize_edits(output.edits, doc)
            result = apply_to_document(doc, edits)
        except (EditConflict, EditRefused) as error:
            change.outcome, change.reason = Outcome.REFUSED, str(error)
            results.append(change)
            continue
        if result.data != doc.data:
            change.outcome = Outcome.CHANGED
            change.edits = _applied(doc, edits)
            change.hunks = changed_lines(change, doc.data, result.data)  # here, in the worker: bytes at hand
            derive(change, last)
            if language == "nix":  # the function head and references, read again only where an edit may change them
                before = shape if shape is not None else file_graph(doc, placed=False)
                shape = before.moved(edits) or file_graph(result, placed=False)
                if op is not None or shape != before:
                    change.graph = (before, shape)
            last, doc = change, result
        elif op is not None:
            change.outcome = Outcome.CHANGED
            change.before = change.after = doc.data
            if language == "nix":
                shape = shape if shape is not None else file_graph(doc, placed=False)
                change.graph = (shape, shape)
        results.append(change)
    return results


def _moved(op: FileOp | None) -> dict[str, Any]:
    """The FileChange fields that say where a renamed or cloned file came from."""
    if op is None:
        return {}
    return {"old_path": op.path} if op.action == "rename" else {"source": op.path}


# --- segments: where a step needs every file before it can plan ------------------------------


def _needs_survey(job: StepJob) -> bool:
    return job.kind.needs_survey(job.params)


class SurveyDocuments(Sequence):
    """The parsed, problem-free documents a `prepare` hook looks at, parsed lazily on each pass.

    A re-iterable sequence rather than a list, so a survey of ten thousand files
    never holds ten thousand trees at once.
    """

    def __init__(self, files: WorkingSet, job: StepJob, paths: Sequence[str]):
        self.files, self.job = files, job
        self.paths = [p for p in paths if self._wanted(p)]

    def _wanted(self, path: str) -> bool:
        if not self.job.applies_to(path, languages.language_for(path)):
            return False
        try:
            data = self.files.read(path)
        except SkippedFile:
            return False
        return not self.job.needles or any(n in data for n in self.job.needles)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        path = self.paths[index]
        return languages.parse(languages.language_for(path), self.files.read(path), path)

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            doc = self[index]
            if not doc.problems:
                yield doc


def _segments(jobs: Sequence[StepJob]) -> list[list[int]]:
    """Positions of `jobs`, grouped so that each group after the first starts with a surveying or file-level step,
    or one that reads the reference graph (it must see the files as the steps before it left them)."""
    segments: list[list[int]] = []
    for position, job in enumerate(jobs):
        if not segments or _needs_survey(job) or job.kind.plans_paths or job.kind.plans_references(job.params):
            segments.append([])
        segments[-1].append(position)
    return segments


# --- file-level steps: paths planned before contents -----------------------------------------


def _bytes_or_none(files: WorkingSet, path: str) -> bytes | None:
    """What a removed file held when planned (writers check it is still that), or None if it is not read."""
    try:
        return files.read(path)
    except SkippedFile:
        return None


def _plan_paths(files: WorkingSet, job: StepJob, plan: StepPlan) -> tuple[StepJob, dict[str, str]]:
    """Plan and check a file-level step's operations, move the paths in `files`; (job, modes of new paths).

    Removals are recorded in `plan` here (they have no content to plan); renames and
    clones get their FileChange from the content pass, where the job applies to their
    new paths only. A source that cannot be read (symlink, binary, too large) is skipped
    with its reason, like any file a step cannot read.
    """
    current = files.paths()
    selected = [p for p in current if matches(p, job.globs)]
    wanted = job.kind.plan_paths(selected, job.params)
    files.prefetch([op.path for op in wanted if op.target is not None])
    ops = []
    for op in wanted:
        reason = _unmovable(files, op.path) if op.target is not None else None
        if reason:
            plan.files.append(FileChange(op.path, Outcome.SKIPPED, languages.language_for(op.path) or "", reason=reason))
        else:
            ops.append(op)
    check_file_ops(ops, current, job.globs, job.label)
    why: dict[str, str] = {}
    if job.kind.plans_references(job.params):  # the graph as the steps before left it, before anything moves
        job, also = _with_references(files, job, plan, ops)
        taken = {op.path for op in ops}
        for path, note in also.items():
            if path not in taken:
                ops.append(remove(path))
                why[path] = note
    present = set(current)
    existing = {op.target: _existing(files, op, job) for op in ops if op.action == "clone" and op.target in present}
    modes = {op.target: files.mode(op.path) for op in ops if op.target is not None}
    for op in ops:
        if op.action == "remove":
            notes = [Warning(op.path, 0, 0, why[op.path])] if op.path in why else []
            plan.files.append(FileChange(op.path, Outcome.CHANGED, languages.language_for(op.path) or "",
                                         before=_bytes_or_none(files, op.path), removed=True, notes=notes))
    step = f"step {job.index} ({job.kind.name})"
    files.apply_ops(ops, lambda op: f"was renamed to {op.target} by {step}" if op.action == "rename"
                    else f"was removed by {step}")
    return replace(job, file_ops={op.target: op for op in ops if op.target is not None}, existing=existing,
                   ops=tuple(ops)), modes


def _with_references(files: WorkingSet, job: StepJob, plan: StepPlan, ops: Sequence[FileOp]
                     ) -> tuple[StepJob, dict[str, str]]:
    """The kind's `plan_references` over the graph of `files` (pinshift.planning.references): the job with the
    facts for each file's `plan`, and the paths it removes too (each with its note). A refusal stops the run
    (StepFailed, exit 1) before anything is planned or written; findings on files the step does not plan
    are recorded in `plan`."""
    found = plan_references(files, job, ops)
    if found.refusals:
        more = f" (and {len(found.refusals) - 1} more)" if len(found.refusals) > 1 else ""
        raise StepFailed(f"{job.label}: {found.refusals[0]}{more}; nothing was written")
    findings: dict[str, FileChange] = {}  # one FileChange per file, holding its findings
    for kind, items in (("warnings", found.warnings), ("notes", found.notes)):
        for path, line, column, message in items:
            if path not in findings:
                findings[path] = FileChange(path, Outcome.UNCHANGED, languages.language_for(path) or "")
            getattr(findings[path], kind).append(Warning(path, line, column, message))
    plan.files.extend(findings.values())
    return replace(job, references=dict(found.files), dangling=frozenset(found.dangling)), dict(found.remove)


def _unmovable(files: WorkingSet, path: str) -> str | None:
    """Why the file at `path` cannot be renamed or cloned, or None."""
    if files.mode(path) == "120000":
        return f"{path}: symlink; not renamed or cloned"
    try:
        files.read(path)
    except SkippedFile as skipped:
        return str(skipped)
    return None


def _existing(files: WorkingSet, op: FileOp, job: StepJob) -> bytes:
    """The bytes of a clone's target that is already there (compared with the clone once it is planned)."""
    try:
        return files.read(op.target)
    except SkippedFile as skipped:
        raise StepFailed(f"{job.label}: cannot clone {op.path} to {op.target}, which already exists "
                         f"({skipped}); nothing was written (remove it first, or choose another 'to')") from None


def _settle_file_ops(files: WorkingSet, job: StepJob, results: list, modes: Mapping[str, str]) -> None:
    """Give new paths their mode; a clone onto an existing file: byte-identical is a no-op, else refused."""
    for path, changes in results:
        change = changes[0]
        if change is None:
            continue
        change.mode = modes.get(path)
        if path not in job.existing or change.outcome is not Outcome.CHANGED:
            continue
        if change.after != job.existing[path]:
            raise StepFailed(f"{job.label}: cannot clone {change.source} to {path}, which already exists with "
                             f"other contents; nothing was written (remove it in an earlier step, or choose "
                             f"another 'to')")
        change.outcome, change.before, change.after, change.edits, change.mode = Outcome.UNCHANGED, None, None, [], None
        files.added.pop(path, None)  # the file there stays what it is


def _check_named_paths(files: WorkingSet, job: StepJob) -> None:
    """A step whose `files` (or `select`) glob names only paths an earlier step took away is a recipe error."""
    if not files.removed:
        return
    patterns = [("files", g) for g in job.globs]
    if job.kind.plans_paths:
        patterns += [("select", g) for g in getattr(job.params, "select", None) or ()]
    current = files.paths()
    for key, pattern in patterns:
        if any(matches(p, (pattern,)) for p in current):
            continue
        gone = sorted(p for p in files.removed if matches(p, (pattern,)))
        if gone:
            raise RecipeError(f"{job.label}: {key} '{pattern}' names {gone[0]}, which {files.removed[gone[0]]}; "
                              "name the files as that step leaves them; nothing was written")


# --- speculative surveys: guess from a few files, check against all of them -------------------

SAMPLE_FILES = 16  # documents a guess is made from


def _can_speculate(job: StepJob) -> bool:
    """A kind whose `prepare` splits into per-file `survey` + `resolve` can be surveyed while it plans."""
    return job.kind.can_survey


def _guess(files: WorkingSet, job: StepJob, paths: Sequence[str]) -> Any:
    """`resolve` over the first few surveyable files, or None when that is not enough to guess."""
    sample = []
    applying = [p for p in paths if job.applies_to(p, languages.language_for(p))]
    ahead, batch = 0, SAMPLE_FILES * 4
    for number, path in enumerate(applying):
        if len(sample) >= SAMPLE_FILES:
            break
        if number == ahead:  # read ahead in doubling batches: files without the step's needles may come first
            files.prefetch(applying[ahead : ahead + batch])
            ahead, batch = ahead + batch, batch * 2
        language = languages.language_for(path)
        try:
            data = files.read(path)
        except SkippedFile:
            continue
        if job.needles and not any(n in data for n in job.needles):
            continue
        doc = languages.parse(language, data, path)
        if not doc.problems:
            sample.append(job.kind.survey(doc, job.params))
    try:
        return job.kind.resolve(job.params, sample)
    except StepScriptError:
        raise
    except PinshiftError:
        return None


def _segment_paths(jobs: Sequence[StepJob], all_paths) -> list[str]:
    return [p for p in all_paths if any(j.applies_to(p, languages.language_for(p)) for j in jobs)]


def _skipped(path: str, reason: str, segment: Sequence[StepJob]) -> list[FileChange | None]:
    language = languages.language_for(path)
    return [FileChange(path, Outcome.SKIPPED, language or "", reason=reason) if job.applies_to(path, language) else None
            for job in segment]


def _file_run(files: WorkingSet, segment: Sequence[StepJob], memo: "plan_memo.Segment | None" = None,
              prints: "plan_memo.SegmentPrint | None" = None,
              applies: Mapping[str, tuple[bool, ...]] | None = None) -> pool.FileRun:
    """What the pool runs on one path of a segment: read it (unless given), then `process_file`.

    With a memo, the result is a `_Memoized` (the results as the memo stores them, pinshift.files.data_codec's
    data, looked up by the bytes' blob id or planned and encoded here, in the worker, which appends a new plan to
    the memo itself when it can and sends the results instead); `_run_segment` decodes and records it. (The `_Memoized` itself reaches the parent through the pool's own pipe, private to the two
    processes; only its payload, data, is ever written to disk.)
    """

    parent = os.getpid()

    def run(path: str, data: bytes | None, reason: str):
        if reason:
            return _skipped(path, reason, segment)
        if data is None:
            try:
                data = files.read(path)
            except SkippedFile as skipped:
                return _skipped(path, str(skipped), segment)
        if memo is None:
            return process_file(path, data, segment)
        key = _memo_key(segment, prints, applies[path], path, plan_memo.blob_id(data))
        payload = memo.lookup(key)
        if payload is not None:
            return _Memoized(key, payload, False)
        results = process_file(path, data, segment)
        payload = plan_memo.encode(results)
        if payload is None:  # a value the memo's codec does not keep: planned, not remembered
            return results
        # in the parent (no pool), the results themselves go along: no need to decode what was just encoded
        if os.getpid() == parent:
            return _Memoized(key, payload, True, results)
        if memo.append(key, payload):  # a worker stores its plan itself, and sends the results, not the payload
            return _Memoized(key, b"", True, results, written=True)
        return _Memoized(key, payload, True)

    return run


@dataclass(frozen=True)
class _Memoized:
    key: bytes
    payload: bytes  # plan_memo.encode(results): data, never a pickle
    fresh: bool  # planned now (else looked up)
    results: list | None = None  # the results themselves, when planned in this process or written by a worker
    written: bool = False  # a worker appended it to the memo itself (plan_memo.Segment.append)


def _applicability(segment: Sequence[StepJob], paths: Sequence[str]) -> dict[str, tuple[bool, ...]]:
    """For each path, whether each job of `segment` applies to it; jobs with the same globs match each path once."""
    by_globs: dict[tuple[str, ...], dict[str, bool]] = {}
    kinds = [(job, job.kind.plans_paths, job.kind.languages, by_globs.setdefault(job.globs, {})) for job in segment]
    table = {}
    for path in paths:
        language = languages.language_for(path)
        row = []
        for job, plans_paths, kind_languages, known in kinds:
            if plans_paths or language is None or language not in kind_languages:
                row.append(job.applies_to(path, language))
                continue
            found = known.get(path)
            if found is None:
                found = known[path] = matches(path, job.globs)
            row.append(found)
        table[path] = tuple(row)
    return table


def _memo_key(segment: Sequence[StepJob], prints: "plan_memo.SegmentPrint", applies: tuple[bool, ...], path: str,
              blob: str) -> bytes:
    """`path`'s memo key: its bytes, the steps that apply to it, and the file-level operations that made it."""
    steps = tuple(step if applying else None for applying, step in zip(applies, prints.steps))
    ops = tuple((op.action, op.path) if (op := job.file_ops.get(path)) is not None else None
                for job in segment if job.file_ops is not None)
    facts = tuple(plan_memo.canonical(job.references[path]) for job in segment if path in job.references)
    return plan_memo.file_key(path, blob, steps, ops + facts, prints.max_bytes)


def _remembered(files: WorkingSet, segment: Sequence[StepJob], prints: "plan_memo.SegmentPrint",
                applies: Mapping[str, tuple[bool, ...]], paths: Sequence[str], memo: "plan_memo.Segment") -> dict:
    """path -> its remembered results, for the files whose blob id the tree knows without reading them."""
    known: dict[str, list] = {}
    for path in paths:
        blob = files.memo_id(path)
        if blob is None:
            continue
        key = _memo_key(segment, prints, applies[path], path, blob)
        payload = memo.lookup(key)
        if payload is not None:
            found = plan_memo.decode(payload, len(segment))
            if found is None:
                memo.forget(key)  # damaged: planned like any file the memo lacks
            else:
                known[path] = found
    return known


def _run_segment(files: WorkingSet, jobs: list[StepJob], positions: list[int], all_paths, options) -> list:
    """(path, results) for every path a job of the segment applies to, in path order; with a memo, files it
    holds are looked up (`_remembered`, or by the pool's workers from the bytes they read) and new plans
    recorded in it."""
    segment = [jobs[p] for p in positions]
    applies = _applicability(segment, all_paths)
    paths = [p for p in all_paths if any(applies[p])]
    limit = getattr(files.tree, "max_bytes", None)
    prints = plan_memo.segment_fingerprint(segment, limit) if options.memo is not None else None
    if prints is None:
        with contextlib.closing(pool.process_files(files, paths, _file_run(files, segment), options)) as planned:
            return list(planned)
    memo = options.memo.segment(prints.shape)
    known = _remembered(files, segment, prints, applies, paths, memo)
    todo = [p for p in paths if p not in known]
    run = _file_run(files, segment, memo, prints, applies)
    # closed here whatever happens (Ctrl-C in this loop included): a pool left to the garbage collector
    # would be shut down by whichever thread collects it, its own manager thread too (which cannot join itself)
    forked = pool.worker_count(options, len(todo)) > 1  # forked workers append their new plans to the memo themselves
    with options.memo.appending(memo) if forked else contextlib.nullcontext(), \
            contextlib.closing(pool.process_files(files, todo, run, options)) as planned:
        return _merge_remembered(files, segment, memo, paths, known, planned, options)


def _merge_remembered(files: WorkingSet, segment: list[StepJob], memo: "plan_memo.Segment", paths: Sequence[str],
                      known: dict, planned: Iterator, options: RunOptions) -> list:
    """`_run_segment`'s results with a memo: remembered files from `known`, the others from the pool (`planned`,
    in path order), each new plan recorded."""
    results = []
    for path in paths:
        if path in known:
            options.memo.hits += 1
            results.append((path, known[path]))
            continue
        done, result = next(planned)
        if isinstance(result, _Memoized):
            found = result.results if result.results is not None else plan_memo.decode(result.payload, len(segment))
            if result.fresh:
                memo.written(result.key) if result.written else memo.record(result.key, result.payload)
                options.memo.misses += 1
            elif found is None:  # a damaged entry a worker found: plan the file here
                memo.forget(result.key)
                found = process_file(path, files.read(path), segment)
                options.memo.misses += 1
            else:
                memo.used.add(result.key)
                options.memo.hits += 1
            result = found
        results.append((done, result))
    return results


def run_jobs(files: WorkingSet, jobs: Sequence[StepJob], options: RunOptions = RunOptions()) -> list[StepPlan]:
    """Plan every job over `files` (recording changed bytes in it) and return one StepPlan per job.

    A segment's surveying step normally surveys every file first (one extra parse
    of each). When its kind offers `survey`/`resolve`, the runner instead guesses
    the prepared params from the first few files, surveys each file during the
    same pass that plans it, and checks the guess against all the surveys; a
    wrong guess (rare: only when files disagree) re-runs the segment with the
    right params, so the result is always what a full survey gives.
    """
    jobs = list(jobs)
    plans = [job.new_plan() for job in jobs]
    for positions in _segments(jobs):
        _check_named_paths(files, jobs[positions[0]])
        modes: dict[str, str] = {}
        if jobs[positions[0]].kind.plans_paths:
            jobs[positions[0]], modes = _plan_paths(files, jobs[positions[0]], plans[positions[0]])
        elif jobs[positions[0]].kind.plans_references(jobs[positions[0]].params):
            jobs[positions[0]], _ = _with_references(files, jobs[positions[0]], plans[positions[0]], ())
        for position in positions[1:]:
            _check_named_paths(files, jobs[position])
        all_paths = files.paths()
        first = jobs[positions[0]]
        speculated = None
        if _needs_survey(first):
            guess = _guess(files, first, all_paths) if _can_speculate(first) else None
            if guess is not None:
                speculated = first
                jobs[positions[0]] = replace(first, params=guess, survey_params=first.params)
            else:
                files.prefetch(_segment_paths([first], all_paths))
                survey = SurveyDocuments(files, first, all_paths)
                jobs[positions[0]] = replace(first, params=first.kind.prepare(first.params, survey))
        results = _run_segment(files, jobs, positions, all_paths, options)
        if speculated is not None:
            surveys = [c.survey[0] for _, changes in results if (c := changes[0]) is not None and c.survey]
            actual = speculated.kind.resolve(speculated.params, surveys)
            if actual != guess:
                jobs[positions[0]] = replace(speculated, params=actual)
                results = _run_segment(files, jobs, positions, all_paths, options)
        if first.kind.plans_paths:
            _settle_file_ops(files, jobs[positions[0]], results, modes)
        check_segment(files, [jobs[p] for p in positions], results, [plans[p] for p in positions])
        for path, changes in results:
            _share_held(files, path, changes)
            for position, change in zip(positions, changes):
                if change is not None:
                    change.survey = None
                    plans[position].files.append(change)
                    plans[position].notes.extend(str(note) for note in change.notes)
            final = next((c for c in reversed(changes) if c is not None and c.__dict__.get("_after") is not None), None)
            if final is not None:
                files.changed[path] = final  # its bytes are read when a later segment needs them
    for plan in plans:
        plan.files.sort(key=lambda f: f.path)
    return plans


def _share_held(files: WorkingSet, path: str, changes) -> None:
    """Derive a segment's first change of `path` from the change the last segment left, not from a copy of its bytes."""
    held = files.changed.get(path)
    if not isinstance(held, FileChange):
        return
    first = next((c for c in changes if c is not None and isinstance(c.__dict__.get("_before"), bytes)
                  and c.__dict__.get("_after") is DERIVED), None)
    if first is not None and first.__dict__["_before"] == held.after:
        first.__dict__["_before"] = held


# --- the public entry points ------------------------------------------------------------------


def plan_step(
    files: WorkingSet,
    kind: StepKind,
    params: Any,
    globs: Sequence[str],
    index: int = 1,
    total: int = 1,
    title: str = "",
    message: str = "",
    recipe: str = "",
    raw_params: Mapping[str, Any] | None = None,
    options: RunOptions = RunOptions(),
    tree_globs: Sequence[str] | None = None,
) -> StepPlan:
    """Plan one step over the files matching `globs`, and record its results in `files`.

    `tree_globs`: the files the step may edit for their references (default: `globs`)."""
    job = StepJob(
        index=index, total=total, kind=kind, params=params, globs=tuple(globs), title=title,
        message=message, recipe=recipe, raw_params=dict(raw_params or {}), needles=kind.needles(params),
        tree_globs=tuple(tree_globs if tree_globs is not None else globs),
    )
    return run_jobs(files, [job], options)[0]


def plan_recipe(
    tree: SourceTree,
    recipe: Recipe,
    resolved: Sequence[tuple[RecipeStep, StepKind, Any]],
    options: RunOptions = RunOptions(),
    start: int = 1,
) -> Plan:
    """Plan every step of `recipe` from step `start` on, each on the output of the one before."""
    total = len(resolved)
    jobs = [
        StepJob(
            index=index, total=total, kind=kind, params=params, globs=tuple(recipe.files_for(step)),
            title=step.title, message=step.message, recipe=recipe.name, raw_params=dict(step.params),
            needles=kind.needles(params), tree_globs=tuple(recipe.files),
        )
        for index, (step, kind, params) in enumerate(resolved, 1)
        if index >= start
    ]
    return Plan(recipe=recipe.name, steps=run_jobs(WorkingSet(tree), jobs, options))
