"""One append-only file of keyed records in a directory of pinshift's cache: the facts and summary memos' store.

The file is a FORMAT line, then records: a 2-byte magic, a 4-byte length, a 20-byte key and the payload
(what the payload is belongs to the caller). A run appends all its new records in one write (a few megabytes
at a time when the caller gives their size: nothing joins them all in memory); a store that
would grow past MAX_BYTES, or whose end is damaged (a run killed while writing), is rewritten whole (the
records this run used, then its new ones) to a temporary file renamed over it. Reading stops at the first
damaged record. The directory is opened through pinshift.files.cache_dir (no link followed, never another
user's or a shared directory), only a regular file with the store's own name is read, appended to or replaced,
and saving removes the stores that are provably of no use (this install's other fingerprints, any store no run
used for a month) and the temporary files of killed runs, never another install's current store. Nothing here
raises: a store that cannot be read or written only costs the next run its time.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import struct
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from pinshift.files import cache_dir

MAX_BYTES = 64 * 1024 * 1024
_HEADER = struct.Struct(">2sI20s")
HEADER_BYTES = _HEADER.size  # what a record adds to its payload
_BLOCK = 4 * 1024 * 1024  # records written a block at a time when the caller gives their size
# the names stores are given: <install>-<fingerprint>.store, and (formats before issue 39) <fingerprint>.store
_STORE_NAME = re.compile(r"(?:([0-9a-f]{16})-)?[0-9a-f]{32}\.store")
_TEMP_NAME = re.compile(r"\.(?:[0-9a-f]{16}-)?[0-9a-f]{32}\.store\.[0-9a-f]{16}\.tmp")

Where = tuple[int, int]  # (offset, length) of a payload in the store's bytes


def usable(directory: str, what: str, note: Callable[[str], None] | None) -> bool:
    """Whether `$XDG_CACHE_HOME/pinshift/<directory>` can hold a store (made where missing); an unsafe one is told
    to `note` once, in the words of the cache it is for (`what`: "the facts cache")."""
    try:
        os.close(cache_dir.open_directory(directory))
    except cache_dir.CacheUnsafe as unsafe:
        if note is not None:
            note(f"pinshift: note: {what} is not used: {unsafe}, and pinshift follows no link and uses no shared "
                 "directory in its cache (fix it, or set PINSHIFT_CACHE=off)")
        return False
    except OSError:
        return False
    return True


class RecordStore:
    """The store `name` (`<16 hex install>-<32 hex fingerprint>.store`) in the cache directory `directory`; None
    `name`: nothing is kept."""

    def __init__(self, directory: str, name: str | None, format: bytes, magic: bytes, max_bytes: int = MAX_BYTES):
        self.directory, self.name, self.format, self.magic = directory, name, format, magic
        self.max_bytes = max_bytes  # beyond it, a save rewrites the store with only the records this run used
        self.data = b""
        self.index: dict[bytes, list[Where]] = {}  # key -> where its payloads are, in the order written
        self.valid_end = 0  # where the last whole record ends
        self.foreign = False  # the store's name is held by something else than a regular file: never touch it
        self.used: set[Where] = set()  # the records this run read: a rewrite keeps them
        if name is not None:
            self._load()

    def payloads(self, key: bytes) -> Iterator[tuple[Where, bytes]]:
        """The stored payloads of `key`, oldest first (a caller marks the one it used with `use`)."""
        for start, length in self.index.get(key, ()):
            yield (start, length), self.data[start:start + length]

    def use(self, where: Where) -> None:
        self.used.add(where)

    @contextmanager
    def _directory(self) -> Iterator[int]:
        descriptor = cache_dir.open_directory(self.directory, create=False)
        try:
            yield descriptor
        finally:
            os.close(descriptor)

    def _load(self) -> None:
        try:
            with self._directory() as directory:
                descriptor = cache_dir.open_regular(self.name, os.O_RDONLY, directory)
                if descriptor is None:
                    self.foreign = True
                    return
                with os.fdopen(descriptor, "rb") as store:
                    data = store.read()
                    cache_dir.mark_used(store.fileno())
        except (OSError, cache_dir.CacheUnsafe):
            return
        if not data.startswith(self.format):
            return
        offset = len(self.format)
        while offset + _HEADER.size <= len(data):
            magic, length, key = _HEADER.unpack_from(data, offset)
            start = offset + _HEADER.size
            if magic != self.magic or start + length > len(data):
                break
            self.index.setdefault(key, []).append((start, length))
            offset = start + length
        self.data, self.valid_end = data, offset

    def save(self, new: Iterable[tuple[bytes, bytes]], size: int | None = None) -> bool:
        """Append the (key, payload) records `new` (or rewrite the store); whether they were written. `size`: the
        records' bytes (HEADER_BYTES a record and its payload), when the caller knows it: they are then written a
        block at a time as `new` yields them (a 40,000-recipe check's summaries are some 80 MB), not joined first."""
        records = self._blocks(new) if size is not None else iter([self._joined(new)])
        first = next(records, b"")
        size = size if size is not None else len(first)
        records = itertools.chain([first], records)
        if self.name is None or not first or self.foreign:
            return False
        try:
            with self._directory() as directory:
                if not cache_dir.regular_or_absent(self.name, directory):
                    return False
                damaged = bool(self.data) and self.valid_end < len(self.data)
                if not self.data or damaged or len(self.data) + size > self.max_bytes:
                    self._rewrite(records, size, directory)
                else:
                    descriptor = cache_dir.open_regular(self.name, os.O_WRONLY | os.O_APPEND, directory)
                    if descriptor is None:
                        return False
                    try:
                        for block in records:
                            _write_all(descriptor, block)
                    finally:
                        os.close(descriptor)
                self._remove_others(directory)
        except (OSError, cache_dir.CacheUnsafe):
            return False
        return True

    def _joined(self, new: Iterable[tuple[bytes, bytes]]) -> bytes:
        return b"".join(_HEADER.pack(self.magic, len(payload), key) + payload for key, payload in new)

    def _blocks(self, new: Iterable[tuple[bytes, bytes]]) -> Iterator[bytes]:
        """The records of `new`, joined _BLOCK bytes at a time."""
        block, held = [], 0
        for key, payload in new:
            block.append(_HEADER.pack(self.magic, len(payload), key) + payload)
            held += HEADER_BYTES + len(payload)
            if held >= _BLOCK:
                yield b"".join(block)
                block, held = [], 0
        if block:
            yield b"".join(block)

    def _rewrite(self, records: Iterable[bytes], size: int, directory: int) -> None:
        """The store with only the records this run used and made, replacing the old one at once."""
        kept = []
        if self.data and len(self.data) + size <= self.max_bytes:
            kept = [self.data[len(self.format):self.valid_end]]  # a damaged end: the whole records before it
        else:
            for start, length in sorted(self.used):
                kept.append(self.data[start - _HEADER.size:start + length])
        temporary = f".{self.name}.{secrets.token_hex(8)}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=directory)
        try:
            with os.fdopen(descriptor, "wb") as out:
                for block in itertools.chain([self.format], kept, records):
                    out.write(block)
            os.replace(temporary, self.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=directory)
            except OSError:
                pass
            raise

    def _remove_others(self, directory: int) -> None:
        """Stores that are provably of no use, and temporary files of killed runs (regular files with the stores' own
        names only): this install's stores of another fingerprint (its code changed), and another install's or an
        earlier format's store that no run used for `cache_dir.STALE_SECONDS` (a run marks the store it reads
        used). Another install's current store is never removed, so two installs sharing a cache keep theirs."""
        mine = _STORE_NAME.fullmatch(self.name)
        install = mine.group(1) if mine is not None else None
        for name, info in cache_dir.regular_files(directory).items():
            if name == self.name:
                continue
            store = _STORE_NAME.fullmatch(name)
            if store is not None:
                removable = (install is not None and store.group(1) == install) or cache_dir.stale(info)
            else:
                removable = bool(_TEMP_NAME.fullmatch(name)) and cache_dir.stale(info, cache_dir.TEMPORARY_SECONDS)
            if removable:
                try:
                    os.unlink(name, dir_fd=directory)
                except OSError:
                    pass


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]
