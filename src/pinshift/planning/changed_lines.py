"""A change's hunks without context: the key that groups identical changes (report.groups).

The -U0 hunks of a file's diff, each its removed lines then its inserted lines, byte for byte,
without file names and `@@` line numbers; in a renamed or cloned file its own old and new names
(stems, whole tokens) are written `<old-name>`/`<new-name>`. Plan-level data: the runner computes
them where the file is planned (in the worker, from the bytes it already holds) and the report
groups by them; `changed_lines` computes them for a change that has none.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pinshift.planning.unified_diff import unified_diff
from pinshift.planning.plan import FileChange

OLD_NAME, NEW_NAME = b"<old-name>", b"<new-name>"
_EDGE = r"A-Za-z0-9_\-"  # a file name is a whole word when no letter, digit, _ or - touches it


def _stem_pattern(stem: str) -> re.Pattern[bytes]:
    edge = _EDGE.encode()
    return re.compile(rb"(?<![" + edge + rb"])" + re.escape(stem.encode("utf-8", "surrogateescape")) + rb"(?![" + edge + rb"])")


def changed_lines(change: FileChange, before: bytes | None = None,
                  after: bytes | None = None) -> tuple[tuple[bytes, ...], ...]:
    """The change's hunks without context, file names or line numbers (the group key's lines).

    `before`/`after`: the change's bytes when the caller holds them (else read from the change)."""
    if change.removed:
        return ()
    if before is None or after is None:
        before, after = change.before or b"", change.after or b""  # each read once: a plan may derive them
    if before == after:
        return ()
    hunks = _edited_lines(change, before, after)
    if hunks is None:
        diff = unified_diff("x", before, after, context=0)
        hunks = []
        for line in diff.split(b"\n")[2:]:  # after the ---/+++ lines
            if line.startswith(b"@@"):
                hunks.append([])
            elif hunks and line:
                hunks[-1].append(line)
    old = change.old_path or change.source
    if old is not None:
        names = sorted(((PurePosixPath(old).stem, OLD_NAME), (PurePosixPath(change.path).stem, NEW_NAME)),
                       key=lambda item: -len(item[0]))
        for name, placeholder in names:
            if name:
                pattern = _stem_pattern(name)
                hunks = [[pattern.sub(placeholder, line) for line in hunk] for hunk in hunks]
    return tuple(tuple(hunk) for hunk in hunks)


def _edited_lines(change: FileChange, before: bytes, after: bytes) -> list[list[bytes]] | None:
    """The -U0 hunks read off the edits, without a diff: when no edit touches a line break, line N of
    `after` is line N of `before` with its edits, and a hunk is a run of adjacent changed lines
    (`-` the old lines, then `+` the new ones), as git's zero-context diff shows them. None when
    the edits do not allow it (a line break edited, offsets unknown): then a real diff decides.
    """
    edits = change.edits
    if not edits or any(e.start < 0 or b"\n" in e.before or b"\n" in e.after for e in edits):
        return None
    if before.endswith(b"\n") != after.endswith(b"\n"):
        return None
    lines: list[tuple[int, int]] = []  # (start, end) of each edited line of `before`, in order
    for edit in edits:
        start = before.rfind(b"\n", 0, edit.start) + 1
        if lines and lines[-1][0] == start:
            continue
        end = before.find(b"\n", edit.start)
        if end < 0:
            return None  # the last line without a line break: the diff marks it, so let the diff say
        lines.append((start, end))
    shift, index = 0, 0
    runs: list[tuple[int, list[bytes], list[bytes]]] = []  # (first line number, old lines, new lines)
    for start, end in lines:  # the same lines of `after`: shifted by the edits before them
        while index < len(edits) and edits[index].start < start:
            shift += len(edits[index].after) - len(edits[index].before)
            index += 1
        line_shift = sum(len(e.after) - len(e.before) for e in edits[index:] if e.start <= end)
        old, new = before[start:end], after[start + shift : end + shift + line_shift]
        if b"\r" in old[:-1] or b"\r" in new[:-1]:
            return None  # a carriage return inside a line: the diff splits lines there too
        if old == new:
            continue
        if runs and before.count(b"\n", 0, start) == runs[-1][0] + len(runs[-1][1]):
            runs[-1][1].append(old)
            runs[-1][2].append(new)
        else:
            runs.append((before.count(b"\n", 0, start), [old], [new]))
    if not runs:
        return None
    all_lines = before.split(b"\n")
    for first, removed, added in runs:
        # a diff may match a changed line with an equal one beside it (or inside the run) and slide the
        # hunk: where that is possible, let the real diff decide where the hunk lies
        around = all_lines[max(first - 1, 0):first] + all_lines[first + len(removed):first + len(removed) + 1]
        if set(removed) & set(added) or (set(removed) | set(added)) & set(around):
            return None
    return [[b"-" + line for line in removed] + [b"+" + line for line in added] for _, removed, added in runs]
