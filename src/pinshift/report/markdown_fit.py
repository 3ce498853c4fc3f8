"""A Markdown report made to fit GitHub's comment limit (65,536 characters) by leaving out parts, saying so.

A report is rendered from the set of parts left out. Each `Part` has its `full` text and the `short` text
that replaces it (which says what was left out and where to find it); parts go in order of `priority`
(lower first), the largest first within one priority, until the report fits. As a last resort `cut`
ends the text at a line boundary (never inside a code span, whose value would then be read as Markdown)
and says so. Used by migrate's report (pinshift.report.markdown) and by `pinshift diff`
(pinshift.report.builds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

LIMIT = 65_000  # characters: GitHub rejects comments over 65,536
CUT_MARK = "\n\n_… report cut to stay under the size limit._\n"


@dataclass(frozen=True)
class Part:
    """A part of the comment that can be left out to fit the limit: `full` when kept, `short` when not."""

    key: tuple
    full: str
    short: str
    priority: int  # lower is left out first
    rank: int = 0  # among parts of one priority and size, the higher rank is left out first (a list's later items)


def leave_out(render: Callable[[set], str], parts: Iterable[Part], limit: int) -> tuple[str, set]:
    """The report rendered with as few parts left out as make it fit `limit` (or all of them), and their keys."""
    dropped: set = set()
    text = render(dropped)
    excess = len(text) - limit
    for part in sorted(parts, key=lambda p: (p.priority, -len(p.full), -p.rank, p.key)):
        if excess <= 0:
            break
        if len(part.short) >= len(part.full):
            continue  # leaving it out would not make the comment shorter
        dropped.add(part.key)
        excess -= len(part.full) - len(part.short)
        if excess <= 0:
            text = render(dropped)  # the note about what was left out costs characters too
            excess = len(text) - limit
    if len(text) > limit:
        text = render(dropped)
    return text, dropped


def cut(text: str, limit: int) -> str:
    """`text` if it fits `limit`, else its whole lines that fit and a line saying it was cut."""
    if len(text) <= limit:
        return text
    head = text[: max(limit - len(CUT_MARK), 0)]
    return head[: head.rfind("\n") + 1].rstrip("\n") + CUT_MARK
