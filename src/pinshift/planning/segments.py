"""Segments: the steps cut where one needs every file before it can plan, and one segment's files planned.

A segment starts at a surveying step, a file-level step or a step that reads the reference graph
(`segments_of`); its files go through `pinshift.planning.file_edits.process_file` one at a time, shared out
by `pinshift.planning.pool`, looked up first in the plan memo when there is one
(`pinshift.planning.memo_lookup`), and come back in path order (`run_segment`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence

from pinshift import languages
from pinshift.files.globs import matches
from pinshift.files.tree import SkippedFile
from pinshift.planning import file_edits
from pinshift.planning import memo as plan_memo
from pinshift.planning import pool
from pinshift.planning.jobs import StepJob
from pinshift.planning.memo_lookup import Memoized, memo_key, merge_remembered, remembered
from pinshift.planning.plan import FileChange, Outcome
from pinshift.planning.survey import needs_survey
from pinshift.planning.working_set import WorkingSet


def segments_of(jobs: Sequence[StepJob]) -> list[list[int]]:
    """Positions of `jobs`, grouped so that each group after the first starts with a surveying or file-level step,
    or one that reads the reference graph (it must see the files as the steps before it left them)."""
    segments: list[list[int]] = []
    for position, job in enumerate(jobs):
        if not segments or needs_survey(job) or job.kind.plans_paths or job.kind.plans_references(job.params):
            segments.append([])
        segments[-1].append(position)
    return segments


def _skipped(path: str, reason: str, segment: Sequence[StepJob]) -> list[FileChange | None]:
    language = languages.language_for(path)
    return [FileChange(path, Outcome.SKIPPED, language or "", reason=reason) if job.applies_to(path, language) else None
            for job in segment]


def _file_run(files: WorkingSet, segment: Sequence[StepJob], memo: "plan_memo.Segment | None" = None,
              prints: "plan_memo.SegmentPrint | None" = None,
              applies: Mapping[str, tuple[bool, ...]] | None = None) -> pool.FileRun:
    """What the pool runs on one path of a segment: read it (unless given), then `process_file`.

    With a memo, the result is a `Memoized` (the results as the memo stores them, pinshift.files.data_codec's
    data, looked up by the bytes' blob id or planned and encoded here, in the worker, which appends a new plan to
    the memo itself when it can and sends the results instead); `run_segment` decodes and records it. (The `Memoized` itself reaches the parent through the pool's own pipe, private to the two
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
            return file_edits.process_file(path, data, segment)
        key = memo_key(segment, prints, applies[path], path, plan_memo.blob_id(data))
        payload = memo.lookup(key)
        if payload is not None:
            return Memoized(key, payload, False)
        results = file_edits.process_file(path, data, segment)
        payload = plan_memo.encode(results)
        if payload is None:  # a value the memo's codec does not keep: planned, not remembered
            return results
        # in the parent (no pool), the results themselves go along: no need to decode what was just encoded
        if os.getpid() == parent:
            return Memoized(key, payload, True, results)
        if memo.append(key, payload):  # a worker stores its plan itself, and sends the results, not the payload
            return Memoized(key, b"", True, results, written=True)
        return Memoized(key, payload, True)

    return run


def applicability(segment: Sequence[StepJob], paths: Sequence[str]) -> dict[str, tuple[bool, ...]]:
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


def run_segment(files: WorkingSet, jobs: list[StepJob], positions: list[int], all_paths, options) -> list:
    """(path, results) for every path a job of the segment applies to, in path order; with a memo, files it
    holds are looked up (`remembered`, or by the pool's workers from the bytes they read) and new plans
    recorded in it."""
    segment = [jobs[p] for p in positions]
    applies = applicability(segment, all_paths)
    paths = [p for p in all_paths if any(applies[p])]
    limit = getattr(files.tree, "max_bytes", None)
    prints = plan_memo.segment_fingerprint(segment, limit) if options.memo is not None else None
    if prints is None:
        with contextlib.closing(pool.process_files(files, paths, _file_run(files, segment), options)) as planned:
            return list(planned)
    memo = options.memo.segment(prints.shape)
    known = remembered(files, segment, prints, applies, paths, memo)
    todo = [p for p in paths if p not in known]
    run = _file_run(files, segment, memo, prints, applies)
    # closed here whatever happens (Ctrl-C in this loop included): a pool left to the garbage collector
    # would be shut down by whichever thread collects it, its own manager thread too (which cannot join itself)
    forked = pool.worker_count(options, len(todo)) > 1  # forked workers append their new plans to the memo themselves
    with options.memo.appending(memo) if forked else contextlib.nullcontext(), \
            contextlib.closing(pool.process_files(files, todo, run, options)) as planned:
        return merge_remembered(files, segment, memo, paths, known, planned, options)
