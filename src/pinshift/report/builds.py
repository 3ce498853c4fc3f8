"""What the recipes build, rendered: `pinshift diff` (text, Markdown, JSON `pinshift.diff/2`) and the "What the
recipes build" section of migrate's report.

Recipes whose status and changes (or error) are the same are one line, the first of them named
(pinshift.evaluation.build_changes.group), as the migrate report groups identical edits: `66 recipes: nixpkgs
6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; nothing else`. `verbose` lists every
recipe of a group; Markdown and JSON always list them. Everything from a file goes through `printable`; in
Markdown through pinshift.languages.markdown_escape. The Markdown report fits `--markdown-limit`
(pinshift.report.markdown_fit): recipe lists are left out first, then whole groups (those that build the
same first, broken ones last), and a line counts what was left out.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import json
from collections.abc import Sequence
from typing import Any

from pinshift.evaluation.build_changes import DiffGroup, RecipeDiff, change_words, counts, group
from pinshift.languages.markdown_escape import code, text as markdown_text
from pinshift.languages.display import visible_bytes
from pinshift.languages.fit import fit_lines
from pinshift.report.display import printable
from pinshift.report.markdown_fit import LIMIT, Part, cut, leave_out
from pinshift.report.totals import endpoint, plural

SCHEMA = "pinshift.diff/2"
# how a status reads in text and Markdown (JSON keeps the key)
LABELS = {"changed_untold": "changed, stand-in cannot tell how", "cannot_tell": "cannot tell"}


_COUNTED = {"changed_untold": "changed (stand-in cannot tell how)"}  # in the line of counts, between commas


def label(status: str) -> str:
    return LABELS.get(status, status)
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
    if found.status == "changed_untold":
        return f"{first.reason}; what it builds may differ (verify --eval or a build tells)"
    if found.status == "cannot_tell":
        return f"not evaluated by the stand-in: {first.reason}"
    if found.status == "failing":
        return f"fail on both sides (never evaluated, not a regression): {first.error}"
    if found.status == "fixed":
        return f"evaluate now (failed before: {first.base_error})"
    if found.status == "added":
        if first.reason:
            return f"added, not evaluated by the stand-in: {first.reason}"
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
    parts = [f"{number} {_COUNTED.get(status, label(status))}" for status, number in found.items() if number]
    return f"{_recipes(len(diffs))}: {', '.join(parts) if parts else 'none'}"


# --- pinshift diff --------------------------------------------------------------------------------------------------


def render_text(result, verbose: bool = False, width: int | None = None) -> str:
    """The text report; every line fitted to `width` columns when given (pinshift.languages.fit)."""
    lines = [printable(f"pinshift diff {endpoint(result.base, result.base_commit)} → "
                       f"{endpoint(result.target, result.target_commit)}")]
    for found in group(result.recipes, result.keys):
        for number, line in enumerate(group_line(found, verbose)):
            lines.append(f"{label(found.status)}: {line}" if number == 0 else line)
    lines.append(count_line(result.recipes))
    lines += real_lines(result.real, verbose)
    if width is not None:
        lines = fit_lines(lines, width, keep_tokens=verbose)
    return "\n".join(lines) + "\n"


# --- at the real pins (--nixpkgs) -------------------------------------------------------------------------------------


def real_group_line(found, verbose: bool = False) -> list[str]:
    """`66 recipes rebuild: torch 2.9.1 → 2.9.1 (first: path; --verbose lists all)`; one recipe: `path: rebuild: …`."""
    from pinshift.evaluation.real_changes import real_words

    recipes = found.recipes
    words = real_words(found.first)
    if len(recipes) == 1:
        return [printable(f"{recipes[0].label}: {words}")]
    line = f"{_recipes(len(recipes))} {words}"
    if not verbose:
        return [printable(f"{line} (first: {found.first.label}; --verbose lists all)")]
    return [printable(f"{line}:")] + [printable(f"  {diff.label}") for diff in recipes]


def real_count_line(real) -> str:
    """`66 recipes at the real pins: 64 rebuild, 1 broken, 1 cannot tell`."""
    from pinshift.evaluation.real_changes import real_counts

    parts = [f"{number} {status}" for status, number in real_counts(real).items() if number]
    return f"{_recipes(len(real))} at the real pins: {', '.join(parts) if parts else 'none'}"


def real_lines(real, verbose: bool = False, prefix: str = "real: ") -> list[str]:
    """The text lines of the real build: one per group and the counts; None (no clone): the unchecked line."""
    from pinshift.evaluation.real_changes import UNCHECKED, group_real

    if real is None:
        return [f"unchecked: {UNCHECKED}"]
    lines = []
    for found in group_real(real):
        for number, line in enumerate(real_group_line(found, verbose)):
            lines.append(f"{prefix}{line}" if number == 0 else line)
    lines.append(real_count_line(real))
    return lines


def real_markdown(real) -> list[str]:
    from pinshift.evaluation.real_changes import UNCHECKED, group_real, real_words

    if real is None:
        return [f"> Unchecked: {markdown_text(UNCHECKED)}", ""]
    lines = ["### At the real pins", "", f"{real_count_line(real)} (evaluated offline against the --nixpkgs clone).", ""]
    for found in group_real(real):
        head = (f"{code(found.first.label)}: " if len(found.recipes) == 1 else f"{_recipes(len(found.recipes))}: ")
        lines.append(f"- **{found.status}** — {head}{code(real_words(found.first))}")
        if len(found.recipes) > 1:
            lines += [f"  <details><summary>{len(found.recipes)} files</summary>", ""]
            lines += [f"  - {code(diff.label)}" for diff in found.recipes[:LISTED]]
            if len(found.recipes) > LISTED:
                lines.append(f"  - … and {len(found.recipes) - LISTED} more (`--format json` lists all)")
            lines += ["", "  </details>"]
    return lines + [""]


def real_json(real) -> dict[str, Any]:
    from pinshift.evaluation.real_changes import UNCHECKED, group_real, real_counts, real_data, real_words

    if real is None:
        return {"checked": False, "unchecked": [UNCHECKED]}
    return {"checked": True, "unchecked": [], "counts": real_counts(real),
            "recipes": [{"path": diff.path, **real_data(diff)} for diff in real],
            "groups": [{"status": found.status, "count": len(found.recipes),
                        "recipes": [diff.path for diff in found.recipes], "summary": real_words(found.first)}
                       for found in group_real(real)]}


def render_markdown(result, limit: int = LIMIT) -> str:
    """The report as one pull-request comment of at most `limit` characters (groups are left out to fit, saying so)."""
    head = [f"## What the recipes build: {code(result.base)} → {code(result.target)}", "",
            f"{count_line(result.recipes)} ({code(result.base_commit[:7])} → {code(result.target_commit[:7])}).", ""]
    found = group(result.recipes, result.keys)

    tail = real_markdown(getattr(result, "real", None))

    def render(dropped: set) -> str:
        return "\n".join(head + markdown_groups(found, dropped) + [""] + tail).rstrip("\n") + "\n"

    text, _ = leave_out(render, group_parts(found), limit)
    return cut(text, limit)


_PRIORITY = {"same": 1, "broken": 3}  # groups left out first (after the recipe lists); broken ones last


def group_parts(found: Sequence[DiffGroup], first: int = 0) -> list[Part]:
    """What `markdown_groups` may leave out: each group's recipe list, then whole groups (keys `("recipes", n)`,
    `("group", n)`; `priority` counts from `first`)."""
    parts = []
    for number, one in enumerate(found):
        listing = _listing(one)
        if listing:
            parts.append(Part(("recipes", number), "\n".join(listing), _LISTING_LEFT_OUT, first, number))
        line = _group_head(one)
        parts.append(Part(("group", number), "\n".join([line] + listing), "", first + _PRIORITY.get(one.status, 2),
                          number))  # the last groups go first: the report keeps its head
    return parts


_LISTING_LEFT_OUT = "  - _List left out to fit the size limit; `--format json` lists them._"


def _group_head(found: DiffGroup) -> str:
    if len(found.recipes) == 1:
        return f"- **{label(found.status)}** — {code(found.first.label)}: {code(group_words(found))}"
    return f"- **{label(found.status)}** — {_recipes(len(found.recipes))}: {code(group_words(found))}"


def _listing(found: DiffGroup) -> list[str]:
    if len(found.recipes) == 1:
        return []
    lines = [f"  <details><summary>{len(found.recipes)} files</summary>", ""]
    lines += [f"  - {code(diff.label)}" for diff in found.recipes[:LISTED]]
    if len(found.recipes) > LISTED:
        lines.append(f"  - … and {len(found.recipes) - LISTED} more (`--format json` lists all)")
    return lines + ["", "  </details>"]


def markdown_groups(found: Sequence[DiffGroup], dropped: set = frozenset()) -> list[str]:
    """One list item per group (its recipes in a `<details>` list), but those in `dropped` (see `group_parts`)."""
    lines, left_out = [], []
    for number, one in enumerate(found):
        if ("group", number) in dropped:
            left_out.append(one)
            continue
        lines.append(_group_head(one))
        lines += [_LISTING_LEFT_OUT] if ("recipes", number) in dropped else _listing(one)
    if left_out:
        statuses = ", ".join(f"{sum(1 for one in left_out if one.status == status)} {label(status)}"
                             for status in dict.fromkeys(one.status for one in left_out))
        lines.append(f"- … {plural(len(left_out), 'group')} of {_recipes(sum(len(g.recipes) for g in left_out))} "
                     f"({statuses}) left out to stay under the size limit; `--format json` lists every recipe")
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
        "real": real_json(result.real),
    }


def recipe_data(diff: RecipeDiff) -> dict[str, Any]:
    data: dict[str, Any] = {"path": diff.path, "status": diff.status}
    if diff.old_path:
        data["old_path"] = diff.old_path
    if diff.error is not None:
        data["error"] = diff.error
    if diff.base_error is not None:
        data["base_error"] = diff.base_error
    if diff.reason is not None:
        data["reason"] = diff.reason
    data["changes"] = [{"attribute": c.attribute, "before": c.before, "after": c.after} for c in diff.changes]
    return data


def groups_data(diffs: Sequence[RecipeDiff], keys: dict) -> list[dict[str, Any]]:
    return [{"status": found.status, "count": len(found.recipes), "recipes": [d.path for d in found.recipes],
             "summary": group_words(found)} for found in group(diffs, keys)]


def render_json(result) -> str:
    return visible_bytes(json.dumps(diff_data(result), indent=2, ensure_ascii=False), json=True) + "\n"


def render(result, fmt: str | None, verbose: bool = False, markdown_limit: int = LIMIT, width: int | None = None) -> str:
    if fmt == "json":
        return render_json(result)
    if fmt == "markdown":
        return render_markdown(result, markdown_limit)
    return render_text(result, verbose, width)


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
        lines += real_lines(getattr(builds, "real", None), verbose)
    lines.extend(printable(f"note: {note}") for note in builds.notes)
    return lines


def builds_found(builds) -> list[DiffGroup]:
    """The groups of recipes migrate's Markdown report shows: those that do not build the same."""
    if builds is None or not builds.checked:
        return []
    return group([diff for diff in builds.recipes if diff.status != "same"], builds.keys)


