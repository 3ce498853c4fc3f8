"""Aggregates over many recipes: the variant matrices (GPU × CUDA × CPU ISA, one per package), pin and
package-set drift.

A matrix is the seed's table of a branch read back from the files themselves:
a row per GPU target and CUDA version (`sm90 12.9`, `cpu -`, `darwin -`), a
column per ISA (the CPU flags, else the file name), so a missing or duplicated
variant shows as a gap or a 2. Every package gets its own matrix (the file name's
project: pytorch, torchvision, torchaudio, vllm, onnxruntime, comfyui …). The GPU
and CUDA axes are the facts' normalised values (pinshift.facts.facts, .notation):
`8.6`, `sm_86`, `"86"` from gpuArchCMake and `cudaCapabilities = [ "8.6" ]` are one
target, `sm86`; a CUDA build that names no target is `sm?`.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass

from pinshift.facts.facts import RecipeFacts
from pinshift.facts.notation import (  # noqa: F401
    ARM_ISAS, ISA_MARKERS, cuda_set_version, isa_of, normalize_sm, recipe_stem, sm_key,
)
from pinshift.facts.recipe_set import recipe_set

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
    return recipe_stem(path)


def overlay_cuda(overlay: str) -> str | None:
    """`cudaPackages_12_9` -> "12.9", `cudaPackages_13` -> "13", `cudaPackages` -> "" (the pin's default)."""
    version = cuda_set_version(overlay)
    if version is None:
        return None
    return ".".join(part for part in version if part)


def cuda_of(facts: RecipeFacts) -> str:
    """The CUDA version a GPU recipe builds with (pinshift.facts.facts: overlay, selected set, cudaVersion,
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
    package_sets: Drift  # recipes by package set (`python3.pkgs` counted as `python3Packages`: `one_set`)
    markers: tuple[str, ...] = ()  # `drift_markers`: what status's Drift column says, and scan's drift lines
    helpers: dict | None = None  # path -> why it is no recipe (pinshift.facts.recipe_set), when known

    @property
    def count(self) -> int:
        return sum(m.count for m in self.matrices)

    def to_json(self) -> dict:
        return {
            "matrices": [m.to_json() for m in self.matrices],
            "pin_drift": {**self.pins.to_json(), "drift": PIN_DRIFT in self.markers},
            "uses_caller_nixpkgs": list(self.caller),
            "no_pin": list(self.unpinned),
            "package_set_drift": {**self.package_sets.to_json(), "drift": SET_DRIFT in self.markers},
            "helpers": dict(sorted((self.helpers or {}).items())),
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
    """The build recipes of a tree's files (pinshift.facts.recipe_set: not its helpers; those that reach a
    package set or interpreter, name a pname, or pin something), their imported CPU flags filled in."""
    return recipe_set(recipes).recipes


_INTERPRETER_SET = re.compile(r"(python\d*)\.(?:pkgs|withPackages)\Z")


def one_set(shown: str) -> str:
    """The package set a `set_shown` names, as drift compares them: `python3.pkgs` and `python3.withPackages` are
    `python3Packages` (one set, two spellings); `python313.override` (a new set) stays itself."""
    match = _INTERPRETER_SET.match(shown)
    return f"{match.group(1)}Packages" if match else shown


PIN_DRIFT = "pin drift"
SET_DRIFT = "package-set drift"


def drift_markers(found: list[RecipeFacts]) -> tuple[str, ...]:
    """The one definition of drift, for `status` and `scan` alike, over a branch's build recipes:

    - `pin drift`: nixpkgs comes from more than one place: two revisions (or revision expressions), or pinned
      recipes beside recipes that use their caller's nixpkgs or pin nothing;
    - `package-set drift`: one Python reached through two package sets (`python3Packages` beside
      `python313Packages` for Python 3.13); `python3.pkgs` and `python3Packages` are one set, and
      `python312Packages` beside `python313Packages` builds two Pythons, which is no drift.
    """
    markers = []
    sources = {f.pin_value for f in found if f.pin_value is not None}
    if len(sources) + any(f.pin_value is None and f.uses_caller_nixpkgs for f in found) \
            + any(f.pin_value is None and not f.uses_caller_nixpkgs for f in found) > 1:
        markers.append(PIN_DRIFT)
    sets_per_python: dict[str, set[str]] = {}
    for f in found:
        if f.set_shown is not None and f.python is not None:
            sets_per_python.setdefault(f.python.value, set()).add(one_set(f.set_shown))
    if any(len(sets) > 1 for sets in sets_per_python.values()):
        markers.append(SET_DRIFT)
    return tuple(markers)


def aggregate(recipes: list[RecipeFacts]) -> Aggregates:
    """The matrices (the main package first) and drifts of the build recipes among a tree's files (`builds`)."""
    split = recipe_set(recipes)
    return dataclasses.replace(aggregate_builds(split.recipes), helpers=split.helpers)


def aggregate_builds(found: list[RecipeFacts]) -> Aggregates:
    """`aggregate` of build recipes already split from their helpers."""
    by_package: dict[str, list[RecipeFacts]] = {}
    for facts in found:
        by_package.setdefault(package_of(facts), []).append(facts)
    matrices = sorted((_matrix(name, group) for name, group in by_package.items()),
                      key=package_order({m: len(g) for m, g in by_package.items()}))
    pinned = {f.path: f.pin_value for f in found if f.pin_value is not None}
    return Aggregates(
        tuple(matrices),
        drift(pinned),
        tuple(f.path for f in found if f.pin_value is None and f.uses_caller_nixpkgs),
        tuple(f.path for f in found if f.pin_value is None and not f.uses_caller_nixpkgs),
        drift({f.path: one_set(f.set_shown) for f in found if f.set_shown is not None}),
        drift_markers(found),
    )


def package_order(counts: dict[str, int]):
    """A sort key over packages (or matrices) leading with the repository's main package: most recipes first; on a
    tie, the package whose name most other packages' names extend (`comfyui` before `comfyui-extras` and
    `color-matcher`), then by name."""
    family: Counter = Counter()  # name -> recipes of the packages it names or whose name extends it
    for other, count in counts.items():
        parts = other.split("-")
        for end in range(1, len(parts) + 1):
            family["-".join(parts[:end])] += count

    def key(item) -> tuple:
        name = item if isinstance(item, str) else getattr(item, "package")
        return (-counts.get(name, 0), -family[name], name)
    return key
