"""Repeated findings and identical edits, grouped so a report stays readable at any repository size.

Every report format groups the same way, computed here once from the Plan (pure: no printing).

**Message groups** (warnings, notes, skipped and refused files) are per step. Two items are in one
group when their *message keys* are equal. The key of an item found at `path` is its message with:

1. a leading location of its own file taken off (`path: `, `path:12: `, `path:12:5: `), because the
   item's own location is shown apart from its message (a skipped file's reason starts that way, and
   some warnings repeat it: `x.nix:7: fetchTarball has no sha256 …`);
2. every other mention of its own file (`path`, `path:12`, `path:12:5`, or its file name alone) written
   `<file>`, where it is a whole word (`x.nix.bak` and `my-x.nix` are other files);
3. every other number written `<n>`: a run of digits that is not part of a word, a version or a
   decimal (`2 rows`, `line 12`, `other.nix:3:1`, `(and 3 more)` — but not `python313Packages`,
   `sm86`, `2.10`, `6a030d5`, `cudaPackages_12_9`).

A group shows its message with steps 1 and 2 applied; only when its items' messages differ in their
numbers does it show the key itself, so `<n>` marks exactly the numbers that vary. Other paths a
message names stay as they are (a different other file is a different finding). Step-level notes
that come from no file (a step kind loaded from a repository script) are not grouped.

**Change groups** are per step too: files whose edits in the step are the same form one group,
shown once with the diff of its first file (the *representative*, by path). Two changed files are
the same change when they have the same parser and operation (edited in place, renamed, cloned,
removed) and the same *changed lines*: the hunks of their diff without context (`git diff -U0`),
each hunk its removed lines then its inserted lines, byte for byte — with the diff's file names and
`@@` line numbers taken out. Unchanged lines around an edit are not compared: the same one-line
edit sits among different neighbours in a CUDA and a CPU recipe. In a renamed or cloned file, the
file's own old and new names (their stems, as whole tokens: the self-references rename-files and
clone-files edit) are written `<old-name>`/`<new-name>` first, so 67 renames whose `pname` follows
each file's own name are one group. A removed file's group is every file the step removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pinshift.planning.changed_lines import NEW_NAME, OLD_NAME, _edited_lines, changed_lines  # noqa: F401 (_edited_lines: tests)
from pinshift.planning.plan import FileChange, StepPlan, Warning
from pinshift.report.totals import plural

FILE = "<file>"
NUMBER = "<n>"
_NUMBER = re.compile(r"(?<![\w.])\d+(?!\w|\.\d)")
_EDGE = r"A-Za-z0-9_\-"  # a file name is a whole word when no letter, digit, _ or - touches it
_DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")


# --- locations and message keys ------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """Where an item was found: `path:line:col`, `path:line` or `path` (line and column 0 when unknown)."""

    path: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line and self.column:
            return f"{self.path}:{self.line}:{self.column}"
        return f"{self.path}:{self.line}" if self.line else self.path


_AFTER_PATH = re.compile(r"(?::(\d+))?(?::(\d+))?: ")


def split_location(path: str, text: str) -> tuple[Location, str]:
    """`text` without a leading `path[:line[:col]]: `, and the location it named (just `path` if none)."""
    match = _AFTER_PATH.match(text, len(path)) if path and text.startswith(path) else None
    if match is None:
        return Location(path), text
    return Location(path, int(match.group(1) or 0), int(match.group(2) or 0)), text[match.end():]


def _own_file_out(path: str, text: str) -> str:
    """Rule 2: the item's own path (with any `:line[:col]`) and its file name, as whole words, become <file>."""
    for name in dict.fromkeys((path, PurePosixPath(path).name)):
        if not name or name not in text:
            continue
        pattern = r"(?<![" + _EDGE + r"./])" + re.escape(name) + r"(?::\d+){0,2}(?![" + _EDGE + r"/]|\.\w)"
        text = re.sub(pattern, FILE, text)
    return text


def shown_message(path: str, message: str) -> str:
    """The message as a group shows it: rules 1 and 2 (its own location and file taken out)."""
    return _own_file_out(path, split_location(path, message)[1])


def message_key(path: str, message: str) -> str:
    """What decides a message group: rules 1 to 3 (numbers written <n>)."""
    return _NUMBER.sub(NUMBER, shown_message(path, message))


# --- message groups ------------------------------------------------------------------------------


@dataclass
class MessageGroup:
    """One finding repeated across files: `kind` is "warning", "note", "skipped" or "refused"."""

    kind: str
    step: int
    key: str
    messages: list[str] = field(default_factory=list)  # each item's shown message
    locations: list[Location] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # each item as reports print it alone (`path:1:2: message`)

    @property
    def count(self) -> int:
        return len(self.locations)

    @property
    def files(self) -> int:
        return len({location.path for location in self.locations})

    @property
    def first(self) -> Location:
        return self.locations[0]

    @property
    def message(self) -> str:
        """The shared message; the key (with <n>) when the items' messages differ in their numbers."""
        return self.messages[0] if len(set(self.messages)) == 1 else self.key

    @property
    def size(self) -> str:
        """`66 files`, or `5 times in 2 files` when a file holds the finding more than once."""
        files = plural(self.files, "file")
        return files if self.count == self.files else f"{self.count} times in {files}"


