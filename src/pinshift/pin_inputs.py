"""Answer what steps need from a local nixpkgs clone, before planning, so that steps stay pure.

A step never runs git. A kind whose params name something only a nixpkgs clone knows
(pin-swap's `new = "nixos-unstable"`, `hash = "compute"`) says so with
`nixpkgs_query(params)`; the command calls `fill` here between validating the recipe
and planning: the clone (`--nixpkgs DIR` or `$PINSHIFT_NIXPKGS`) is opened once,
each revision resolved and each archive hashed at most once (and cached per commit,
see pinshift.nixpkgs_clone), and the kind's `with_nixpkgs(params, facts)` returns
params that need nothing more (`new` a full commit id, `hash` a literal value). The
notes say what was resolved and hashed; commands put them in the step's report.

Without a clone, a step that needs one stops the run before any file is read, with
the step's own message (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinshift.errors import PinshiftError, UsageError
from pinshift.steps import NixpkgsFacts, StepKind


@dataclass
class Filled:
    """One step's params after `fill`, and what to tell the reader about them."""

    params: Any
    notes: list[str] = field(default_factory=list)


class _Answers:
    """The clone, opened on first use; revisions and digests remembered for the run."""

    def __init__(self, directory: Path | None):
        self.directory = directory
        self.clone = None
        self.revisions: dict = {}
        self.digests: dict = {}

    def open(self, without_clone: str):
        from pinshift.nixpkgs_clone import NixpkgsClone

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


def fill(steps: Sequence[tuple[str, StepKind, Any]], nixpkgs: Path | None) -> list[Filled]:
    """Each (where, kind, params) with its params completed from the clone; `where` prefixes errors
    (`recipes/x.toml: step 1 (pin-swap)`)."""
    from pinshift.nar import render_sha256

    answers = _Answers(nixpkgs)
    filled = []
    for where, kind, params in steps:
        query = kind.nixpkgs_query(params)
        if query is None:
            filled.append(Filled(params))
            continue
        try:
            answers.open(query.without_clone)
            revision = answers.revision(query.revision)
            notes = [f"nixpkgs {revision.describe()}"] if revision.name != revision.commit else []
            digest = None
            if query.archive_hash:
                result = answers.digest(revision.commit)
                digest = result.digest
                how = "cached" if result.cached else f"computed from {result.files:,} files in {result.seconds:.1f} s"
                notes.append(f"sha256 of nixpkgs {revision.commit[:7]}: {render_sha256(digest)} ({how})")
                notes.extend(result.notes)
            facts = NixpkgsFacts(revision.name, revision.commit, revision.ref, digest)
            filled.append(Filled(kind.with_nixpkgs(params, facts), notes))
        except PinshiftError as error:
            error.args = (f"{where}: {error}",)
            raise
    return filled
