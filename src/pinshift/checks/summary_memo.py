"""Build summaries remembered across runs: a recipe evaluated before is not evaluated again.

What a recipe builds on the stand-in is a pure function of its path, its bytes, the bytes of every file it
read (imports, readFile, pathExists), the stand-in and pinshift's code. So an evaluation is remembered under

    sha1(path, blob id)   in   $XDG_CACHE_HOME/pinshift/summaries/<fingerprint>.store

together with the files it read and what each was (blob id, "dir", or absent); it is used only where every
one of them is the same (an importer is evaluated again when the file it imports changed). Evaluations that
read something a blob id cannot stand for (a directory listing, a file outside the tree) are not remembered.
The fingerprint covers pinshift's code (the plan memo's `code_fingerprint`), the stand-in's Nix files and the
version of nix-instantiate. In one run the same rule reuses evaluations between trees (BASE and TARGET, the
trees after each planned step) even when `PINSHIFT_CACHE=off` keeps the store unused.

The store follows the plan memo's rules (pinshift.files.cache_dir): no link followed below
`$XDG_CACHE_HOME`, a directory that is a link, another user's or writable by everyone turns it off (one
note), only regular files with the store's own names are read, replaced or removed, a fifo is never opened
for blocking. A record is `b"PS"`, a 4-byte length, a 20-byte key and a zlib-compressed JSON payload; a
damaged record ends the reading there and a damaged payload is a miss. A store that cannot be read or written
only costs the next run its time.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import hashlib
import json
import os
import re
import secrets
import struct
import subprocess
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pinshift.checks.evaluation import STANDIN, Evaluation
from pinshift.files import cache_dir

FORMAT = b"pinshift-summaries/1\n"
MAX_BYTES = 64 * 1024 * 1024
DIRECTORY = "summaries"
_HEADER = struct.Struct(">2sI20s")
_OWN_NAME = re.compile(r"[0-9a-f]{32}\.store|\.[0-9a-f]{32}\.store\.[0-9a-f]{16}\.tmp")


def _key(path: str, blob: str) -> bytes:
    return hashlib.sha1(path.encode("utf-8", "surrogateescape") + b"\0" + blob.encode("ascii")).digest()


def fingerprint(nix: str) -> str:
    """pinshift's code, the stand-in and the Nix that evaluates: a summary made by any other is never read."""
    from pinshift.planning import memo as plan_memo

    digest = hashlib.sha256(FORMAT + plan_memo.code_fingerprint().encode())
    for path in sorted(STANDIN.glob("*.nix")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    try:
        version = subprocess.run([nix, "--version"], capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        version = b"?"
    digest.update(version)
    return digest.hexdigest()[:32]


class SummaryMemo:
    """Evaluations remembered in this run and, unless `name` is None, in the store."""

    def __init__(self, name: str | None):
        self.name = name
        self.data = b""
        self.index: dict[bytes, list[tuple[int, int]]] = {}
        self.valid_end = 0
        self.foreign = False
        self.new: dict[bytes, list[bytes]] = {}
        self.used: set[tuple[int, int]] = set()
        self.hits = 0
        self.seen: dict[bytes, list[tuple[tuple, Evaluation]]] = {}  # this run's, decoded
        if name is not None:
            self._load()

    @classmethod
    def open(cls, nix: str, note: Callable[[str], None] | None = None) -> "SummaryMemo":
        from pinshift.planning import memo as plan_memo

        if not plan_memo.enabled():
            return cls(None)
        try:
            name = f"{fingerprint(nix)}.store"
            os.close(cache_dir.open_directory(DIRECTORY))
        except cache_dir.CacheUnsafe as unsafe:
            if note is not None:
                note(f"pinshift: note: the summary cache is not used: {unsafe}, and pinshift follows no link and uses "
                     "no shared directory in its cache (fix it, or set PINSHIFT_CACHE=off)")
            return cls(None)
        except (OSError, ImportError):
            return cls(None)
        return cls(name)

    @contextmanager
    def _directory(self) -> Iterator[int]:
        descriptor = cache_dir.open_directory(DIRECTORY, create=False)
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
            if magic != b"PS" or start + length > len(data):
                break
            self.index.setdefault(key, []).append((start, length))
            offset = start + length
        self.data, self.valid_end = data, offset

    def lookup(self, path: str, blob: str, fingerprint_of: Callable[[str], str | None]) -> Evaluation | None:
        """The evaluation of (path, blob) whose reads are all as `fingerprint_of` says they are now, or None."""
        key = _key(path, blob)
        for reads, evaluation in self.seen.get(key, []):
            if all(fingerprint_of(read) == was for read, was in reads):
                return evaluation
        for where in self.index.get(key, []):
            start, length = where
            try:
                payload = json.loads(zlib.decompress(self.data[start:start + length]))
                reads = tuple((str(read), was) for read, was in payload["reads"])
                evaluation = Evaluation(payload["summary"], payload["error"], tuple(r for r, _ in reads), True)
            except Exception:  # a damaged record is a miss  # noqa: BLE001
                continue
            if (evaluation.summary is None) == (evaluation.error is None):
                continue
            if all(fingerprint_of(read) == was for read, was in reads):
                self.used.add(where)
                self.hits += 1
                self.seen.setdefault(key, []).append((reads, evaluation))
                return evaluation
        return None

    def remember(self, path: str, blob: str, evaluation: Evaluation, fingerprint_of: Callable[[str], str | None]) -> None:
        if not evaluation.cacheable:
            return
        key = _key(path, blob)
        reads = tuple((read, fingerprint_of(read)) for read in evaluation.reads)
        self.seen.setdefault(key, []).append((reads, evaluation))
        if self.name is not None:
            payload = json.dumps({"reads": [list(r) for r in reads], "summary": evaluation.summary,
                                  "error": evaluation.error}, ensure_ascii=False).encode()
            self.new.setdefault(key, []).append(zlib.compress(payload, 1))

    def save(self) -> None:
        """Append what this run evaluated (or rewrite the store); never raises: the store is only a cache."""
        if self.name is None or not self.new or self.foreign:
            return
        records = b"".join(_HEADER.pack(b"PS", len(payload), key) + payload
                           for key, payloads in self.new.items() for payload in payloads)
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
        self.new.clear()

    def _rewrite(self, records: bytes, directory: int) -> None:
        """The store with only the records this run used and made, replacing the old one at once."""
        kept = []
        if self.data and len(self.data) + len(records) <= MAX_BYTES:
            kept = [self.data[len(FORMAT):self.valid_end]]  # a damaged end: the whole records before it
        else:
            for start, length in sorted(self.used):
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
