"""Aggregates over many recipes: the variant matrices (GPU × CUDA × CPU ISA, one per package), pin and
package-set drift.

A matrix is the seed's table of a branch read back from the files themselves:
a row per GPU target and CUDA version (`sm90 12.9`, `cpu -`, `darwin -`), a
column per ISA named by the CPU flags, so a missing or duplicated variant shows
as a gap or a 2. Companion packages (torchvision, torchaudio: the file name's
first part) get their own matrix. GPU targets are compared as SM numbers:
`8.6`, `sm_86`, `sm86` and `86` are one target, `sm86`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath

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
NO_CUDA = "-"

_SM = re.compile(r"(?:sm_?|compute_)?(\d+)(?:\.(\d+))?([a-z]?)", re.IGNORECASE)
_QUOTED = re.compile(r'"([^"$\\]*)"')
_NAME_CUDA = re.compile(r"-cuda(\d+)_(\d+)(?:-|\Z)")
_OVERLAY_CUDA = re.compile(r"cudaPackages(?:_(\d+))?(?:_(\d+))?\Z")


def isa_of(flags: tuple[str, ...]) -> str | None:
    """The ISA the CPU flags target (`avx512` for `-mavx512f ...`), None without a known flag."""
    for name, marker in ISA_MARKERS:
        if any(flag == marker or flag.startswith(marker + "-") or flag.startswith(marker + "+") for flag in flags):
            return name
    return None


def normalize_sm(value: str) -> str | None:
    """The SM number a GPU target names, whatever the notation; None when it names none.

    Examples:
        "8.6", "sm_86", "sm86", "86" -> "86";  "12.0" -> "120";  "sm_90a" -> "90a";  "ampere" -> None
    """
    match = _SM.fullmatch(value.strip())
    if match is None:
        return None
    major, minor, suffix = match.groups()
    return f"{major}{minor or ''}{suffix.lower()}"


def sm_of(facts: RecipeFacts) -> str | None:
    """The SM number the recipe's GPU target names: gpuArchNum, else gpuArchSM, else a literal in gpuTargets."""
    for name in ("gpuArchNum", "gpuArchSM"):
        if name in facts.gpu and (sm := normalize_sm(facts.gpu[name].value)):
            return sm
    if "gpuTargets" in facts.gpu:
        for literal in _QUOTED.findall(facts.gpu["gpuTargets"].value):
            if sm := normalize_sm(literal):
                return sm
    return None


def gpu_label(facts: RecipeFacts) -> str:
    """The matrix row of a recipe: `sm90`, `darwin` (an aarch64-darwin-only recipe) or `cpu`."""
    sm = sm_of(facts)
    if sm:
        return f"sm{sm}"
    if facts.platforms and all(p.endswith("-darwin") for p in facts.platforms):
        return "darwin"
    return "cpu"


def stem(path: str) -> str:
    return PurePath(path).name.removesuffix(".nix")


def overlay_cuda(overlay: str) -> str | None:
    """`cudaPackages_12_9` -> "12.9", `cudaPackages_13` -> "13", `cudaPackages` -> "" (the pin's default)."""
    match = _OVERLAY_CUDA.fullmatch(overlay)
    if match is None:
        return None
    return ".".join(part for part in match.groups() if part)


def cuda_of(facts: RecipeFacts) -> str:
    """The CUDA version a GPU recipe builds with: its overlay's, else its name's (`cuda12_8`); `-` for CPU/Darwin."""
    if gpu_label(facts) in ("cpu", "darwin"):
        return NO_CUDA
    if facts.cuda_overlay is not None and (version := overlay_cuda(facts.cuda_overlay.value)):
        return version
    if match := _NAME_CUDA.search(stem(facts.path)):
        return f"{match.group(1)}.{match.group(2)}"
    return "?"


def package_of(facts: RecipeFacts) -> str:
    """The package a recipe builds, as its file name says: `torchvision` for torchvision-python313-...."""
    return stem(facts.path).split("-", 1)[0]


