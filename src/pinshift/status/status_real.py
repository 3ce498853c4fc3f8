"""`pinshift status --nixpkgs DIR`: each build recipe of each branch evaluated at its real pin.

Each branch's commit is written to a private scratch folder (pinshift.evaluation.snapshots) and each build recipe is
evaluated at the pins it fetches, exported from the clone (pinshift.evaluation.real_build: the sandbox, offline,
nothing built). pinshift.status.status counts a package's versions from these outcomes (origin `real`).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path


def evaluate_branches(branches, clone: Path, nix: str) -> tuple[list[dict], list[str]]:
    """For each (label, branch recipes, repository, recipe paths): path -> real_build.Outcome; and the notes."""
    from pinshift.evaluation.real_build import evaluate_snapshots_real
    from pinshift.evaluation.snapshots import Scratch

    found: list[dict] = []
    notes: list[str] = []
    for label, branch, repository, paths in branches:
        if not paths:
            found.append({})
            continue
        tree = repository.tree(branch.commit)
        with Scratch(files=len(tree.paths())) as scratch:
            snapshot = scratch.commit("branch", tree)
            real, _ = evaluate_snapshots_real(clone, nix, [(snapshot, paths)])
        found.append({path: outcome for (_, path), outcome in real.items()})
        failing = sum(1 for outcome in real.values() if outcome.error)
        if failing:
            notes.append(f"{label}: {failing} recipe{'s' if failing != 1 else ''} fail at their real pins "
                         "(pinshift diff --nixpkgs DIR says where)")
    return found, notes
