"""Recursion over a syntax tree without Python's call stack: a file may nest deeper than its limit.

A walk that follows the shape of a tree reads best as recursion, and Python's stack holds about 1,000
calls: `let in let in … { }` 1,000 deep, or overlays joined by 1,000 `++`, ended pinshift with an
internal error (issue 36). `run` keeps the recursion's shape: a function becomes a generator that
`yield`s each call it makes (another such generator) and receives that call's result; `run` drives
them with a list as the stack. Results, and the order of everything, are those of the recursion.

Example:
    def depth(node):                      # as recursion: return 1 + max(depth(c) for c in node.children)
        deepest = 0
        for child in node.children:
            deepest = max(deepest, (yield depth(child)))
        return 1 + deepest

    run(depth(root))
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

T = TypeVar("T")

Call = Generator[Any, Any, T]  # a generator that yields the calls it makes and returns its result


def run(call: Call[T]) -> T:
    """The result of `call`, every call it makes run on a list instead of Python's stack.

    An exception a call raises is thrown into the call that made it, as recursion would pass it up
    (its `try`/`except`/`finally` see it); uncaught by all of them, it leaves `run`.
    """
    stack: list[Call[Any]] = [call]
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            inner = stack[-1].send(value) if error is None else stack[-1].throw(error)
        except StopIteration as done:
            stack.pop()
            if not stack:
                return done.value
            value, error = done.value, None
        except BaseException as raised:
            stack.pop()
            if not stack:
                raise
            value, error = None, raised
        else:
            stack.append(inner)
            value, error = None, None
