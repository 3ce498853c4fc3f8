"""A progress bar for long runs, on stderr and only when stderr is a terminal.

`RunOptions.progress` is called as `progress(number, total)` once per candidate
file of each step; `progress_bar` hands out such a callback and draws nothing at
all for pipes, files and short runs, so logs and reports stay clean.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

MIN_FILES = 50  # fewer files than this finish before a bar is worth reading
_WIDTH = 30


class ProgressBar:
    """Draws `label [#####.....] 12/66` in place; a new total (the next step) starts a new bar."""

    def __init__(self, stream, label: str = "planning", min_files: int = MIN_FILES):
        self.stream = stream
        self.label = label
        self.min_files = min_files
        self.drawn = False
        self._last: tuple[int, int] | None = None

    def __call__(self, number: int, total: int) -> None:
        if total < self.min_files:
            return
        filled = _WIDTH * number // total
        if self._last == (filled, total) and number != total:
            return  # nothing visible changed: skip the write
        self._last = (filled, total)
        bar = "#" * filled + "." * (_WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {number}/{total}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")  # erase the bar so the report starts on a clean line
            self.stream.flush()
            self.drawn = False


@contextlib.contextmanager
def progress_bar(label: str = "planning", stream=None, min_files: int = MIN_FILES) -> Iterator[ProgressBar | None]:
    """A `RunOptions.progress` callback for `stream` (stderr), or None when it is not a TTY."""
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        yield None
        return
    bar = ProgressBar(stream, label, min_files)
    try:
        yield bar
    finally:
        bar.close()
