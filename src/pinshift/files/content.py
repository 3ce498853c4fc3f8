"""What pinshift agrees to parse, whoever read the bytes (a file on disk or a git object).

Below both `files` (plain files) and `gitrepo` (git objects), so each can apply the
same rules without knowing the other.
"""

from __future__ import annotations

from pinshift.errors import PinshiftError

DEFAULT_MAX_BYTES = 10 * 1024 * 1024


class SkippedFile(PinshiftError):
    """A file that is deliberately not read; the message is the reason shown to the user."""


class NulFile(SkippedFile):
    """A file skipped for a NUL byte; it carries its bytes, for `pinshift parse` to read them as Nix does.

    Nix reads a NUL between tokens as the end of the file (syntax/reading.py): whatever follows is
    not Nix, and a tool that edits the file could not show what it would do to it. So every command
    that changes files skips such a file (a NUL in the first 8 KiB: a binary file, as git judges; in
    a Nix file, a NUL anywhere), and only `pinshift parse` reports on it, with Nix's verdict.
    """

    def __init__(self, message: str, data: bytes):
        super().__init__(message)
        self.data = data


def check_content(path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Raise SkippedFile for content pinshift must not parse (too large, binary, a Nix file holding a NUL)."""
    if len(data) > max_bytes:
        raise SkippedFile(f"{path}: larger than {max_bytes} bytes; skipped (raise --max-bytes to include it)")
    if b"\0" in data[:8192]:
        raise NulFile(f"{path}: binary file (NUL byte); skipped", data)
    if path.endswith(".nix") and b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise NulFile(f"{path}: NUL byte on line {line}, where Nix may stop reading; skipped "
                      "(`pinshift parse` shows how Nix reads it)", data)
