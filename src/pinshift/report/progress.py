"""Progress of long work, on stderr and only when stderr is a terminal (never for pipes, files, CI or JSON).

One line, drawn in place: `what [#####.....] done/total`, fitted to the terminal's width
(pinshift.languages.fit: the bar shrinks, then goes, then `what` is cut in the middle). Each phase
that can take more than a second says what it is doing and how far it is:

- planning (`RunOptions.progress` is called as `progress(number, total)` per file of each step; runs of
  fewer than MIN_FILES files are not drawn);
- the build check's and `pinshift diff`'s Nix evaluation (`evaluating recipes … 12/66`);
- a fan-out over bases (`bases (pytorch-2.9 done) … 2/5`);
- reading and parsing many files (`lint`, `scan`, `verify`: `reading files … 120/10032`);
- `status`: reading branches, then parsing their recipes.

The work reports through a plain callable, `update(what, done, total)`, so the parts that do it import
nothing of this module; `progress_bar` hands out a `ProgressBar` or None, and the line is erased when the
phase ends, so the report starts on a clean line. A line is drawn again only when what it shows changes.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from pinshift.languages.fit import cells, cut_middle, output_width

MIN_FILES = 50  # fewer files than this finish before a bar is worth reading
_WIDTH = 30


def shows_progress(stream) -> bool:
    """A terminal that is not CI's (`CI` set) nor a dumb one (`TERM=dumb`)."""
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        return False
    return not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


class ProgressBar:
    """Draws `label [#####.....] 12/66` in place; `update(what, done, total)` draws any phase the same way."""

    def __init__(self, stream, label: str = "planning", min_files: int = MIN_FILES, width: int | None = None):
        self.stream = stream
        self.label = label
        self.min_files = min_files
        self.width = width
        self.drawn = False
        self._last: tuple | None = None

    def __call__(self, number: int, total: int) -> None:
        """The planning callback (`RunOptions.progress`): short runs draw nothing."""
        if total < self.min_files:
            return
        self.update(self.label, number, total)

    def update(self, what: str, done: int, total: int) -> None:
        """Show `what` at `done` of `total`; drawn again only when the bar, the phase or the end changes."""
        if total <= 0:
            return
        bar = _WIDTH * min(done, total) // total
        if self._last == (what, bar, total) and done != total:
            return  # nothing visible changed: skip the write
        self._last = (what, bar, total)
        self.stream.write("\r" + self.line(what, done, total) + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def line(self, what: str, done: int, total: int) -> str:
        """`what [#####.....] done/total` within the terminal's width less one cell (no wrap at the margin)."""
        width = (self.width or output_width(self.stream)) - 1
        counts = f"{done}/{total}"
        size = min(_WIDTH, width - cells(what) - cells(counts) - 4)
        if size >= 10:
            filled = size * min(done, total) // total
            return f"{what} [{'#' * filled}{'.' * (size - filled)}] {counts}"
        return f"{cut_middle(what, max(width - cells(counts) - 1, 1))} {counts}"

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")  # erase the bar so the report starts on a clean line
            self.stream.flush()
            self.drawn = False
            self._last = None


@contextlib.contextmanager
def progress_bar(label: str = "planning", stream=None, min_files: int = MIN_FILES,
                 enabled: bool = True) -> Iterator[ProgressBar | None]:
    """A ProgressBar for `stream` (stderr), or None when it is not a terminal (or CI's), or not `enabled` (JSON)."""
    stream = stream if stream is not None else sys.stderr
    if not enabled or not shows_progress(stream):
        yield None
        return
    bar = ProgressBar(stream, label, min_files)
    try:
        yield bar
    finally:
        bar.close()


def updater(bar: ProgressBar | None):
    """`bar.update`, or None: what the work is given as its `progress(what, done, total)`."""
    return bar.update if bar is not None else None
