"""The recipes of local branches, read straight from their commits: no checkout, nothing written.

`read_branches(repository, branches, globs)` gives each branch the facts (pinshift.facts.facts)
of the files its globs select. Git is read in bulk: one `git ls-tree` per branch and one
`git cat-file --batch` per branch for the blobs no branch read before. A file is parsed once per
(path, blob id), so branches that share a file share its facts (`FactsCache`, also across
repositories), and not at all when an earlier run remembered them (facts.facts_memo). Many files
are parsed in forked workers (pinshift.planning.pool).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pinshift.facts.facts import RecipeFacts, recipe_facts
from pinshift.files.content import DEFAULT_MAX_BYTES, SkippedFile
from pinshift.errors import GitError
from pinshift.files.globs import matches


@dataclass
class BranchRecipes:
    """One branch's recipe files as its commit holds them, or why they could not be read (`error`)."""

    repository: str  # the repository's name as shown (its directory name)
    root: str  # where the repository is
    branch: str
    commit: str
    globs: tuple[str, ...]
    files: int = 0  # files the globs selected
    recipes: list[RecipeFacts] = field(default_factory=list)  # in path order
    skipped: list[str] = field(default_factory=list)  # "path: reason" of files not read
    error: str | None = None

    @property
    def label(self) -> str:
        """`build-vllm@main`."""
        return f"{self.repository}@{self.branch}"


@dataclass(frozen=True)
class ReadOptions:
    """What pinshift.planning.pool needs: how many worker processes (None: one per CPU for many files)."""

    jobs: int | None = None
    progress: Callable[[int, int], None] | None = None  # (files parsed, files to parse), as the pool calls it


PARSING = "parsing recipes"  # what the progress line says while the branches' new files are parsed


class FactsCache(dict):
    """(path, blob id) -> RecipeFacts, shared by every branch read in one run."""


class _Blobs:
    """The bytes of the files to parse, keyed as pinshift.planning.pool passes them; inherited by forked workers."""

    fork_safe = True

    def __init__(self) -> None:
        self.data: dict[str, tuple[str, bytes]] = {}

    def read(self, key: str) -> bytes:
        return self.data[key][1]


_BLOBS = _Blobs()


def _facts(key: str, data: bytes | None, reason: str) -> RecipeFacts:
    from pinshift.syntax.document import parse_document

    path, data = _BLOBS.data[key] if data is None else (_BLOBS.data[key][0], data)
    return recipe_facts(parse_document(data, path))


def repository_name(root: Path) -> str:
    """What a row calls a repository: its directory's name (`build-vllm`; a bare `x.git` is `x`)."""
    name = Path(root).resolve().name
    return name.removesuffix(".git") if name.endswith(".git") and name != ".git" else name


def read_branches(repository, branches: Sequence[tuple[str, str]], globs: Sequence[str],
                  max_bytes: int = DEFAULT_MAX_BYTES, cache: FactsCache | None = None,
                  options: ReadOptions = ReadOptions(), name: str | None = None, memo=None) -> list[BranchRecipes]:
    """Each (branch, commit) of `repository` (a gitrepo.Repository) with the facts of its recipe files.

    `memo` (a facts.facts_memo.FactsMemo) gives the facts of files read in an earlier run; they are
    neither read from git nor parsed. A branch git cannot read is returned with its `error`; nothing
    else stops the others.
    """
    return read_repositories([(repository, branches, name)], globs, max_bytes, cache, options, memo)[0]


def read_repositories(requests, globs: Sequence[str], max_bytes: int = DEFAULT_MAX_BYTES,
                      cache: FactsCache | None = None, options: ReadOptions = ReadOptions(),
                      memo=None, progress: Callable[[str, int, int], None] | None = None) -> list[list[BranchRecipes]]:
    """`read_branches` for several (repository, branches, name) at once: every new blob of every
    repository is parsed in one pool, so small repositories share the workers of large ones;
    `progress(what, done, total)` over the branches read, then the files parsed."""
    total = sum(len(branches) for _, branches, _ in requests)
    done = 0
    cache = FactsCache() if cache is None else cache
    pending: dict[tuple[str, str], bytes] = {}
    per_repository = []
    for repository, branches, name in requests:
        name = name or repository_name(repository.root)
        found: list[tuple[BranchRecipes, list[tuple[str, str]]]] = []
        for branch, commit in branches:
            if progress:
                progress(f"reading branches ({branch})", done, total)
            done += 1
            entry = BranchRecipes(name, str(repository.root), branch, commit, tuple(globs))
            try:
                found.append((entry, _read_branch(repository, entry, max_bytes, cache, pending, memo)))
            except GitError as error:
                entry.error = str(error)
                found.append((entry, []))
        per_repository.append(found)
    if progress:
        progress("reading branches", total, total)
        options = replace(options, progress=lambda number, files: progress(PARSING, number, files))
    _parse(pending, cache, options, memo)
    for found in per_repository:
        for entry, keys in found:
            entry.recipes = [cache[key] for key in keys]
    return [[entry for entry, _ in found] for found in per_repository]


def _read_branch(repository, entry: BranchRecipes, max_bytes: int, cache: FactsCache,
                 pending: dict[tuple[str, str], bytes], memo=None) -> list[tuple[str, str]]:
    """The (path, blob id) of each readable recipe file; new blobs' bytes go into `pending` (the facts of
    blobs the memo remembers go straight into `cache`)."""
    tree = repository.tree(entry.commit, max_bytes)
    selected = [path for path in tree.paths() if matches(path, entry.globs)]
    entry.files = len(selected)
    keys = [(path, tree.blob_id(path)) for path in selected]
    if memo is not None:
        for key in keys:
            if key not in cache and key not in pending and (remembered := memo.lookup(*key)) is not None:
                cache[key] = remembered
    tree.prefetch([path for path, sha in keys if (path, sha) not in cache and (path, sha) not in pending])
    readable = []
    for path, sha in keys:
        if (path, sha) in cache or (path, sha) in pending:
            readable.append((path, sha))
            continue
        try:
            pending[(path, sha)] = tree.read(path)
        except SkippedFile as reason:
            entry.skipped.append(str(reason))
            continue
        readable.append((path, sha))
    return readable


def facts_of_files(files: Mapping[str, bytes], options: ReadOptions = ReadOptions()) -> list[RecipeFacts]:
    """The facts of `files` (path -> bytes) in path order, parsed in forked workers when there are many (a
    planned branch's recipes for its `{facts.…}`: pinshift.status.branch_facts.tree_facts)."""
    cache = FactsCache()
    ordered = sorted(files)
    _parse({(path, ""): files[path] for path in ordered}, cache, options)
    return [cache[(path, "")] for path in ordered]


def _parse(pending: dict[tuple[str, str], bytes], cache: FactsCache, options: ReadOptions, memo=None) -> None:
    """Facts of every pending file, in forked workers when there are many (remembered in `memo`)."""
    from pinshift.planning.pool import process_files

    if not pending:
        return
    keys = {f"{index}": key for index, key in enumerate(pending)}
    _BLOBS.data = {index: (key[0], pending[key]) for index, key in keys.items()}
    try:
        for index, facts in process_files(_BLOBS, list(keys), _facts, options):
            cache[keys[index]] = facts
            if memo is not None:
                memo.remember(*keys[index], facts)
    finally:
        _BLOBS.data = {}
