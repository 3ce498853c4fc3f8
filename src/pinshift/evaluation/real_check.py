"""migrate's build check at the real pins (`--nixpkgs DIR`): the start tree and the last step's tree evaluated at
the pins each recipe fetches (pinshift.evaluation.real_build), compared (pinshift.evaluation.real_changes).

A recipe that evaluated at its real pin before the migration and fails after it is refused on the last step that
changed its file (else the last step), with Nix's message: no branch is made (exit 1) unless `--allow-broken`,
which commits it with a warning on that step. Only the start and the end are evaluated at the real pins (each
step's tree is evaluated against the stand-in), so a break is put on the last step that touched the recipe.
"""

from __future__ import annotations

from pinshift.evaluation.real_changes import RealDiff, compare_real
from pinshift.planning.plan import FileChange, Outcome, Plan, Warning


def real_diffs(recipes, start_name: str, last_name: str, real: dict) -> list[RealDiff]:
    """One RealDiff per recipe the stand-in compared (`recipes`: RecipeDiffs, renames followed), in path order."""
    found = []
    for diff in recipes:
        old = diff.old_path or diff.path
        before = None if diff.status == "added" else real.get((start_name, old))
        after = None if diff.status == "removed" else real.get((last_name, diff.path))
        found.append(compare_real(diff.path, before, after, diff.label))
    return sorted(found, key=lambda r: r.path)


def refuse_real_breaks(plan: Plan, real: list[RealDiff], allow_broken: bool) -> list[RealDiff]:
    """Put each recipe broken at its real pin on the last step that changed it; the broken ones."""
    broken = [diff for diff in real if diff.status == "broken"]
    if not plan.steps:
        return broken
    for diff in broken:
        step = next((step for step in reversed(plan.steps)
                     if any(change.path == diff.path for change in step.changed)), plan.steps[-1])
        if allow_broken:
            message = f"no longer evaluates at its real pin (--allow-broken): {diff.error}"
            step.files.append(FileChange(diff.path, Outcome.UNCHANGED, "nix",
                                         warnings=[Warning(diff.path, 0, 0, message)]))
        else:
            step.files.append(FileChange(diff.path, Outcome.REFUSED, "nix", reason=(
                f"{diff.path}: no longer evaluates at its real pin: {diff.error} (pinshift migrate --allow-broken "
                "commits it anyway)")))
    return broken