def _group(kind: str, step: int, items: list[tuple[Location, str, str]]) -> list[MessageGroup]:
    """Items (location, message, text) grouped by message key, in order of first appearance."""
    groups: dict[str, MessageGroup] = {}
    for location, message, text in items:
        key = message_key(location.path, message)
        group = groups.setdefault(key, MessageGroup(kind, step, key))
        group.messages.append(shown_message(location.path, message))
        group.locations.append(location)
        group.texts.append(text)
    return list(groups.values())


def _warning_items(warnings: list[Warning]) -> list[tuple[Location, str, str]]:
    return [(Location(w.path, w.line, w.column), w.message, str(w)) for w in warnings]


def outcome_text(change: FileChange) -> str:
    """A skipped or refused file's reason, led by its path when the reason does not already name it."""
    reason = change.reason or change.outcome.value
    return reason if reason.startswith(change.path) else f"{change.path}: {reason}"


def _outcome_items(changes: list[FileChange]) -> list[tuple[Location, str, str]]:
    items = []
    for change in changes:
        location, message = split_location(change.path, change.reason or change.outcome.value)
        items.append((location, message, outcome_text(change)))
    return items


def warning_groups(step: StepPlan) -> list[MessageGroup]:
    return _group("warning", step.index, _warning_items(step.warnings))


def note_groups(step: StepPlan) -> list[MessageGroup]:
    """The notes steps made on files (`out.note`), grouped; see `run_notes` for the others."""
    return _group("note", step.index, _warning_items([n for f in step.files for n in f.notes]))


def skipped_groups(step: StepPlan) -> list[MessageGroup]:
    return _group("skipped", step.index, _outcome_items(step.skipped))


def refused_groups(step: StepPlan) -> list[MessageGroup]:
    return _group("refused", step.index, _outcome_items(step.refused))


def run_notes(step: StepPlan) -> list[str]:
    """`step.notes` without the file notes the runner copies into it (each once, as `path:line:col: message`)."""
    from_files: dict[str, int] = {}
    for change in step.files:
        for note in change.notes:
            from_files[str(note)] = from_files.get(str(note), 0) + 1
    found = []
    for note in step.notes:
        if from_files.get(note, 0):
            from_files[note] -= 1
        else:
            found.append(note)
    return found


def group_text(group: MessageGroup, with_step: bool = False, hint: str = "--verbose lists all") -> str:
    """One line for a group, without its `warning: ` prefix; a group of one is its item as printed alone.

    `step 3: 66 files: no .metadata-rev marker: skipped (first: path; --verbose lists all)`;
    `with_step` names the step (where the line is not already under the step's heading).
    """
    if group.count == 1:
        return group.texts[0]
    step = f"step {group.step}: " if with_step else ""
    more = f"; {hint}" if hint else ""
    return f"{step}{group.size}: {group.message} (first: {group.first}{more})"


def group_lines(groups: list[MessageGroup], verbose: bool, with_step: bool = False) -> list[str]:
    """One line per group, or with `verbose` every item as printed alone."""
    if verbose:
        return [text for group in groups for text in group.texts]
    return [group_text(group, with_step) for group in groups]


# --- change groups -------------------------------------------------------------------------------


@dataclass
class ChangeGroup:
    """Files a step changed the same way; `changes[0]` is the representative whose diff is shown."""

    step: int
    operation: str  # "", "renamed", "cloned", "removed"
    changes: list[FileChange]

    @property
    def representative(self) -> FileChange:
        return self.changes[0]

    @property
    def paths(self) -> list[str]:
        return [change.path for change in self.changes]

    @property
    def edits(self) -> int:
        return sum(len(change.edits) for change in self.changes)

    @property
    def documentation(self) -> bool:
        return is_documentation(self.representative)


def is_documentation(change: FileChange) -> bool:
    """README files, Markdown and other prose files, and anything under a `doc`/`docs` directory."""
    path = PurePosixPath(change.path)
    return (change.language == "markdown" or path.name.upper().startswith("README")
            or path.suffix.lower() in _DOC_SUFFIXES or any(part in ("doc", "docs") for part in path.parts[:-1]))


def change_key(change: FileChange) -> tuple:
    hunks = change.hunks if change.hunks is not None else changed_lines(change)  # the runner's, when it made them
    return (change.language, change.operation, hunks)


def change_groups(step: StepPlan) -> list[ChangeGroup]:
    """The step's changed files grouped by `change_key`, in path order of each group's first file."""
    groups: dict[tuple, ChangeGroup] = {}
    for change in step.changed:
        key = change_key(change)
        if key not in groups:
            groups[key] = ChangeGroup(step.index, change.operation, [])
        groups[key].changes.append(change)
    return list(groups.values())
