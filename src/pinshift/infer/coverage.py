"""How much of TARGET a planned recipe reproduces: file by file, and each hunk it does not.

`planned_files(plan, base_tree)` replays a Plan's tree changes (the same `plan.tree_changes`
`pinshift migrate` commits) over BASE in memory; `measure` compares the result with TARGET:
a changed file is reproduced (byte for byte and with TARGET's mode, at TARGET's path), partly
reproduced (a step changed it, but not into TARGET's bytes and mode), or not reproduced (no step
touched it). Each difference left is a `Residue`: path, TARGET's line, a short diff. No step kind
changes a file's mode, so a mode TARGET changed (`chmod +x`) is always residue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pinshift.planning.unified_diff import unified_diff
from pinshift.report.display import printable
from pinshift.errors import PinshiftError
from pinshift.infer.blocks import first_mixed_block
from pinshift.infer.trees import Comparison
from pinshift.planning.plan import Plan, tree_changes

DIFF_LINES = 6  # a residue's short diff: at most this many -/+ lines
LINE_WIDTH = 100


@dataclass(frozen=True)
class Residue:
    """One unexplained difference: `path:line` (TARGET's line), what it is, and a short diff (-/+ lines)."""

    path: str
    line: int
    what: str
    diff: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.what}"


@dataclass
class Coverage:
    reproduced: list[str] = field(default_factory=list)
    partly: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    residue: list[Residue] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.reproduced) + len(self.partly) + len(self.missed)

    @property
    def complete(self) -> bool:
        return not self.partly and not self.missed

    def summary(self) -> str:
        return (f"{len(self.reproduced)} of {self.total} changed file{'s' if self.total != 1 else ''} reproduced "
                f"byte for byte, {len(self.partly)} partly, {len(self.missed)} not at all")


def planned_files(plan: Plan, base_tree) -> Callable[[str], bytes | None]:
    """The bytes of each path after every step of `plan` (None: no such file), read lazily from BASE otherwise;
    `.mode(path)` its git mode, as the commits would record it."""
    overlay: dict[str, bytes | None] = {}
    modes: dict[str, str] = {}  # paths a step made (renamed, cloned), with the mode of the file they came from
    for step in plan.steps:
        for change in tree_changes(step):
            overlay[change.path] = change.data
            if change.mode is not None and change.data is not None:
                modes[change.path] = change.mode
            elif change.data is None:
                modes.pop(change.path, None)

    def read(path: str) -> bytes | None:
        if path in overlay:
            return overlay[path]
        if base_tree.mode(path) is None:
            return None
        try:
            return base_tree.read(path)
        except PinshiftError:
            return None

    def mode(path: str) -> str | None:
        if path in overlay and overlay[path] is None:
            return None
        return modes.get(path) or base_tree.mode(path) or ("100644" if path in overlay else None)

    read.overlay = overlay  # type: ignore[attr-defined]
    read.mode = mode  # type: ignore[attr-defined]
    return read


def recipe_origins(plan: Plan) -> dict[str, str]:
    """Path -> the BASE path it was renamed or cloned from by the plan's steps (followed through each step)."""
    found: dict[str, str] = {}
    for step in plan.steps:
        for change in step.changed:
            came_from = change.old_path or change.source
            if came_from is not None:
                found[change.path] = found.get(came_from, came_from)
    return found


def corrupted(comparison: Comparison, planned: Callable[[str], bytes | None],
              origins: dict[str, str] | None = None) -> dict[str, str]:
    """Path -> why, for each path the replayed recipe leaves as neither BASE nor TARGET has it (normally empty).

    A path TARGET keeps taken away; a path created that TARGET does not have; a file TARGET has
    whose blocks of changed lines do not each end as BASE's or TARGET's (blocks.first_mixed_block),
    or a new file that is not TARGET's whole. A file TARGET renames that no step renamed is held to
    TARGET's renamed bytes the same way. Editing a file TARGET removes is not one (its removal is
    residue either way)."""
    renamed_to = {origin: path for path, origin in comparison.renamed.items()}
    found: dict[str, str] = {}
    for path, data in sorted(planned.overlay.items()):  # type: ignore[attr-defined]
        in_target = comparison.target_tree.mode(path) is not None
        if data is None:
            if in_target:
                found[path] = f"removes {path}, which TARGET keeps"
            continue
        if not in_target and path in comparison.removed:
            continue
        if not in_target and path not in renamed_to:
            found[path] = f"creates {path}, which TARGET does not have"
            continue
        target_path = path if in_target else renamed_to[path]
        origin = (origins or {}).get(path) or comparison.origin(target_path) or (target_path if in_target else path)
        before = _base(comparison, origin) if comparison.base_tree.mode(origin) else None
        target = comparison.target_read(target_path)
        if target is None or data == target:
            continue
        if before is None:
            found[path] = f"writes {path} otherwise than TARGET has it"
            continue
        if before == target:
            found[path] = f"changes {path}, which TARGET leaves as it is"
            continue
        line = first_mixed_block(before, target, data)
        if line is not None:
            found[path] = f"leaves {path} near TARGET's line {line} as neither BASE nor TARGET has it"
    return found


