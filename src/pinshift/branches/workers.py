"""Forked worker processes that take one job at a time, stop when told, and die with their parent.

A fan-out runs each base in a process of its own (`pinshift.branches.fanout`). What a process pool of the
standard library cannot promise, this module does:

- **A job starts only when the parent hands it out**, one at a time to an idle worker; after a signal
  the parent hands out nothing more, so no job starts after it (a pool queues jobs ahead).
- **A signal to the parent alone reaches every worker**: SIGINT, SIGTERM or SIGHUP to the parent
  (`kill PID`, what CI runners and systemd send) makes it send SIGTERM to each worker, whose job ends
  the way a Ctrl-C ends a single run (its `finally` blocks remove what it made). A terminal's Ctrl-C,
  which reaches the whole process group, is left to the parent too: workers do not act on SIGINT.
- **A worker dies with its parent**: on Linux the kernel sends it SIGTERM when the parent dies
  (`PR_SET_PDEATHSIG`, through ctypes' prctl); everywhere a thread watches a pipe whose other end only
  the parent holds and sends the same SIGTERM when it closes. A worker also checks, before each job,
  that its parent is the one that forked it, so even a worker that missed both starts nothing.
- **Nothing blocks on a dead parent**: results go back through a pipe whose read end only the parent
  holds; a write to it after the parent died fails at once (EPIPE) and the worker exits.

`run(jobs, work, processes)` yields `(index, result)` as workers finish; `work` runs in the forked
process (it is inherited through fork, never pickled), its result is pickled back. That pickle is no
cache and crosses no trust boundary: the pipes are anonymous (`os.pipe`, never a named file) and close on
exec, so only the parent and the processes it forked, all pinshift running the user's own code, hold them
and can write what another unpickles; nothing of it reaches the disk (the caches hold data only:
pinshift.files.data_codec). An interrupt in the
parent raises `Stopped` once every worker has exited: the results that came back before the signal,
those that came back while the workers stopped, and the signal.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pinshift.interrupts import Interrupted, deferred, die_with_parent

STOP_SIGNAL = signal.SIGTERM  # what a worker receives from its stopping (or dying) parent
STOP_GRACE = 30.0  # seconds a stopped worker has to clean up before it is killed
_FRAME = struct.Struct(">Q")  # each message: its length, then its pickle


class WorkerFailed(Exception):
    """A worker's `work` raised something other than an interrupt (a bug): its traceback, as text."""


class Stopped(KeyboardInterrupt):
    """The parent was interrupted: the results that came back `before` the signal and `during` the stop
    (job index -> result), once every worker has exited; `signum` is the signal (exit code 128 + signum)."""

    def __init__(self, signum: int, before: dict[int, Any], during: dict[int, Any]):
        super().__init__(signal.Signals(signum).name)
        self.signum, self.before, self.during = signum, before, during


# --- the worker's side ------------------------------------------------------------------------------


