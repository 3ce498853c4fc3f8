"""Counts every report format shows, computed once from the Plan so the formats never disagree."""

from __future__ import annotations

from dataclasses import dataclass

from pinshift.languages import parser_name
from pinshift.planning.plan import Plan, StepPlan


@dataclass(frozen=True)
class Totals:
    steps: int
    files_changed: int  # distinct paths changed by any step
    edits: int
    warnings: int
    skipped: int
    refused: int


def totals(plan: Plan) -> Totals:
    return Totals(
        steps=len(plan.steps),
        files_changed=len(plan.changed_paths),
        edits=sum(s.edit_count for s in plan.steps),
        warnings=len(plan.warnings),
        skipped=sum(len(s.skipped) for s in plan.steps),
        refused=len(plan.refused),
    )


def short(commit: str | None) -> str:
    """The 7-character abbreviation reviewers recognise from git."""
    return (commit or "")[:7]


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def endpoint(ref: str, commit: str) -> str:
    """`ref (abc1234)`, or whichever of the two is known."""
    if ref and commit:
        return f"{ref} ({short(commit)})"
    return ref or short(commit) or "?"


def parsers_line(step: StepPlan, listed: int = 3) -> str:
    """Which parser read the changed files: `tree-sitter-nix (66 files)`, `markdown-it-py (README.md)`."""
    groups: dict[str, list[str]] = {}
    for change in step.changed:
        if change.removed:
            continue
        groups.setdefault(parser_name(change.language), []).append(change.path)
    parts = [f"{name} ({', '.join(paths) if len(paths) <= listed else plural(len(paths), 'file')})"
             for name, paths in groups.items()]
    return "; ".join(parts)