def _base(comparison: Comparison, path: str) -> bytes | None:
    try:
        return comparison.base_tree.read(path)
    except PinshiftError:
        return None


def measure(comparison: Comparison, planned: Callable[[str], bytes | None]) -> Coverage:
    coverage = Coverage()
    for path in comparison.target_paths():
        target = comparison.target_read(path)
        if target is None:
            coverage.missed.append(path)
            reason = comparison.skipped.get(path, "unreadable").removeprefix(f"{path}: ")
            coverage.residue.append(Residue(path, 0, f"not compared: {reason}"))
            continue
        now = planned(path)
        origin = comparison.origin(path)
        before = _base(comparison, origin) if origin is not None else None
        mode = _mode_residue(path, planned.mode(path), comparison.target_tree.mode(path)) if now is not None \
            else None  # type: ignore[attr-defined]
        if mode is not None:
            (coverage.partly if now != before else coverage.missed).append(path)
            coverage.residue.append(mode)
            if now != target:
                coverage.residue.extend(residue_hunks(path, now, target))
            continue
        if now == target:
            coverage.reproduced.append(path)
            continue
        if now is None and origin is not None and planned(origin) is not None and origin != path:
            moved = planned(origin)
            (coverage.partly if moved != before else coverage.missed).append(path)
            coverage.residue.append(Residue(path, 0, f"TARGET has it as a {'rename' if path in comparison.renamed else 'copy'}"
                                                     f" of {origin}; no step makes it"))
            coverage.residue.extend(residue_hunks(path, moved, target))
            continue
        if now is None:
            coverage.missed.append(path)
            coverage.residue.append(Residue(path, 0, "TARGET adds this file; no step creates it"))
            continue
        (coverage.partly if now != before else coverage.missed).append(path)
        coverage.residue.extend(residue_hunks(path, now, target))
    for path in sorted(comparison.removed):
        if planned(path) is None:
            coverage.reproduced.append(path)
        else:
            coverage.missed.append(path)
            coverage.residue.append(Residue(path, 0, "TARGET removes this file; no step removes it"))
    return coverage


def _mode_residue(path: str, planned: str | None, target: str | None) -> Residue | None:
    """The difference between the mode the recipe leaves `path` with and TARGET's, if any (no step changes one)."""
    if planned is None or target is None or planned == target:
        return None
    if {planned, target} == {"100644", "100755"}:
        what = "executable" if target == "100755" else "not executable"
        return Residue(path, 0, f"TARGET makes it {what} (mode {planned} → {target}); no step changes a file's mode")
    return Residue(path, 0, f"TARGET has mode {target}, the recipe leaves {planned}; no step changes a file's mode")


def residue_hunks(path: str, planned: bytes, target: bytes) -> list[Residue]:
    """One Residue per hunk of the diff from the planned bytes to TARGET's (one line of context)."""
    text = unified_diff(path, planned, target, context=1).decode("utf-8", "replace")
    found = []
    for chunk in text.split("\n@@")[1:]:
        header, _, body = chunk.partition("\n")
        new_side = header.split("+", 1)[1].split(" ", 1)[0] if "+" in header else "0"
        lines = [l for l in body.split("\n") if l[:1] in ("-", "+", " ", "\\")]
        first = next((i for i, l in enumerate(lines) if l[:1] in ("-", "+")), 0)
        line = int(new_side.split(",")[0] or 0) + sum(1 for l in lines[:first] if l.startswith(" "))
        found.append(Residue(path, max(line, 1), _what(lines), _short(lines)))
    return found


def _what(lines: list[str]) -> str:
    added = sorted(l[1:] for l in lines if l.startswith("+"))
    removed = sorted(l[1:] for l in lines if l.startswith("-"))
    if added and added == removed:
        return "the same lines in another order"
    if added and removed:
        return f"{len(removed)} line{'s' if len(removed) != 1 else ''} differ" if len(removed) != 1 else \
            "a line differs" if len(added) == 1 else f"1 line differs ({len(added)} in TARGET)"
    if added:
        return f"TARGET has {len(added)} more line{'s' if len(added) != 1 else ''}"
    return f"TARGET has {len(removed)} line{'s' if len(removed) != 1 else ''} fewer"


def _short(lines: list[str]) -> tuple[str, ...]:
    shown = [printable(l if len(l) <= LINE_WIDTH else l[: LINE_WIDTH - 1] + "…") for l in lines[:DIFF_LINES]]
    if len(lines) > DIFF_LINES:
        shown.append(f"… {len(lines) - DIFF_LINES} more lines")
    return tuple(shown)
