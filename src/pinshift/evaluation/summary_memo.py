"""Build summaries remembered across runs: a recipe evaluated before is not evaluated again.

What a recipe builds on the stand-in is a pure function of its path, its bytes, the bytes of every file it
read (imports, readFile, pathExists), the stand-in and pinshift's code. So an evaluation is remembered under

    sha1(path, blob id)   in   $XDG_CACHE_HOME/pinshift/summaries/<install>-<fingerprint>.store

together with the files it read and what each was (blob id, "dir", or absent); it is used only where every
one of them is the same (an importer is evaluated again when the file it imports changed). Evaluations that
read something a blob id cannot stand for (a directory listing, a file outside the tree) are not remembered,
and neither is one whose error is about the machine or the run rather than the tree (`of_the_tree`: access
forbidden by restricted or pure evaluation, out of time or memory, the network): the store holds only what
the tree's own bytes decide. The fingerprint covers pinshift's version and code (the plan memo's
`code_fingerprint`), every file of the stand-in and the version of nix-instantiate; the store's name adds the
install (`<install>-<fingerprint>.store`, pinshift.planning.memo.install_id), so two installs sharing a cache
keep their own. In one run the same rule reuses evaluations between trees (BASE and TARGET, the trees after
each planned step) even when `PINSHIFT_CACHE=off` keeps the store unused.

Why a summary may be shared between repositories: nothing in the key names the repository, and nothing
needs to. An evaluation runs with no environment, no clock, no network and no file outside the snapshots
and the stand-in (pinshift.evaluation.evaluation: restricted and pure evaluation), so what it gives is decided
by the bytes of the file, the bytes of what it read (each in the key, or checked against the tree before
use) and the stand-in, Nix and pinshift (the fingerprint): the same in any repository. An evaluation that
reached for anything else either failed (an error `of_the_tree` refuses) or read outside the tree (not
`cacheable`), and is not stored.

The store follows the plan memo's rules (pinshift.files.cache_dir): no link followed below
`$XDG_CACHE_HOME`, a directory that is a link, another user's or writable by its group or everyone turns it
off (one note), only regular files with the store's own names are read, replaced or removed, a fifo is never opened
for blocking. A record is `b"PS"`, a 4-byte length, a 20-byte key and a zlib-compressed JSON payload; a
damaged record ends the reading there and a damaged payload is a miss. A store that cannot be read or written
only costs the next run its time.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import hashlib
import json
import subprocess
import zlib
from collections.abc import Callable

from pinshift.evaluation.evaluation import STANDIN, Evaluation, SharedValues
from pinshift.files import record_store
from pinshift.files.record_store import RecordStore

FORMAT = b"pinshift-summaries/2\n"  # /1 could hold evaluations that were not pure (issue 39)
DIRECTORY = "summaries"


# Words of an error that is about this machine or this run, not about the tree: access refused by restricted or pure
# evaluation (what was asked for is outside the tree), a time or memory limit, the network, the operating system.
# Such an evaluation is used again in the run that made it (the same trees, the same limits), never stored.
NOT_OF_THE_TREE = ("forbidden", "restricted mode", "pure eval", "not allowed", "did not finish", "out of memory",
                   "cannot allocate", "stack overflow", "killed", "signal", "no space left", "too many open files",
                   "resource temporarily unavailable", "interrupted", "download", "fetch", "connect", "resolve host",
                   "network")


def of_the_tree(evaluation: Evaluation) -> bool:
    """Whether `evaluation` is a function of the tree's files alone (what it read, `cacheable`; an error that says
    nothing of the machine, NOT_OF_THE_TREE): only such an evaluation is stored."""
    if not evaluation.cacheable:
        return False
    error = (evaluation.error or "").lower()
    return not any(word in error for word in NOT_OF_THE_TREE)


def _key(path: str, blob: str) -> bytes:
    return hashlib.sha1(path.encode("utf-8", "surrogateescape") + b"\0" + blob.encode("ascii")).digest()


def fingerprint(nix: str) -> str:
    """pinshift's code, the stand-in and the Nix that evaluates: a summary made by any other is never read."""
    from pinshift.planning import memo as plan_memo

    digest = hashlib.sha256(FORMAT + plan_memo.code_fingerprint().encode())
    for path in sorted(p for p in STANDIN.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(STANDIN).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    try:
        version = subprocess.run([nix, "--version"], capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        version = b"?"
    digest.update(version)
    return digest.hexdigest()[:32]


def store_name(nix: str) -> str:
    """The store's name: this install (pinshift.planning.memo.install_id) and `fingerprint`."""
    from pinshift.planning import memo as plan_memo

    return f"{plan_memo.install_id()}-{fingerprint(nix)}.store"


def usable_name(nix: str, note: Callable[[str], None] | None = None) -> str | None:
    """The store's name (`store_name`), or None when PINSHIFT_CACHE is off or the cache must not be used (`note`
    receives why, once)."""
    from pinshift.planning import memo as plan_memo

    if not plan_memo.enabled():
        return None
    try:
        name = store_name(nix)
    except (OSError, ImportError):
        return None
    if not record_store.usable(DIRECTORY, "the summary cache", note):
        return None
    return name


class SummaryMemo:
    """Evaluations remembered in this run and, unless `name` is None, in the store (pinshift.files.record_store)."""

    def __init__(self, name: str | None):
        self.name = name
        self.store = RecordStore(DIRECTORY, name, FORMAT, b"PS")
        # this run's new records ((key, number) -> payload), past 8 MB in an unlinked temporary file until saved
        from pinshift.planning.memo import NewPayloads

        self.new = NewPayloads()
        self.hits = 0
        self.seen: dict[bytes, list[tuple[tuple, Evaluation]]] = {}  # this run's, decoded
        self.shared = SharedValues()  # the remembered summaries' equal parts held once

    @classmethod
    def open(cls, nix: str, note: Callable[[str], None] | None = None) -> "SummaryMemo":
        return cls(usable_name(nix, note))

    def lookup(self, path: str, blob: str, fingerprint_of: Callable[[str], str | None]) -> Evaluation | None:
        """The evaluation of (path, blob) whose reads are all as `fingerprint_of` says they are now, or None."""
        key = _key(path, blob)
        for reads, evaluation in self.seen.get(key, []):
            if all(fingerprint_of(read) == was for read, was in reads):
                return evaluation
        for where, stored in self.store.payloads(key):
            try:
                payload = json.loads(zlib.decompress(stored))
                reads = tuple((str(read), was) for read, was in payload["reads"])
                cannot = payload.get("cannot_tell")
                evaluation = Evaluation(self.shared(payload["summary"]), payload["error"], tuple(r for r, _ in reads),
                                        True, cannot if isinstance(cannot, str) else None)
            except Exception:  # a damaged record is a miss  # noqa: BLE001
                continue
            if (evaluation.summary is None) == (evaluation.error is None) or not of_the_tree(evaluation):
                continue
            if all(fingerprint_of(read) == was for read, was in reads):
                self.store.use(where)
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
        if self.name is not None and of_the_tree(evaluation):
            payload = json.dumps({"reads": [list(r) for r in reads], "summary": evaluation.summary,
                                  "error": evaluation.error, "cannot_tell": evaluation.cannot_tell},
                                 ensure_ascii=False).encode()
            self.new[key + len(self.new).to_bytes(4, "big")] = zlib.compress(payload, 1)

    def save(self) -> None:
        """Append what this run evaluated (or rewrite the store); never raises: the store is only a cache."""
        if self.name is None or not self.new:
            return
        size = self.new.bytes + len(self.new) * record_store.HEADER_BYTES
        if self.store.save(((key[:20], payload) for key, payload in self.new.items()), size):
            self.new.close()


# --- whole results of migrate's check ---------------------------------------------------------------------------------
#
# A second identical `migrate --dry-run` asks the same question of the same trees: the check's whole result (each
# recipe's start-to-last comparison, the groups' keys, the recipes each step broke, the warnings and refusals the
# check added to the steps) is remembered under `pinshift.evaluation.build_check.check_key`, a digest of every byte it
# depends on: the start tree's entries (path, mode, blob id) and size limit, each step's kind, index, intent and
# file changes (new blob ids, renames, removals), --allow-broken. The store's name carries the summaries' fingerprint
# (pinshift's code, the stand-in, nix-instantiate's version), so a changed pinshift, stand-in or Nix never reads an
# old result. A result is stored only when every evaluation it used is `of_the_tree`; nothing a recipe says is in
# the key but through its blob id. Kept in `$XDG_CACHE_HOME/pinshift/checks/<install>-<fingerprint>.store`, one
# record a result (magic `PC`, the payload pinshift.files.data_codec's data: JSON that can only make the classes
# below, never code), by the rules of the summary store above.

CHECK_FORMAT = b"pinshift-checks/1\n"
CHECK_DIRECTORY = "checks"
CHECK_MAX_BYTES = 16 * 1024 * 1024  # read whole by each run: kept small (a 40,000-recipe result is a few MB)
_CHECK_CODEC = None


def _check_codec():
    global _CHECK_CODEC
    if _CHECK_CODEC is None:
        from pinshift.evaluation.build_changes import Change, RecipeDiff
        from pinshift.files.data_codec import Codec
        from pinshift.planning.plan import DERIVED, AppliedEdit, FileChange, Outcome, Warning

        _CHECK_CODEC = Codec((RecipeDiff, Change, FileChange, Outcome, Warning, AppliedEdit), {"DERIVED": DERIVED})
    return _CHECK_CODEC


class CheckMemo:
    """Whole results of migrate's build check, by `check_key` (above); `open` gives None when there is no store."""

    def __init__(self, name: str):
        self.store = RecordStore(CHECK_DIRECTORY, name, CHECK_FORMAT, b"PC", CHECK_MAX_BYTES)

    @classmethod
    def open(cls, name: str | None, note: Callable[[str], None] | None = None) -> "CheckMemo | None":
        """The store of the summaries' `name` (`usable_name`), or None (no cache, or an unsafe directory: `note`)."""
        if name is None or not record_store.usable(CHECK_DIRECTORY, "the check cache", note):
            return None
        return cls(name)

    def lookup(self, key: bytes):
        """The value `remember` stored under `key` (the newest that decodes), or None."""
        from pinshift.files.data_codec import Undecodable

        for where, payload in reversed(list(self.store.payloads(key))):
            try:
                value = _check_codec().decode(payload)
            except Undecodable:
                continue
            self.store.use(where)
            return value
        return None

    def remember(self, key: bytes, value) -> None:
        """Store `value` under `key` now; a value the codec does not keep, or a store that cannot be written, is not
        remembered (it only costs the next run its time)."""
        from pinshift.files.data_codec import Unencodable

        try:
            payload = _check_codec().encode(value)
        except Unencodable:
            return
        self.store.save([(key, payload)])
