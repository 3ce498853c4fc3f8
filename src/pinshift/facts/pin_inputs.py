"""Answer what steps need from a local nixpkgs clone, before planning, so that steps stay pure.

A step never runs git. A kind whose params name something only a nixpkgs clone knows
(pin-swap's `new = "nixos-unstable"`, `hash = "compute"`) says so with
`nixpkgs_query(params)`; the command calls `fill` here between validating the recipe
and planning: the clone (`--nixpkgs DIR` or `$PINSHIFT_NIXPKGS`) is opened once,
each revision resolved and each archive hashed at most once (and cached per commit,
see pinshift.nixpkgs.clone), and the kind's `with_nixpkgs(params, facts)` returns
params that need nothing more (`new` a full commit id, `hash` a literal value). The
notes say what was resolved and hashed; commands put them in the step's report.

A query may name another recipe repository's branch instead (`PinOf`, pin-swap's
`new = { repo = "../build-vllm", ref = "main" }`): that branch's recipes are read from
its commit (pinshift.facts.alignment, nothing checked out) and their single pin is the
revision; a relative `repo` is relative to the recipe repository (`fill`'s `repository`).
A full revision needs no clone unless a hash is asked; an abbreviated one is named in
full by the clone. The note, and the commit message (`Filled.provenance`), say where the
pin came from: `0182a36…, the pin of build-vllm@main`.

Without a clone, a step that needs one stops the run before any file is read, with
the step's own message (exit 2).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinshift.errors import PinshiftError, UsageError
from pinshift.steps.kind import NixpkgsFacts, PinOf, StepKind

_FULL = 40


@dataclass
class Filled:
    """One step's params after `fill`, and what to tell the reader about them.

    `provenance`: the lines a commit message keeps (where a revision came from), also among `notes`.
    """

    params: Any
    notes: list[str] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)


class _Answers:
    """The clone, opened on first use; revisions and digests remembered for the run."""

    def __init__(self, directory: Path | None, repository: Path | None):
        self.directory = directory
        self.repository = repository
        self.clone = None
        self.revisions: dict = {}
        self.digests: dict = {}
        self.pins: dict = {}
        self.facts_cache = None

    def pin_of(self, pin: PinOf):
        """The pin another repository's branch uses (pinshift.facts.alignment), read once per run."""
        from pinshift.facts.alignment import read_branch_pin
        from pinshift.facts.branch_recipes import FactsCache

        if pin not in self.pins:
            directory = Path(pin.repo).expanduser()
            if not directory.is_absolute():
                directory = (self.repository or Path(".")) / directory
            self.facts_cache = self.facts_cache if self.facts_cache is not None else FactsCache()
            what = f"new = {{ repo = \"{pin.repo}\" }}"
            self.pins[pin] = read_branch_pin(directory, pin.ref, pin.files, pin.pick == "majority", what,
                                             'set pick = "majority" in the new table to take the most common',
                                             self.facts_cache)
        return self.pins[pin]

    def open(self, without_clone: str):
        from pinshift.nixpkgs.clone import NixpkgsClone

        if self.directory is None:
            raise UsageError(without_clone)
        if self.clone is None:
            self.clone = NixpkgsClone(self.directory)
        return self.clone

    def revision(self, name: str):
        if name not in self.revisions:
            self.revisions[name] = self.clone.revision(name)
        return self.revisions[name]

    def digest(self, commit: str):
        if commit not in self.digests:
            self.digests[commit] = self.clone.archive_hash(commit)
        return self.digests[commit]


def fill(steps: Sequence[tuple[str, StepKind, Any]], nixpkgs: Path | None,
         repository: Path | None = None) -> list[Filled]:
    """Each (where, kind, params) with its params completed from the clone; `where` prefixes errors
    (`recipes/x.toml: step 1 (pin-swap)`). `repository`: where a PinOf's relative `repo` starts."""
    from pinshift.nixpkgs.nar import render_sha256
    from pinshift.nixpkgs.clone import Revision

    answers = _Answers(nixpkgs, repository)
    filled = []
    for where, kind, params in steps:
        query = kind.nixpkgs_query(params)
        if query is None:
            filled.append(Filled(params))
            continue
        try:
            origin, provenance, name = "", [], query.revision
            if isinstance(query.revision, PinOf):
                pin = answers.pin_of(query.revision)
                origin, name = pin.origin, pin.revision
                provenance = [f"new pin {pin.describe()}"]
            if origin and len(name) == _FULL and not query.archive_hash:
                revision = Revision(name.lower(), name.lower())  # a full revision needs no clone
            else:
                answers.open(query.without_clone if not origin or query.archive_hash else
                             f"{origin} is abbreviated in its recipes ({name}); naming its full commit needs a "
                             "local nixpkgs clone: pass --nixpkgs DIR or set PINSHIFT_NIXPKGS")
                revision = answers.revision(name)
            notes = list(provenance)
            if revision.name != revision.commit and not origin:
                notes.append(f"nixpkgs {revision.describe()}")
            digest = None
            if query.archive_hash:
                result = answers.digest(revision.commit)
                digest = result.digest
                how = "cached" if result.cached else f"computed from {result.files:,} files in {result.seconds:.1f} s"
                notes.append(f"sha256 of nixpkgs {revision.commit[:7]}: {render_sha256(digest)} ({how})")
                notes.extend(result.notes)
            facts = NixpkgsFacts(revision.name, revision.commit, revision.ref, digest, origin)
            filled.append(Filled(kind.with_nixpkgs(params, facts), notes, provenance))
        except PinshiftError as error:
            error.args = (f"{where}: {error}",)
            raise
    return filled
