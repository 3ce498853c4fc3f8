"""Unified diffs of a file before and after, in bytes, shaped like `git diff`.

Line endings are kept as they are (a CRLF file shows its `\\r`), and a missing
final newline is marked with git's `\\ No newline at end of file`.
"""

from __future__ import annotations

import difflib


def _lines(data: bytes) -> list[bytes]:
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n\\ No newline at end of file\n"
    return lines


def unified_diff(path: str, before: bytes, after: bytes, context: int = 3) -> bytes:
    """A unified diff of one file (empty when nothing changed), with a/ and b/ prefixes."""
    if before == after:
        return b""
    name = path.encode("utf-8", "surrogateescape")
    chunks = difflib.diff_bytes(
        difflib.unified_diff,
        _lines(before),
        _lines(after),
        fromfile=b"a/" + name,
        tofile=b"b/" + name,
        n=context,
    )
    out = []
    for chunk in chunks:
        out.append(chunk if chunk.endswith(b"\n") else chunk + b"\n")
    return b"".join(out)


def diff_text(path: str, before: bytes, after: bytes, context: int = 3) -> str:
    """The same diff decoded for display; undecodable bytes are shown as replacement characters."""
    return unified_diff(path, before, after, context).decode("utf-8", "replace")
