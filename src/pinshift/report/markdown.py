"""The pull-request comment: title, summary table, warnings with links, per-file diffs.

GitHub rejects comments over 65,536 characters, so the report stays under
`limit` by leaving out diffs, largest first, and saying so; if even that is not
enough it shortens the warnings list and, as a last resort, cuts the text.
Diffs are decoded with replacement characters for display only.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from pinshift.diff import diff_text
from pinshift.display import printable
from pinshift.plan import FileChange, Plan, StepPlan, Warning
from pinshift.report.text import with_path
from pinshift.report.totals import endpoint, parsers_line, plural, short, totals

DEFAULT_LIMIT = 65_000
_CUT_MARK = "\n\n_… report cut to stay under the size limit._\n"


def cell(text: str) -> str:
    """Text that stays inside one table cell: no line breaks, pipes escaped, HTML inert, control characters shown."""
    return html.escape(printable(" ".join(text.split())), quote=False).replace("|", "\\|")


def code(text: str) -> str:
    """An inline code span that survives backticks in `text` (control characters shown as escapes)."""
    text = printable(text)
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fence(body: str) -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return fence


@dataclass(frozen=True)
class _Diff:
    """One file's diff block in the Changes section; `key` identifies it for truncation."""

    key: tuple[int, str]
    summary: str
    body: str

    def full(self) -> str:
        fence = _fence(self.body)
        return f"<details><summary>{self.summary}</summary>\n\n{fence}diff\n{self.body}{fence}\n\n</details>\n"

    def left_out(self) -> str:
        lines = self.body.count("\n")
        return f"- {self.summary} — diff left out ({plural(lines, 'line')})"


def _diff(step: StepPlan, change: FileChange) -> _Diff:
    summary = f"<code>{html.escape(printable(change.path))}</code> — {plural(len(change.edits), 'edit')}"
    body = printable(diff_text(change.path, change.before or b"", change.after or b""), keep_newlines=True,
                     keep_final_cr=True)
    return _Diff((step.index, change.path), summary, body)


def _input_commit(plan: Plan, step: StepPlan) -> str:
    """The commit whose bytes the step read: the previous step's commit, else the base."""
    previous = [s.commit for s in plan.steps if s.index < step.index and s.commit]
    return previous[-1] if previous else plan.base_commit


def _where(warning: Warning, commit: str, link_base: str | None) -> str:
    label = f"{warning.path}:{warning.line}" if warning.line else warning.path
    if link_base and commit and warning.line:
        return f"[{code(label)}]({link_base.rstrip('/')}/blob/{commit}/{warning.path}#L{warning.line})"
    return code(label)


class _Layout:
    """Everything but the diffs is fixed; the diffs and warning list shrink to fit the limit."""

    def __init__(self, plan: Plan, link_base: str | None):
        self.plan = plan
        self.link_base = link_base
        self.diffs = {d.key: d for s in plan.steps for d in (_diff(s, c) for c in s.changed)}

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
            values = [str(step.index), cell(step.title), code(step.kind), str(len(step.changed)),
                      str(step.edit_count), str(len(step.warnings))]
            if not self.plan.dry_run:
                values.append(code(short(step.commit)) if step.commit else "—")
            rows.append("| " + " | ".join(values) + " |")
        return rows + [""]

    def warnings(self, limit: int | None) -> list[str]:
        found = [(s, w) for s in self.plan.steps for w in s.warnings]
        if not found:
            return []
        lines = [f"### Warnings ({len(found)})", ""]
        for step, warning in found[:limit]:
            commit = _input_commit(self.plan, step)
            lines.append(f"- {_where(warning, commit, self.link_base)}: {cell(warning.message)} (step {step.index})")
        if limit is not None and len(found) > limit:
            lines.append(f"- … and {len(found) - limit} more (see `--format json`)")
        return lines + [""]

    def problems(self) -> list[str]:
        found = [(s, c) for s in self.plan.steps for c in s.refused + s.skipped]
        if not found:
            return []
        lines = ["### Refused and skipped files", ""]
        for step, change in found:
            lines.append(f"- **{change.outcome.value}** (step {step.index}): {cell(with_path(change))}")
        return lines + [""]

    def changes(self, dropped: set) -> list[str]:
        lines = []
        for step in self.plan.steps:
            if not step.changed and not step.notes:
                continue
            lines.append(f"### Step {step.index}: {cell(step.title)} ({code(step.kind)})")
            lines.append("")
            lines.extend(f"> {cell(note)}" for note in step.notes)
            if step.notes:
                lines.append("")
            if step.changed:
                lines.extend([f"_Parsed with {cell(parsers_line(step))}._", ""])
            for change in step.changed:
                diff = self.diffs[(step.index, change.path)]
                lines.append(diff.left_out() if diff.key in dropped else diff.full())
        return lines

    def render(self, dropped: set, warning_limit: int | None, limit: int) -> str:
        lines = self.header() + self.table() + self.warnings(warning_limit) + self.problems() + self.changes(dropped)
        if dropped:
            lines.append(
                f"_Left out {plural(len(dropped), 'diff')} of {len(self.diffs)} (largest first) to stay under "
                f"{limit:,} characters; `--format text` or `--format json` shows everything._"
            )
        return "\n".join(lines).rstrip("\n") + "\n"


def render_markdown(plan: Plan, limit: int = DEFAULT_LIMIT, link_base: str | None = None) -> str:
    """The report as one GitHub comment of at most `limit` characters."""
    layout = _Layout(plan, link_base)
    dropped: set = set()
    text = layout.render(dropped, None, limit)
    by_size = sorted(layout.diffs.values(), key=lambda d: (-len(d.full()), d.key))
    excess = len(text) - limit
    for diff in by_size:
        if excess <= 0:
            break
        dropped.add(diff.key)
        excess -= len(diff.full()) - len(diff.left_out())
        if excess <= 0:
            text = layout.render(dropped, None, limit)  # the note about what was left out costs characters too
            excess = len(text) - limit
    if len(text) > limit:
        text = layout.render(dropped, None, limit)
    warning_limit = len(plan.warnings)
    while len(text) > limit and warning_limit > 0:
        warning_limit //= 2
        text = layout.render(dropped, warning_limit, limit)
    if len(text) > limit:
        text = text[: max(limit - len(_CUT_MARK), 0)] + _CUT_MARK
    return text
