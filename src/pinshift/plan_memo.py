"""One file's plan, remembered across runs by what it depends on (issue 15).

Planning a file is a pure function of its path, its bytes, the segment of steps it
runs through (kinds, prepared parameters, globs, recipe name, step numbers) and
pinshift's own code. So the runner can look a file's results up by

    (path, git blob id of the bytes, fingerprints of the steps that apply to it, the file-level
     operations that made the path)

and skip reading, parsing and planning it: `--dry-run` then the real `migrate`, a
re-run after a failed push, or a fan-out over branches that share most files (as
branches on one pin do) plan each distinct file once. The results are exactly the
ones a fresh plan gives (they are the pickled results of that plan); the tests
compare whole reports with and without the memo.

What is *not* remembered: segments with a step kind that is not bundled with pinshift
(a repository's or `--migrations` code may read anything), parameters that cannot be
written down canonically, files that were skipped. The fingerprint covers the source of
every module of pinshift and of its bundled step kinds (`pinshift.migrations`, found through
pinshift's own package wherever it is installed: a wheel, or an editable install that maps it
to the repository's `migrations/`; never a top-level `migrations` a working directory could
shadow) and the versions of Python and tree-sitter, so a changed pinshift never reads an old
entry.

Where: `$XDG_CACHE_HOME/pinshift/plans/<code fingerprint>/<segment shape>.memo`, one
append-only file per segment shape (its kinds, globs and step numbers; see `Segment`); at
most MAX_FILES files, each rewritten with only the entries a run used once above MAX_BYTES;
other code fingerprints' directories are removed when a run saves. `PINSHIFT_CACHE=off`
turns it off. The runner only reads (`segment`, `lookup`) and records in memory; the command that
ran it calls `save` when planning is over. A damaged or unreadable entry is a miss; a
cache that cannot be written only costs the next run its time.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import itertools
import os
import pickle
import re
import struct
import sys
import tempfile
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

FORMAT = b"pinshift-plan-memo/4\n"
MAX_BYTES = 96 * 1024 * 1024  # per segment file: beyond it, it is rewritten with the entries this run used
MAX_FILES = 48  # segment files per code fingerprint, newest kept


class Unfingerprintable(Exception):
    """A value with no canonical spelling: its segment is planned afresh every time."""


def enabled() -> bool:
    return os.environ.get("PINSHIFT_CACHE", "").strip().lower() not in ("off", "0", "no", "false")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pinshift" / "plans"


def blob_id(data: bytes) -> str:
    """Git's object id of a blob holding `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# --- fingerprints ------------------------------------------------------------------------------


def canonical(value: Any) -> str:
    """A spelling of `value` that is the same in every process (no ids, no set order); raises Unfingerprintable."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return f"{type(value).__name__}({value.isoformat()})"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ",".join(f"{f.name}={canonical(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__module__}.{type(value).__qualname__}({fields})"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{','.join(canonical(v) for v in value)}]"
    if isinstance(value, (set, frozenset)):
        return f"set[{','.join(sorted(canonical(v) for v in value))}]"
    if isinstance(value, Mapping):
        items = sorted((canonical(k), canonical(v)) for k, v in value.items())
        return f"map[{','.join(f'{k}:{v}' for k, v in items)}]"
    if isinstance(value, re.Pattern):
        return f"re({value.pattern!r},{value.flags})"
    raise Unfingerprintable(type(value).__qualname__)


_CODE: str | None = None


def code_fingerprint() -> str:
    """A digest of pinshift's source (package and bundled step kinds) and the parser it runs on."""
    global _CODE
    if _CODE is None:
        import tree_sitter_nix

        digest = hashlib.sha256(FORMAT)
        digest.update(sys.version.encode())
        for name, path in source_files():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
        for module in ("tree_sitter", "tree_sitter_nix"):
            digest.update(_version(module).encode() + b"\0")
        digest.update(Path(tree_sitter_nix.__file__).parent.name.encode())
        _CODE = digest.hexdigest()[:32]
    return _CODE


def source_files() -> list[tuple[str, Path]]:
    """Every Python file a plan can depend on, as (name in its package, path): pinshift's package and its bundled
    step kinds, found by their package paths (`pinshift`, `pinshift.migrations`) wherever they are installed.

    In a wheel the step kinds are inside pinshift's directory; an editable install maps them to the repository's
    `migrations/`: each file is listed once either way. Never a top-level `migrations`, which the current
    directory (on sys.path for `python -c`, or through an empty PYTHONPATH entry) could provide."""
    import pinshift
    import pinshift.migrations

    found: dict[Path, str] = {}
    for package in (pinshift, pinshift.migrations):
        for root in map(Path, package.__path__):
            for path in sorted(root.rglob("*.py")):
                found.setdefault(path.resolve(), f"{package.__name__}:{path.relative_to(root).as_posix()}")
    return sorted(((name, path) for path, name in found.items()), key=lambda item: item[0])