@dataclass(frozen=True)
class Drift:
    """Recipes grouped by one fact's value, largest group first (ties: the smaller value); None is `(none)`."""

    groups: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def majority(self) -> str | None:
        return self.groups[0][0] if self.groups and self.groups[0][0] != NONE else None

    @property
    def count(self) -> int:
        return len(self.groups[0][1]) if self.majority is not None else 0

    @property
    def others(self) -> dict[str, list[str]]:
        start = 1 if self.majority is not None else 0
        return {value: list(paths) for value, paths in self.groups[start:]}

    def to_json(self) -> dict:
        return {"majority": self.majority, "count": self.count,
                "groups": {value: len(paths) for value, paths in self.groups}, "others": self.others}


NONE = "(none)"


def drift(values: dict[str, str | None]) -> Drift:
    """path -> value: the groups of equal values, the most common first; recipes without a value last."""
    by_value: dict[str, list[str]] = {}
    for path, value in sorted(values.items()):
        by_value.setdefault(value if value is not None else NONE, []).append(path)
    ordered = sorted(by_value.items(), key=lambda item: (item[0] == NONE, -len(item[1]), item[0]))
    return Drift(tuple((value, tuple(paths)) for value, paths in ordered))


@dataclass(frozen=True)
class Matrix:
    """One package's variants: rows (GPU, CUDA), ISA columns, (gpu, cuda, isa) -> number of recipes."""

    package: str
    rows: tuple[tuple[str, str], ...]
    columns: tuple[str, ...]
    cells: dict

    @property
    def count(self) -> int:
        return sum(self.cells.values())

    def to_json(self) -> dict:
        return {"package": self.package, "count": self.count,
                "rows": [{"gpu": gpu, "cuda": cuda} for gpu, cuda in self.rows], "columns": list(self.columns),
                "cells": {f"{g}/{c}/{i}": n for (g, c, i), n in sorted(self.cells.items())}}


@dataclass(frozen=True)
class Aggregates:
    matrices: tuple[Matrix, ...]
    pins: Drift  # recipes pinning nixpkgs themselves, by revision (or revision expression)
    caller: tuple[str, ...]  # recipes using the caller's nixpkgs (Flox function arguments)
    unpinned: tuple[str, ...]  # recipes with neither a pin nor arguments (`import <nixpkgs>`)
    package_sets: Drift

    @property
    def count(self) -> int:
        return sum(m.count for m in self.matrices)

    def to_json(self) -> dict:
        return {
            "matrices": [m.to_json() for m in self.matrices],
            "pin_drift": self.pins.to_json(),
            "uses_caller_nixpkgs": list(self.caller),
            "no_pin": list(self.unpinned),
            "package_set_drift": self.package_sets.to_json(),
        }


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split(".")) if version != NO_CUDA else (999,)


def _row_key(row: tuple[str, str]) -> tuple:
    gpu, cuda = row
    digits = re.match(r"sm(\d+)", gpu)
    return ((0, int(digits.group(1)), gpu) if digits else (1, 0, gpu)), _version_key(cuda)


def _matrix(package: str, recipes: list[RecipeFacts]) -> Matrix:
    cells: Counter = Counter()
    for facts in recipes:
        cells[(gpu_label(facts), cuda_of(facts), isa_of(facts.cpu_flags) or "-")] += 1
    order = [name for name, _ in reversed(ISA_MARKERS)] + ["-"]
    rows = tuple(sorted({(g, c) for g, c, _ in cells}, key=_row_key))
    columns = tuple(i for i in order if any(key[2] == i for key in cells))
    return Matrix(package, rows, columns, dict(cells))


def builds(recipes: list[RecipeFacts]) -> list[RecipeFacts]:
    """The recipes that look like builds: they name a package set or pin something."""
    return [f for f in recipes if f.package_set or f.pins]


def aggregate(recipes: list[RecipeFacts]) -> Aggregates:
    """The matrices (largest package first) and drifts of the recipes that look like builds."""
    found = builds(recipes)
    by_package: dict[str, list[RecipeFacts]] = {}
    for facts in found:
        by_package.setdefault(package_of(facts), []).append(facts)
    matrices = sorted((_matrix(name, group) for name, group in by_package.items()), key=lambda m: (-m.count, m.package))
    pinned = {f.path: f.pin_value for f in found if f.pin_value is not None}
    return Aggregates(
        tuple(matrices),
        drift(pinned),
        tuple(f.path for f in found if f.pin_value is None and f.uses_caller_nixpkgs),
        tuple(f.path for f in found if f.pin_value is None and not f.uses_caller_nixpkgs),
        drift({f.path: f.package_set.value if f.package_set else None for f in found}),
    )
