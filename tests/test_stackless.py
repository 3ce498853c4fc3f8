"""stackless.run: recursion with its stack in a list, as deep as a file nests (issue 36)."""

from __future__ import annotations

import sys

import pytest

from pinshift.syntax.stackless import run


def depth(n: int):
    """n calls deep, each adding 1 to what the one below returns."""
    if n == 0:
        return 0
    return 1 + (yield depth(n - 1))


def test_a_recursion_far_deeper_than_pythons_stack_runs():
    assert run(depth(10 * sys.getrecursionlimit())) == 10 * sys.getrecursionlimit()


def test_calls_run_in_order_and_return_their_results():
    seen = []

    def walk(tree):
        seen.append(tree[0])
        results = []
        for child in tree[1:]:
            results.append((yield walk(child)))
        return tree[0] + sum(results)

    assert run(walk((1, (2, (3,)), (4,)))) == 10
    assert seen == [1, 2, 3, 4]  # pre-order, as the recursion visits them


def test_an_exception_passes_up_through_every_caller_as_in_recursion():
    cleaned, caught = [], []

    def failing(n):
        if n == 0:
            raise ValueError("bottom")
        try:
            return (yield failing(n - 1))
        finally:
            cleaned.append(n)

    def catching():
        try:
            yield failing(3)
        except ValueError as error:
            caught.append(str(error))
        return "recovered"

    assert run(catching()) == "recovered"
    assert cleaned == [1, 2, 3] and caught == ["bottom"]
    with pytest.raises(ValueError, match="bottom"):
        run(failing(2))