def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return "?"


def segment_fingerprint(jobs: Sequence[Any], max_bytes: int | None = None) -> "SegmentPrint | None":
    """The fingerprint of a segment of StepJobs read with a size limit of `max_bytes`, or None when one of
    them cannot be remembered."""
    shape, steps = [code_fingerprint()], []
    try:
        for job in jobs:
            if job.kind.origin != "bundled":
                return None
            shape.append(canonical((job.kind.name, job.index, job.total, job.recipe, tuple(job.globs))))
            steps.append(hashlib.sha256(canonical((
                shape[0], job.kind.name, job.index, job.total, job.recipe, tuple(job.globs), job.params,
                job.survey_params, tuple(job.needles), job.file_ops is not None,
            )).encode()).hexdigest()[:32])
    except Unfingerprintable:
        return None
    return SegmentPrint(hashlib.sha256("\n".join(shape).encode()).hexdigest()[:32], tuple(steps), max_bytes)


@dataclasses.dataclass(frozen=True)
class SegmentPrint:
    """Where a segment's files are stored (`shape`: kinds, globs, step numbers) and each step's full fingerprint.

    A file's key holds the fingerprints of the steps that apply to it only: a README step whose
    parameters name the target branch does not make the recipes' plans of another `--branch` misses.
    """

    shape: str
    steps: tuple[str, ...]
    max_bytes: int | None = None  # the size limit files were read with: a blob above it is skipped, not planned


def file_key(path: str, blob: str, steps: tuple, ops: tuple, max_bytes: int | None = None) -> bytes:
    """One file's key: its path, its bytes (as a blob id), the fingerprints of the steps that apply to it
    (None for the others), the file-level operations that made the path and the size limit it was read with."""
    text = f"{path}\0{blob}\0{steps!r}\0{ops!r}\0{max_bytes!r}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()[:20]




# --- the memo ----------------------------------------------------------------------------------


def encode(results: Any) -> bytes:
    """A file's results as the memo stores them: pickled and compressed (to 45 %: a 40,000-file run holds
    its new entries in memory until it saves, and a warm run holds the file it read)."""
    return zlib.compress(pickle.dumps(results, pickle.HIGHEST_PROTOCOL), 1)


def decode(payload: bytes, steps: int) -> list | None:
    """The results `encode` stored, or None when the payload is damaged or not a plan of `steps` steps."""
    from pinshift.plan import FileChange

    try:
        results = pickle.loads(zlib.decompress(payload))
    except Exception:
        return None
    if not isinstance(results, list) or len(results) != steps \
            or not all(r is None or isinstance(r, FileChange) for r in results):
        return None
    return results


_RECORD = struct.Struct(">20sI")  # key, payload length; then the payload


