"""One file's plan, remembered across runs by what it depends on (issue 15).

Planning a file is a pure function of its path, its bytes, the segment of steps it
runs through (kinds, prepared parameters, globs, recipe name, step numbers) and
pinshift's own code. So the runner can look a file's results up by

    (path, git blob id of the bytes, fingerprints of the steps that apply to it, the file-level
     operations that made the path)

and skip reading, parsing and planning it: `--dry-run` then the real `migrate`, a
re-run after a failed push, or a fan-out over branches that share most files (as
branches on one pin do) plan each distinct file once. The results are exactly the
ones a fresh plan gives (the results of that plan, written as data by pinshift.files.data_codec:
compressed JSON that can only make the plan's own classes, never a pickle, whose loading runs
whatever it names); the tests compare whole reports with and without the memo.

What is *not* remembered: segments with a step kind that is not bundled with pinshift
(a repository's or `--migrations` code may read anything), parameters that cannot be
written down canonically, files that were skipped, results holding a value the codec does not
keep. The fingerprint covers pinshift's version, the source of every module of pinshift and of
its bundled step kinds (`pinshift.migrations`, found through pinshift's own package wherever it
is installed: a wheel, or an editable install that maps it to the repository's `migrations/`;
never a top-level `migrations` a working directory could shadow) and the versions of Python and
tree-sitter, so a changed pinshift never reads an old entry.

Where: `$XDG_CACHE_HOME/pinshift/plans/<install>-<code fingerprint>/<segment shape>.memo`
(`store_name`: the install is a digest of pinshift's version and the directory it runs from), one
append-only file per segment shape (its kinds, globs and step numbers; see `Segment`); at
most MAX_FILES files, each rewritten with only the entries a run used once above MAX_BYTES.
When a run saves, it removes the files pinshift wrote in this install's directories of other code
fingerprints, and in any other directory of pinshift's names (another install's, or the pickle
formats' `<code fingerprint>` alone) no run used for a month (`cache_dir.stale`; a run marks its
own directory used): two installs sharing one cache keep each other's current stores.
`PINSHIFT_CACHE=off` turns it off. The runner reads (`segment`, `lookup`) and records in memory;
the command that ran it calls `save` when planning is over. Forked workers append the plans they
make themselves (`PlanMemo.appending`: the file, made if missing, is opened for appending before
the pool forks; each record is one `write`), so the parent receives their results, never a payload
to decode; a file that is damaged or full has them send the plans to the parent instead. A damaged or unreadable
entry is a miss, and so is anything but a regular file (a directory, a fifo, a link: opened
without following or blocking, never written, never removed); a cache that cannot be written
only costs the next run its time.

Nothing outside `$XDG_CACHE_HOME/pinshift` is ever read, written or removed: the directories are
opened as `pinshift.files.cache_dir` says (no link followed below `$XDG_CACHE_HOME`; a `pinshift`,
`plans` or store directory that is a link, another user's, or writable by its group or every user
turns the memo off for the run, with a note), and the tidy-up removes only regular files with the
names pinshift gives its own (`<32 hex>.memo`, `.<32 hex>.<random>.tmp`, and the first format's
`<32 hex>.pickle`, never read), each by name in a directory it opened without following a link.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import dataclasses
import datetime
import enum
import hashlib
import itertools
import os
import re
import secrets
import stat
import struct
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pinshift.files import cache_dir

FORMAT = b"pinshift-plan-memo/5\n"  # /5: data (pinshift.files.data_codec); /1-/4 held pickles, never read
MAX_BYTES = 96 * 1024 * 1024  # per segment file: beyond it, it is rewritten with the entries this run used
MAX_FILES = 48  # segment files per code fingerprint, newest kept

# the names pinshift gives what it writes under plans/; nothing else there is ever removed
STORE_NAME = re.compile(r"([0-9a-f]{16})-[0-9a-f]{32}")  # <install>-<code fingerprint>
OLD_STORE_NAME = re.compile(r"[0-9a-f]{32}")  # the code fingerprint alone: formats /1 to /4 (pickles)
MEMO_NAME = re.compile(r"[0-9a-f]{32}\.memo")
TEMP_NAME = re.compile(r"\.[0-9a-f]{32}\.[a-z0-9_]{8,16}\.tmp")
OLD_NAME = re.compile(r"[0-9a-f]{32}\.pickle")  # the memo's first format


class Unfingerprintable(Exception):
    """A value with no canonical spelling: its segment is planned afresh every time."""


def enabled() -> bool:
    return os.environ.get("PINSHIFT_CACHE", "").strip().lower() not in ("off", "0", "no", "false")


def cache_root() -> Path:
    return cache_dir.cache_home() / "plans"


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
_INSTALL: str | None = None


def code_fingerprint() -> str:
    """A digest of pinshift's version and source (package and bundled step kinds) and the parser it runs on."""
    global _CODE
    if _CODE is None:
        import tree_sitter_nix

        import pinshift

        digest = hashlib.sha256(FORMAT)
        digest.update(pinshift.__version__.encode() + b"\0")
        digest.update(sys.version.encode())
        for name, path in source_files():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
        for module in ("tree_sitter", "tree_sitter_nix"):
            digest.update(_version(module).encode() + b"\0")
        digest.update(Path(tree_sitter_nix.__file__).parent.name.encode())
        _CODE = digest.hexdigest()[:32]
    return _CODE


