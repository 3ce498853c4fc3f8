"""The plain-text report: a headline per step with counts, then the unified diff of each file."""

from __future__ import annotations

from pinshift.diff import diff_text
from pinshift.plan import Plan


def render_text(plan: Plan, color: bool = False) -> str:
    lines = []
    for step in plan.steps:
        lines.append(
            f"step {step.index}/{step.total} {step.kind}: {step.title} — "
            f"{len(step.changed)} files changed, {step.edit_count} edits, {len(step.warnings)} warnings"
        )
        for change in step.changed:
            lines.append(diff_text(change.path, change.before, change.after).rstrip("\n"))
        for change in step.refused:
            lines.append(f"refused: {change.reason}")
        for warning in step.warnings:
            lines.append(f"warning: {warning}")
    return "\n".join(lines) + "\n"