def _die_with(parent: int, lifeline: int) -> None:
    """Be sent STOP_SIGNAL when `parent` dies: by the kernel on Linux, by a watcher thread everywhere."""
    die_with_parent(STOP_SIGNAL)

    def watch() -> None:
        try:
            while os.read(lifeline, 1):
                pass
        except OSError:
            pass
        os.kill(os.getpid(), STOP_SIGNAL)

    threading.Thread(target=watch, name="pinshift-lifeline", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the watch began
        os.kill(os.getpid(), STOP_SIGNAL)


def _stop_handlers() -> None:
    """SIGTERM/SIGHUP end the current job as an `Interrupted` (once: a second one never cuts the cleanup
    short); SIGINT does nothing here, the parent decides. Python-level handlers, so the programs a job
    runs (git) still get a terminal's Ctrl-C as usual."""
    state = {"raised": False}

    def stop(signum, frame) -> None:
        if not state["raised"]:
            state["raised"] = True
            raise Interrupted(signum)

    signal.signal(signal.SIGINT, lambda signum, frame: None)
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, stop)


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _worker(parent: int, jobs: int, results: int, lifeline: int, work: Callable[[Any], Any]) -> int:
    """A worker's whole life: take a job, run it, send the result; until the jobs pipe closes or a stop."""
    _stop_handlers()
    _die_with(parent, lifeline)
    try:
        while True:
            header = _read_exactly(jobs, _FRAME.size)
            if header is None or os.getppid() != parent:
                return 0
            index, job = pickle.loads(_read_exactly(jobs, _FRAME.unpack(header)[0]) or b"")
            if os.getppid() != parent:
                return 0
            try:
                message = ("done", index, work(job))
            except KeyboardInterrupt:
                message = ("stopped", index, None)
            except BaseException:
                message = ("error", index, traceback.format_exc())
            with deferred() as late:  # a whole message or none: a stop waits for the last byte
                _send(results, message)
                if message[0] != "done" or late.take() is not None:
                    return 0
    except (KeyboardInterrupt, OSError, EOFError, pickle.UnpicklingError):
        return 0  # stopped while idle, or the parent is gone (EPIPE): nothing to clean up


# --- the parent's side ------------------------------------------------------------------------------


@dataclass
class _Process:
    pid: int
    jobs: int  # write end: the jobs we hand out
    results: int  # read end: what comes back
    buffer: bytearray = field(default_factory=bytearray)
    job: int | None = None  # the index of the job it runs
    open: bool = True


def _fork(parent_fds: list[int], lifeline: tuple[int, int], work) -> _Process:
    jobs_r, jobs_w = os.pipe()
    results_r, results_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: keep its own ends only, never return into the parent's stack
        code = 1
        try:
            for fd in (*parent_fds, jobs_w, results_r, lifeline[1]):
                os.close(fd)
            code = _worker(os.getppid(), jobs_r, results_w, lifeline[0], work)
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(code)
    os.close(jobs_r)
    os.close(results_w)
    parent_fds += [jobs_w, results_r]
    return _Process(pid, jobs_w, results_r)


def _messages(process: _Process) -> Iterator[tuple]:
    """The whole messages in `process`'s buffer, removed from it."""
    buffer = process.buffer
    while len(buffer) >= _FRAME.size:
        size = _FRAME.unpack_from(buffer)[0]
        if len(buffer) < _FRAME.size + size:
            return
        message = pickle.loads(buffer[_FRAME.size:_FRAME.size + size])
        del buffer[:_FRAME.size + size]
        yield message


