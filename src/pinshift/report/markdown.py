"""The pull-request comment: what changed in words, then one diff per group of identical edits.

In order: title and counts, the summary table, **What changed** (per step, its distinct edits in
words, `report.words`, and its notes), warnings and refused/skipped files (one item per group of
the same finding, `report.groups`, every location in a `<details>` list), then **Diffs**: each group
of identical edits once, its representative's diff in full and its files in a `<details>` list —
documentation groups (README, Markdown) first, then the others in step order.

GitHub rejects comments over 65,536 characters, so the report stays under `limit` by leaving out,
in this order and saying so for each (pinshift.report.markdown_fit): file, location and recipe lists
(largest first), diffs of groups that are not documentation (largest first), documentation diffs and groups of
"What the recipes build" (largest first), broken recipes; then it shortens the warnings list and, as a last
resort, cuts the text at a line boundary. Every value from a commit goes through
pinshift.languages.markdown_escape. Diffs are decoded with replacement characters
for display only.
"""

from __future__ import annotations

import posixpath

from pinshift.languages.markdown_escape import cell, code, fence, html_code, link
from pinshift.planning.unified_diff import diff_text
from pinshift.report.builds import builds_found, builds_markdown, group_parts
from pinshift.report.display import printable
from pinshift.report.markdown_fit import LIMIT, Part, cut, leave_out
from pinshift.planning.plan import FileChange, Plan, StepPlan
from pinshift.report.groups import (ChangeGroup, Location, MessageGroup, change_groups, note_groups, refused_groups,
                                    run_notes, skipped_groups, warning_groups)
from pinshift.report.totals import endpoint, parsers_line, plural, short, totals
from pinshift.report.words import NEW_NAME, OLD_NAME, EditSummary, edit_summaries, moved, shorten

DEFAULT_LIMIT = LIMIT
_SENTENCES = 8  # distinct edits described per step; the diffs show the rest


_ARROWS = {"renamed": "→", "cloned": "⇒"}


def _names(change: FileChange) -> str:
    """`` `path` ``, or `` `old` → `new` `` for a renamed (⇒ cloned) file."""
    old = change.old_path or change.source
    new = code(change.path)
    return new if old is None else f"{code(old)} {_ARROWS[change.operation]} {new}"


def _has_diff(change: FileChange) -> bool:
    return not change.removed and change.before != change.after


def _input_commit(plan: Plan, step: StepPlan) -> str:
    """The commit whose bytes the step read: the previous step's commit, else the base."""
    previous = [s.commit for s in plan.steps if s.index < step.index and s.commit]
    return previous[-1] if previous else plan.base_commit


def _where(location: Location, commit: str, link_base: str | None) -> str:
    label = f"{location.path}:{location.line}" if location.line else location.path
    if link_base and commit and location.line:
        return link(code(label), f"{link_base.rstrip('/')}/blob/{commit}/{location.path}#L{location.line}")
    return code(label)


def _directory(paths: list[str]) -> str:
    """The directory every path is in (`.flox/pkgs`), or "" when they are not all in one."""
    parents = {posixpath.dirname(path) for path in paths}
    return parents.pop() if len(parents) == 1 else ""


def _with_blocks(entries: list[tuple[str, str]]) -> list[str]:
    """List items, each followed by its block (a `<details>` list) set apart by blank lines; a blank line at the end."""
    lines: list[str] = []
    for line, block in entries:
        lines.append(line)
        if block:
            lines.extend(["", block.rstrip("\n"), ""])
    return lines + ([""] if lines and lines[-1] else [])


def _details(summary: str, items: list[str]) -> str:
    return f"<details><summary>{summary}</summary>\n\n" + "".join(f"- {item}\n" for item in items) + "\n</details>\n"


# --- what changed, in words ------------------------------------------------------------------------


def _what(summary: EditSummary) -> str:
    if summary.before == OLD_NAME and summary.after == NEW_NAME:
        return "each file's own name → its new name"
    if summary.before and summary.after:
        return f"{code(shorten(summary.before))} → {code(shorten(summary.after))}"
    if summary.after:
        return f"inserted {code(shorten(summary.after))}"
    return f"removed {code(shorten(summary.before))}"