def install_id() -> str:
    """Which installed pinshift this is: its version and the directory it runs from (two virtual environments, or
    a wheel and an editable checkout, are two installs sharing one `$XDG_CACHE_HOME`)."""
    global _INSTALL
    if _INSTALL is None:
        import pinshift

        where = os.path.realpath(os.path.dirname(pinshift.__file__))
        text = f"{pinshift.__version__}\0{where}".encode("utf-8", "surrogateescape")
        _INSTALL = hashlib.sha256(text).hexdigest()[:16]
    return _INSTALL


def store_name() -> str:
    """The name this install and code give their stores: `<install>-<code fingerprint>` (see `PlanMemo._tidy`)."""
    return f"{install_id()}-{code_fingerprint()}"


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


def _codec():
    """The plan memo's data codec (pinshift.files.data_codec): the values a file's results hold, nothing else."""
    global _CODEC
    if _CODEC is None:
        from pinshift.files.data_codec import Codec
        from pinshift.graph.references import Arguments, Reference
        from pinshift.graph.signature import Signature
        from pinshift.graph.tree import FileGraph
        from pinshift.planning.plan import DERIVED, AppliedEdit, FileChange, Outcome, Warning

        _CODEC = Codec((FileChange, Outcome, AppliedEdit, Warning, FileGraph, Signature, Reference, Arguments),
                       {"DERIVED": DERIVED})
    return _CODEC


_CODEC = None


def encode(results: Any) -> bytes | None:
    """A file's results as the memo stores them: data-only JSON (pinshift.files.data_codec), compressed (a
    40,000-file run holds its new entries in memory until it saves, and a warm run holds the file it read);
    None when they hold a value the codec does not keep (the file is then not remembered)."""
    from pinshift.files.data_codec import Unencodable

    try:
        return _codec().encode(results)
    except Unencodable:
        return None


def decode(payload: bytes, steps: int) -> list | None:
    """The results `encode` stored, or None when the payload is damaged or not a plan of `steps` steps."""
    from pinshift.files.data_codec import Undecodable
    from pinshift.planning.plan import FileChange

    try:
        results = _codec().decode(payload)
    except Undecodable:
        return None
    if not isinstance(results, list) or len(results) != steps \
            or not all(r is None or isinstance(r, FileChange) for r in results):
        return None
    return results


