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

Bounded work: every quadratic comparison (difflib on lines or tokens, the LCS of a chunk) runs only on
inputs whose product of lengths is at most a cap (`LINE_CELLS`, `TOKEN_CELLS`, `LCS_CELLS`), so the
work is linear in the files' size. Many changed lines are first anchored on the lines found once on
each side (patience), difflib aligning the small gaps between anchors. Above the cap: a replaced
block of many tokens is diffed token by token line against line when both sides have as many lines,
else it is one hunk of whole lines; a line too long, or a gap between anchors too big, is one too.
A chunk too big for its LCS is compared line against line, and one that cannot be is reported as an
overreach (the proof refuses what it cannot afford to check). `WORK` counts the cells each comparison
may touch (tests read it).
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from dataclasses import dataclass

TOKEN = re.compile(rb"\n|[^\S\n]+|\w+|[^\w\s]")

LINE_CELLS = 10_000  # lines x lines: difflib on the changed lines of a file, or on a gap between anchors
TOKEN_CELLS = 40_000  # tokens x tokens: difflib on the tokens of a replaced block, or of one line pair
LCS_CELLS = 16_000_000  # tokens x tokens: the LCS of one chunk of the proof (bit-parallel: 64 cells a word)

# Cells the quadratic comparisons may touch, by kind ("lines", "tokens", "lcs"); tests read it.
WORK: Counter[str] = Counter()


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
    for op, i1, i2, j1, j2 in _line_opcodes(a_mid, b_mid):
        if op == "equal":
            continue
        start, end = a_off[i1], a_off[i2]
        new_start, new_end = b_off[j1], b_off[j2]
        if op == "replace":
            found.extend(_block_hunks(old, new, a_off[i1 : i2 + 1], b_off[j1 : j2 + 1]))
        else:
            found.append(Hunk(start, end, new_start, new_end, old[start:end], new[new_start:new_end]))
    return found


