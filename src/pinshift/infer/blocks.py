"""The whole recipe's proof, per file: every place TARGET changed ends as BASE had it or as TARGET has it.

Each step's own proof (hunks.overreach) only asks that a step's result lie *between* the file
before it and TARGET, which a step doing part of a change passes: pin-nixpkgs writes
`nixpkgs_pinned.python3Packages.pytorch` and rename-attr finishes it later. Replayed as a whole,
no such half-way state may remain. A file's changes are cut into blocks: the runs of lines
where BASE and TARGET differ (a run that replaces as many lines as it removes is one block per
line). After the replay, each block must hold BASE's lines (the change is residue: not made)
or TARGET's (made), and every other line must be as it was:

    >>> base = b"a\\nx = 1;\\nb\\nflags = \\"$F ${f}\\";\\n"
    >>> target = b"a\\nx = 2;\\nb\\nflags = \\"${f} $F\\";\\n"
    >>> first_mixed_block(base, target, b"a\\nx = 2;\\nb\\nflags = \\"$F ${f}\\";\\n") is None   # one made, one not
    True
    >>> first_mixed_block(base, target, b"a\\nx = 1;\\nb\\nflags = \\"$F ${f} $F\\";\\n")  # neither: TARGET's line 4
    4

That is the sense in which a replayed file never ends "differently from both BASE and TARGET":
not as a whole (one difference no step expresses would then keep every other step off the file),
but at every place TARGET changed.
"""

from __future__ import annotations

import difflib

MAX_WAYS = 64  # alignments of the replayed lines kept at once (more only in odd, repetitive files; fewer is stricter)


def _segments(base: list[bytes], target: list[bytes]) -> list[tuple[list[bytes], list[bytes], int]]:
    """(BASE lines, TARGET lines, TARGET line number) for each piece of the two files, in order;
    equal pieces have the same lines on both sides."""
    head = 0
    while head < min(len(base), len(target)) and base[head] == target[head]:
        head += 1
    tail = 0
    while tail < min(len(base), len(target)) - head and base[-1 - tail] == target[-1 - tail]:
        tail += 1
    middle_a, middle_b = base[head : len(base) - tail], target[head : len(target) - tail]
    pieces = [(base[:head], base[:head], 1)] if head else []
    matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        a, b, line = middle_a[i1:i2], middle_b[j1:j2], head + j1 + 1
        if op == "replace" and len(a) == len(b):
            pieces.extend(([x], [y], line + k) for k, (x, y) in enumerate(zip(a, b)))
        else:
            pieces.append((a, b, line))
    if tail:
        pieces.append((base[len(base) - tail :], base[len(base) - tail :], len(target) - tail + 1))
    return pieces


def first_mixed_block(base: bytes, target: bytes, final: bytes) -> int | None:
    """None when `final` holds, at every block where `base` and `target` differ, one of the two; else the
    TARGET line where the first block holding neither (or a changed line outside the blocks) is."""
    if final == target or final == base:
        return None
    lines = final.splitlines(keepends=True)
    reachable = {0}
    for old, new, line in _segments(base.splitlines(keepends=True), target.splitlines(keepends=True)):
        after = set()
        for position in reachable:
            for choice in (new, old) if old != new else (old,):
                if lines[position : position + len(choice)] == choice:
                    after.add(position + len(choice))
        if not after:
            return line
        reachable = set(sorted(after)[:MAX_WAYS])
    return None if len(lines) in reachable else max(1, len(target.splitlines()))
