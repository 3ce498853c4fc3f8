"""The machine report, schema "pinshift.report/1" (documented in docs/report-schema.md).

Every value comes straight from the Plan. Bytes (edit before/after) are decoded
as UTF-8 with U+FFFD for undecodable bytes: the report is for reading, the
commits hold the exact bytes. Keys keep a fixed order so reports diff cleanly.
Each part of the report is built by its own function (`_step`, `_groups`, ...),
so the parts can be written out one after another.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pinshift.planning.unified_diff import diff_text
from pinshift.languages import parser_name
from pinshift.planning.plan import AppliedEdit, FileChange, Plan, StepPlan, Warning
from pinshift.languages.display import visible_bytes
from pinshift.report.builds import builds_data
from pinshift.report.groups import (ChangeGroup, Location, MessageGroup, change_groups, note_groups, refused_groups,
                                    skipped_groups, warning_groups)
from pinshift.report.totals import totals

SCHEMA = "pinshift.report/1"


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def _edit(edit: AppliedEdit) -> dict[str, Any]:
    return {
        "path": edit.path, "line": edit.line, "column": edit.column,
        "before": _text(edit.before), "after": _text(edit.after), "reason": edit.reason,
    }


def _warning(warning: Warning) -> dict[str, Any]:
    return {"path": warning.path, "line": warning.line, "column": warning.column, "message": warning.message}


def _outcome(change: FileChange) -> dict[str, str]:
    return {"path": change.path, "reason": change.reason}


def _file_operations(step: StepPlan) -> dict[str, Any]:
    """`renamed`, `cloned`, `removed`: present only for a step that moves files (added within pinshift.report/1)."""
    found: dict[str, Any] = {}
    moved = [c for c in step.changed if c.removed or c.old_path is not None or c.source is not None]
    renamed = [{"from": c.old_path, "to": c.path} for c in moved if c.operation == "renamed"]
    cloned = [{"source": c.source, "path": c.path} for c in moved if c.operation == "cloned"]
    removed = [c.path for c in moved if c.operation == "removed"]
    for key, items in (("renamed", renamed), ("cloned", cloned), ("removed", removed)):
        if items:
            found[key] = items
    return found


def _location(location: Location) -> dict[str, Any]:
    return {"path": location.path, "line": location.line, "column": location.column}


def _message_group(group: MessageGroup) -> dict[str, Any]:
    return {"message": group.message, "count": group.count, "files": group.files,
            "locations": [_location(location) for location in group.locations]}


def _change_group(group: ChangeGroup) -> dict[str, Any]:
    change = group.representative
    diff = "" if change.removed else diff_text(change.path, change.before or b"", change.after or b"",
                                               old_path=change.old_path or change.source)
    return {"operation": group.operation, "files": group.paths, "edits": group.edits, "diff": diff}


def _groups(step: StepPlan) -> dict[str, Any]:
    """Identical edits and repeated findings, grouped as the text and Markdown reports show them (added within /1)."""
    return {
        "changes": [_change_group(g) for g in change_groups(step)],
        "warnings": [_message_group(g) for g in warning_groups(step)],
        "notes": [_message_group(g) for g in note_groups(step)],
        "skipped": [_message_group(g) for g in skipped_groups(step)],
        "refused": [_message_group(g) for g in refused_groups(step)],
    }


def _step(step: StepPlan, lazy: bool = False) -> dict[str, Any]:
    data = {
        "index": step.index,
        "total": step.total,
        "kind": step.kind,
        "title": step.title,
        "message": step.message,
        "params": step.params,
        "files_changed": [c.path for c in step.changed],
        "parsers": {c.path: parser_name(c.language) for c in step.changed if not c.removed},
        "edits": Lazy(lambda: (RenderedEdit(e) for c in step.changed for e in c.edits)) if lazy  # streamed: 100,000s
        else [_edit(e) for c in step.changed for e in c.edits],
        "warnings": [_warning(w) for w in step.warnings],
        "skipped": [_outcome(c) for c in step.skipped],
        "refused": [_outcome(c) for c in step.refused],
        "notes": list(step.notes),
        "commit": step.commit or None,
    }
    data.update(_file_operations(step))
    data["groups"] = _groups(step)
    return data


def report_data(plan: Plan, lazy: bool = False) -> dict[str, Any]:
    """The report as plain JSON values (`lazy`: each step's edits as a Lazy array, for `iter_json`)."""
    data = {
        "schema": SCHEMA,
        "recipe": plan.recipe,
        "repository": plan.repository,
        "dry_run": plan.dry_run,
        "base": {"ref": plan.base, "commit": plan.base_commit or None},
        "target": {"ref": plan.target, "commit": plan.target_commit or None},
        "would_change": plan.would_change,
        "notes": list(plan.notes),
        "steps": [_step(s, lazy) for s in plan.steps],
        "totals": asdict(totals(plan)),
    }
    if plan.builds is not None:  # migrate: what the recipes build (added within pinshift.report/1)
        data["builds"] = builds_data(plan.builds)
    return data


def render_json(plan: Plan) -> str:
    # default=str: recipe params are TOML values; dates and times are shown as text.
    return "".join(iter_json(plan))


def iter_json(plan: Plan) -> Iterator[str]:
    """The report's text in pieces, as it is written: a 40,000-file report is never held whole in memory."""
    for piece in iter_indented(report_data(plan, lazy=True)):
        yield visible_bytes(piece, json=True)  # a name that is not UTF-8: `\\xff` (pinshift.languages.display)
    yield "\n"


class Lazy:
    """A JSON array made while it is written (`iter_indented`): its items are built one at a time."""

    def __init__(self, make: Callable[[], Iterable[Any]]):
        self.make = make

    def __iter__(self) -> Iterator[Any]:
        return iter(self.make())


_encode_string = json.encoder.encode_basestring  # the C encoder's, as json.dumps(ensure_ascii=False) uses


class RenderedEdit:
    """An edit in a Lazy array, written straight to text: exactly `dumps_indented(_edit(edit), level)`.

    A report of 28,000 edits spent most of its writing time building and walking their dicts."""

    __slots__ = ("edit",)

    def __init__(self, edit: AppliedEdit):
        self.edit = edit

    def text(self, level: int) -> str:
        edit, inner = self.edit, ",\n" + "  " * (level + 1)
        return "".join((
            "{\n", "  " * (level + 1), '"path": ', _encode_string(edit.path),
            inner, '"line": ', int.__repr__(edit.line), inner, '"column": ', int.__repr__(edit.column),
            inner, '"before": ', _encode_string(_text(edit.before)), inner, '"after": ', _encode_string(_text(edit.after)),
            inner, '"reason": ', _encode_string(edit.reason), "\n", "  " * level, "}",
        ))
_FLAT = (str, int, float, bool, type(None))


def _key(key: Any) -> str:
    """A member name as json.dumps writes it (numbers, booleans and None are turned into strings as it does)."""
    if isinstance(key, str):
        return _encode_string(key)
    return _encode_string(_scalar(key) if isinstance(key, (bool, int, float, type(None))) else str(key))


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return _encode_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return json.dumps(value)
    return _encode_string(str(value))  # default=str: TOML dates and times as text


def dumps_indented(value: Any, level: int = 0) -> str:
    """Exactly `json.dumps(value, indent=2, ensure_ascii=False, default=str)`, several times faster.

    json's indenting encoder is pure Python and yields every token on its own; a report of
    30,000 edits spent a second there. Objects and lists whose members are all plain values
    (an edit, a warning, a location) are written by one join. tests/test_report_json.py
    checks the output against json.dumps on real reports.
    """
    if type(value) is RenderedEdit:
        return value.text(level)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = "\n" + "  " * (level + 1)
        if all(isinstance(v, _FLAT) for v in value.values()):
            body = ("," + inner).join(_key(k) + ": " + _scalar(v) for k, v in value.items())
        else:
            body = ("," + inner).join(_key(k) + ": " + dumps_indented(v, level + 1) for k, v in value.items())
        return "{" + inner + body + "\n" + "  " * level + "}"
    if isinstance(value, (list, tuple, Lazy)):
        items = list(value) if isinstance(value, Lazy) else value
        if not items:
            return "[]"
        inner = "\n" + "  " * (level + 1)
        if all(type(v) is str for v in items):  # a list of paths: 10,000s of them, one C call each
            body = ("," + inner).join(map(_encode_string, items))
        else:
            body = ("," + inner).join(dumps_indented(v, level + 1) for v in items)
        return "[" + inner + body + "\n" + "  " * level + "]"
    return _scalar(value)


def iter_indented(value: Any, level: int = 0) -> Iterator[str]:
    """`dumps_indented(value)` in pieces: objects and arrays holding a Lazy array are written member by member,
    the rest whole; the pieces joined are exactly `dumps_indented`'s text."""
    if not _holds_lazy(value):
        yield dumps_indented(value, level)
        return
    inner = "\n" + "  " * (level + 1)
    if isinstance(value, dict):
        yield "{"
        for number, (key, item) in enumerate(value.items()):
            yield ("," if number else "") + inner + _key(key) + ": "
            yield from iter_indented(item, level + 1)
        yield "\n" + "  " * level + "}"
        return
    empty = True
    batch: list[str] = []
    for item in value:
        batch.append(("[" if empty else ",") + inner)
        empty = False
        if type(item) is RenderedEdit:
            batch.append(item.text(level + 1))
        elif _holds_lazy(item):  # a step holding its edits: written piece by piece too
            yield "".join(batch)
            batch = []
            yield from iter_indented(item, level + 1)
            continue
        else:
            batch.append(dumps_indented(item, level + 1))
        if len(batch) >= 1024:
            yield "".join(batch)
            batch = []
    yield "".join(batch)
    yield "[]" if empty else "\n" + "  " * level + "]"


def _holds_lazy(value: Any) -> bool:
    """Whether `value` holds a Lazy array where the report puts them (in objects, and in arrays of objects).

    Only how the text is produced depends on it (piece by piece, or whole), never the text: an array of
    plain values (10,000 paths) is not walked item by item."""
    if isinstance(value, Lazy):
        return True
    if isinstance(value, dict):
        return any(isinstance(v, (Lazy, dict, list, tuple)) and _holds_lazy(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return bool(value) and isinstance(value[0], (Lazy, dict, list, tuple)) and any(_holds_lazy(v) for v in value)
    return False
