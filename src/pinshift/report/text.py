"""The terminal report: a headline per step with counts, then the unified diff of each file.

Colour is decided by the caller (`emit`): on only for a TTY without NO_COLOR or
--no-color. Diffs are decoded with replacement characters for display only, and
every line is passed through `printable` before it is coloured: control characters
from a file (terminal escapes, a carriage return mid-line) are shown, not obeyed.
"""

from __future__ import annotations

import click

from pinshift.diff import diff_text
from pinshift.display import printable
from pinshift.plan import FileChange, Plan, StepPlan
from pinshift.report.totals import endpoint, parsers_line, plural, short, totals

_DIFF_COLOURS = (("+++", {"bold": True}), ("---", {"bold": True}), ("@@", {"fg": "cyan"}),
                 ("+", {"fg": "green"}), ("-", {"fg": "red"}))


def _style(text: str, color: bool, **style) -> str:
    text = printable(text)
    return click.style(text, **style) if color else text


def _diff(change: FileChange, color: bool) -> list[str]:
    # split on "\n" only: a CRLF file keeps its "\r" (str.splitlines would also split on \x0c, \u2028...)
    lines = diff_text(change.path, change.before or b"", change.after or b"").removesuffix("\n").split("\n")
    lines = [printable(line, keep_final_cr=True) for line in lines]
    if not color:
        return lines
    out = []
    for line in lines:
        style = next((s for prefix, s in _DIFF_COLOURS if line.startswith(prefix)), None)
        out.append(click.style(line, **style) if style else line)
    return out


def with_path(change: FileChange) -> str:
    """The outcome reason, led by the path when the reason does not already name it."""
    reason = change.reason or change.outcome.value
    return reason if reason.startswith(change.path) else f"{change.path}: {reason}"


def headline(step: StepPlan) -> str:
    return (
        f"step {step.index}/{step.total} {step.kind}: {step.title} — "
        f"{plural(len(step.changed), 'file')} changed, {plural(step.edit_count, 'edit')}, "
        f"{plural(len(step.warnings), 'warning')}"
    )


def _step(step: StepPlan, color: bool) -> list[str]:
    lines = [_style(headline(step), color, bold=True)]
    if step.commit:
        lines.append(f"commit {short(step.commit)}")
    lines.extend(printable(f"note: {note}") for note in step.notes)
    if step.changed:
        lines.append(f"parsed with: {parsers_line(step)}")
    for change in step.changed:
        lines.extend(_diff(change, color))
    lines.extend(printable(f"skipped: {with_path(c)}") for c in step.skipped)
    lines.extend(_style(f"refused: {with_path(c)}", color, fg="red") for c in step.refused)
    lines.extend(_style(f"warning: {w}", color, fg="yellow") for w in step.warnings)
    return lines


def title_line(plan: Plan) -> str:
    """`recipe NAME: base (abc1234) → target`; the branches only when the run has them (not `apply`)."""
    title = f"recipe {plan.recipe}" if plan.recipe else "pinshift"
    if plan.base or plan.base_commit or plan.target or plan.target_commit:
        return f"{title}: {endpoint(plan.base, plan.base_commit)} → {endpoint(plan.target, plan.target_commit)}"
    return f"{title}: {plan.repository}" if plan.repository else title


def render_text(plan: Plan, color: bool = False) -> str:
    lines = [printable(f"{title_line(plan)} ({'dry run' if plan.dry_run else 'committed'})")]
    lines.extend(printable(f"note: {note}") for note in plan.notes)
    for step in plan.steps:
        lines.append("")
        lines.extend(_step(step, color))
    t = totals(plan)
    lines.append("")
    summary = (
        f"{plural(t.steps, 'step')}, {plural(t.files_changed, 'file')} changed, {plural(t.edits, 'edit')}, "
        f"{plural(t.warnings, 'warning')}, {t.skipped} skipped, {t.refused} refused"
    )
    if not plan.would_change:
        summary += " — nothing to change"
    lines.append(_style(summary, color, bold=True))
    return "\n".join(lines) + "\n"