def _line_opcodes(a: list[bytes], b: list[bytes]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes for few lines; for more, lines found once on each side anchor the two (patience:
    the longest increasing run of their positions), and difflib aligns only the gaps between anchors
    that are small enough, a bigger gap being one replaced block."""
    if len(a) * len(b) <= LINE_CELLS:
        WORK["lines"] += len(a) * len(b)
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    WORK["lines"] += len(a) + len(b)
    seen_a, seen_b = Counter(a), Counter(b)
    where_b = {line: j for j, line in enumerate(b) if seen_b[line] == 1}
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if seen_a[line] == 1 and line in where_b]
    tails: list[int] = []  # longest increasing run of j (patience sorting), with links back
    tail_at: list[int] = []
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        index = bisect.bisect_left(tails, j)
        back[k] = tail_at[index - 1] if index else -1
        if index == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[index], tail_at[index] = j, k
    anchors = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        anchors.append(pairs[k])
        k = back[k]
    anchors.reverse()
    opcodes: list[tuple[str, int, int, int, int]] = []
    i0 = j0 = 0
    for i, j in anchors + [(len(a), len(b))]:
        if i > i0 or j > j0:
            gap_a, gap_b = a[i0:i], b[j0:j]
            if len(gap_a) * len(gap_b) <= LINE_CELLS:
                WORK["lines"] += len(gap_a) * len(gap_b)
                gap = difflib.SequenceMatcher(None, gap_a, gap_b, autojunk=False).get_opcodes()
            else:
                gap = [("replace", 0, len(gap_a), 0, len(gap_b))]
            opcodes.extend((op, i1 + i0, i2 + i0, j1 + j0, j2 + j0) for op, i1, i2, j1, j2 in gap)
        if i < len(a):
            opcodes.append(("equal", i, i + 1, j, j + 1))
        i0, j0 = i + 1, j + 1
    return opcodes


def _block_hunks(old: bytes, new: bytes, a_off: list[int], b_off: list[int]) -> list[Hunk]:
    """The hunks of a replaced block of lines (`a_off`, `b_off`: the offsets of its lines and its end).

    Tokens of the whole block when they are few; else line against line when both sides have as many
    lines; else one hunk of whole lines."""
    start, end, new_start, new_end = a_off[0], a_off[-1], b_off[0], b_off[-1]
    if _affordable(old, new, start, end, new_start, new_end):
        return _token_hunks(old, new, start, end, new_start, new_end)
    if len(a_off) != len(b_off):
        return [Hunk(start, end, new_start, new_end, old[start:end], new[new_start:new_end])]
    found: list[Hunk] = []
    for (s, e), (ns, ne) in zip(zip(a_off, a_off[1:]), zip(b_off, b_off[1:])):
        if old[s:e] == new[ns:ne]:
            continue
        if _affordable(old, new, s, e, ns, ne):
            found.extend(_token_hunks(old, new, s, e, ns, ne))
        else:
            found.append(Hunk(s, e, ns, ne, old[s:e], new[ns:ne]))
    return found


def _affordable(old: bytes, new: bytes, start: int, end: int, new_start: int, new_end: int) -> bool:
    """Whether the tokens of old[start:end] times those of new[new_start:new_end] are at most TOKEN_CELLS.
    Bytes bound tokens from above, so a block of few bytes is never tokenized twice."""
    if (end - start) * (new_end - new_start) <= TOKEN_CELLS:
        return True
    a_count = _count_tokens(old, start, end, TOKEN_CELLS)
    if a_count == 0:
        return True
    return a_count * _count_tokens(new, new_start, new_end, TOKEN_CELLS // a_count) <= TOKEN_CELLS


def _count_tokens(data: bytes, start: int, end: int, limit: int) -> int:
    """The number of tokens of data[start:end], counting stops past `limit`."""
    count = 0
    for _ in TOKEN.finditer(data, start, end):
        count += 1
        if count > limit:
            break
    return count


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
    WORK["tokens"] += len(a_tokens) * len(b_tokens)
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
    WORK["lcs"] += len(a) * len(b)
    return len(a) + len(b) - 2 * lcs_length(a, b)


class _Shifts:
    """Where a byte of the old file is in the new one, for a sorted list of non-overlapping hunks:
    prefix sums of the hunks' growth, found by bisection (each lookup logarithmic)."""

    def __init__(self, changes: list[Hunk]):
        self.changes = changes
        self.ends = [h.end for h in changes]
        self.moved = [0]
        for h in changes:
            self.moved.append(self.moved[-1] + (h.new_end - h.new_start) - (h.end - h.start))

    def shift(self, position: int, after_insertion: bool) -> int:
        """Where byte `position` of the old file is in the new one; it is never inside a hunk. A pure insertion
        at `position` counts when `after_insertion` (the end of a chunk), not at its start."""
        count = bisect.bisect_right(self.ends, position)
        moved = self.moved[count]
        if not after_insertion:
            index = count - 1
            while index >= 0 and self.changes[index].end == position:
                hunk = self.changes[index]
                if hunk.start == hunk.end:
                    moved -= hunk.new_end - hunk.new_start
                index -= 1
        return position + moved


def _on_the_way(b: bytes, a: bytes, t: bytes) -> bool:
    """Whether `a` lies on a shortest token edit path from `b` to `t`; line against line when the
    chunk is too big for one LCS, and False (an overreach) when it cannot be split so."""
    bt, at, tt = tokens(b), tokens(a), tokens(t)
    if max(len(bt), len(tt)) * len(at) <= LCS_CELLS and len(bt) * len(tt) <= LCS_CELLS:
        return distance(bt, at) + distance(at, tt) == distance(bt, tt)
    lines = [x.splitlines(keepends=True) for x in (b, a, t)]
    if len({len(x) for x in lines}) != 1 or len(lines[0]) < 2:
        return False
    return all(x == z or y == z or y == x or _on_the_way(x, y, z) for x, y, z in zip(*lines))


def overreach(before: bytes, after: bytes, target: bytes) -> list[Overreach]:
    """The places where `after` is not between `before` and `target` (empty: every change is TARGET's)."""
    if before == after or after == target:
        return []
    done = hunks(before, after)
    wanted = hunks(before, target)
    done_at, wanted_at = _Shifts(done), _Shifts(wanted)
    found = []
    for start, end in _chunks(before, done, wanted):
        b = before[start:end]
        a = after[done_at.shift(start, False) : done_at.shift(end, True)]
        t = target[wanted_at.shift(start, False) : wanted_at.shift(end, True)]
        if a == t or a == b:
            continue
        if not _on_the_way(b, a, t):
            found.append(Overreach(start, end, b, a, t))
    return found


def _chunks(before: bytes, done: list[Hunk], wanted: list[Hunk]) -> list[tuple[int, int]]:
    """Byte ranges of `before` holding the hunks of both diffs, widened to whole lines and merged where they touch.

    Whole lines: two diffs may align the tokens of one line differently (`python3Packages.pytorch`
    against `nixpkgs_pinned.python313Packages.torch`); comparing the lines as a whole is exact.
    Lines next to each other stay apart; an insertion between two lines goes with the line before it.
    Only ranges holding a hunk of `done` are returned.
    """
    newlines = [m.start() for m in re.finditer(b"\n", before)]
    intervals = []
    for hunk, mine in [(h, True) for h in done] + [(h, False) for h in wanted]:
        index = bisect.bisect_left(newlines, hunk.start)  # the newlines before hunk.start: newlines[:index]
        start = newlines[index - 1] + 1 if index else 0
        index = bisect.bisect_left(newlines, max(hunk.end - 1, hunk.start))
        end = newlines[index] + 1 if index < len(newlines) else len(before)
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
