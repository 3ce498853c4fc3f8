"""A segment's files looked up in the plan memo before they are planned, and new plans recorded in it.

The memo itself (its keys, store and codec) is `pinshift.planning.memo`; this is the runner's side: a file's
key from the steps that apply to it (`memo_key`), the files whose blob id the tree knows looked up without
reading them (`remembered`), and the pool's results merged with them in path order (`merge_remembered`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from pinshift.planning import file_edits
from pinshift.planning import memo as plan_memo
from pinshift.planning.jobs import RunOptions, StepJob
from pinshift.planning.working_set import WorkingSet


@dataclass(frozen=True)
class Memoized:
    key: bytes
    payload: bytes  # plan_memo.encode(results): data, never a pickle
    fresh: bool  # planned now (else looked up)
    results: list | None = None  # the results themselves, when planned in this process or written by a worker
    written: bool = False  # a worker appended it to the memo itself (plan_memo.Segment.append)


def memo_key(segment: Sequence[StepJob], prints: "plan_memo.SegmentPrint", applies: tuple[bool, ...], path: str,
             blob: str) -> bytes:
    """`path`'s memo key: its bytes, the steps that apply to it, and the file-level operations that made it."""
    steps = tuple(step if applying else None for applying, step in zip(applies, prints.steps))
    ops = tuple((op.action, op.path) if (op := job.file_ops.get(path)) is not None else None
                for job in segment if job.file_ops is not None)
    facts = tuple(plan_memo.canonical(job.references[path]) for job in segment if path in job.references)
    return plan_memo.file_key(path, blob, steps, ops + facts, prints.max_bytes)


def remembered(files: WorkingSet, segment: Sequence[StepJob], prints: "plan_memo.SegmentPrint",
               applies: Mapping[str, tuple[bool, ...]], paths: Sequence[str], memo: "plan_memo.Segment") -> dict:
    """path -> its remembered results, for the files whose blob id the tree knows without reading them."""
    known: dict[str, list] = {}
    for path in paths:
        blob = files.memo_id(path)
        if blob is None:
            continue
        key = memo_key(segment, prints, applies[path], path, blob)
        payload = memo.lookup(key)
        if payload is not None:
            found = plan_memo.decode(payload, len(segment))
            if found is None:
                memo.forget(key)  # damaged: planned like any file the memo lacks
            else:
                known[path] = found
    return known


def merge_remembered(files: WorkingSet, segment: list[StepJob], memo: "plan_memo.Segment", paths: Sequence[str],
                     known: dict, planned: Iterator, options: RunOptions) -> list:
    """`run_segment`'s results with a memo: remembered files from `known`, the others from the pool (`planned`,
    in path order), each new plan recorded."""
    results = []
    for path in paths:
        if path in known:
            options.memo.hits += 1
            results.append((path, known[path]))
            continue
        done, result = next(planned)
        if isinstance(result, Memoized):
            found = result.results if result.results is not None else plan_memo.decode(result.payload, len(segment))
            if result.fresh:
                memo.written(result.key) if result.written else memo.record(result.key, result.payload)
                options.memo.misses += 1
            elif found is None:  # a damaged entry a worker found: plan the file here
                memo.forget(result.key)
                found = file_edits.process_file(path, files.read(path), segment)
                options.memo.misses += 1
            else:
                memo.used.add(result.key)
                options.memo.hits += 1
            result = found
        results.append((done, result))
    return results
