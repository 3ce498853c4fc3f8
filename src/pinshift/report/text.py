"""The terminal report: a headline per step with counts, then one diff per group of identical edits.

Files a step changed the same way (`report.groups`) show one diff, then `… and 65 more
files with this change`; repeated warnings, notes, skipped and refused files one line
per group with the count and the first location. `verbose` lists every file and every
finding instead.

Every line but a diff's fits the width the caller gives (pinshift.languages.fit: wrapped, a long token cut
in the middle, whole with `verbose`); a diff is content, shown as it is.

Colour is decided by the caller (`emit`): on only for a TTY without NO_COLOR or
--no-color. Diffs are decoded with replacement characters for display only, and
every line is passed through `printable` before it is coloured: control characters
from a file (terminal escapes, a carriage return mid-line) are shown, not obeyed.
"""

from __future__ import annotations

import click

from pinshift.languages.fit import Verbatim, fit_lines
from pinshift.planning.unified_diff import diff_text
from pinshift.report.builds import builds_lines
from pinshift.report.display import printable
from pinshift.planning.plan import FileChange, Plan, StepPlan
from pinshift.report.groups import (ChangeGroup, change_groups, group_lines, note_groups, outcome_text, refused_groups,
                                    run_notes, skipped_groups, warning_groups)
from pinshift.report.totals import endpoint, parsers_line, plural, short, totals

_DIFF_COLOURS = (("+++", {"bold": True}), ("---", {"bold": True}), ("@@", {"fg": "cyan"}),
                 ("+", {"fg": "green"}), ("-", {"fg": "red"}))


def _style(text: str, color: bool, **style) -> str:
    text = printable(text)
    return click.style(text, **style) if color else text


def _diff(change: FileChange, color: bool) -> list[str]:
    # split on "\n" only: a CRLF file keeps its "\r" (str.splitlines would also split on \x0c, \u2028...)
    old_path = change.old_path or change.source
    lines = diff_text(change.path, change.before or b"", change.after or b"", old_path=old_path)
    lines = lines.removesuffix("\n").split("\n") if lines else []
    lines = [Verbatim(printable(line, keep_final_cr=True)) for line in lines]  # content: never fitted
    if not color:
        return lines
    out = []
    for line in lines:
        style = next((s for prefix, s in _DIFF_COLOURS if line.startswith(prefix)), None)
        out.append(Verbatim(click.style(line, **style)) if style else line)
    return out


with_path = outcome_text  # the outcome reason, led by the path when the reason does not already name it


def headline(step: StepPlan) -> str:
    operations = f" ({step.operation_counts})" if step.operation_counts else ""
    return (
        f"step {step.index}/{step.total} {step.kind}: {step.title} — "
        f"{plural(len(step.changed), 'file')} changed{operations}, {plural(step.edit_count, 'edit')}, "
        f"{plural(len(step.warnings), 'warning')}"
    )


def operation_line(change: FileChange) -> str | None:
    """`renamed: old → new`, `cloned: source ⇒ new`, `removed: path`; None for an edit in place."""
    if change.removed:
        return printable(f"removed: {change.path}")
    return printable(f"{change.operation}: {change.label}") if change.operation else None


def more_files(group: ChangeGroup, verbose: bool) -> list[str]:
    """`… and 65 more files with this change` (with `verbose`, followed by each of them); [] for a group of one."""
    others = group.changes[1:]
    if not others:
        return []
    line = f"… and {len(others)} more {'file' if len(others) == 1 else 'files'} with this change"
    if not verbose:
        return [f"{line} (--verbose lists them)"]
    return [f"{line}:"] + [printable(f"  {change.label}") for change in others]


def _group(group: ChangeGroup, color: bool, verbose: bool) -> list[str]:
    lines = []
    operation = operation_line(group.representative)
    if operation:
        lines.append(_style(operation, color, bold=True))
    return lines + _diff(group.representative, color) + more_files(group, verbose)


def _step(step: StepPlan, color: bool, verbose: bool = False) -> list[str]:
    lines = [_style(headline(step), color, bold=True)]
    if step.commit:
        lines.append(f"commit {short(step.commit)}")
    lines.extend(printable(f"note: {note}") for note in run_notes(step))
    lines.extend(printable(f"note: {line}") for line in group_lines(note_groups(step), verbose))
    if parsers_line(step):
        lines.append(f"parsed with: {parsers_line(step)}")
    for group in change_groups(step):
        lines.extend(_group(group, color, verbose))
    lines.extend(printable(f"skipped: {line}") for line in group_lines(skipped_groups(step), verbose))
    lines.extend(_style(f"refused: {line}", color, fg="red") for line in group_lines(refused_groups(step), verbose))
    lines.extend(_style(f"warning: {line}", color, fg="yellow") for line in group_lines(warning_groups(step), verbose))
    return lines


def title_line(plan: Plan) -> str:
    """`recipe NAME: base (abc1234) → target`; the branches only when the run has them (not `apply`)."""
    title = f"recipe {plan.recipe}" if plan.recipe else "pinshift"
    if plan.base or plan.base_commit or plan.target or plan.target_commit:
        return f"{title}: {endpoint(plan.base, plan.base_commit)} → {endpoint(plan.target, plan.target_commit)}"
    return f"{title}: {plan.repository}" if plan.repository else title


def render_text(plan: Plan, color: bool = False, verbose: bool = False, width: int | None = None) -> str:
    """The report; every line but the diffs' fitted to `width` columns when given (pinshift.languages.fit)."""
    lines = [printable(f"{title_line(plan)} ({'dry run' if plan.dry_run else 'committed'})")]
    lines.extend(printable(f"note: {note}") for note in plan.notes)
    for step in plan.steps:
        lines.append("")
        lines.extend(_step(step, color, verbose))
    if plan.builds is not None:
        lines.append("")
        lines.append(_style("What the recipes build", color, bold=True))
        lines.extend(builds_lines(plan.builds, verbose))
    t = totals(plan)
    lines.append("")
    summary = (
        f"{plural(t.steps, 'step')}, {plural(t.files_changed, 'file')} changed, {plural(t.edits, 'edit')}, "
        f"{plural(t.warnings, 'warning')}, {t.skipped} skipped, {t.refused} refused"
    )
    if not plan.would_change:
        summary += " — nothing to change"
    lines.append(_style(summary, color, bold=True))
    if width is not None:
        lines = fit_lines(lines, width, keep_tokens=verbose)
    return "\n".join(lines) + "\n"