def builds_markdown(builds, dropped: set = frozenset()) -> list[str]:
    """Migrate's section; `dropped` holds keys of `group_parts(builds_found(builds))` left out to fit."""
    if builds is None:
        return []
    lines = ["### What the recipes build", ""]
    if builds.checked:
        changed = [diff for diff in builds.recipes if diff.status != "same"]
        lines.append(f"{count_line(builds.recipes)} (evaluated offline against pinshift's stand-in nixpkgs).")
        lines.append("")
        if changed:
            lines += markdown_groups(builds_found(builds), dropped)
        else:
            lines.append("Nothing changes.")
        lines += [""] + real_markdown(getattr(builds, "real", None))[:-1]
    lines += [f"> {markdown_text(note)}" for note in builds.notes]
    lines.append("")
    return lines


def builds_data(builds) -> dict[str, Any] | None:
    if builds is None:
        return None
    return {
        "checked": builds.checked,
        "allow_broken": builds.allow_broken,
        "counts": {status: number for status, number in counts(builds.recipes).items()
                   if status != "changed_untold"},  # migrate's check reads no file's meaning
        "recipes": [recipe_data(diff) for diff in builds.recipes if diff.status != "same"],
        "groups": groups_data([d for d in builds.recipes if d.status != "same"], builds.keys),
        "notes": list(builds.notes),
        "real": real_json(getattr(builds, "real", None)) if builds.checked else None,
    }
