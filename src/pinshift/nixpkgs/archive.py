"""The NAR sha256 of a commit's archive, as `nix-prefetch-url --unpack` computes it for GitHub's tarball.

GitHub makes `/archive/<rev>.tar.gz` with `git archive`; Nix unpacks it, strips the
single top directory and hashes the NAR of what is left (`pinshift.nixpkgs.nar`). The same
tree is built here straight from the commit's objects, following `git archive`'s
rules (git ≥ 2.31, archive.c), and nothing is ever checked out:

- Entries come from the commit's tree; a regular file is executable in the NAR when
  its git mode has an executable bit (100755), a symlink keeps its target, and a
  submodule (gitlink) is an empty directory.
- `export-ignore` leaves out a file, a symlink, a submodule or a whole directory.
  Attributes are read from the commit's own `.gitattributes` files only (as on the
  server: not the clone's `info/attributes`, nor global or system ones), by git
  itself (`git check-attr --cached` on a private index of the tree).
- A directory is written when `git archive` meets a file, symlink or submodule in
  it, even one it then leaves out: a directory whose files are all export-ignored
  is an empty directory in the archive; one holding only ignored directories (or
  only empty trees) is not there at all.
- A file whose bytes `git archive` changes (`export-subst`'s `$Format:...$`, and the
  checkout conversions `eol`, `text`, `crlf`, `ident`, `filter`,
  `working-tree-encoding`) is taken from `git archive` of just those files, so git
  does exactly what it does for the whole archive. `$Format:%h$` (abbreviation
  length), `%d` (refs) and `%(describe)` expand from what the local clone knows and
  can differ from GitHub's; `substituted` counts such files.

The fast path needs no attributes at all: when no `.gitattributes` in the tree
mentions one of these attributes (nixpkgs' does not), only `git ls-tree` and one
`git cat-file --batch` stream run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pinshift.git.clone import MissingObject, ObjectStore, TreeEntry
from pinshift.nixpkgs.nar import Directory, File, Node, Symlink, leaves, nar_sha256

CONVERSIONS = ("export-subst", "text", "eol", "crlf", "ident", "filter", "working-tree-encoding")
ATTRIBUTES = ("export-ignore", *CONVERSIONS)
# a .gitattributes file that mentions none of these cannot change the archive
_MENTIONS = (b"export-", b"text", b"eol", b"crlf", b"ident", b"filter", b"encoding", b"[attr]")

_DIRECTORY, _REGULAR, _SYMLINK, _GITLINK = 0o040000, 0o100000, 0o120000, 0o160000


@dataclass(frozen=True)
class ArchiveHash:
    """The digest and what went into it."""

    digest: bytes
    files: int  # files and symlinks hashed
    ignored: int  # entries left out by export-ignore (a directory counts once)
    converted: int  # files whose bytes git archive changed or could change
    substituted: int  # export-subst files among them


def _kind(mode: int) -> int:
    return mode & 0o170000


def _basename(path: bytes) -> bytes:
    return path.rpartition(b"/")[2]


def _parent(path: bytes) -> bytes:
    return path.rpartition(b"/")[0]


def _attribute_path(entry: TreeEntry) -> bytes:
    """The path git archive asks attributes for: directories and submodules end in `/`."""
    return entry.path + b"/" if _kind(entry.mode) in (_DIRECTORY, _GITLINK) else entry.path


def _read_attributes(store: ObjectStore, commit: str, entries: list[TreeEntry]) -> dict[bytes, dict[str, str]]:
    """Attributes of every entry, or {} when no .gitattributes of the tree can matter."""
    sources = [e for e in entries if _basename(e.path) == b".gitattributes" and _kind(e.mode) == _REGULAR]
    if not any(word in text for text in store.blobs([e.sha for e in sources]) for word in _MENTIONS):
        return {}
    return store.attributes(commit, [_attribute_path(e) for e in entries], ATTRIBUTES)


@dataclass
class _Layout:
    root: Directory
    ignored: int
    convert: list[bytes]  # regular files to take from git archive
    substituted: int


def _layout(entries: list[TreeEntry], attributes: dict[bytes, dict[str, str]]) -> _Layout:
    """The tree git archive writes, as NAR nodes (entries arrive parents first, as `ls-tree -r -t` lists them)."""
    root = Directory()
    directories = {b"": root}
    pruned: set[bytes] = set()
    layout = _Layout(root, 0, [], 0)

    def directory(path: bytes) -> Directory:
        node = directories.get(path)
        if node is None:
            node = directories[path] = Directory()
            directory(_parent(path)).entries[_basename(path)] = node
        return node

    for entry in entries:
        kind, parent = _kind(entry.mode), _parent(entry.path)
        if parent in pruned:
            if kind == _DIRECTORY:
                pruned.add(entry.path)
            continue
        wanted = attributes.get(_attribute_path(entry), {})
        if kind == _DIRECTORY:
            if wanted.get("export-ignore") == "set":
                pruned.add(entry.path)
                layout.ignored += 1
            continue  # written only when git archive meets something in it
        holder = directory(parent)
        if wanted.get("export-ignore") == "set":
            layout.ignored += 1
            continue
        name = _basename(entry.path)
        if kind == _GITLINK:
            holder.entries[name] = Directory()
        elif kind == _SYMLINK:
            holder.entries[name] = Symlink((entry.path, entry.sha))
        else:
            holder.entries[name] = File((entry.path, entry.sha), executable=bool(entry.mode & 0o111))
            if wanted and any(wanted.get(attribute, "unset") != "unset" for attribute in CONVERSIONS):
                layout.convert.append(entry.path)
                layout.substituted += wanted.get("export-subst") == "set"
    return layout


def _contents(store: ObjectStore, root: Node, converted: dict[bytes, bytes]) -> Iterator[bytes]:
    """Each leaf's bytes in NAR order: from git archive when converted, else from one cat-file stream."""
    order = list(leaves(root))
    wanted = [node.key for node in order if node.key[0] not in converted]
    stream = store.blobs([sha for _, sha in wanted])
    try:
        for node in order:
            path = node.key[0]
            if path in converted:
                yield converted[path]
                continue
            try:
                data = next(stream)
            except MissingObject as error:
                raise MissingObject(error.sha, f"{path.decode(errors='replace')}: {error}") from None
            yield data
    finally:
        stream.close()


def archive_sha256(store: ObjectStore, commit: str) -> ArchiveHash:
    """The NAR sha256 of `git archive <commit>` unpacked and stripped of its top directory."""
    entries = store.tree(commit)
    layout = _layout(entries, _read_attributes(store, commit, entries))
    converted = store.archived(commit, layout.convert) if layout.convert else {}
    files = sum(1 for _ in leaves(layout.root))
    digest = nar_sha256(layout.root, _contents(store, layout.root, converted))
    return ArchiveHash(digest, files, layout.ignored, len(layout.convert), layout.substituted)