_RECORD = struct.Struct(">20sI")  # key, payload length; then the payload
SPILL_BYTES = 8 << 20  # a run's new payloads held in memory; beyond, they wait in an unlinked temporary file


class NewPayloads:
    """This run's new plans (key -> payload) until the memo saves them: in memory up to SPILL_BYTES, then in an
    unlinked temporary file of this process (a 40,000-file cold run would otherwise hold some 75 MB of them
    until its end). A dict's few operations: set, get, pop, in, len, items (in the order set)."""

    def __init__(self):
        self._memory: dict[bytes, bytes] = {}
        self._spilled: dict[bytes, tuple[int, int]] = {}  # key -> (offset, length) in the file
        self._file: int | None = None
        self._end = 0
        self._held = 0  # bytes in `_memory`
        self.bytes = 0  # bytes of every payload held, in memory or spilled

    def __setitem__(self, key: bytes, payload: bytes) -> None:
        self.pop(key, None)
        self._memory[key] = payload
        self._held += len(payload)
        self.bytes += len(payload)
        if self._held > SPILL_BYTES:
            self._spill()

    def _spill(self) -> None:
        try:
            if self._file is None:
                import tempfile

                descriptor, name = tempfile.mkstemp(prefix="pinshift-plans-")
                os.unlink(name)  # unlinked at once: gone with the process, however it ends
                self._file = descriptor
            data = b"".join(self._memory.values())
            _write_all_at(self._file, data, self._end)
        except OSError:
            return  # no room on disk: they stay in memory
        for key, payload in self._memory.items():
            self._spilled[key] = (self._end, len(payload))
            self._end += len(payload)
        self._memory.clear()
        self._held = 0

    def get(self, key: bytes, default: bytes | None = None) -> bytes | None:
        found = self._memory.get(key)
        if found is not None:
            return found
        where = self._spilled.get(key)
        return default if where is None else os.pread(self._file, where[1], where[0])

    def pop(self, key: bytes, default: bytes | None = None) -> bytes | None:
        found = self._memory.pop(key, None)
        if found is not None:
            self._held -= len(found)
            self.bytes -= len(found)
            return found
        where = self._spilled.pop(key, None)
        if where is None:
            return default
        self.bytes -= where[1]
        return os.pread(self._file, where[1], where[0])

    def update(self, pairs) -> None:
        for key, payload in dict(pairs).items():
            self[key] = payload

    def __contains__(self, key: object) -> bool:
        return key in self._memory or key in self._spilled

    def __len__(self) -> int:
        return len(self._memory) + len(self._spilled)

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        for key, (offset, length) in self._spilled.items():
            yield key, os.pread(self._file, length, offset)
        yield from self._memory.items()

    def close(self) -> None:
        if self._file is not None:
            os.close(self._file)
            self._file = None
        self._spilled.clear()
        self._memory.clear()
        self._held = self.bytes = 0


