"""What `pinshift infer` shows: the recipe with its proof as a comment block, and a terminal summary.

The comment block lists everything the proof found (every residue hunk, every dropped
candidate); the terminal summary fits a screen and lists the first few of each
(`--verbose`: all).
"""

from __future__ import annotations

from pinshift.languages.fit import Excerpt
from pinshift.infer.candidates import short
from pinshift.infer.engine import Inference
from pinshift.infer.recipe_toml import render


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _shortened(commit: str) -> str:
    return commit[:7]


def _replay(inference: Inference) -> list[str]:
    setting = inference.setting
    uses_branches = any("{base}" in str(t["params"]) or "{target}" in str(t["params"]) for t in inference.step_tables)
    lines = ["Replay elsewhere: pinshift migrate ./RECIPE.toml --from BRANCH --branch NEW"]
    if uses_branches:
        lines.append("  {base} and {target} in the README step follow --from and --branch: replayed with")
        lines.append(f"  --from {setting.branches['base']} --branch {setting.branches['target']} it gives TARGET byte for byte.")
    return lines


def proof_lines(inference: Inference, limit: int | None, indent: str = "  ") -> list[str]:
    """Coverage, residue hunks and dropped candidates, at most `limit` of each (None: all)."""
    coverage = inference.coverage
    lines = [f"proof: {coverage.summary()}"]
    if inference.comparison.outside:
        lines.append(f"{indent}({_plural(inference.comparison.outside, 'changed file')} outside --files not compared)")
    by_hand = hand_edits(inference)
    if by_hand:
        after = ("after `pinshift migrate` with this recipe" if inference.steps
                 else "no step reproduces any of their changes")
        lines.append(f"edit by hand: {_plural(len(by_hand), 'file')} a maintainer still edits ({after}; the "
                     "residue below shows what):")
    for name, paths in (("partly reproduced", coverage.partly), ("not reproduced", coverage.missed)):
        if not paths:
            continue
        if limit is None:
            lines.append(f"{indent}{name}:")
            lines.extend(f"{indent}  {path}" for path in paths)
        elif len(paths) <= 3:
            lines.append(f"{indent}{name}: {', '.join(paths)}")
        else:
            lines.append(f"{indent}{name}: {', '.join(paths[:3])} and {len(paths) - 3} more (--verbose lists them)")
    if coverage.residue:
        files = len({r.path for r in coverage.residue})
        lines.append(f"residue: {_plural(len(coverage.residue), 'difference')} in {_plural(files, 'file')} "
                     "that no step reproduces (TARGET's line, short diff):")
        groups: dict[tuple, list] = {}
        for residue in coverage.residue:  # the same difference in many files: shown once, counted
            changed = tuple(line for line in residue.diff if line[:1] in ("-", "+"))  # context may differ
            groups.setdefault((residue.what, changed), []).append(residue)
        shown = list(groups.values()) if limit is None else list(groups.values())[:limit]
        for same in shown:
            more = f" (and {_plural(len(same) - 1, 'more file')} with the same difference)" if len(same) > 1 else ""
            lines.append(f"{indent}{same[0]}{more}")
            lines.extend(Excerpt(f"{indent}  {line}") for line in same[0].diff)  # cut, never wrapped
            if limit is None and len(same) > 1:
                lines.append(f"{indent}  also at:")
                lines.extend(f"{indent}    {r.path}:{r.line}" if r.line else f"{indent}    {r.path}" for r in same[1:])
        if len(shown) < len(groups):
            left = sum(len(same) for same in list(groups.values())[len(shown):])
            lines.append(f"{indent}… and {_plural(left, 'more difference')} (--verbose lists them all)")
    if inference.dropped:
        lines.append(f"dropped: {_plural(len(inference.dropped), 'candidate step')} (a step whose plan changes what "
                     "TARGET did not change, or that cannot run, is never written):")
        shown = inference.dropped if limit is None else inference.dropped[:limit]
        for dropped in shown:
            lines.append(f"{indent}{dropped.candidate.kind} {short(dropped.candidate.title, 60)!r}: {dropped.reason}")
        if len(shown) < len(inference.dropped):
            lines.append(f"{indent}… and {len(inference.dropped) - len(shown)} more (--verbose lists them all)")
    return lines


def hand_edits(inference: Inference) -> list[str]:
    """The changed files no step reproduces byte for byte (partly or not at all), in path order: what a
    maintainer still edits by hand after migrating with the recipe."""
    coverage = inference.coverage
    return sorted(coverage.partly + coverage.missed) if coverage is not None else []


def recipe_text(inference: Inference) -> str:
    comparison = inference.comparison
    header = [f"Inferred by `pinshift infer {comparison.base} {comparison.target}`: BASE "
              f"{_shortened(comparison.base_commit)}, TARGET {_shortened(comparison.target_commit)}.",
              "Proved by planning this recipe from BASE in memory, as `pinshift migrate --dry-run` does,",
              "and comparing every changed file with TARGET.", ""]
    header += proof_lines(inference, None)
    header += [""] + _replay(inference)
    return render(inference.recipe, inference.step_tables, header)


def summary(inference: Inference, verbose: bool, shown: int) -> list[str]:
    comparison = inference.comparison
    lines = [f"inferred {_plural(len(inference.steps), 'step')} from {comparison.base} "
             f"({_shortened(comparison.base_commit)}) to {comparison.target} ({_shortened(comparison.target_commit)})"
             + (":" if inference.steps else "")]
    plan = inference.plan
    for step in plan.steps if plan is not None else ():
        counts = _plural(len(step.changed), "file")
        if step.operation_counts:
            counts += f" ({step.operation_counts})"
        if step.warnings:
            counts += f", {_plural(len(step.warnings), 'warning')}"
        lines.append(f"  {step.index} {step.kind:<19} {step.title} — {counts}")
    lines += proof_lines(inference, None if verbose else shown)
    if verbose and inference.coverage.reproduced:
        lines.append("reproduced byte for byte: " + ", ".join(inference.coverage.reproduced))
    warnings = len(plan.warnings) if plan is not None else 0
    if warnings:
        lines.append(f"note: the plan raises {_plural(warnings, 'warning')} (pinshift migrate --dry-run shows them)")
    return lines
