"""A nixpkgs git checkout read at one revision: which package sets, attributes and parameters it has.

Read through git's object store (`git.objects.CommitTree`): the checkout's
work tree, index and HEAD are never touched, and a bare or shallow clone works
as long as it has the revision. Nothing is evaluated: the files are parsed with
pinshift's own Nix layer and these lookup rules are followed, as nixpkgs lays
itself out (and as the stub repository in tests/test_verify.py does):

1. Package set: `pythonXYPackages` exists when `pkgs/top-level/all-packages.nix`
   binds or inherits that name (`python313Packages = recurseIntoAttrs python313.pkgs;`).
2. Attribute: `torch` exists in every Python package set when
   `pkgs/top-level/python-packages.nix` binds or inherits it.
3. Function: when that binding is `callPackage <path> { ... }` (also
   `self.callPackage`, `pkgs.callPackage`), `<path>` is resolved against the
   directory of python-packages.nix (a directory means its `default.nix`), and
   the formals of the file's outermost function are the parameters
   `.override { ... }` may set.
4. Version (`pinshift status`'s Package column): that file's first `version = "...";` binding
   with a literal string; an attribute python-packages.nix does not bind is looked up in
   all-packages.nix (`callPackage <path>`) and then at pkgs/by-name/<xx>/<attribute>/package.nix.

Anything these rules cannot follow (an alias, `toPythonModule (...)`, a function
with `...`) is reported as "cannot check", never guessed.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import difflib
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from pinshift.errors import UsageError
from pinshift.syntax.document import Document, parse_document
from pinshift.syntax.queries import bindings, inherits, name_of, string_value, unwrap

ALL_PACKAGES = "pkgs/top-level/all-packages.nix"
PYTHON_PACKAGES = "pkgs/top-level/python-packages.nix"


@dataclass(frozen=True)
class Parameters:
    """The formals of the function defining an attribute, or why they could not be found."""

    path: str | None  # the file that defines the function
    names: tuple[str, ...]
    ellipsis: bool = False
    unknown: str | None = None  # why the parameters are unknown (then `names` is empty)

    def suggest(self, name: str) -> str | None:
        """The closest parameter name to a missing one (`gpuTargets` -> `gpuTargetList`)."""
        close = difflib.get_close_matches(name, self.names, n=1, cutoff=0.6)
        return close[0] if close else None


class NixpkgsCheckout:
    """A local nixpkgs git repository; `at(rev)` reads one revision of it."""

    def __init__(self, directory: Path):
        from pinshift.git.repo import locate
        from pinshift.nixpkgs.clone import NO_CLONE  # the words `pinshift hash` uses for the same mistakes

        if not Path(directory).is_dir():
            raise UsageError(f"--nixpkgs {directory}: no such directory; {NO_CLONE}")
        place = locate(directory)  # the clone's top (or its git directory), not a folder inside it
        if place is None or not any(found is not None and os.path.samefile(found, directory)
                                    for found in (place.work_tree, place.git_dir)):
            raise UsageError(f"--nixpkgs {directory}: not a git repository; {NO_CLONE}")
        self.repo = place
        self.directory = directory

    def resolve(self, rev: str) -> str | None:
        """The full commit id of `rev`, None when the clone does not have it.

        Names resolve as `pinshift hash` resolves them (gitrepo.CloneReader): a branch of one
        remote only (`nixos-unstable` in a fresh clone) counts too.
        """
        from pinshift.git.clone import CloneReader

        reader = CloneReader.open(Path(self.repo.work_tree or self.repo.git_dir))
        found = reader.resolve(rev) if reader is not None else None
        return found[0] if found is not None else None

    def at(self, commit: str) -> "NixpkgsRevision":
        return NixpkgsRevision(self.repo, commit)


class NixpkgsRevision:
    """One revision's files, parsed on demand and remembered (a revision is asked about many times)."""

    def __init__(self, repo, commit: str):
        from pinshift.git.objects import CommitTree

        self.commit = commit
        self._tree = CommitTree(repo, commit, max_bytes=64 * 1024 * 1024)
        self._files = set(self._tree.paths())
        self._docs: dict[str, Document | None] = {}

    def document(self, path: str) -> Document | None:
        if path not in self._docs:
            self._docs[path] = parse_document(self._tree.read(path), path) if path in self._files else None
        return self._docs[path]

    def _binding(self, path: str, name: str):
        """The binding of `name` (as the last part of its path) in `path`, or True for an inherit; None if absent."""
        doc = self.document(path)
        if doc is None:
            return None
        for binding in bindings(doc):
            if binding.path and binding.path[-1] == name:
                return binding
        if any(segment.name == name for inherit in inherits(doc) for segment in inherit.names):
            return True
        return None

    def has_package_set(self, name: str) -> bool:
        return self._binding(ALL_PACKAGES, name) is not None

    def has_attribute(self, name: str) -> bool:
        return self._binding(PYTHON_PACKAGES, name) is not None

    def parameters(self, attribute: str) -> Parameters:
        """The formals of the function `callPackage` builds `attribute` from."""
        binding = self._binding(PYTHON_PACKAGES, attribute)
        if binding is None or binding is True:
            return Parameters(None, (), unknown=f"{attribute} is not bound by a callPackage in {PYTHON_PACKAGES}")
        doc = self.document(PYTHON_PACKAGES)
        target = _call_package_path(doc, binding.value)
        if target is None:
            return Parameters(None, (), unknown=f"{PYTHON_PACKAGES}: {attribute} is not `callPackage <path> {{ ... }}`")
        path = posixpath.normpath(posixpath.join(posixpath.dirname(PYTHON_PACKAGES), target))
        if path not in self._files:
            path = posixpath.join(path, "default.nix")
        function_doc = self.document(path)
        if function_doc is None:
            return Parameters(path, (), unknown=f"{path} does not exist")
        return _formals(function_doc)


    def version(self, attribute: str) -> str | None:
        """The `version = "...";` (a literal) of the file that builds `attribute`; None if none.

        For `pinshift status`'s Package column: the attribute's version at this revision (`torch`, `vllm`,
        `onnxruntime` in python-packages.nix; else a top-level `callPackage` in all-packages.nix, else
        pkgs/by-name/<xx>/<attribute>/package.nix), read, never evaluated.
        """
        path = self.parameters(attribute).path or self._top_level(attribute)
        doc = self.document(path) if path is not None else None
        if doc is None:
            return None
        for binding in bindings(doc):
            if binding.dotted == "version":
                value = string_value(doc, unwrap(binding.value))
                if value is not None:
                    return value.decode("utf-8", "replace")
        return None

    def _top_level(self, attribute: str) -> str | None:
        """The file a top-level attribute is built from: all-packages.nix's `callPackage <path>`, else by-name."""
        binding = self._binding(ALL_PACKAGES, attribute)
        if binding is not None and binding is not True:
            target = _call_package_path(self.document(ALL_PACKAGES), binding.value)
            if target is not None:
                path = posixpath.normpath(posixpath.join(posixpath.dirname(ALL_PACKAGES), target))
                return path if path in self._files else posixpath.join(path, "default.nix")
        by_name = f"pkgs/by-name/{attribute[:2].lower()}/{attribute}/package.nix"
        return by_name if by_name in self._files else None


