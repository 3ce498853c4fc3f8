"""Aggregates over many recipes: the variant matrix (GPU architecture × CPU ISA), pin and package-set drift.

The matrix is the seed's table of a branch read back from the files themselves:
a row per GPU target (`sm90`, `cpu`, `darwin`), a column per ISA named by the
CPU flags, so a missing or duplicated variant shows as a gap or a 2.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pinshift.checks.facts import RecipeFacts

# ISA name -> the compiler flag that marks it; the first flag found wins (most specific first).
ISA_MARKERS = (
    ("armv9", "-march=armv9"),
    ("armv8_2", "-march=armv8.2"),
    ("avx512bf16", "-mavx512bf16"),
    ("avx512vnni", "-mavx512vnni"),
    ("avx512", "-mavx512f"),
    ("avx2", "-mavx2"),
    ("avx", "-mavx"),
)
ARM_ISAS = frozenset({"armv9", "armv8_2"})


def isa_of(flags: tuple[str, ...]) -> str | None:
    """The ISA the CPU flags target (`avx512` for `-mavx512f ...`), None without a known flag."""
    for name, marker in ISA_MARKERS:
        if any(flag == marker or flag.startswith(marker + "-") or flag.startswith(marker + "+") for flag in flags):
            return name
    return None


def sm_of(facts: RecipeFacts) -> str | None:
    """The SM number the GPU target names: gpuArchNum "90", else gpuArchSM "9.0" -> "90"."""
    if "gpuArchNum" in facts.gpu:
        return facts.gpu["gpuArchNum"].value
    if "gpuArchSM" in facts.gpu:
        return facts.gpu["gpuArchSM"].value.replace(".", "")
    return None


def gpu_label(facts: RecipeFacts) -> str:
    """The matrix row of a recipe: `sm90`, `darwin` (an aarch64-darwin-only recipe) or `cpu`."""
    sm = sm_of(facts)
    if sm:
        return f"sm{sm}"
    if facts.platforms and all(p.endswith("-darwin") for p in facts.platforms):
        return "darwin"
    return "cpu"


@dataclass(frozen=True)
class Drift:
    """The majority value of a fact and the files that differ from it (value -> paths)."""

    majority: str | None
    count: int
    others: dict

    def to_json(self) -> dict:
        return {"majority": self.majority, "count": self.count, "others": self.others}


def drift(values: dict[str, str | None]) -> Drift:
    """path -> value: the most common value (ties: the smallest) and every file that differs."""
    counts = Counter(v for v in values.values() if v is not None)
    if not counts:
        return Drift(None, 0, {})
    majority = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]
    others: dict[str, list[str]] = {}
    for path, value in sorted(values.items()):
        if value != majority:
            others.setdefault(value or "(none)", []).append(path)
    return Drift(majority, counts[majority], others)


@dataclass(frozen=True)
class Aggregates:
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: dict  # (row, column) -> number of recipes
    pins: Drift
    package_sets: Drift

    def to_json(self) -> dict:
        return {
            "matrix": {"rows": list(self.rows), "columns": list(self.columns),
                       "cells": {f"{r}/{c}": n for (r, c), n in sorted(self.cells.items())}},
            "pin_drift": self.pins.to_json(),
            "package_set_drift": self.package_sets.to_json(),
        }


def _row_key(row: str) -> tuple:
    return (0, int(row[2:])) if row[2:].isdigit() else (1, row)


def aggregate(recipes: list[RecipeFacts]) -> Aggregates:
    """The variant matrix and drifts of recipes that look like builds (a package set or a pin)."""
    builds = [f for f in recipes if f.package_set or f.pins]
    cells: Counter = Counter()
    for facts in builds:
        cells[(gpu_label(facts), isa_of(facts.cpu_flags) or "-")] += 1
    order = [name for name, _ in reversed(ISA_MARKERS)] + ["-"]
    rows = tuple(sorted({r for r, _ in cells}, key=_row_key))
    columns = tuple(c for c in order if any(key[1] == c for key in cells))
    return Aggregates(
        rows, columns, dict(cells),
        drift({f.path: f.revision for f in builds}),
        drift({f.path: f.package_set.value if f.package_set else None for f in builds}),
    )
