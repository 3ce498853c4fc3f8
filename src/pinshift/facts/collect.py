"""The recipes a check command reads: every .nix file named or found under the PATHs, parsed once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pinshift.facts.facts import RecipeFacts, recipe_facts
from pinshift.files.tree import DEFAULT_MAX_BYTES, SkippedFile, display_path, nix_files
from pinshift.syntax.document import Document, parse_document
from pinshift.git.repo import listed_files


@dataclass
class Recipe:
    """One recipe file: the path as the user reads it, its bytes, its tree and its facts."""

    path: str
    data: bytes
    doc: Document
    facts: RecipeFacts


READING = "reading files"  # what the progress line says while the files are read and parsed


def read_recipes(paths: tuple[str, ...], max_bytes: int = DEFAULT_MAX_BYTES,
                 progress: Callable[[str, int, int], None] | None = None) -> tuple[list[Recipe], list[str]]:
    """(recipes in path order, skip reasons); a missing PATH is a UsageError (raised by nix_files);
    `progress(what, done, total)` as the files are read."""
    recipes, skipped = [], []
    found = nix_files(paths, max_bytes, listed_files)
    for number, (tree, relative) in enumerate(found):
        if progress:
            progress(READING, number, len(found))
        shown = display_path(tree, relative)
        try:
            data = tree.read(relative)
        except SkippedFile as reason:
            skipped.append(f"{shown}: {str(reason).split(': ', 1)[-1]}")
            continue
        recipes.append(recipe_from_bytes(shown, data))
    if progress and found:
        progress(READING, len(found), len(found))
    recipes.sort(key=lambda r: r.path)
    return recipes, skipped


def recipe_from_bytes(path: str, data: bytes) -> Recipe:
    doc = parse_document(data, path)
    return Recipe(path, data, doc, recipe_facts(doc))
