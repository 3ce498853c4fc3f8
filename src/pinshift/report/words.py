"""What a step changed, in words: the distinct edits of a step, counted, for the top of a pull-request comment.

Derived only from the Plan's edits (the text each replaced, the text it wrote, its reason, the line it
sat on) and the files a step moved; nothing is guessed. For each step the edits are counted by what
they did: an edit is the same as another when it replaced the same text with the same text for the
same reason. In a renamed or cloned file, the file's own old and new names (whole words, as in
`report.groups`) count as `<old-name>`/`<new-name>`, so 67 `pname` self-references are one entry.

An entry of one-line texts says where the edits are when all of them sit on the same line text of at most 72
characters (`url = "https://github.com/NixOS/nixpkgs/archive/6a030d5….tar.gz";`), or else on lines
binding the same name (`url = …`). Its reason is shown when it says more than the
texts (`bump`; not `6a030d5 -> 0182a36`, which the texts already show). Full revisions (40 or 64 hex
digits) are shortened to 7 digits and `…`, other long texts to 60 characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pinshift.planning.plan import FileChange, StepPlan

OLD_NAME, NEW_NAME = "<old-name>", "<new-name>"
_REVISION = re.compile(r"\b([0-9a-f]{7})(?:[0-9a-f]{33}|[0-9a-f]{57})\b")
_BINDING = re.compile(r"([A-Za-z_][\w'-]*(?:\.[A-Za-z_][\w'-]*)*)\s*=(?!=)")
_LONGEST = 60
_EDGE = r"A-Za-z0-9_\-"


@dataclass
class EditSummary:
    """Edits of one step that replaced the same `before` with the same `after` for the same reason."""

    before: str
    after: str
    reason: str  # the edit's reason without its leading `kind: `
    edits: int = 0
    files: dict[str, None] = field(default_factory=dict)  # ordered set of paths
    lines: set[str] = field(default_factory=set)  # the stripped line each replaced text sat on

    @property
    def where(self) -> str:
        """`url = "…/archive/6a030d5….tar.gz";` (one line text), `url = …` (one binding), or ""."""
        if not self.before or "\n" in self.before or not self.lines:
            return ""
        if len(self.lines) == 1:
            line = abbreviate(next(iter(self.lines)))
            if line != abbreviate(self.before) and len(line) <= _LONGEST + 12:
                return line
        names = {m.group(1) if (m := _BINDING.match(line)) else None for line in self.lines}
        if len(names) == 1 and None not in names:
            return f"{names.pop()} = …"
        return ""

    @property
    def informative_reason(self) -> str:
        """The reason, unless each word of it is already in `before` or `after`."""
        words = re.findall(r"[\w.<>-]+", self.reason)
        words = [w for w in words if w != "->"]
        if words and all(w in self.before or w in self.after for w in words):
            return ""
        return self.reason


def abbreviate(text: str) -> str:
    """Full revisions (40 or 64 hex digits) as their first 7 and `…`."""
    return _REVISION.sub(lambda m: m.group(1) + "…", text)


def shorten(text: str) -> str:
    """`abbreviate`d; a text longer than 60 characters cut with `…`; the first line of several."""
    text = abbreviate(text)
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > 1:
        extra = f" (+{len(lines) - 1} {'line' if len(lines) == 2 else 'lines'})"
        text = lines[0].strip()
    else:
        extra, text = "", text.strip("\n")
    if len(text) > _LONGEST:
        text = text[: _LONGEST - 1] + "…"
    return text + extra


def _names(change: FileChange) -> list[tuple[re.Pattern[str], str]]:
    old = change.old_path or change.source
    if old is None:
        return []
    pairs = [(PurePosixPath(old).stem, OLD_NAME), (PurePosixPath(change.path).stem, NEW_NAME)]
    pairs.sort(key=lambda pair: -len(pair[0]))
    return [(re.compile(r"(?<![" + _EDGE + r"])" + re.escape(name) + r"(?![" + _EDGE + r"])"), placeholder)
            for name, placeholder in pairs if name]


def _text(data: bytes, names) -> str:
    text = data.decode("utf-8", "replace")
    for pattern, placeholder in names:
        text = pattern.sub(placeholder, text)
    return text


def _line(lines: list[bytes], number: int) -> str:
    return lines[number - 1].decode("utf-8", "replace").strip() if 0 < number <= len(lines) else ""


def edit_summaries(step: StepPlan) -> list[EditSummary]:
    """The step's distinct edits, the most widespread first (then in order of appearance)."""
    found: dict[tuple[str, str, str], EditSummary] = {}
    for change in step.changed:
        names = _names(change)
        lines = (change.before or b"").split(b"\n") if change.edits else []  # read once: a plan may derive it
        for edit in change.edits:
            reason = edit.reason.removeprefix(f"{step.kind}: ")
            before, after = _text(edit.before, names), _text(edit.after, names)
            reason = _text(reason.encode("utf-8", "surrogateescape"), names)
            summary = found.setdefault((before, after, reason), EditSummary(before, after, reason))
            summary.edits += 1
            summary.files[change.path] = None
            if edit.before:
                summary.lines.add(_text(_line(lines, edit.line).encode(), names))
    ranked = sorted(enumerate(found.values()), key=lambda item: (-len(item[1].files), item[0]))
    return [summary for _, summary in ranked]


def moved(step: StepPlan) -> list[tuple[str, list[FileChange]]]:
    """("renamed" | "cloned" | "removed", the files) for each operation the step did."""
    return [(name, step.operations(name)) for name in ("renamed", "cloned", "removed") if step.operations(name)]
