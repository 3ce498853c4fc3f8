"""`pinshift scan` output: per-recipe facts and the aggregates, as text, Markdown or JSON."""

from __future__ import annotations

import json

from pinshift.checks.facts import GPU_NAMES, RecipeFacts
from pinshift.checks.matrix import Aggregates, Drift, isa_of


def _short(revision: str | None) -> str:
    return revision[:7] if revision else "(no revision)"


def _pins(facts: RecipeFacts) -> str:
    return "; ".join(f"{p.kind} {_short(p.revision)} ({'hash' if p.has_hash else 'no hash'})"
                     for p in facts.pins) or "-"


def _gpu(facts: RecipeFacts) -> str:
    return " ".join(f"{name}={facts.gpu[name].value}" for name in GPU_NAMES if name in facts.gpu) or "-"


def _cpu(facts: RecipeFacts) -> str:
    if not facts.cpu_flags:
        return "-"
    return f"{' '.join(facts.cpu_flags)} ({isa_of(facts.cpu_flags) or 'unknown ISA'})"


def _rows(facts: RecipeFacts) -> list[tuple[str, str]]:
    return [
        ("pins", _pins(facts)),
        ("package", facts.package_path or "-"),
        ("override", ", ".join(o.value for o in facts.overrides) or "-"),
        ("gpu", _gpu(facts)),
        ("cpu", _cpu(facts)),
        ("pname", facts.pname.value if facts.pname else "-"),
        ("platforms", ", ".join(facts.platforms) or "-"),
        ("metadata-rev", facts.metadata_rev.value if facts.metadata_rev else "-"),
    ]


def _drift_lines(name: str, drift: Drift, short=lambda v: v) -> list[str]:
    if drift.majority is None:
        return [f"{name}: none found"]
    if not drift.others:
        return [f"{name}: none (all {drift.count} recipes: {short(drift.majority)})"]
    lines = [f"{name}: majority {short(drift.majority)} ({drift.count} recipes); differing:"]
    for value, paths in drift.others.items():
        lines.extend(f"  {short(value) if value != '(none)' else value}  {path}" for path in paths)
    return lines


def _matrix_table(agg: Aggregates, markdown: bool) -> list[str]:
    header = ["gpu \\ isa", *agg.columns]
    body = [[row, *(str(agg.cells.get((row, c), "")) for c in agg.columns)] for row in agg.rows]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return lines + ["| " + " | ".join(r) + " |" for r in body]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [header, *body]]


def render_scan(recipes: list[RecipeFacts], agg: Aggregates, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"recipes": [f.to_json() for f in recipes], **agg.to_json()}, indent=2) + "\n"
    count = sum(agg.cells.values())
    if fmt == "markdown":
        lines = ["## Recipes", "", "| file | " + " | ".join(k for k, _ in _rows(RecipeFacts(""))) + " |",
                 "|---|" + "---|" * len(_rows(RecipeFacts("")))]
        for facts in recipes:
            cells = [v.replace("|", "\\|") for _, v in _rows(facts)]
            lines.append(f"| `{facts.path}` | " + " | ".join(cells) + " |")
        lines += ["", f"## Variant matrix ({count} recipes)", "", *_matrix_table(agg, True), "", "## Drift", ""]
        lines += [f"  - {line.strip()}" if line.startswith(" ") else f"- {line}" for line in _drift_lines("pin drift", agg.pins, _short)
                  + _drift_lines("package-set drift", agg.package_sets)]
        return "\n".join(lines) + "\n"
    lines = []
    for facts in recipes:
        lines.append(facts.path)
        lines.extend(f"  {key:<13}{value}" for key, value in _rows(facts))
        lines.extend(f"  problem      {p}" for p in facts.problems)
    lines += ["", f"variant matrix ({count} recipes)", *_matrix_table(agg, False), ""]
    lines += _drift_lines("pin drift", agg.pins, _short) + _drift_lines("package-set drift", agg.package_sets)
    return "\n".join(lines) + "\n"
