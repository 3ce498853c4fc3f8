"""Which `.nix` files are recipes: the one definition `status`, `scan` and `lint` count, rank and check.

A `.nix` file is a recipe when Flox builds it as a package: a file at `.flox/pkgs/`'s top level
(`.flox/pkgs/foo.nix`) or a folder's `default.nix` (`.flox/pkgs/foo/default.nix`), as Flox names its
Nix-expression builds. The other `.nix` files of a recipe repository are *helpers*, for the recipes to import:

- a file in a `lib/` folder (`.flox/pkgs/lib/custom-torch.nix`, `lib/cpu-isa.nix`): "in a lib/ folder";
- a file below `.flox/pkgs/`'s top level that is no `default.nix`: "not a package Flox builds";
- a file another file of the set imports (`import ./color-matcher.nix`, `callPackage ./color-matcher.nix { … }`)
  whose name is no variant's (`<project>-…-cuda<X>_<Y>-sm<N>`, `-cpu`, `-darwin`): a dependency, "only
  imported by …". A companion's PyTorch recipe, which torchvision imports and Flox builds on its own
  (`pytorch-python313-cuda12_8-sm61-avx.nix`), stays a recipe.

Of the recipes, those that look like builds count (they reach a package set or interpreter, name a pname or pin
something). Helpers still parse (every command reports their syntax problems) and `lint`'s reference rules (R)
read them; the naming rules (L000–L007), variants, pins, versions, drift and the package ranking do not count them.

A recipe whose CPU flags come from a table a helper holds (`cpuISA = (import ./lib/cpu-isa.nix).avx512;` with
`{ avx512 = { flags = [ "-mavx512f" … ]; }; }` in lib/cpu-isa.nix) gets those flags and their ISA here, once
every file of the set is read (each file's facts are read alone: pinshift.facts.facts).
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pinshift.facts.built import Fact
from pinshift.facts.facts import RecipeFacts
from pinshift.facts.notation import isa_of, name_parts, recipe_stem
from pinshift.files.globs import matches

FLOX_PACKAGES = (".flox", "pkgs")
HELPER_FOLDER = "lib"
FLOX_RECIPE_FILES = (".flox/pkgs/**/*.nix",)  # where Flox looks for Nix-expression builds


@dataclass
class RecipeSet:
    """The files of one tree split: `recipes` (build recipes, in path order, with their imported CPU flags filled in)
    and `helpers` (path -> why it is not a recipe)."""

    recipes: list[RecipeFacts] = field(default_factory=list)
    helpers: dict[str, str] = field(default_factory=dict)


def helper_by_path(path: str) -> str | None:
    """Why a path is no recipe by where it sits (a `lib/` folder, below `.flox/pkgs/`'s top level and no
    `default.nix`), else None.

    Examples:
        ".flox/pkgs/lib/cpu-isa.nix"       -> "in a lib/ folder"
        ".flox/pkgs/vllm/default.nix"      -> None
        ".flox/pkgs/torch/patches/a.nix"   -> "below .flox/pkgs/'s top level and no default.nix: …"
    """
    parts = PurePosixPath(path).parts
    folders = parts[:-1]
    if HELPER_FOLDER in folders:
        return "in a lib/ folder"
    for index in range(len(folders) - 1):
        if folders[index:index + 2] == FLOX_PACKAGES:
            below = parts[index + 2:]
            if len(below) > 1 and below[-1] != "default.nix":
                return "below .flox/pkgs/'s top level and no default.nix: not a package Flox builds"
    return None


def build_recipe_paths(paths) -> list[str]:
    """The paths among `paths` that Flox builds by their place: under `.flox/pkgs/` (FLOX_RECIPE_FILES) and no
    helper there (helper_by_path). What migrate's build check evaluates; the files they import are evaluated
    through them. One definition with `status`, `scan` and `lint` (which also set aside what is only imported)."""
    return [path for path in paths if matches(path, FLOX_RECIPE_FILES) and helper_by_path(path) is None]


def _target(importer: str, written: str) -> str | None:
    """The path `written` (`./lib/cpu-isa.nix`, `../x.nix`) names from the file `importer`, as the set spells it."""
    if written.startswith(("/", "<", "~")):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), written))
    return joined if not joined.startswith("../") else None


def recipe_set(files: list[RecipeFacts]) -> RecipeSet:
    """Split the facts of a tree's files into build recipes and helpers (see the module docstring)."""
    by_path = {f.path: f for f in files}
    importers: dict[str, list[str]] = {}
    for facts in files:
        for written in facts.imports:
            target = _target(facts.path, written)
            if target in by_path and target != facts.path:
                importers.setdefault(target, []).append(facts.path)
    result = RecipeSet()
    for facts in files:
        reason = helper_by_path(facts.path)
        if reason is None and facts.path in importers and not name_parts(recipe_stem(facts.path)).convention:
            first = importers[facts.path][0]
            more = len(importers[facts.path]) - 1
            reason = f"only imported (by {first}" + (f" and {more} more" if more else "") + "), no variant's name"
        if reason is not None:
            result.helpers[facts.path] = reason
        elif facts.builds or facts.pins:
            result.recipes.append(_with_imported_flags(facts, by_path))
    return result


def _with_imported_flags(facts: RecipeFacts, by_path: dict[str, RecipeFacts]) -> RecipeFacts:
    """The facts with the CPU flags of `(import ./lib/cpu-isa.nix).avx512` read from that file's table (a copy:
    facts are shared by every branch holding the same file)."""
    if facts.cpu_flags:
        return facts
    for selected in facts.selected_imports:
        target = _target(facts.path, selected.source)
        table = by_path[target].flag_table if target in by_path else {}
        flags = table.get(selected.value)
        if not flags:
            continue
        source = f"{selected.source} {selected.value}.flags (imported)"
        isa = isa_of(flags)
        return dataclasses.replace(facts, cpu_flags=flags, cpu_flags_offset=selected.offset, cpu_flags_source=source,
                                   isa=Fact(isa, selected.offset, source) if isa is not None else facts.isa)
    return facts
