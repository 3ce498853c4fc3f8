"""Facts of recipe files remembered across runs: a (path, blob id) `pinshift status` read before is not
parsed again.

A file's facts (pinshift.facts.facts) are a pure function of its path, its bytes and pinshift's
code, and status already knows each file's git blob id from `git ls-tree` before reading it. So a run
looks every file up under

    sha1(path, blob id)   in   $XDG_CACHE_HOME/pinshift/facts/<install>-<code fingerprint>.store

and parses only what it has not seen; the facts it parsed are appended when it is done. The name is the
plan memo's (pinshift.planning.memo.store_name: which install this is, its version and directory, and
the code fingerprint: pinshift's version, every source file of pinshift and its step kinds, Python and
tree-sitter versions), so a changed pinshift never reads old facts. When a run saves, this install's
stores of other fingerprints are removed, and any other store no run used for a month; another install's
current store is kept (pinshift.files.record_store). `PINSHIFT_CACHE=off` turns it off, as it does the
plan memo.

The store is one file (pinshift.files.record_store, as for the build summaries): a FORMAT line, then
records `b"PF"`, a 4-byte length, a 20-byte key and the facts as data (pinshift.files.data_codec:
compressed JSON that can only make RecipeFacts, Pin, Fact and Problem objects; never a pickle, whose
loading can run code). A run appends all its records in one write; a store that would grow past its
limit, or whose end is damaged (a run killed while writing), is rewritten whole. Reading stops at the
first damaged record; a record that does not decode to a RecipeFacts is a miss. A store that cannot
be read or written only costs the next run its time: status prints the same whatever the memo holds
(tests/test_status_memo.py).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import hashlib
from collections.abc import Callable

from pinshift.files import record_store
from pinshift.files.record_store import RecordStore

FORMAT = b"pinshift-facts/2\n"  # /1 held pickles: never read
DIRECTORY = "facts"


_CODEC = None


def _codec():
    """The facts' data codec: the classes a RecipeFacts holds, nothing else."""
    global _CODEC
    if _CODEC is None:
        from pinshift.facts.built import Fact
        from pinshift.facts.facts import Pin, RecipeFacts
        from pinshift.files.data_codec import Codec
        from pinshift.syntax.problems import Problem

        _CODEC = Codec((RecipeFacts, Pin, Fact, Problem))
    return _CODEC


def _key(path: str, blob: str) -> bytes:
    return hashlib.sha1(path.encode("utf-8", "surrogateescape") + b"\0" + blob.encode("ascii")).digest()


class FactsMemo:
    """The facts store of this pinshift (None `name`: remembering is off).

    The store lives in `$XDG_CACHE_HOME/pinshift/facts/`, opened through pinshift.files.cache_dir: no link is followed
    below `$XDG_CACHE_HOME`, a directory that is a link, another user's or writable by its group or every user turns
    the memo off (`note` says so once), and only regular files with the store's own names are read, replaced or
    removed."""

    def __init__(self, name: str | None):
        self.name = name
        self.store = RecordStore(DIRECTORY, name, FORMAT, b"PF")
        self.new: dict[bytes, bytes] = {}
        self.hits = 0

    @property
    def index(self) -> dict:
        """The keys the store holds records of."""
        return self.store.index

    @classmethod
    def open(cls, note: Callable[[str], None] | None = None) -> "FactsMemo":
        from pinshift.planning import memo as plan_memo

        if not plan_memo.enabled():
            return cls(None)
        try:
            name = plan_memo.store_name()
        except (OSError, ImportError):
            return cls(None)
        if not record_store.usable(DIRECTORY, "the facts cache", note):
            return cls(None)
        return cls(f"{name}.store")

    def lookup(self, path: str, blob: str):
        """The remembered facts of (path, blob), None when there are none (or they cannot be read)."""
        if self.name is None:
            return None
        found = list(self.store.payloads(_key(path, blob)))
        if not found:
            return None
        where, payload = found[-1]  # the latest record of the key
        from pinshift.facts.facts import RecipeFacts
        from pinshift.files.data_codec import Undecodable

        try:
            facts = _codec().decode(payload)
        except Undecodable:  # a damaged record, or one this codec did not write: a miss
            return None
        if type(facts) is not RecipeFacts:
            return None
        self.store.use(where)
        self.hits += 1
        return facts

    def remember(self, path: str, blob: str, facts) -> None:
        from pinshift.files.data_codec import Unencodable

        if self.name is not None:
            try:
                self.new[_key(path, blob)] = _codec().encode(facts)
            except Unencodable:  # a value the codec does not keep: parsed again next time
                pass

    def save(self) -> None:
        """Append what this run parsed (or rewrite the store); never raises: the store is only a cache."""
        if self.name is not None and self.new:
            self.store.save(self.new.items())
