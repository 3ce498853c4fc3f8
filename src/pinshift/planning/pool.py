"""Share files out to worker processes and hand back results in a deterministic order.

Files are independent once a segment's parameters are prepared (see runner), so
large runs fan out over a fork-started process pool sized to the CPUs. Workers
inherit the function to run through fork (user-loaded step modules need not pickle).
Workers read their files themselves when the tree is `fork_safe` (plain files;
git objects through one `git cat-file --batch` per chunk), else the parent reads
them; the parent receives results chunk by chunk in submission order, so the
merged plan is identical to a serial run.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from pinshift.files.tree import SkippedFile
from pinshift.interrupts import die_with_parent, ignore_in_workers

PARALLEL_MIN_FILES = 400  # below this, starting workers costs more than it saves

# run(path, data, reason) -> result: data None means "read it yourself"; a reason means "skipped: reason"
FileRun = Callable[[str, "bytes | None", str], Any]

_RUN: FileRun | None = None  # what workers run on each file; set in the parent just before forking
_FILES = None  # the tree workers prefetch from (fork-safe trees only)


def worker_count(options, files: int) -> int:
    """How many processes to use for `files` files (1 means: stay in this process)."""
    if options.jobs:
        return max(1, options.jobs)
    forced = os.environ.get("PINSHIFT_JOBS", "")
    if forced.isdigit() and int(forced) > 0:
        return int(forced)
    if files < PARALLEL_MIN_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _prefetch(files, paths: Sequence[str]) -> None:
    """Let the tree read `paths` in bulk where it can (git objects: one batch per chunk)."""
    hook = getattr(files, "prefetch", None)
    if hook is not None:
        hook(paths)


def _work(chunk: list[tuple[str, bytes | None, str]]) -> list:
    _prefetch(_FILES, [path for path, data, reason in chunk if data is None and not reason])
    return [_RUN(path, data, reason) for path, data, reason in chunk]


def _reads_in_workers(files) -> bool:
    """Whether forked workers may read files themselves (plain files on disk: yes; git objects: no)."""
    return bool(getattr(getattr(files, "tree", files), "fork_safe", False))


def process_files(files, paths: Sequence[str], run: FileRun, options) -> Iterator[tuple[str, Any]]:
    """(path, run(path, …)) for every path, in the order of `paths`; `files` is what `run` reads from.

    A reader that may stop early (an error, Ctrl-C) closes the generator itself (`contextlib.closing`),
    so the pool ends there and then, not whenever and wherever the garbage collector finalizes it.
    """
    total = len(paths)
    workers = worker_count(options, total)
    if workers == 1:
        _prefetch(files, paths)
        for number, path in enumerate(paths, 1):
            if options.progress:
                options.progress(number, total)
            yield path, run(path, None, "")
        return

    global _RUN, _FILES
    _RUN, _FILES = run, files  # inherited by the forked workers, with the overlay as it is now
    size = max(8, min(256, total // (workers * 8) or 1))
    in_workers = _reads_in_workers(files)
    chunks = [
        [(path, None, "") if in_workers else _parent_read(files, path) for path in paths[i : i + size]]
        for i in range(0, total, size)
    ]
    done = 0
    context = multiprocessing.get_context("fork")
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker)
    try:
        for chunk, results in zip(chunks, executor.map(_work, chunks)):
            for (path, _, _), result in zip(chunk, results):
                yield path, result
            done += len(chunk)
            if options.progress:
                options.progress(done, total)
    finally:  # the end, an error, an interrupt, or the consumer closing this generator early
        _RUN, _FILES = None, None
        _shut_down(executor)


def _start_worker() -> None:
    """A worker: the parent alone decides how to stop, and a worker never outlives it (it only plans)."""
    ignore_in_workers()
    die_with_parent(signal.SIGKILL)


def _shut_down(executor: ProcessPoolExecutor) -> None:
    """Cancel what has not started and wait for the workers, unless this runs on the pool's own manager
    thread (a generator finalized there by the garbage collector): a thread cannot join itself."""
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=threading.current_thread() is not manager, cancel_futures=True)


def _parent_read(files, path: str) -> tuple[str, bytes | None, str]:
    """The parent's read, for trees workers must not touch: (path, bytes, "") or (path, None, reason)."""
    try:
        return path, files.read(path), ""
    except SkippedFile as skipped:
        return path, None, str(skipped)
