"""Unified diffs of a file before and after, in bytes, shaped like `git diff`.

Line endings are kept as they are (a CRLF file shows its `\\r`), and a missing
final newline is marked with git's `\\ No newline at end of file`.
"""

from __future__ import annotations

import difflib
import re

_HUNK = re.compile(rb"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _lines(data: bytes) -> list[bytes]:
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n\\ No newline at end of file\n"
    return lines


def unified_diff(path: str, before: bytes, after: bytes, context: int = 3, old_path: str | None = None) -> bytes:
    """A unified diff of one file (empty when nothing changed), with a/ and b/ prefixes.

    `old_path`: where the file was before (a renamed or cloned file), for the `a/` side.
    """
    if before == after:
        return b""
    name = path.lstrip("/").encode("utf-8", "surrogateescape")  # an absolute path gets `a/tmp/x`, not `a//tmp/x`
    old_name = name if old_path is None else old_path.lstrip("/").encode("utf-8", "surrogateescape")
    old, new = _lines(before), _lines(after)
    # Only the stretch between the common first and last lines can differ: diff that window (plus
    # context) and shift the hunk headers, instead of matching every line of a long file.
    shared = min(len(old), len(new))
    head = next((i for i in range(shared) if old[i] != new[i]), shared)
    tail = 0
    while tail < shared - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(0, head - context)
    chunks = difflib.diff_bytes(
        difflib.unified_diff,
        old[start : len(old) - max(0, tail - context)],
        new[start : len(new) - max(0, tail - context)],
        fromfile=b"a/" + old_name,
        tofile=b"b/" + name,
        n=context,
    )
    out = []
    for chunk in chunks:
        if start and chunk.startswith(b"@@"):
            chunk = _HUNK.sub(lambda m: _shifted(m, start), chunk, count=1)
        out.append(chunk if chunk.endswith(b"\n") else chunk + b"\n")
    return b"".join(out)


def _shifted(match: re.Match, offset: int) -> bytes:
    old_start, old_len, new_start, new_len = match.groups()
    return b"@@ -%d%s +%d%s @@" % (int(old_start) + offset, old_len or b"", int(new_start) + offset, new_len or b"")


def diff_text(path: str, before: bytes, after: bytes, context: int = 3, old_path: str | None = None) -> str:
    """The same diff decoded for display; undecodable bytes are shown as replacement characters."""
    return unified_diff(path, before, after, context, old_path).decode("utf-8", "replace")
