"""What pinshift agrees to parse, whoever read the bytes (a file on disk or a git object).

Below both `files` (plain files) and `gitrepo` (git objects), so each can apply the
same rules without knowing the other.
"""

from __future__ import annotations

from pinshift.errors import PinshiftError

DEFAULT_MAX_BYTES = 10 * 1024 * 1024


class SkippedFile(PinshiftError):
    """A file that is deliberately not read; the message is the reason shown to the user."""


def check_content(path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Raise SkippedFile for content pinshift must not parse (too large, binary)."""
    if len(data) > max_bytes:
        raise SkippedFile(f"{path}: larger than {max_bytes} bytes; skipped (raise --max-bytes to include it)")
    if b"\0" in data[:8192]:
        raise SkippedFile(f"{path}: binary file (NUL byte); skipped")