def _write_all_at(descriptor: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(descriptor, view, offset)
        view, offset = view[written:], offset + written


class Segment:
    """The remembered files of one segment shape: key -> payload (`encode`d results).

    Stored as one append-only file: FORMAT, then records (20-byte key, 4-byte length, payload).
    Loading indexes the records; a payload is read (`pread`, also in forked workers) when it is looked
    up, so a 40,000-file memo is never held in memory whole; a run appends only what it planned. A record cut
    short (a killed save) ends the index there, and the next save rewrites the file whole.

    `directory`: the descriptor of the directory holding it (PlanMemo's, opened without following a link),
    `path`'s name is then opened relative to it; None: `path` itself. Anything at `path` but a regular file (a
    directory, a fifo, a link) is a miss for every key and is never written over (`foreign`).
    """

    def __init__(self, path: Path, directory: int | None = None, stored: bool = True):
        self.path = path
        self.descriptor: int | None = None  # the file as it was read; payloads are read from it when looked up
        self.size = 0
        self.index: dict[bytes, tuple[int, int]] = {}
        self.intact = True  # the whole file was read as records (else a save rewrites it)
        self.foreign = False  # something that is not a regular file is in its place: never read or written
        self.stored = stored  # False: no cache directory to use (every key a miss, nothing saved)
        self.used: set[bytes] = set()
        self.new = NewPayloads()
        self.appender: int | None = None  # open for appending while forked workers plan (`start_appending`)
        self.appended = 0  # records the workers appended themselves this run
        if stored:
            self._load(directory)

    def _name(self, directory: int | None, name: str | None = None) -> str:
        """`name` (default: the file's own) as open() takes it: relative to `directory`, else beside `path`."""
        name = name or self.path.name
        return name if directory is not None else os.fspath(self.path.with_name(name))

    def _load(self, directory: int | None) -> None:
        """Index the file's records (key -> offset, length) without holding their payloads in memory."""
        try:
            descriptor = cache_dir.open_regular(self._name(directory), os.O_RDONLY, directory)
        except FileNotFoundError:  # absent: start afresh
            return
        except OSError:  # unreadable: rewritten whole by the next save
            self.intact = False
            return
        if descriptor is None:
            self.foreign = True
            return
        self.descriptor = descriptor
        self.size = os.fstat(descriptor).st_size
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
        self.stop_appending()
        self.new.close()

    # --- forked workers append what they plan themselves: the parent never decodes a payload it did not need ---

    def start_appending(self, directory: int) -> None:
        """Open the file for appending, made (FORMAT) when missing, before a pool forks its workers, which inherit the
        descriptor and append each new plan as one record (`append`): one `write` each, so records of several
        processes (or runs) interleave only between records. Only a whole file with room left (MAX_BYTES) is
        appended to; otherwise the workers send their plans to the parent, which saves them as before."""
        if not self.stored or self.foreign or not self.intact or self.appender is not None \
                or self.size + self.new.bytes >= MAX_BYTES:
            return
        name = self._name(directory)
        try:
            made = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=directory)
        except FileExistsError:
            pass  # O_EXCL: a link in its place is not followed, and open_regular refuses it below
        except OSError:
            return
        else:
            try:
                _write_all(made, FORMAT)
            except OSError:
                return
            finally:
                os.close(made)
        try:
            self.appender = cache_dir.open_regular(name, os.O_WRONLY | os.O_APPEND, directory)
        except OSError:
            self.appender = None

    def append(self, key: bytes, payload: bytes) -> bool:
        """In a forked worker: append one record (`start_appending`); False when there is no file to append to, or
        the write failed (the plan then goes to the parent; a record cut short ends the index, and is rewritten)."""
        if self.appender is None:
            return False
        try:
            _write_all(self.appender, _RECORD.pack(key, len(payload)) + payload)
        except OSError:
            return False
        return True

    def stop_appending(self) -> None:
        if self.appender is not None:
            os.close(self.appender)
            self.appender = None

    def written(self, key: bytes) -> None:
        """A plan a worker appended itself (`append`): used by this run, already stored."""
        self.used.add(key)
        self.appended += 1

    def record(self, key: bytes, payload: bytes) -> None:
        self.new[key] = payload
        self.used.add(key)

    def forget(self, key: bytes) -> None:
        """A payload that would not decode: never stored again, and replaced by the next plan of it."""
        self.index.pop(key, None)
        self.new.pop(key, None)
        self.intact = False  # rewrite without it

    def save(self, directory: int | None = None) -> None:
        """Append what this run planned; rewrite the file whole when it is damaged or above MAX_BYTES.

        Records are written in chunks of whole records, each with one `write`: appends of two runs at
        once interleave only between records, and no copy of all the records is ever made. `directory`: as
        in the constructor."""
        if not self.new or not self.stored or self.foreign:
            return
        name = self._name(directory)
        if self.intact and self.size + self.new.bytes + _RECORD.size * len(self.new) <= MAX_BYTES:
            try:
                descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                                     dir_fd=directory)  # O_EXCL: a link in its place is not followed
                chunks = [FORMAT]
            except FileExistsError:
                descriptor = cache_dir.open_regular(name, os.O_WRONLY | os.O_APPEND, directory)
                if descriptor is None:
                    return  # no longer a regular file: not pinshift's to write
                chunks = []
            try:
                _write_records(descriptor, chunks, self.new.items())
            finally:
                os.close(descriptor)
            return
        kept = ((key, self._payload(start, length)) for key, (start, length) in self.index.items()
                if key in self.used and key not in self.new)
        temporary = self._name(directory, f".{self.path.stem}.{secrets.token_hex(8)}.tmp")
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=directory)
        try:
            try:
                _write_records(handle, [FORMAT], itertools.chain(kept, self.new.items()))
            finally:
                os.close(handle)
            if cache_dir.regular_or_absent(name, directory):
                os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
            else:
                os.unlink(temporary, dir_fd=directory)  # something else took its place: left alone
        except BaseException:  # also Ctrl-C: never leave a half-written file behind
            try:
                os.unlink(temporary, dir_fd=directory)
            except FileNotFoundError:
                pass
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
    """The memo of one run: segments loaded from the cache directory on first use, saved by `save`.

    The directories are checked when the memo is made (`cache_dir.CacheUnsafe`: a link, another user's, writable
    by everyone) and opened again, without following a link, each time segments are loaded or saved."""

    def __init__(self):
        self.fingerprint = code_fingerprint()
        self.name = store_name()
        self.root = cache_root() / self.name
        self.segments: dict[str, Segment] = {}
        self.hits = 0
        self.misses = 0
        with self._directories():  # CacheUnsafe now, before any run: the command says why the memo is off
            pass

    @classmethod
    def open(cls, note: Callable[[str], None] | None = None) -> "PlanMemo | None":
        """The memo, or None when PINSHIFT_CACHE is off or the cache must not be used (`note` receives why)."""
        if not enabled():
            return None
        try:
            return cls()
        except cache_dir.CacheUnsafe as unsafe:
            if note is not None:
                note(f"pinshift: note: the plan cache is not used: {unsafe}, and pinshift follows no link and uses "
                     "no shared directory in its cache (fix it, or set PINSHIFT_CACHE=off)")
            return None

    @contextmanager
    def _directories(self) -> Iterator[tuple[int, int] | None]:
        """Descriptors of plans/ and plans/<fingerprint>/ (made if missing), or None when they cannot be opened or
        made (the memo then only costs time); CacheUnsafe as `cache_dir.open_child` raises it."""
        opened: list[int] = []
        try:
            opened.append(cache_dir.open_directory("plans"))
            opened.append(cache_dir.open_child(opened[0], self.name, self.root))
            cache_dir.mark_used(opened[1])
        except OSError:
            pass
        except BaseException:
            for descriptor in opened:
                os.close(descriptor)
            raise
        try:
            yield (opened[0], opened[1]) if len(opened) == 2 else None
        finally:
            for descriptor in opened:
                os.close(descriptor)

    def summary(self) -> str:
        """One line for `--verbose`: how many files were looked up rather than planned."""
        looked = self.hits + self.misses
        return (f"{self.hits:,} of {looked:,} file plans remembered from an earlier run "
                "(PINSHIFT_CACHE=off plans every file afresh)")

    def segment(self, shape: str) -> Segment:
        if shape not in self.segments:
            path = self.root / f"{shape}.memo"
            try:
                with self._directories() as opened:
                    segment = Segment(path, opened[1]) if opened else Segment(path, stored=False)
            except cache_dir.CacheUnsafe:  # made unsafe since the memo was opened: not used
                segment = Segment(path, stored=False)
            self.segments[shape] = segment
        return self.segments[shape]

    @contextmanager
    def appending(self, segment: Segment) -> Iterator[None]:
        """While planning with forked workers: they append their new plans to `segment`'s file themselves
        (`Segment.start_appending`); a cache that cannot be opened only sends them to this process instead."""
        try:
            with self._directories() as opened:
                if opened is not None:
                    segment.start_appending(opened[1])
        except (OSError, cache_dir.CacheUnsafe):
            pass
        try:
            yield
        finally:
            segment.stop_appending()

    def save(self) -> None:
        """Store every segment's new plans; a cache that cannot be written only costs the next run its time."""
        try:
            if any(segment.new or segment.appended for segment in self.segments.values()):
                with self._directories() as opened:
                    if opened is not None:
                        self._save(*opened)
        except (OSError, cache_dir.CacheUnsafe):
            pass
        finally:
            for segment in self.segments.values():
                segment.close()
            self.segments.clear()  # a later run in this process (a fan-out's next base) reads them again, with these

    def _save(self, plans: int, directory: int) -> None:
        saved = any(segment.appended for segment in self.segments.values())
        for segment in self.segments.values():
            try:
                if segment.new and segment.stored and not segment.foreign:
                    segment.save(directory)
                    saved = True
            except OSError:
                pass
        if saved:
            self._tidy(plans, directory)

    def _tidy(self, plans: int, directory: int) -> None:
        """Keep the newest MAX_FILES segment files; remove old temporary files; remove the stores pinshift wrote in
        other directories of plans/ that are provably of no use (then those directories, when nothing else is in
        them): this install's with another code fingerprint (it was upgraded or edited: that code cannot run
        again without changing the fingerprint back), and any other install's or an earlier format's that no run
        used for STALE_SECONDS (`cache_dir.stale`; a run marks its directory used, `cache_dir.mark_used`). So two
        installs of pinshift sharing a cache keep each other's current stores.

        Only regular files with pinshift's own names are removed, each by name in a directory opened without
        following a link: a link (to a file or a directory elsewhere) is left as it is, and so is its target."""
        try:
            files = cache_dir.regular_files(directory)
            memos = sorted((name for name in files if MEMO_NAME.fullmatch(name)),
                           key=lambda name: files[name].st_mtime, reverse=True)
            for name in memos[MAX_FILES:]:
                _remove(name, directory)
            for name, info in files.items():
                if TEMP_NAME.fullmatch(name) and cache_dir.stale(info, cache_dir.TEMPORARY_SECONDS):
                    _remove(name, directory)
            mine = install_id()
            for name in os.listdir(plans):
                if name == self.name:
                    continue
                ours = STORE_NAME.fullmatch(name)
                if ours is not None and ours.group(1) == mine:
                    _remove_fingerprint(name, plans)
                elif (ours is not None or OLD_STORE_NAME.fullmatch(name)) and _stale_directory(name, plans):
                    _remove_fingerprint(name, plans)
        except OSError:
            pass


def _stale_directory(name: str, plans: int) -> bool:
    try:
        info = os.stat(name, dir_fd=plans, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and cache_dir.stale(info)


def _remove(name: str, directory: int) -> None:
    try:
        os.unlink(name, dir_fd=directory)
    except FileNotFoundError:
        pass


def _remove_fingerprint(name: str, plans: int) -> None:
    """Another code fingerprint's directory: the files pinshift wrote in it, then the directory if it is empty."""
    try:
        other = cache_dir.open_child(plans, name, Path(name), create=False)
    except (OSError, cache_dir.CacheUnsafe):
        return  # a link, a file, another user's: not a directory pinshift made
    try:
        for entry in cache_dir.regular_files(other):
            if MEMO_NAME.fullmatch(entry) or TEMP_NAME.fullmatch(entry) or OLD_NAME.fullmatch(entry):
                _remove(entry, other)
    finally:
        os.close(other)
    try:
        os.rmdir(name, dir_fd=plans)  # never a link (ENOTDIR), never a directory with anything else in it
    except OSError:
        pass