def _call_package_path(doc: Document, value) -> str | None:
    """`callPackage ./x { }` -> "./x" (the path as written), else None."""
    node = unwrap(value)
    while node is not None and node.type == "apply_expression":
        function = unwrap(node.child_by_field_name("function"))
        argument = unwrap(node.child_by_field_name("argument"))
        if function is not None and _names_call_package(doc, function) and argument is not None:
            return doc.text(argument).decode("utf-8", "replace") if argument.type == "path_expression" else None
        node = function
    return None


def _names_call_package(doc: Document, node) -> bool:
    if node.type == "variable_expression":
        return doc.text(node) == b"callPackage"
    if node.type == "select_expression":
        attrpath = node.child_by_field_name("attrpath")
        segments = attrpath.children_by_field_name("attr") if attrpath is not None else []
        return bool(segments) and name_of(doc, segments[-1]) == "callPackage"
    return False


def _formals(doc: Document) -> Parameters:
    """The formals of the file's outermost function (`{ lib, cudaSupport ? false, ... }:`)."""
    node = doc.root.named_children[0] if doc.root.named_children else None
    while node is not None and node.type == "comment":
        node = node.next_named_sibling
    node = unwrap(node)
    if node is None or node.type != "function_expression" or node.child_by_field_name("formals") is None:
        return Parameters(doc.path, (), unknown=f"{doc.path} is not a function of an attribute set")
    formals = node.child_by_field_name("formals")
    names = []
    for formal in formals.children_by_field_name("formal"):
        name = formal.child_by_field_name("name")
        if name is not None and not name.is_missing:
            names.append(doc.text(name).decode("utf-8", "replace"))
    return Parameters(doc.path, tuple(names), ellipsis=formals.child_by_field_name("ellipses") is not None)