def sentence(summary: EditSummary) -> str:
    """`` `6a030d5…` → `0182a36…` in `url = …` — 66 files ``: one distinct edit of a step, counted."""
    where = f" in {code(summary.where)}" if summary.where else ""
    reason = f" ({cell(summary.informative_reason)})" if summary.informative_reason else ""
    files = list(summary.files)
    if len(files) == 1:
        count = code(files[0]) + (f", {summary.edits} edits" if summary.edits > 1 else "")
    elif summary.edits == len(files):
        count = plural(len(files), "file")
    else:
        count = f"{summary.edits} edits in {plural(len(files), 'file')}"
    return f"- {_what(summary)}{where}{reason} — {count}"


def _move_sentence(operation: str, changes: list[FileChange]) -> str:
    if operation == "removed":
        names = ", ".join(code(c.path) for c in changes[:5])
        more = f" and {len(changes) - 5} more" if len(changes) > 5 else ""
        return f"- removed {plural(len(changes), 'file')}: {names}{more}"
    first = changes[0]
    old = first.old_path or first.source or ""
    same = posixpath.dirname(old) == posixpath.dirname(first.path)
    pair = (f"{code(posixpath.basename(old) if same else old)} {_ARROWS[operation]} "
            f"{code(posixpath.basename(first.path) if same else first.path)}")
    count = len(changes)
    what = f"renamed {plural(count, 'file')}" if operation == "renamed" else \
        f"added {count} {'copy' if count == 1 else 'copies'}"
    return f"- {what}: {pair if count == 1 else f'e.g. {pair}'}"


def step_words(step: StepPlan) -> list[str]:
    """The lines describing one step: moves, then its distinct edits (at most 8), or that it changed nothing."""
    lines = [_move_sentence(operation, changes) for operation, changes in moved(step)]
    summaries = [s for s in edit_summaries(step) if s.before or s.after]
    lines.extend(sentence(s) for s in summaries[:_SENTENCES])
    if len(summaries) > _SENTENCES:
        rest = len(summaries) - _SENTENCES
        lines.append(f"- … and {rest} more distinct {'edit' if rest == 1 else 'edits'} (the diffs below show them)")
    if not step.changed:
        lines.append("- nothing to change")
    elif not lines:
        lines.append(f"- {plural(len(step.changed), 'file')} changed (the diffs below show how)")
    return lines


# --- grouped findings ------------------------------------------------------------------------------


def _locations_block(key: tuple, group: MessageGroup) -> Part:
    paths = [location.path for location in group.locations]
    directory = _directory(paths)
    shown = [str(location) for location in group.locations]
    if directory:
        shown = [text[len(directory) + 1:] for text in shown]
    where = f" in {html_code(directory + '/')}" if directory else ""
    full = _details(f"{plural(group.count, 'location')}{where}", [code(text) for text in shown])
    return Part(key, full, "_List left out to fit the size limit; `--format json` lists them._\n", 0)


def _group_title(group: ChangeGroup) -> str:
    """`` `README.md` — 6 edits ``, `` 66 files with this change — 66 edits; shown: `…` ``, `removed 3 files`."""
    change, count = group.representative, len(group.changes)
    if change.removed:
        return f"removed {code(change.path)}" if count == 1 else f"removed {count} files"
    detail = plural(group.edits, "edit") if _has_diff(change) else "no change inside"
    if count == 1:
        return f"{_names(change)} — {detail}"
    return f"{count} files with this change — {detail}; {'shown' if _has_diff(change) else 'first'}: {_names(change)}"


