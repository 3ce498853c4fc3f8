"""The references of a whole tree, read lazily, and what can be wrong with one.

A `ReferenceGraph` reads a tree (anything with `paths()` and `read(path)`: pinshift.planning's
WorkingSet, a directory, a commit) and parses a Nix file only when it is asked about it: its
references (`references`), the function head of its value (`signature`), who refers to some
files (`referrers`: every Nix file of the tree is searched for the files' names as bytes first,
and only the files that spell one are parsed). Nothing is written, nothing is held but the
parsed files asked about.

A reference's problems (`problems_of`), as `pinshift lint` reports them and as the runner checks
a step's result:

- **dangling** (R001): it names no file of the tree (`import ./gone.nix`; `callPackage ./dir { }`
  where `dir/default.nix` is missing; a bare `./fix.patch` that is not there);
- **argument** (R002): a call passes a name the callee's function does not take (no `...`), or an
  `import` does not pass one it requires: Nix stops with "called with unexpected argument" /
  "called without required argument";
- **computed** (R003, a note): `import (./. + "/x.nix")`: pinshift cannot tell which file it names
  and never guesses.

A path above the tree's root (`../../x.nix` from a tree that is `.flox/pkgs`) is outside what the
graph can see: never a problem.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pinshift.errors import PinshiftError
from pinshift.files.content import SkippedFile
from pinshift.graph.paths import PathIndex, Target, target
from pinshift.graph.references import Reference, references, references_and_spans
from pinshift.graph.signature import Signature, head_span, signature
from pinshift.syntax.document import Document, parse_document

NAMES_SHOWN = 3  # argument names a message lists before "and N more"
_COMPONENT = re.compile(rb"[A-Za-z0-9._+\-]+")  # a path literal's components are runs of these, split by `/`


@dataclass(frozen=True)
class FileGraph:
    """What one file contributes to the graph: the function head of its value and its references.

    Small and plain (picklable, comparable): the runner records one before and after each step that
    changes either, where the file is planned. Equal when the head and references say the same,
    wherever they sit in the file. `spans` are the byte ranges an edit must leave alone for the
    FileGraph to stay the same (the head, each reference's literal or call): see `moved`.
    """

    signature: Signature | None
    references: tuple[Reference, ...]
    spans: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)

    def moved(self, edits) -> FileGraph | None:
        """This FileGraph after `edits` (sorted, not overlapping: what was applied) when none of them can change
        it, its spans moved by the edits before them; None when one may (it touches a span, or writes a `/`,
        which may start a new path literal): then the file must be read again."""
        if any(b"/" in edit.replacement for edit in edits):
            return None
        spans, moved, shift, index = self.spans, [], 0, 0
        for start, end in spans:
            while index < len(edits) and edits[index].end < start:
                shift += len(edits[index].replacement) - (edits[index].end - edits[index].start)
                index += 1
            if index < len(edits) and edits[index].start <= end:
                return None  # an edit touches or overlaps this span
            moved.append((start + shift, end + shift))
        return FileGraph(self.signature, self.references, tuple(moved))


def file_graph(doc: Document, placed: bool = True) -> FileGraph:
    """The FileGraph of a parsed Nix file (linear in the file; see references.py); without `placed`, no lines,
    columns or head text (what a comparison needs)."""
    found = references_and_spans(doc, placed)
    head = head_span(doc)
    spans = sorted([span for _, span in found] + ([head] if head is not None else []))
    return FileGraph(signature(doc, placed), tuple(reference for reference, _ in found), tuple(spans))


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one reference: `kind` is "dangling", "argument" or "computed"."""

    kind: str
    source: str
    line: int
    column: int
    message: str
    target: str | None = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.column}: {self.message}"


def _names(names: list[str]) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:NAMES_SHOWN])
    more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
    return shown + more


def dangling_message(reference: Reference, found: Target, shown: Callable[[str], str] = str) -> str:
    if found.path is not None and found.path.endswith("default.nix") and not reference.literal.endswith("default.nix"):
        directory = posixpath.dirname(found.path)
        return (f"{reference.verb} {reference.literal}, which names no file: {shown(directory) if directory else '.'} "
                f"has no default.nix")
    return f"{reference.verb} {reference.literal}, which names no file ({shown(found.path)} does not exist)"


def argument_problems(source: str, reference: Reference, callee: str, head: Signature | None,
                      shown: Callable[[str], str] = str) -> list[Problem]:
    """The argument problems of a call `reference` (from `source`) of `callee`, whose function is `head`;
    `shown` writes a tree path as messages show it."""
    arguments = reference.arguments
    if head is None or arguments is None or arguments.open:
        return []
    found = []
    unexpected = head.unexpected(arguments.names)
    where = f"{shown(callee)}:{head.line}:{head.column} ({head.head})"
    if unexpected:
        line, column = arguments.place(unexpected[0])
        found.append(Problem("argument", source, line, column,
                             f"{reference.verb} {shown(callee)} with argument{'s' if len(unexpected) > 1 else ''} "
                             f"{_names(unexpected)}, which {where} does not take", callee))
    missing = head.missing(arguments.names) if reference.how == "import" else []
    if missing:
        found.append(Problem("argument", source, reference.line, reference.column,
                             f"imports {shown(callee)} without argument{'s' if len(missing) > 1 else ''} {_names(missing)}, "
                             f"which {where} requires", callee))
    return found


