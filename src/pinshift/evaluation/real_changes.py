"""What a recipe really builds on two sides, compared (pure, no Nix): does it rebuild, at which versions.

Statuses (`REAL_STATUSES`): `rebuild` (its derivation's path changed: Nix would build it again), `no rebuild` (the
same .drv path), `broken` (it evaluated on BASE and fails on TARGET, Nix's message), `fixed`, `failing` (fails on
both), `cannot tell` (a side whose pin the clone does not have, or that pins none: the reason), `added`,
`removed`. Recipes alike are one group: `66 recipes rebuild: torch 2.9.1 → 2.9.1`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pinshift.evaluation.real_build import Outcome, error_key

REAL_STATUSES = ("broken", "cannot tell", "rebuild", "fixed", "failing", "added", "removed", "no rebuild")
UNCHECKED = "the real pins' versions and rebuilds (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"


@dataclass(frozen=True)
class RealDiff:
    """One recipe's real build on BASE (`before`) and TARGET (`after`; None: the side has no such recipe)."""

    path: str
    status: str
    before: Outcome | None
    after: Outcome | None
    label: str = ""

    @property
    def error(self) -> str | None:
        return self.after.error if self.after is not None else None

    @property
    def base_error(self) -> str | None:
        return self.before.error if self.before is not None else None

    @property
    def reason(self) -> str | None:
        """Why it cannot be told (TARGET's reason first)."""
        for side in (self.after, self.before):
            if side is not None and side.unknown:
                return side.unknown
        for side in (self.after, self.before):
            if side is not None and side.build is not None and side.build.drv_path is None:
                return "it does not evaluate to a derivation (no drvPath)"
        return None


def compare_real(path: str, before: Outcome | None, after: Outcome | None, label: str = "") -> RealDiff:
    label = label or path
    if before is None and after is None:
        return RealDiff(path, "cannot tell", None, None, label)
    if before is None:
        return RealDiff(path, "added", None, after, label)
    if after is None:
        return RealDiff(path, "removed", before, None, label)
    if before.unknown or after.unknown:
        return RealDiff(path, "cannot tell", before, after, label)
    if before.build and after.build:
        if before.build.drv_path is None or after.build.drv_path is None:
            return RealDiff(path, "cannot tell", before, after, label)
        same = before.build.drv_path == after.build.drv_path
        return RealDiff(path, "no rebuild" if same else "rebuild", before, after, label)
    if before.build:
        return RealDiff(path, "broken", before, after, label)
    if after.build:
        return RealDiff(path, "fixed", before, after, label)
    return RealDiff(path, "failing", before, after, label)


def _package(side: Outcome | None) -> str:
    if side is None:
        return "?"
    if side.package:
        return side.package
    build = side.build
    return (build.pname or build.name or "?") if build is not None else "?"


def _version(side: Outcome | None) -> str:
    build = side.build if side is not None else None
    return (build.version or "?") if build is not None else "?"


def versions_words(diff: RealDiff) -> str:
    """`torch 2.9.1 → 2.10.0` (the package its recipe builds, before and after); one side: `torch 2.9.1`."""
    if diff.before is not None and diff.before.build and diff.after is not None and diff.after.build:
        before, after = _package(diff.before), _package(diff.after)
        name = before if before == after else f"{before} → {after}:"
        return f"{name} {_version(diff.before)} → {_version(diff.after)}"
    side = diff.after if diff.after is not None and diff.after.build else diff.before
    return f"{_package(side)} {_version(side)}"


def real_words(diff: RealDiff) -> str:
    """What a real status means, after the count (`66 recipes rebuild: …`)."""
    if diff.status == "rebuild":
        return f"rebuild: {versions_words(diff)}"
    if diff.status == "no rebuild":
        return f"no rebuild (the same derivation): {versions_words(diff)}"
    if diff.status == "broken":
        return f"broken at the real pin: {diff.error}"
    if diff.status == "fixed":
        return f"evaluate at the real pin now ({versions_words(diff)}; failed before: {diff.base_error})"
    if diff.status == "failing":
        return f"fail at the real pins on both sides: {diff.error}"
    if diff.status == "cannot tell":
        return f"cannot tell: {diff.reason or 'not evaluated'}"
    side = diff.after if diff.status == "added" else diff.before
    if side is not None and side.error:
        return f"{diff.status}, failing at the real pin: {side.error}"
    if side is not None and side.unknown:
        return f"{diff.status}, cannot tell: {side.unknown}"
    return f"{diff.status}: {versions_words(diff)}"


@dataclass
class RealGroup:
    status: str
    recipes: list[RealDiff]

    @property
    def first(self) -> RealDiff:
        return self.recipes[0]


def _key(diff: RealDiff) -> tuple:
    if diff.status in ("rebuild", "no rebuild", "fixed") or (diff.status in ("added", "removed")
                                                             and not (diff.error or diff.base_error or diff.reason)):
        return (versions_words(diff),)
    if diff.status == "cannot tell":
        return (diff.reason,)
    return (error_key(diff.error), error_key(diff.base_error), diff.reason)


def group_real(diffs: Iterable[RealDiff]) -> list[RealGroup]:
    """Groups in status order (broken first), each in the path order of its first recipe."""
    found: dict[tuple, RealGroup] = {}
    for diff in sorted(diffs, key=lambda d: d.path):
        found.setdefault((diff.status, _key(diff)), RealGroup(diff.status, [])).recipes.append(diff)
    return sorted(found.values(), key=lambda g: (REAL_STATUSES.index(g.status), g.first.path))


def real_counts(diffs: Sequence[RealDiff]) -> dict[str, int]:
    found = {status: 0 for status in REAL_STATUSES}
    for diff in diffs:
        found[diff.status] += 1
    return found


def outcome_data(side: Outcome | None) -> dict | None:
    if side is None:
        return None
    return {"build": side.build.to_json() if side.build else None, "error": side.error, "unknown": side.unknown,
            "pins": list(side.pins), "package": side.package}


def real_data(diff: RealDiff) -> dict:
    return {"status": diff.status, "before": outcome_data(diff.before), "after": outcome_data(diff.after)}