class _Layout:
    """Everything but the droppable blocks is fixed; the blocks shrink to fit the limit."""

    def __init__(self, plan: Plan, link_base: str | None):
        self.plan = plan
        self.link_base = link_base
        self.blocks: dict[tuple, Part] = {}
        self.groups = [(step, number, group) for step in plan.steps
                       for number, group in enumerate(change_groups(step))]
        self.groups.sort(key=lambda item: (not item[2].documentation, item[0].index, item[1]))
        self.finding_groups = {(step.index, kind): groups for step in plan.steps for kind, groups in (
            ("warning", warning_groups(step)), ("note", note_groups(step)),
            ("refused", refused_groups(step)), ("skipped", skipped_groups(step)))}
        for (index, kind), groups in self.finding_groups.items():
            for number, group in enumerate(groups):
                if group.count > 1:
                    key = ("locations", index, kind, number)
                    self.blocks[key] = _locations_block(key, group)
        self.blocks.update((part.key, part) for part in group_parts(builds_found(plan.builds)))
        listed: dict[frozenset, int] = {}
        for step, number, group in self.groups:
            self._add_group_blocks(step, number, group, listed)

    def _add_group_blocks(self, step: StepPlan, number: int, group: ChangeGroup, listed: dict) -> None:
        change = group.representative
        if _has_diff(change):
            body = printable(diff_text(change.path, change.before or b"", change.after or b"",
                                       old_path=change.old_path or change.source),
                             keep_newlines=True, keep_final_cr=True)
            marker = fence(body)
            lines = body.count("\n")
            self.blocks[("diff", step.index, number)] = Part(
                ("diff", step.index, number), f"{marker}diff\n{body}{marker}\n",
                f"_Diff left out ({plural(lines, 'line')}) to fit the size limit; `--format text` shows it._\n",
                2 if group.documentation else 1)
        if len(group.changes) > 1:
            key = ("files", step.index, number)
            paths = frozenset(group.paths)
            if paths in listed:
                text = f"_The same {len(paths)} files as step {listed[paths]}._\n"
                self.blocks[key] = Part(key, text, text, 0)
            else:
                listed[paths] = step.index
                self.blocks[key] = Part(key, self._file_list(group), "_File list left out to fit the size limit; "
                                                                       "`--format json` lists them._\n", 0)

    @staticmethod
    def _file_list(group: ChangeGroup) -> str:
        olds = [c.old_path or c.source for c in group.changes]
        directory = _directory(group.paths + [old for old in olds if old])
        cut = (lambda path: path[len(directory) + 1:]) if directory else (lambda path: path)
        items = []
        for change, old in zip(group.changes, olds):
            items.append(code(cut(change.path)) if old is None
                         else f"{code(cut(old))} {_ARROWS[change.operation]} {code(cut(change.path))}")
        where = f" in {html_code(directory + '/')}" if directory else ""
        return _details(f"{plural(len(items), 'file')}{where}", items)

    def block(self, key: tuple, dropped: set) -> str:
        block = self.blocks[key]
        return block.short if key in dropped else block.full

    # --- sections ---

    def header(self) -> list[str]:
        plan, t = self.plan, totals(self.plan)
        where = f"{code(endpoint(plan.base, plan.base_commit))} → {code(endpoint(plan.target, plan.target_commit))}"
        title = f"## pinshift: {code(plan.recipe)}" if plan.recipe else "## pinshift"
        if plan.base or plan.target or plan.base_commit or plan.target_commit:
            title += f" — {where}"
        mode = "Dry run: nothing is committed yet." if plan.dry_run else "Committed: one commit per step."
        counts = (
            f"{plural(t.files_changed, 'file')} changed by {plural(t.steps, 'step')}: {plural(t.edits, 'edit')}, "
            f"{plural(t.warnings, 'warning')}, {t.skipped} skipped, {t.refused} refused."
        )
        if not plan.would_change:
            counts += " Nothing to change."
        lines = [title, "", f"{mode} {counts}", ""]
        lines.extend(f"> {cell(note)}" for note in plan.notes)
        return lines + ([""] if plan.notes else [])

    def table(self) -> list[str]:
        columns = ["#", "step", "kind", "files changed", "edits", "warnings"]
        align = ["---:", "---", "---", "---:", "---:", "---:"]
        if not self.plan.dry_run:
            columns.append("commit")
            align.append("---")
        rows = ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"]
        for step in self.plan.steps:
            changed = f"{len(step.changed)} ({step.operation_counts})" if step.operation_counts else str(len(step.changed))
            values = [str(step.index), cell(step.title), code(step.kind, table=True), changed,
                      str(step.edit_count), str(len(step.warnings))]
            if not self.plan.dry_run:
                values.append(code(short(step.commit), table=True) if step.commit else "—")
            rows.append("| " + " | ".join(values) + " |")
        return rows + [""]

    def words(self, dropped: set) -> list[str]:
        lines = ["### What changed", ""]
        for step in self.plan.steps:
            lines.extend([f"**Step {step.index}: {cell(step.title)}** ({code(step.kind)})", ""])
            lines.extend(step_words(step))
            lines.append("")
            if parsers_line(step):
                lines.extend([f"_Parsed with {cell(parsers_line(step))}._", ""])
            notes = [f"> {cell(note)}" for note in run_notes(step)]
            blocks = []
            for number, group in enumerate(self.finding_groups[(step.index, "note")]):
                notes.append(f"> {self._finding(group, step)}")
                if group.count > 1:
                    blocks.append(self.block(("locations", step.index, "note", number), dropped))
            if notes:
                lines.extend(notes + [""] + blocks)
        return lines

    def _finding(self, group: MessageGroup, step: StepPlan) -> str:
        """`` `path:8`: message `` for one; `**66 files**: message — first: `path` `` for a group."""
        first = _where(group.first, _input_commit(self.plan, step), self.link_base)
        if group.count == 1:
            return f"{first}: {cell(group.messages[0])}"
        return f"**{group.size}**: {cell(group.message)} — first: {first}"

    def warnings(self, limit: int | None, dropped: set) -> list[str]:
        found = [(s, n, g) for s in self.plan.steps for n, g in enumerate(self.finding_groups[(s.index, "warning")])]
        if not found:
            return []
        entries = []
        for step, number, group in found[:limit]:
            key = ("locations", step.index, "warning", number)
            entries.append((f"- {self._finding(group, step)} (step {step.index})",
                            self.block(key, dropped) if group.count > 1 else ""))
        if limit is not None and len(found) > limit:
            entries.append((f"- … and {len(found) - limit} more (see `--format json`)", ""))
        return [f"### Warnings ({len(self.plan.warnings)})", ""] + _with_blocks(entries)

    def problems(self, dropped: set) -> list[str]:
        entries = []
        for step in self.plan.steps:
            for kind in ("refused", "skipped"):
                for number, group in enumerate(self.finding_groups[(step.index, kind)]):
                    if group.count == 1:
                        entries.append((f"- **{kind}** (step {step.index}): {cell(group.texts[0])}", ""))
                    else:
                        entries.append((f"- **{kind}** (step {step.index}), **{group.size}**: {cell(group.message)} "
                                        f"— first: {code(str(group.first))}",
                                        self.block(("locations", step.index, kind, number), dropped)))
        return ["### Refused and skipped files", ""] + _with_blocks(entries) if entries else []

    def diffs(self, dropped: set) -> list[str]:
        if not self.groups:
            return []
        lines = ["### Diffs", ""]
        for step, number, group in self.groups:
            lines.extend([f"#### Step {step.index}: {_group_title(group)}", ""])
            for key in (("diff", step.index, number), ("files", step.index, number)):
                if key in self.blocks:
                    lines.append(self.block(key, dropped))
        return lines

    def render(self, dropped: set, warning_limit: int | None, limit: int) -> str:
        lines = (self.header() + self.table() + builds_markdown(self.plan.builds, dropped) + self.words(dropped)
                 + self.warnings(warning_limit, dropped)
                 + self.problems(dropped) + self.diffs(dropped))
        if dropped:
            lines.append(f"_Left out {plural(len(dropped), 'part')} (listed above) to stay under {limit:,} characters; "
                         "`--format text` or `--format json` shows everything._")
        return "\n".join(lines).rstrip("\n") + "\n"


def render_markdown(plan: Plan, limit: int = DEFAULT_LIMIT, link_base: str | None = None) -> str:
    """The report as one GitHub comment of at most `limit` characters."""
    layout = _Layout(plan, link_base)
    text, dropped = leave_out(lambda left_out: layout.render(left_out, None, limit), layout.blocks.values(), limit)
    found = sum(len(groups) for (_, kind), groups in layout.finding_groups.items() if kind == "warning")
    warning_limit = found
    while len(text) > limit and warning_limit > 0:
        warning_limit //= 2
        text = layout.render(dropped, warning_limit, limit)
    return cut(text, limit)