def computed_message(reference: Reference) -> str:
    shown = reference.literal if len(reference.literal) <= 60 else reference.literal[:59] + "…"
    word = "import" if reference.how == "import" else "callPackage"
    return f"{word} {shown}: a computed path, not followed (pinshift cannot tell which file it names)"


class ReferenceGraph:
    """The references between the Nix files of a tree (see the module docstring).

    `tree` lists paths and reads bytes; reading may raise SkippedFile (binary, too large) or a
    PinshiftError (a path a step removed): such a file takes no part, but still exists. `index`
    overrides which paths exist (a directory read file by file). `editable` says which files a step
    may change for their references (the recipe's files; every file by default); `shown` how messages
    write a tree path (as it is, by default).
    """

    def __init__(self, tree, index: PathIndex | None = None, documents: dict[str, Document] | None = None,
                 editable: Callable[[str], bool] | None = None, shown: Callable[[str], str] = str):
        self.tree = tree
        self.shown = shown
        self.unread: set[str] = set()  # files that spell a name `referrers` looked for but do not parse
        self._editable = editable
        self._index = index
        self._graphs: dict[str, FileGraph | None] = {}
        self._documents = dict(documents or {})

    @property
    def index(self) -> PathIndex:
        if self._index is None:
            self._index = PathIndex(self.tree.paths())
        return self._index

    def editable(self, path: str) -> bool:
        return self._editable is None or self._editable(path)

    def data(self, path: str) -> bytes | None:
        try:
            return self.tree.read(path)
        except (SkippedFile, PinshiftError, OSError):
            return None

    def document(self, path: str) -> Document | None:
        """The parsed file at `path` (a Nix file that reads and parses without problems), else None."""
        if path in self._documents:
            return self._documents[path]
        doc = None
        if path.endswith(".nix"):
            data = self.data(path)
            if data is not None:
                doc = parse_document(data, path)
                if doc.problems:
                    doc = None
        self._documents[path] = doc
        return doc

    def graph_of(self, path: str) -> FileGraph | None:
        if path not in self._graphs:
            doc = self.document(path)
            self._graphs[path] = file_graph(doc) if doc is not None else None
            self._documents.pop(path, None)  # its tree is not needed again: memory stays flat
        return self._graphs[path]

    def references(self, path: str) -> tuple[Reference, ...]:
        found = self.graph_of(path)
        return found.references if found is not None else ()

    def signature(self, path: str) -> Signature | None:
        found = self.graph_of(path)
        return found.signature if found is not None else None

    def target(self, source: str, reference: Reference) -> Target:
        return target(source, reference.literal, reference.how, self.index, reference.computed)

    def prefetch(self, paths) -> None:
        """Let the tree read `paths` in one batch when it can (a commit's blobs), before they are read one by one."""
        hook = getattr(self.tree, "prefetch", None)
        if hook is not None and paths:
            hook(list(paths))

    def nix_paths(self) -> list[str]:
        return [p for p in self.tree.paths() if p.endswith(".nix")]

    def referrers(self, targets: Iterable[str], within: Callable[[str], bool] | None = None
                  ) -> list[tuple[str, Reference, str]]:
        """(source, reference, target) for every reference of a Nix file of the tree naming one of `targets`.

        Only files whose bytes hold a target's name as a whole run of path characters (or, for a
        `default.nix`, its directory's name, `.` or `..`) are parsed: one pass over each file's bytes and
        a set lookup per run, however many targets. `within` limits the files searched.
        """
        wanted = set(targets)
        if not wanted:
            return []
        needles = set()  # the last component a literal naming a target must have (a set: any number of targets)
        for path in wanted:
            name = posixpath.basename(path)
            needles.add(name.encode("utf-8", "surrogateescape"))
            if name == "default.nix":
                directory = posixpath.basename(posixpath.dirname(path))
                needles.update((directory.encode("utf-8", "surrogateescape"), b".", b".."))
        candidates = [p for p in self.nix_paths() if within is None or within(p)]
        self.prefetch(candidates)
        found = []
        for path in candidates:
            if path not in self._graphs:
                data = self.data(path)
                if data is None or needles.isdisjoint(_COMPONENT.findall(data)):
                    continue
            if self.graph_of(path) is None and self.data(path) is not None:
                self.unread.add(path)  # a syntax problem: its references cannot be read
                continue
            for reference in self.references(path):
                named = self.target(path, reference)
                if named.path in wanted:
                    found.append((path, reference, named.path))
        return found

    def problems_of(self, path: str, reference: Reference) -> list[Problem]:
        """What is wrong with one reference of the file at `path` (see the module docstring)."""
        if reference.computed:
            return [Problem("computed", path, reference.line, reference.column, computed_message(reference))]
        found = self.target(path, reference)
        if found.state == "missing":
            return [Problem("dangling", path, reference.line, reference.column,
                            dangling_message(reference, found, self.shown), found.path)]
        if found.state != "file" or reference.how == "path":
            return []
        return argument_problems(path, reference, found.path, self.signature(found.path), self.shown)

    def problems(self, path: str) -> list[Problem]:
        """Every problem of every reference the file at `path` makes."""
        return [problem for reference in self.references(path) for problem in self.problems_of(path, reference)]
