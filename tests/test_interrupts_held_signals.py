"""pinshift.interrupts with real signals sent to this process: only the first one raises, and a held signal goes
back to the handler that was in place (an enclosing `deferred()` keeps holding it; a fan-out worker's ignores
SIGINT). Each of these raised in the old code, where it could cut a worktree's cleanup short."""

from __future__ import annotations

import os
import signal

import pytest

from pinshift.interrupts import Interrupted, deferred, handling_signals


def test_only_the_first_signal_raises_so_the_cleanup_it_starts_runs_to_its_end():
    cleaned = []
    with pytest.raises(Interrupted) as stop:
        with handling_signals():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                raise AssertionError("the signal should have raised")
            finally:
                os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C, before any deferred() holds it
                cleaned.append("worktree")
    assert stop.value.signum == signal.SIGTERM and cleaned == ["worktree"]
    with pytest.raises(Interrupted):  # a new block raises again
        with handling_signals():
            os.kill(os.getpid(), signal.SIGHUP)
            raise AssertionError("the signal should have raised")


def test_a_nested_deferred_hands_its_signal_to_the_enclosing_one():
    steps = []
    with pytest.raises(Interrupted) as stop:
        with handling_signals():
            with deferred():
                with deferred():  # e.g. Worktree.remove inside migrate's cleanup
                    os.kill(os.getpid(), signal.SIGTERM)
                    steps.append("inner")
                steps.append("outer goes on")
            steps.append("not reached")
    assert stop.value.signum == signal.SIGTERM and steps == ["inner", "outer goes on"]


def test_a_held_signal_goes_to_the_handler_in_place_which_may_ignore_it():
    seen = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))  # a fan-out worker's
    try:
        with deferred():
            os.kill(os.getpid(), signal.SIGINT)
        seen.append("went on")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.SIGINT, "went on"]
    with pytest.raises(Interrupted):  # Python's own SIGINT handler: raised as pinshift's Interrupted
        with deferred():
            os.kill(os.getpid(), signal.SIGINT)
