"""A local nixpkgs clone used offline: a revision by name, and the sha256 of its GitHub archive.

`NixpkgsClone(directory)` opens a clone (bare or not; shallow is fine as long as it
has the revision). `revision(name)` resolves a commit id (abbreviated or not), a
branch or a tag (`nixos-unstable` also as the remote-tracking `origin/nixos-unstable`)
to the full commit id. `archive_hash(commit)` is the NAR sha256 that
`nix-prefetch-url --unpack https://github.com/NixOS/nixpkgs/archive/<commit>.tar.gz`
prints (see pinshift.nixpkgs.archive), computed from the clone's objects and remembered per
commit under the user's cache directory: `$XDG_CACHE_HOME/pinshift/hashes/<commit>.json`
(default `~/.cache/pinshift/hashes/`). A cache entry that cannot be read or does not
hold a valid hash for its commit is ignored and written again, and so is anything there but a
regular file (a fifo never blocks a run; a link is never followed); a cache that cannot be
written, or a directory that `pinshift.files.cache_dir` refuses (a link, another user's), is skipped. An archive with `export-subst` files is not cached (its bytes
depend on the clone: see pinshift.nixpkgs.archive).

Every failure is a one-line PinshiftError naming the clone and what to run.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from pinshift.files import cache_dir
from pinshift.errors import GitError, UsageError
from pinshift.nixpkgs.nar import parse_sha256, render_sha256

CACHE_FORMAT = "pinshift.archive-hash/1"
NO_CLONE = "pass --nixpkgs DIR (a local nixpkgs git clone) or set PINSHIFT_NIXPKGS"


@dataclass(frozen=True)
class Revision:
    """`name` as the user wrote it, the commit it names, and the ref it went through (None for a commit id)."""

    name: str
    commit: str
    ref: str | None = None

    def describe(self) -> str:
        """`nixos-unstable = 0182a361324364ae3f436a63005877674cf45efb (origin/nixos-unstable)`."""
        if self.name == self.commit:
            return self.commit
        short_ref = (self.ref or "").removeprefix("refs/heads/").removeprefix("refs/remotes/")
        via = f" ({short_ref})" if short_ref and short_ref != self.name else ""
        return f"{self.name} = {self.commit}{via}"


@dataclass(frozen=True)
class ArchiveDigest:
    """The sha256 of one commit's archive, and how it was obtained."""

    commit: str
    digest: bytes
    cached: bool
    seconds: float = 0.0
    files: int = 0
    notes: tuple[str, ...] = ()


def cache_directory() -> Path:
    return cache_dir.cache_home() / "hashes"


def _cached(commit: str) -> bytes | None:
    try:
        directory = cache_dir.open_directory("hashes", create=False)
    except (OSError, cache_dir.CacheUnsafe):
        return None
    try:
        descriptor = cache_dir.open_regular(f"{commit}.json", os.O_RDONLY, directory)
        if descriptor is None:
            return None
        with os.fdopen(descriptor, "rb") as handle:
            entry = json.loads(handle.read(1 << 16))
        if entry.get("format") == CACHE_FORMAT and entry.get("commit") == commit:
            return parse_sha256(entry.get("sha256", ""))
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    finally:
        os.close(directory)
    return None


def _remember(commit: str, digest: bytes, files: int) -> None:
    entry = {"format": CACHE_FORMAT, "commit": commit, "sha256": render_sha256(digest, "base32"), "files": files}
    name, temporary = f"{commit}.json", f".{commit}.{secrets.token_hex(8)}.tmp"
    try:
        directory = cache_dir.open_directory("hashes")
    except (OSError, cache_dir.CacheUnsafe):
        return  # an unwritable (or unsafe) cache only costs the next run the time to compute again
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=directory)
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(entry, out)
            if cache_dir.regular_or_absent(name, directory):
                os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
            else:
                os.unlink(temporary, dir_fd=directory)  # a fifo or a link in its place: left alone
        except BaseException:  # also Ctrl-C: never leave a half-written entry behind
            try:
                os.unlink(temporary, dir_fd=directory)
            except FileNotFoundError:
                pass
            raise
    except OSError:
        pass
    finally:
        os.close(directory)


class NixpkgsClone:
    """A local nixpkgs git clone, read and never written (its work tree, index and refs stay as they are)."""

    def __init__(self, directory: Path):
        from pinshift.git.clone import CloneReader

        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise UsageError(f"--nixpkgs {directory}: no such directory; {NO_CLONE}")
        reader = CloneReader.open(self.directory)
        if reader is None:
            raise UsageError(f"--nixpkgs {directory}: not a git repository; {NO_CLONE}")
        self.reader = reader

    @classmethod
    def given(cls, directory: Path | None, needed_for: str) -> "NixpkgsClone":
        """The clone passed with --nixpkgs / $PINSHIFT_NIXPKGS; a usage error saying `needed_for` when none was."""
        if directory is None:
            raise UsageError(f"{needed_for} needs a local nixpkgs clone: {NO_CLONE}")
        return cls(directory)

    def revision(self, name: str) -> Revision:
        """The full commit id of `name`; an error naming the fix when the clone does not have it."""
        found = self.reader.resolve(name)
        if found is not None:
            return Revision(name, *found)
        kind = self.reader.object_kind(name)
        if kind is not None and kind != "commit":
            raise UsageError(f"nixpkgs revision '{name}' names a {kind} in {self.directory}, not a commit; "
                             "give a commit id, a branch or a tag of a commit")
        remote = self.reader.remote_branches(name)
        if len({commit for _, commit in remote}) > 1:
            listed = ", ".join(f"{ref.removeprefix('refs/remotes/')} = {commit[:12]}" for ref, commit in remote)
            raise UsageError(f"nixpkgs revision '{name}' is ambiguous in {self.directory} ({listed}); "
                             "name the remote too (origin/" + name + ")")
        if self.reader.shallow():
            raise GitError(f"nixpkgs revision '{name}' is not in {self.directory}, a shallow clone; fetch it "
                           f"(git -C {self.directory} fetch --depth 1 origin {name}) or the whole history "
                           f"(git -C {self.directory} fetch --unshallow)")
        raise GitError(f"nixpkgs revision '{name}' is not in {self.directory}; fetch it there "
                       f"(git -C {self.directory} fetch origin {name})")

    def archive_hash(self, commit: str) -> ArchiveDigest:
        """The NAR sha256 of GitHub's archive of `commit` (a full commit id of this clone), cached per commit."""
        from pinshift.nixpkgs.archive import archive_sha256
        from pinshift.git.clone import MissingObject

        digest = _cached(commit)
        if digest is not None:
            return ArchiveDigest(commit, digest, cached=True)
        started = time.monotonic()
        try:
            with self.reader.objects() as store:
                result = archive_sha256(store, commit)
        except MissingObject as error:
            shallow = ", a shallow clone," if self.reader.shallow() else ""
            raise GitError(f"{self.directory}{shallow} is missing objects of {commit[:12]} ({error}): a partial "
                           "(--filter) or damaged clone; hash from a full clone (git clone "
                           "https://github.com/NixOS/nixpkgs)") from None
        notes = ()
        if result.substituted:
            notes = (f"{result.substituted} export-subst file{'s' if result.substituted != 1 else ''} expanded as "
                     f"this clone's git does ($Format:%h$, %d and %(describe) can differ from GitHub's archive); "
                     "not cached",)
        else:
            _remember(commit, result.digest, result.files)
        return ArchiveDigest(commit, result.digest, cached=False, seconds=time.monotonic() - started,
                             files=result.files, notes=notes)
