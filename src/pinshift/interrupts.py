"""Ctrl-C, SIGTERM and SIGHUP: one way to stop, and short stretches where stopping must wait.

`handling_signals()` (the CLI wraps every command in it) makes SIGTERM and SIGHUP
stop pinshift the way Ctrl-C does: as an `Interrupted` exception (a KeyboardInterrupt),
so every `finally` that removes a temporary worktree runs whichever signal arrived.

`deferred()` holds such signals back while a short operation that must not be cut in
half runs (creating a worktree, setting a branch, removing what pinshift made); the
signal goes to the handler that was in place when the stretch ends (an enclosing
`deferred()` keeps holding it), unless the caller takes it (`take()`): a run
whose branch is complete reports that, not "interrupted". Only the first signal raises:
a second one never cuts short the cleanup the first started.
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
from contextlib import contextmanager

SIGNALS = tuple(s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                if s is not None)


class Interrupted(KeyboardInterrupt):
    """pinshift was asked to stop by a signal; `signum` says which (exit code 128 + signum)."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __reduce__(self):
        return (Interrupted, (self.signum,))  # crosses process boundaries (fan-out workers)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def _handled_by(handler):
    """`handler` for SIGINT, SIGTERM and SIGHUP inside the block (main thread only); the old handlers after."""
    previous: dict = {}
    if not _main_thread():
        yield previous
        return
    try:  # a signal taken while the handlers are being swapped still finds the old ones put back
        for signum in SIGNALS:
            try:
                previous[signum] = signal.signal(signum, handler)
            except (OSError, ValueError):
                pass
        yield previous
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def handling_signals():
    """SIGINT, SIGTERM and SIGHUP raise `Interrupted` inside the block; the old handlers come back after.

    Only the first one raises: pinshift is then stopping, and a second Ctrl-C (or the SIGTERM a fan-out's
    worker gets from its stopping parent) must not land in the cleanup an `except` or `finally` block is about
    to start, before its `deferred()` holds signals; later ones are dropped (the exit code is the first's).
    """
    raised = []

    def first_only(signum, frame) -> None:
        if not raised:
            raised.append(signum)
            raise Interrupted(signum)

    return _handled_by(first_only)


class Deferred:
    """The signals received while a `deferred()` block ran."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.taken = False

    def __call__(self, signum, frame) -> None:
        self.received.append(signum)

    def take(self) -> int | None:
        """The first signal received (None if none), which the block's end then does not raise."""
        self.taken = True
        return self.received[0] if self.received else None


@contextmanager
def deferred():
    """Hold SIGINT/SIGTERM/SIGHUP until the block ends, then raise the first one as `Interrupted`.

    Child processes in the same process group still receive a terminal's Ctrl-C; the block
    must leave a state its caller can clean up either way (pinshift removes its worktree by path).
    """
    state = Deferred()
    with _handled_by(state) as previous:
        yield state
    if state.received and not state.taken:
        _deliver(state.received[0], previous.get(state.received[0]))


def _deliver(signum: int, handler) -> None:
    """A held signal, given to the handler that was in place: an enclosing `deferred()` keeps holding it, a fan-out
    worker ignores SIGINT (its parent decides) and raises its first SIGTERM, the CLI raises its first signal;
    with Python's own handlers (or none) it raises `Interrupted`."""
    if callable(handler) and handler is not signal.default_int_handler:
        handler(signum, None)
    elif handler != signal.SIG_IGN:
        raise Interrupted(signum)


def ignore_in_workers() -> None:
    """Pool workers: the parent alone decides how to stop (Ctrl-C reaches the whole process group)."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN if signum == signal.SIGINT else signal.SIG_DFL)


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_prctl = None  # libc's prctl, found once (a child between fork and exec must not load a library)


def prepare_die_with_parent() -> None:
    """Find libc's prctl now, in the parent, so that `die_with_parent` in a child (subprocess's `preexec_fn`,
    between fork and exec, where loading a library could deadlock on a lock another thread held) only calls it."""
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _prctl = False


def die_with_parent(signum: int) -> bool:
    """Ask the kernel to send this (forked) process `signum` when its parent dies (Linux `PR_SET_PDEATHSIG`,
    through ctypes' prctl); False where it cannot (another system): callers watch the parent themselves.
    (The parent is the thread that forked: a child of a pool thread dies with that thread.)"""
    if not sys.platform.startswith("linux"):
        return False
    prepare_die_with_parent()
    if not _prctl:
        return False
    return _prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