class _Pool:
    """The parent's side: the workers, their pipes, and which job each runs."""

    def __init__(self, jobs: Sequence[Any], work: Callable[[Any], Any], processes: int):
        self.jobs, self.work = list(jobs), work
        self.next = 0
        self.selector = selectors.DefaultSelector()
        self.lifeline = os.pipe()
        self.fds: list[int] = []
        self.processes: list[_Process] = []
        for _ in range(max(1, min(processes, len(self.jobs)))):
            self.start()

    def start(self) -> _Process:
        """A new worker (for the next job; with none left, it exits as soon as `hand_out` tells it)."""
        process = _fork(self.fds, self.lifeline, self.work)
        self.processes.append(process)
        self.selector.register(process.results, selectors.EVENT_READ, process)
        return process

    def hand_out(self, process: _Process) -> None:
        """Give `process` the next job, or close its jobs pipe (it exits) when none is left."""
        if self.next < len(self.jobs):
            process.job = self.next
            _send(process.jobs, (self.next, self.jobs[self.next]))
            self.next += 1
        else:
            self._close_jobs(process)

    def _close_jobs(self, process: _Process) -> None:
        if process.jobs >= 0:
            os.close(process.jobs)
            self.fds.remove(process.jobs)
            process.jobs = -1

    def ready(self, timeout: float | None = None) -> list:
        """The workers with something to read (the one place the parent waits, and may be interrupted)."""
        return self.selector.select(timeout)

    def receive(self, ready) -> Iterator[tuple[_Process, tuple | None]]:
        """(process, message) for each whole message from the `ready` workers; (process, None) once a
        worker's pipe closed (it exited)."""
        for key, _ in ready:
            process = key.data
            chunk = os.read(process.results, 1 << 20)
            process.buffer += chunk
            for message in _messages(process):
                process.job = None
                yield process, message
            if not chunk:
                self.selector.unregister(process.results)
                os.close(process.results)
                self.fds.remove(process.results)
                process.open = False
                yield process, None

    @property
    def running(self) -> bool:
        return any(p.open for p in self.processes)

    def stop(self) -> dict[int, Any]:
        """Hand out nothing more, SIGTERM every worker, collect what still comes back until each has
        exited; a worker that takes longer than STOP_GRACE to clean up is killed."""
        done = {}
        for process in self.processes:
            self._close_jobs(process)
            if process.open:
                _signal(process.pid, STOP_SIGNAL)
        deadline = time.monotonic() + STOP_GRACE
        while self.running and time.monotonic() < deadline:
            for _, message in self.receive(self.ready(timeout=0.2)):
                if message is not None and message[0] == "done":
                    done[message[1]] = message[2]
        for process in self.processes:
            if process.open:
                _signal(process.pid, signal.SIGKILL)
        return done

    def close(self) -> None:
        for fd in (*self.fds, *self.lifeline):
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()
        for process in self.processes:
            try:
                os.waitpid(process.pid, 0)
            except ChildProcessError:
                pass
        self.selector.close()


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def run(jobs: Sequence[Any], work: Callable[[Any], Any], processes: int,
        lost: Callable[[int, str], Any], finished: Callable[[int, int], None] | None = None) -> list[Any]:
    """`work(job)` for every job, in forked workers (see the module's docstring); results in job order;
    `finished(index, count)` in the parent as each job's result arrives (`count` results so far).

    A job whose worker ended without a result (killed from outside) gets `lost(index, reason)` and a
    new worker takes the next job. An interrupt in the parent (`Interrupted`, KeyboardInterrupt) raises
    `Stopped` once every worker has exited; a `work` that raised raises `WorkerFailed` (the others stopped).
    """
    with deferred() as late:  # the workers are all started, or none: an interrupt meanwhile is taken below
        pool = _Pool(jobs, work, processes)
        early = late.take()
    results: dict[int, Any] = {}
    try:
        if early is not None:
            raise Interrupted(early)
        for process in pool.processes:
            pool.hand_out(process)
        while pool.running:
            ready = pool.ready()
            with deferred() as late:  # what arrived is taken whole; a signal meanwhile hands out nothing more
                for process, message in pool.receive(ready):
                    if message is None:
                        if process.job is not None:
                            results[process.job] = lost(process.job, f"its worker (pid {process.pid}) ended")
                            process.job = None
                            if not late.received and pool.next < len(pool.jobs):
                                pool.hand_out(pool.start())
                        continue
                    kind, index, value = message
                    if kind == "error":
                        raise WorkerFailed(value)
                    results[index] = value if kind == "done" else lost(index, "its worker was stopped by a signal")
                    if finished is not None:
                        finished(index, len(results))
                    if late.received:
                        continue
                    if kind == "done":
                        pool.hand_out(process)
                    elif pool.next < len(pool.jobs):  # a stopped worker exits: another takes the next job
                        pool.hand_out(pool.start())
    except KeyboardInterrupt as stop:
        with deferred() as late:  # a second Ctrl-C must not cut the workers' cleanup short
            during = pool.stop()
            pool.close()
            late.take()
        raise Stopped(getattr(stop, "signum", signal.SIGINT), results, during) from None
    except BaseException:
        with deferred() as late:
            pool.stop()
            pool.close()
            late.take()
        raise
    pool.close()
    return [results[index] for index in range(len(jobs))]
