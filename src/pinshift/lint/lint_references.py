"""`pinshift lint`'s reference rules: what the reference graph of the linted directories finds wrong.

  R001 error  a reference names no file: `import ./gone.nix`, `callPackage ./dir { }` without
              `dir/default.nix`, a bare `./fix.patch` that is not there (a wrong build: Nix stops)
  R002 error  a call does not fit its callee's function: it passes an argument the callee does not
              take (no `...`: "called with unexpected argument"), or an `import` leaves out one it
              requires ("called without required argument"); callPackage fills those from the set
  R003 note   an import or callPackage of a computed path (`import (./. + "/x.nix")`): not
              followed, pinshift never guesses which file it names

Each directory PATH is one tree (pinshift.graph.tree.ReferenceGraph over the files git lists
there); a reference above it (`../../nix/x.nix` when linting `.flox/pkgs`) is outside what lint
reads and is not checked. A file named alone is resolved against its own directory on disk.
Text that names a file (a README, a Flox manifest) is not a Nix reference and is not checked.
"""

from __future__ import annotations

import os
from pathlib import Path

from pinshift.lint.findings import Finding
from pinshift.files.tree import DirectoryTree, display_path, nix_files
from pinshift.git.repo import listed_files
from pinshift.graph.tree import ReferenceGraph

RULES = {
    "R001": "a reference names no file",
    "R002": "a call passes an argument its callee does not take",
    "R003": "an import of a computed path is not followed",
}
SEVERITY = {"R001": "error", "R002": "error", "R003": "note"}
CODES = {"dangling": "R001", "argument": "R002", "computed": "R003"}


class DiskIndex:
    """Which paths under a directory are files or directories, asked of the file system (a file named alone)."""

    def __init__(self, root: Path):
        self.root = root

    def kind(self, path: str) -> str | None:
        full = self.root / path if path else self.root
        if full.is_file():
            return "file"
        return "directory" if full.is_dir() else None


def reference_findings(paths: tuple[str, ...], max_bytes: int, recipes) -> list[Finding]:
    """The R findings of every linted Nix file (`recipes`: collect.Recipe, already parsed)."""
    parsed = {recipe.path: recipe.doc for recipe in recipes}
    trees: dict[int, tuple[DirectoryTree, list[str]]] = {}
    for tree, relative in nix_files(paths, max_bytes, listed_files):
        trees.setdefault(id(tree), (tree, []))[1].append(relative)
    found = []
    for tree, relatives in trees.values():
        named = len(relatives) == 1 and not any(Path(p).is_dir() and Path(p).resolve() == tree.root for p in paths)
        shown = {relative: display_path(tree, relative) for relative in relatives}
        documents = {relative: parsed[shown[relative]] for relative in relatives if shown[relative] in parsed}
        graph = ReferenceGraph(tree, index=DiskIndex(tree.root) if named else None, documents=documents,
                               shown=lambda path, tree=tree: display_path(tree, path) if path else os.curdir)
        for relative in relatives:
            if relative not in documents:
                continue
            for problem in graph.problems(relative):
                code = CODES[problem.kind]
                found.append(Finding(shown[relative], problem.line, problem.column, code, problem.message,
                                     SEVERITY[code]))
    return found
