"""One file through a segment's steps: each step's edits planned on the current tree, applied in one pass,
the tree re-parsed incrementally for the next step (`process_file`).

Runs in the pool's workers as well as in the parent; it reads nothing but the bytes it is given and never
writes, runs git or prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinshift import languages
from pinshift.edits import apply_to_document, normalize_edits
from pinshift.errors import EditConflict, EditRefused
from pinshift.files.fileops import FileOp
from pinshift.graph.tree import file_graph
from pinshift.planning.changed_lines import changed_lines
from pinshift.planning.jobs import StepJob
from pinshift.planning.plan import AppliedEdit, FileChange, Outcome, Warning, derive
from pinshift.steps.kind import StepContext, StepOutput


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
