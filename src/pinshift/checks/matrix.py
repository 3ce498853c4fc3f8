"""Aggregates over many recipes: the variant matrices (GPU × CUDA × CPU ISA, one per package), pin and
package-set drift.

A matrix is the seed's table of a branch read back from the files themselves:
a row per GPU target and CUDA version (`sm90 12.9`, `cpu -`, `darwin -`), a
column per ISA (the CPU flags, else the file name), so a missing or duplicated
variant shows as a gap or a 2. Every package gets its own matrix (the file name's
project: pytorch, torchvision, torchaudio, vllm, onnxruntime, comfyui …). The GPU
and CUDA axes are the facts' normalised values (pinshift.checks.facts, .notation):
`8.6`, `sm_86`, `"86"` from gpuArchCMake and `cudaCapabilities = [ "8.6" ]` are one
target, `sm86`; a CUDA build that names no target is `sm?`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath

from pinshift.checks.facts import RecipeFacts
from pinshift.checks.notation import ARM_ISAS, ISA_MARKERS, cuda_set_version, isa_of, normalize_sm, sm_key  # noqa: F401

NO_CUDA = "-"


def sm_of(facts: RecipeFacts) -> str | None:
    """The SM number of the recipe's (first) GPU target, as its content or name states it (`90`, `90a`)."""
    if facts.target is None or facts.target.value == "sm?":
        return None
    return facts.target.value.split("+", 1)[0].removeprefix("sm")


def gpu_label(facts: RecipeFacts) -> str:
    """The matrix row of a recipe: `sm90` (`sm80+sm86` for several, `sm?` for a CUDA build naming none),
    `darwin` or `cpu`."""
    if facts.kind == "gpu":
        return facts.target.value if facts.target is not None else "sm?"
    return facts.kind


def stem(path: str) -> str:
    return PurePath(path).name.removesuffix(".nix")


def overlay_cuda(overlay: str) -> str | None:
    """`cudaPackages_12_9` -> "12.9", `cudaPackages_13` -> "13", `cudaPackages` -> "" (the pin's default)."""
    version = cuda_set_version(overlay)
    if version is None:
        return None
    return ".".join(part for part in version if part)


def cuda_of(facts: RecipeFacts) -> str:
    """The CUDA version a GPU recipe builds with (pinshift.checks.facts: overlay, selected set, cudaVersion,
    file name); `-` for CPU/Darwin; `?` for a GPU recipe nothing states it for."""
    if facts.kind != "gpu":
        return NO_CUDA
    return facts.cuda.value if facts.cuda is not None else "?"


def isa_label(facts: RecipeFacts) -> str:
    """The matrix column of a recipe: its ISA (CPU flags, else the file name), `-` without one."""
    return facts.isa.value if facts.isa is not None else "-"


def package_of(facts: RecipeFacts) -> str:
    """The package a recipe builds: its file name's project (`torchvision` for torchvision-python313-…),
    else its attribute."""
    return facts.package.value if facts.package is not None else stem(facts.path).split("-", 1)[0]


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


def majority_phrase(count: int, total: int) -> str:
    """`a majority (60 %)` when more than half, else `the most common, no majority (46 %)`."""
    percent = round(100 * count / total) if total else 0
    return f"a majority ({percent} %)" if 2 * count > total else f"the most common, no majority ({percent} %)"


def share(count: int, total: int) -> str:
    """What a group's count is of the whole: `majority: 61 % of 201 recipes` when more than half, else
    `most common: 46 % of 237 recipes, no majority` (a plurality is not a majority)."""
    percent = round(100 * count / total) if total else 0
    recipes = f"{total} recipe{'' if total == 1 else 's'}"
    if 2 * count > total:
        return f"majority: {percent} % of {recipes}"
    return f"most common: {percent} % of {recipes}, no majority"


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
    if version == NO_CUDA:
        return (999,)
    return tuple(int(p) if p.isdigit() else (998 if p == "x" else 999) for p in version.split("."))


def _row_key(row: tuple[str, str]) -> tuple:
    gpu, cuda = row
    key = (0, 10**6, gpu) if gpu == "sm?" else sm_key(gpu.split("+", 1)[0]) + (gpu,)
    return key, _version_key(cuda)


def _matrix(package: str, recipes: list[RecipeFacts]) -> Matrix:
    cells: Counter = Counter()
    for facts in recipes:
        cells[(gpu_label(facts), cuda_of(facts), isa_label(facts))] += 1
    order = [name for name, _ in reversed(ISA_MARKERS)] + ["-"]
    rows = tuple(sorted({(g, c) for g, c, _ in cells}, key=_row_key))
    columns = tuple(i for i in order if any(key[2] == i for key in cells))
    return Matrix(package, rows, columns, dict(cells))


def builds(recipes: list[RecipeFacts]) -> list[RecipeFacts]:
    """The recipes that look like builds: they reach a package set or interpreter, name a pname, or pin something."""
    return [f for f in recipes if f.builds or f.pins]


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
        drift({f.path: f.set_shown for f in found}),  # `python313.override` as status counts it
    )
