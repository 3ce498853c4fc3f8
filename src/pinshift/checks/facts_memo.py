"""Facts of recipe files remembered across runs: a (path, blob id) `pinshift status` read before is not
parsed again.

A file's facts (pinshift.checks.facts) are a pure function of its path, its bytes and pinshift's
code, and status already knows each file's git blob id from `git ls-tree` before reading it. So a run
looks every file up under

    sha1(path, blob id)   in   $XDG_CACHE_HOME/pinshift/facts/<code fingerprint>.store

and parses only what it has not seen; the facts it parsed are appended when it is done. The code
fingerprint is the plan memo's (pinshift.planning.memo.code_fingerprint: every source file of pinshift
and its step kinds, Python and tree-sitter versions), so a changed pinshift never reads old facts;
other fingerprints' stores are removed when a run saves. `PINSHIFT_CACHE=off` turns it off, as it
does the plan memo.

The store is one file: a FORMAT line, then records `b"PF"`, a 4-byte length, a 20-byte key and the
zlib-compressed pickle of the facts. A run appends all its records in one write; a store that would
grow past MAX_BYTES, or whose end is damaged (a run killed while writing), is rewritten whole, to a
temporary file renamed over it. Reading stops at the first damaged record; a record that does not
decompress or unpickle is a miss. A store that cannot be read or written only costs the next run its
time: status prints the same whatever the memo holds (tests/test_status_memo.py).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import hashlib
import os
import pickle
import re
import secrets
import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pinshift.files import cache_dir

FORMAT = b"pinshift-facts/1\n"
MAX_BYTES = 64 * 1024 * 1024
_HEADER = struct.Struct(">2sI20s")
_OWN_NAME = re.compile(r"[0-9a-f]{32}\.store|\.[0-9a-f]{32}\.store\.[0-9a-f]{16}\.tmp")


def _key(path: str, blob: str) -> bytes:
    return hashlib.sha1(path.encode("utf-8", "surrogateescape") + b"\0" + blob.encode("ascii")).digest()


class FactsMemo:
    """The facts store of this pinshift (None `name`: remembering is off).

    The store lives in `$XDG_CACHE_HOME/pinshift/facts/`, opened through pinshift.files.cache_dir: no link is followed
    below `$XDG_CACHE_HOME`, a directory that is a link, another user's or writable by every user turns the memo
    off (`note` says so once), and only regular files with the store's own names are read, replaced or removed."""

    def __init__(self, name: str | None):
        self.name = name
        self.data = b""
        self.index: dict[bytes, tuple[int, int]] = {}  # key -> (offset, length) of its payload in `data`
        self.valid_end = 0  # where the last whole record ends
        self.foreign = False  # the store's name is held by something else than a regular file: never touch it
        self.new: dict[bytes, bytes] = {}
        self.used: set[bytes] = set()
        self.hits = 0
        if name is not None:
            self._load()

    @classmethod
    def open(cls, note: Callable[[str], None] | None = None) -> "FactsMemo":
        from pinshift.planning import memo as plan_memo

        if not plan_memo.enabled():
            return cls(None)
        try:
            fingerprint = plan_memo.code_fingerprint()
            os.close(cache_dir.open_directory("facts"))
        except cache_dir.CacheUnsafe as unsafe:
            if note is not None:
                note(f"pinshift: note: the facts cache is not used: {unsafe}, and pinshift follows no link and uses "
                     "no shared directory in its cache (fix it, or set PINSHIFT_CACHE=off)")
            return cls(None)
        except (OSError, ImportError):
            return cls(None)
        return cls(f"{fingerprint}.store")

    @contextmanager
    def _directory(self) -> Iterator[int]:
        descriptor = cache_dir.open_directory("facts", create=False)
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
        except (OSError, cache_dir.CacheUnsafe):
            return
        if not data.startswith(FORMAT):
            return
        offset = len(FORMAT)
        while offset + _HEADER.size <= len(data):
            magic, length, key = _HEADER.unpack_from(data, offset)
            start = offset + _HEADER.size
            if magic != b"PF" or start + length > len(data):
                break
            self.index[key] = (start, length)
            offset = start + length
        self.data, self.valid_end = data, offset

    def lookup(self, path: str, blob: str):
        """The remembered facts of (path, blob), None when there are none (or they cannot be read)."""
        if self.name is None:
            return None
        key = _key(path, blob)
        found = self.index.get(key)
        if found is None:
            return None
        start, length = found
        try:
            facts = pickle.loads(zlib.decompress(self.data[start:start + length]))
        except Exception:  # a damaged record is a miss  # noqa: BLE001
            return None
        self.used.add(key)
        self.hits += 1
        return facts

    def remember(self, path: str, blob: str, facts) -> None:
        if self.name is not None:
            self.new[_key(path, blob)] = zlib.compress(pickle.dumps(facts, pickle.HIGHEST_PROTOCOL), 1)

    def save(self) -> None:
        """Append what this run parsed (or rewrite the store); never raises: the store is only a cache."""
        if self.name is None or not self.new or self.foreign:
            return
        records = b"".join(_HEADER.pack(b"PF", len(payload), key) + payload for key, payload in self.new.items())
        try:
            with self._directory() as directory:
                if not cache_dir.regular_or_absent(self.name, directory):
                    return
                damaged = bool(self.data) and self.valid_end < len(self.data)
                if not self.data or damaged or len(self.data) + len(records) > MAX_BYTES:
                    self._rewrite(records, directory)
                else:
                    descriptor = cache_dir.open_regular(self.name, os.O_WRONLY | os.O_APPEND, directory)
                    if descriptor is None:
                        return
                    try:
                        os.write(descriptor, records)
                    finally:
                        os.close(descriptor)
                self._remove_others(directory)
        except (OSError, cache_dir.CacheUnsafe):
            return

    def _rewrite(self, records: bytes, directory: int) -> None:
        """The store with only the records this run used and parsed, replacing the old one at once."""
        kept = []
        if self.data and len(self.data) + len(records) <= MAX_BYTES:
            kept = [self.data[len(FORMAT):self.valid_end]]  # a damaged end: the whole records before it
        else:
            for key in self.used:
                start, length = self.index[key]
                kept.append(self.data[start - _HEADER.size:start + length])
        temporary = f".{self.name}.{secrets.token_hex(8)}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=directory)
        try:
            with os.fdopen(descriptor, "wb") as out:
                out.write(FORMAT + b"".join(kept) + records)
            os.replace(temporary, self.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=directory)
            except OSError:
                pass
            raise

    def _remove_others(self, directory: int) -> None:
        """Other fingerprints' stores and temporary files of killed runs: regular files with the store's own names."""
        for name in cache_dir.regular_files(directory):
            if name != self.name and _OWN_NAME.fullmatch(name):
                try:
                    os.unlink(name, dir_fd=directory)
                except OSError:
                    pass
