"""What the recipes build, rendered: `pinshift diff` (text, Markdown, JSON `pinshift.diff/1`) and the "What the
recipes build" section of migrate's report.

Recipes whose status and changes (or error) are the same are one line, the first of them named
(pinshift.checks.build_changes.group), as the migrate report groups identical edits: `66 recipes: nixpkgs
6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; nothing else`. `verbose` lists every
recipe of a group; Markdown and JSON always list them. Everything from a file goes through `printable`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pinshift.checks.build_changes import DiffGroup, RecipeDiff, change_words, counts, group
from pinshift.report.display import printable
from pinshift.report.totals import endpoint, plural

SCHEMA = "pinshift.diff/1"
LISTED = 50  # recipes a Markdown group lists (a pull-request comment stays short)


def _recipes(count: int) -> str:
    return plural(count, "recipe")


def changes_words(diff: RecipeDiff) -> str:
    """Every change of one recipe in a line, ending `nothing else`."""
    return "; ".join([change_words(change) for change in diff.changes] + ["nothing else"])


def group_words(found: DiffGroup) -> str:
    """What a group is, after its count: its changes, or its error."""
    first = found.first
    if found.status == "changed":
        return changes_words(first)
    if found.status == "broken":
        return f"no longer evaluate: {first.error}"
    if found.status == "failing":
        return f"fail on both sides (never evaluated, not a regression): {first.error}"
    if found.status == "fixed":
        return f"evaluate now (failed before: {first.base_error})"
    if found.status == "added":
        return f"added, failing: {first.error}" if first.error else "added"
    if found.status == "removed":
        return "removed"
    return "build the same"


def group_line(found: DiffGroup, verbose: bool = False) -> list[str]:
    """`66 recipes: <words> (first: path; --verbose lists all)`; one recipe: `path: <words>`."""
    recipes = found.recipes
    if len(recipes) == 1:
        return [printable(f"{recipes[0].label}: {group_words(found)}")]
    line = f"{_recipes(len(recipes))}: {group_words(found)}"
    if not verbose:
        return [printable(f"{line} (first: {found.first.label}; --verbose lists all)")]
    return [printable(f"{line}:")] + [printable(f"  {diff.label}") for diff in recipes]


def count_line(diffs: Sequence[RecipeDiff]) -> str:
    """`70 recipes: 2 broken, 60 changed, 8 same`."""
    found = counts(diffs)
    parts = [f"{number} {status}" for status, number in found.items() if number]
    return f"{_recipes(len(diffs))}: {', '.join(parts) if parts else 'none'}"


# --- pinshift diff --------------------------------------------------------------------------------------------------


def render_text(result, verbose: bool = False) -> str:
    lines = [printable(f"pinshift diff {endpoint(result.base, result.base_commit)} → "
                       f"{endpoint(result.target, result.target_commit)}")]
    for found in group(result.recipes, result.keys):
        for number, line in enumerate(group_line(found, verbose)):
            lines.append(f"{found.status}: {line}" if number == 0 else line)
    lines.append(count_line(result.recipes))
    return "\n".join(lines) + "\n"


def _code(text: str) -> str:
    text = printable(text).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render_markdown(result) -> str:
    lines = [f"## What the recipes build: {_code(result.base)} → {_code(result.target)}", "",
             f"{count_line(result.recipes)} ({result.base_commit[:7]} → {result.target_commit[:7]}).", ""]
    lines += markdown_groups(result.recipes, result.keys)
    return "\n".join(lines) + "\n"


def markdown_groups(diffs: Sequence[RecipeDiff], keys: dict) -> list[str]:
    lines = []
    for found in group(diffs, keys):
        head = f"- **{found.status}** — {_recipes(len(found.recipes))}: {_code(group_words(found))}"
        if len(found.recipes) == 1:
            lines.append(f"- **{found.status}** — {_code(found.first.label)}: {_code(group_words(found))}")
            continue
        lines.append(head)
        lines.append(f"  <details><summary>{len(found.recipes)} files</summary>")
        lines.append("")
        lines += [f"  - {_code(diff.label)}" for diff in found.recipes[:LISTED]]
        if len(found.recipes) > LISTED:
            lines.append(f"  - … and {len(found.recipes) - LISTED} more (`--format json` lists all)")
        lines.append("")
        lines.append("  </details>")
    return lines


def diff_data(result) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "base": {"ref": result.base, "commit": result.base_commit},
        "target": {"ref": result.target, "commit": result.target_commit},
        "counts": counts(result.recipes),
        "recipes": [recipe_data(diff) for diff in result.recipes],
        "groups": groups_data(result.recipes, result.keys),
        "evaluation": {"evaluated": result.stats.evaluated, "remembered": result.stats.remembered,
                       "calls": result.stats.calls},
    }


def recipe_data(diff: RecipeDiff) -> dict[str, Any]:
    data: dict[str, Any] = {"path": diff.path, "status": diff.status}
    if diff.old_path:
        data["old_path"] = diff.old_path
    if diff.error is not None:
        data["error"] = diff.error
    if diff.base_error is not None:
        data["base_error"] = diff.base_error
    data["changes"] = [{"attribute": c.attribute, "before": c.before, "after": c.after} for c in diff.changes]
    return data


def groups_data(diffs: Sequence[RecipeDiff], keys: dict) -> list[dict[str, Any]]:
    return [{"status": found.status, "count": len(found.recipes), "recipes": [d.path for d in found.recipes],
             "summary": group_words(found)} for found in group(diffs, keys)]


def render_json(result) -> str:
    return json.dumps(diff_data(result), indent=2, ensure_ascii=False) + "\n"


def render(result, fmt: str | None, verbose: bool = False) -> str:
    if fmt == "json":
        return render_json(result)
    if fmt == "markdown":
        return render_markdown(result)
    return render_text(result, verbose)


# --- migrate: "What the recipes build" ------------------------------------------------------------------------------


SHOWN_GROUPS = 10  # groups of recipes the text section shows without --verbose (a summary fits a screen)


def builds_lines(builds, verbose: bool = False) -> list[str]:
    """The section's lines for the text report (and migrate's summary): one per group (the first SHOWN_GROUPS
    without `verbose`), then the notes."""
    if builds is None:
        return []
    lines = []
    if builds.checked:
        groups = [found for found in group(builds.recipes, builds.keys) if found.status != "same"]
        for found in groups if verbose else groups[:SHOWN_GROUPS]:
            lines.extend(group_line(found, verbose))
        if not verbose and len(groups) > SHOWN_GROUPS:
            rest = groups[SHOWN_GROUPS:]
            lines.append(f"… and {len(rest)} more groups of {_recipes(sum(len(g.recipes) for g in rest))} "
                         "(--verbose or --format json lists them)")
        if not any(diff.status != "same" for diff in builds.recipes):
            lines.append(f"{_recipes(len(builds.recipes))}: nothing changes")
    lines.extend(printable(f"note: {note}") for note in builds.notes)
    return lines


def builds_markdown(builds) -> list[str]:
    if builds is None:
        return []
    lines = ["### What the recipes build", ""]
    if builds.checked:
        changed = [diff for diff in builds.recipes if diff.status != "same"]
        lines.append(f"{count_line(builds.recipes)} (evaluated offline against pinshift's stand-in nixpkgs).")
        lines.append("")
        if changed:
            lines += markdown_groups(changed, builds.keys)
        else:
            lines.append("Nothing changes.")
    lines += [f"> {printable(note)}" for note in builds.notes]
    lines.append("")
    return lines


def builds_data(builds) -> dict[str, Any] | None:
    if builds is None:
        return None
    return {
        "checked": builds.checked,
        "allow_broken": builds.allow_broken,
        "counts": counts(builds.recipes),
        "recipes": [recipe_data(diff) for diff in builds.recipes if diff.status != "same"],
        "groups": groups_data([d for d in builds.recipes if d.status != "same"], builds.keys),
        "notes": list(builds.notes),
    }
