"""Where two versions of a file differ, token by token, and whether a third lies on the way between them.

`hunks(old, new)` compares lines first (difflib, common head and tail trimmed), then
the tokens of each replaced block of lines: words (`python3Packages`, a 40-hex
revision, `12`), runs of spaces, newlines, and single punctuation bytes. A hunk is
a byte range of `old` and the bytes `new` has there instead:

    >>> [(h.old, h.new) for h in hunks(b"echo 1 > $out\\n", b"echo 2 > $out\\n")]
    [(b'1', b'2')]

`overreach(before, after, target)` is the proof's test: the bytes a step changed
(`before` -> `after`) must be changes `target` also made. Token by token, `after`
has to lie on a shortest edit path from `before` to `target`:
d(before, after) + d(after, target) == d(before, target), with d the number of
tokens inserted and deleted (from the longest common subsequence). A step that
changes a byte `target` left alone, or changes it to something else, fails:

    >>> overreach(b"a 1 b 1", b"a 2 b 2", b"a 2 b 1")   # the second 1 is not TARGET's change
    [Overreach(start=0, end=7, before=b'a 1 b 1', after=b'a 2 b 2', target=b'a 2 b 1')]

The test runs chunk by chunk: the lines holding a hunk of either diff, merged where they
overlap. Whole lines, so the test is exact however the two diffs align the tokens of one
line; one chunk at a time, so the distances stay small whatever the file's size.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

TOKEN = re.compile(rb"\n|[^\S\n]+|\w+|[^\w\s]")


@dataclass(frozen=True)
class Hunk:
    """`old[start:end]` became `new[new_start:new_end]`."""

    start: int
    end: int
    new_start: int
    new_end: int
    old: bytes
    new: bytes


@dataclass(frozen=True)
class Overreach:
    """A place where a step's result is not on the way to TARGET: `before` (bytes start..end of the
    file before the step) became `after`, where TARGET has `target`."""

    start: int
    end: int
    before: bytes
    after: bytes
    target: bytes


def tokens(data: bytes) -> list[bytes]:
    return TOKEN.findall(data)


def _token_spans(data: bytes) -> list[tuple[int, int]]:
    return [m.span() for m in TOKEN.finditer(data)]


def hunks(old: bytes, new: bytes) -> list[Hunk]:
    """The places `new` differs from `old`: lines first, then tokens within each replaced block of lines."""
    if old == new:
        return []
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    a_off = _offsets(a, head)
    b_off = _offsets(b, head)
    found: list[Hunk] = []
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        start, end = a_off[i1], a_off[i2]
        new_start, new_end = b_off[j1], b_off[j2]
        if op == "replace":
            found.extend(_token_hunks(old, new, start, end, new_start, new_end))
        else:
            found.append(Hunk(start, end, new_start, new_end, old[start:end], new[new_start:new_end]))
    return found


def _offsets(lines: list[bytes], head: int) -> list[int]:
    """Byte offset of each line of lines[head:] (relative to the whole file), plus the end."""
    position = sum(len(line) for line in lines[:head])
    offsets = [position]
    for line in lines[head:]:
        position += len(line)
        offsets.append(position)
    return offsets


def _token_hunks(old: bytes, new: bytes, start: int, end: int, new_start: int, new_end: int) -> list[Hunk]:
    a_spans = [(s + start, e + start) for s, e in _token_spans(old[start:end])]
    b_spans = [(s + new_start, e + new_start) for s, e in _token_spans(new[new_start:new_end])]
    a_tokens = [old[s:e] for s, e in a_spans]
    b_tokens = [new[s:e] for s, e in b_spans]
    found = []
    matcher = difflib.SequenceMatcher(None, a_tokens, b_tokens, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        s = a_spans[i1][0] if i1 < len(a_spans) else end
        e = a_spans[i2 - 1][1] if i2 > i1 else s
        if i1 == i2 and i1 > 0:  # an insertion: right after the token before it
            s = e = a_spans[i1 - 1][1]
        ns = b_spans[j1][0] if j1 < len(b_spans) else new_end
        ne = b_spans[j2 - 1][1] if j2 > j1 else ns
        if j1 == j2 and j1 > 0:
            ns = ne = b_spans[j1 - 1][1]
        found.append(Hunk(s, e, ns, ne, old[s:e], new[ns:ne]))
    return found


# --- the proof's test ---------------------------------------------------------------------------


def lcs_length(a: list, b: list) -> int:
    """Length of the longest common subsequence of two token lists (bit-parallel, Allison-Dix/Hyyrö)."""
    if not a or not b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    masks: dict = {}
    for index, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << index)
    full = (1 << len(b)) - 1
    row = full
    for token in a:
        match = row & masks.get(token, 0)
        row = ((row + match) | (row - match)) & full
    return len(b) - bin(row).count("1")


def distance(a: list, b: list) -> int:
    """Tokens deleted plus tokens inserted to turn `a` into `b`."""
    return len(a) + len(b) - 2 * lcs_length(a, b)


def _shift(position: int, changes: list[Hunk], after_insertion: bool) -> int:
    """Where byte `position` of the old file is in the new one; it is never inside a hunk. A pure insertion
    at `position` counts when `after_insertion` (the end of a chunk), not at its start."""
    moved = 0
    for hunk in changes:
        if hunk.start == hunk.end == position:
            moved += (hunk.new_end - hunk.new_start) if after_insertion else 0
        elif hunk.end <= position:
            moved += (hunk.new_end - hunk.new_start) - (hunk.end - hunk.start)
        else:
            break
    return position + moved


def overreach(before: bytes, after: bytes, target: bytes) -> list[Overreach]:
    """The places where `after` is not between `before` and `target` (empty: every change is TARGET's)."""
    if before == after or after == target:
        return []
    done = hunks(before, after)
    wanted = hunks(before, target)
    found = []
    for start, end in _chunks(before, done, wanted):
        b = before[start:end]
        a = after[_shift(start, done, False) : _shift(end, done, True)]
        t = target[_shift(start, wanted, False) : _shift(end, wanted, True)]
        if a == t or a == b:
            continue
        bt, at, tt = tokens(b), tokens(a), tokens(t)
        if distance(bt, at) + distance(at, tt) != distance(bt, tt):
            found.append(Overreach(start, end, b, a, t))
    return found


def _chunks(before: bytes, done: list[Hunk], wanted: list[Hunk]) -> list[tuple[int, int]]:
    """Byte ranges of `before` holding the hunks of both diffs, widened to whole lines and merged where they touch.

    Whole lines: two diffs may align the tokens of one line differently (`python3Packages.pytorch`
    against `nixpkgs_pinned.python313Packages.torch`); comparing the lines as a whole is exact.
    Lines next to each other stay apart; an insertion between two lines goes with the line before it.
    Only ranges holding a hunk of `done` are returned.
    """
    intervals = []
    for hunk, mine in [(h, True) for h in done] + [(h, False) for h in wanted]:
        start = before.rfind(b"\n", 0, hunk.start) + 1
        end = before.find(b"\n", max(hunk.end - 1, hunk.start))
        end = len(before) if end < 0 else end + 1
        if hunk.start == hunk.end and hunk.start == start and start > 0:  # an insertion at a line start
            end = start
        intervals.append((start, max(end, hunk.end), mine))
    merged: list[list] = []
    for start, end, mine in sorted(intervals):
        last = merged[-1] if merged else None
        if last and (start < last[1] or (start == last[1] and (start == end or last[0] == last[1]))):
            last[1] = max(last[1], end)
            last[2] = last[2] or mine
        else:
            merged.append([start, end, mine])
    return [(start, end) for start, end, mine in merged if mine]