class Segment:
    """The remembered files of one segment shape: key -> payload (`encode`d results).

    Stored as one append-only file: FORMAT, then records (20-byte key, 4-byte length, payload).
    Loading indexes the records; a payload is read (`pread`, also in forked workers) when it is looked
    up, so a 40,000-file memo is never held in memory whole; a run appends only what it planned. A record cut
    short (a killed save) ends the index there, and the next save rewrites the file whole.
    """

    def __init__(self, path: Path):
        self.path = path
        self.descriptor: int | None = None  # the file as it was read; payloads are read from it when looked up
        self.size = 0
        self.index: dict[bytes, tuple[int, int]] = {}
        self.intact = True  # the whole file was read as records (else a save rewrites it)
        self.used: set[bytes] = set()
        self.new: dict[bytes, bytes] = {}
        self._load()

    def _load(self) -> None:
        """Index the file's records (key -> offset, length) without holding their payloads in memory."""
        try:
            self.descriptor = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            self.size = os.fstat(self.descriptor).st_size
        except OSError:  # absent or unreadable: start afresh
            self.intact = not self.path.exists()
            return
        if os.pread(self.descriptor, len(FORMAT), 0) != FORMAT:
            self.intact = False
            return
        offset, block, base = len(FORMAT), b"", len(FORMAT)  # `block` holds the file from `base` on
        while True:
            if offset + _RECORD.size > base + len(block):
                more = os.pread(self.descriptor, 1 << 20, base + len(block))
                if not more:
                    break
                block, base = block[offset - base :] + more, offset
                continue
            key, length = _RECORD.unpack_from(block, offset - base)
            start = offset + _RECORD.size
            if start + length > self.size:
                break
            self.index[key] = (start, length)
            offset = start + length
            if offset - base > len(block):  # the payload ran past the block: skip it without reading it
                block, base = b"", offset
        self.intact = offset == self.size

    def _payload(self, start: int, length: int) -> bytes:
        return os.pread(self.descriptor, length, start)

    def lookup(self, key: bytes) -> bytes | None:
        payload = self.new.get(key)
        if payload is None:
            where = self.index.get(key)
            if where is None or self.descriptor is None:
                return None
            try:
                payload = self._payload(*where)
            except OSError:
                return None
        self.used.add(key)
        return payload

    def close(self) -> None:
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None

    def record(self, key: bytes, payload: bytes) -> None:
        self.new[key] = payload
        self.used.add(key)

    def forget(self, key: bytes) -> None:
        """A payload that would not decode: never stored again, and replaced by the next plan of it."""
        self.index.pop(key, None)
        self.new.pop(key, None)
        self.intact = False  # rewrite without it

    def save(self) -> None:
        """Append what this run planned; rewrite the file whole when it is damaged or above MAX_BYTES.

        Records are written in chunks of whole records, each with one `write`: appends of two runs at
        once interleave only between records, and no copy of all the records is ever made."""
        if not self.new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.intact and self.size + sum(len(p) + _RECORD.size for p in self.new.values()) <= MAX_BYTES:
            try:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                chunks = [FORMAT]
            except FileExistsError:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND)
                chunks = []
            try:
                _write_records(descriptor, chunks, self.new.items())
            finally:
                os.close(descriptor)
            return
        kept = ((key, self._payload(start, length)) for key, (start, length) in self.index.items()
                if key in self.used and key not in self.new)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.stem}.", suffix=".tmp")
        try:
            try:
                _write_records(handle, [FORMAT], itertools.chain(kept, self.new.items()))
            finally:
                os.close(handle)
            os.replace(temporary, self.path)
        except BaseException:  # also Ctrl-C: never leave a half-written file behind
            Path(temporary).unlink(missing_ok=True)
            raise


def _write_records(descriptor: int, chunk: list[bytes], records) -> None:
    """Write `records` ((key, payload) pairs) after `chunk`, about a megabyte of whole records per `write`."""
    size = sum(len(c) for c in chunk)
    for key, payload in records:
        chunk += (_RECORD.pack(key, len(payload)), payload)
        size += _RECORD.size + len(payload)
        if size >= 1 << 20:
            _write_all(descriptor, b"".join(chunk))
            chunk, size = [], 0
    if chunk:
        _write_all(descriptor, b"".join(chunk))


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


class PlanMemo:
    """The memo of one run: segments loaded from the cache directory on first use, saved by `save`."""

    def __init__(self, root: Path | None = None):
        self.root = (root or cache_root()) / code_fingerprint()
        self.segments: dict[str, Segment] = {}
        self.hits = 0
        self.misses = 0

    @classmethod
    def open(cls) -> "PlanMemo | None":
        return cls() if enabled() else None

    def summary(self) -> str:
        """One line for `--verbose`: how many files were looked up rather than planned."""
        looked = self.hits + self.misses
        return (f"{self.hits:,} of {looked:,} file plans remembered from an earlier run "
                "(PINSHIFT_CACHE=off plans every file afresh)")

    def segment(self, shape: str) -> Segment:
        if shape not in self.segments:
            self.segments[shape] = Segment(self.root / f"{shape}.memo")
        return self.segments[shape]

    def save(self) -> None:
        """Store every segment's new plans; a cache that cannot be written only costs the next run its time."""
        saved = False
        for segment in self.segments.values():
            try:
                if segment.new:
                    segment.save()
                    saved = True
            except OSError:
                pass
            finally:
                segment.close()
        self.segments.clear()  # a later run in this process (a fan-out's next base) reads them again, with these
        if saved:
            self._tidy()

    def _tidy(self) -> None:
        """Keep the newest MAX_FILES segment files; remove other code fingerprints' directories and old temp files."""
        try:
            files = sorted(self.root.glob("*.memo"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in files[MAX_FILES:]:
                old.unlink(missing_ok=True)
            for temporary in self.root.glob(".*.tmp"):
                if time.time() - temporary.stat().st_mtime > 3600:
                    temporary.unlink(missing_ok=True)
            for other in self.root.parent.iterdir():
                if other != self.root and other.is_dir() and len(other.name) == 32:
                    for path in other.iterdir():
                        path.unlink(missing_ok=True)
                    other.rmdir()
        except OSError:
            pass
