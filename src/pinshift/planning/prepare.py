"""A segment's first step made ready before any content is planned, and settled after.

A file-level step (rename-files, clone-files, remove-files: a kind with `plan_paths`) has its paths planned
from the paths as the steps before it left them, checked (`pinshift.files.fileops.check_file_ops`) and moved
in the WorkingSet (`plan_paths`); once its content is planned, a clone onto an existing file is settled
(`settle_file_ops`). A step that reads the reference graph gets its facts (`with_references`, over
`pinshift.planning.references`). A step whose globs name only paths taken away is a recipe error
(`check_named_paths`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pinshift import languages
from pinshift.errors import RecipeError, StepFailed
from pinshift.files.fileops import FileOp, check_file_ops, remove
from pinshift.files.globs import matches
from pinshift.files.tree import SkippedFile
from pinshift.planning.jobs import StepJob
from pinshift.planning.plan import FileChange, Outcome, StepPlan, Warning
from pinshift.planning.references import plan_references
from pinshift.planning.working_set import WorkingSet


def _bytes_or_none(files: WorkingSet, path: str) -> bytes | None:
    """What a removed file held when planned (writers check it is still that), or None if it is not read."""
    try:
        return files.read(path)
    except SkippedFile:
        return None


def plan_paths(files: WorkingSet, job: StepJob, plan: StepPlan) -> tuple[StepJob, dict[str, str]]:
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
        job, also = with_references(files, job, plan, ops)
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


def with_references(files: WorkingSet, job: StepJob, plan: StepPlan, ops: Sequence[FileOp]
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


def settle_file_ops(files: WorkingSet, job: StepJob, results: list, modes: Mapping[str, str]) -> None:
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


def check_named_paths(files: WorkingSet, job: StepJob) -> None:
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
