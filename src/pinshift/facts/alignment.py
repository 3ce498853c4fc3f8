"""The nixpkgs pin a branch's recipes use, read to align another branch to it.

`pinshift status --align-to ../build-vllm@main` and pin-swap's
`new = { repo = "../build-vllm", ref = "main" }` both ask the same question: which
single nixpkgs revision do that branch's recipes pin? `branch_pin` answers from the
facts of the branch (pinshift.facts.branch_recipes) and refuses, in one line, what has no
single answer: several pins (listed with their counts, unless the caller picks the
majority), no pin at all (Flox function arguments), a pin that is an expression.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import re
from dataclasses import dataclass
from pathlib import Path

from pinshift.facts.branch_recipes import BranchRecipes, FactsCache, read_branches
from pinshift.facts.matrix import aggregate_builds, builds, majority_phrase
from pinshift.errors import GitError, UsageError

_REVISION = re.compile(r"[0-9a-fA-F]{7,40}\Z")


@dataclass(frozen=True)
class BranchPin:
    """The pin of `label` (`build-vllm@main`, at `commit`): `revision`, used by `count` of `total` pinned recipes."""

    label: str
    commit: str
    revision: str
    count: int
    total: int
    others: tuple[tuple[str, int], ...] = ()  # the other pins (pick = "majority")
    root: str = ""

    @property
    def origin(self) -> str:
        """`the pin of build-vllm@main`."""
        return f"the pin of {self.label}"

    def describe(self) -> str:
        """`0182a36…, the pin of build-vllm@main (3c4d5e6, 12 recipes)` (+ what a majority pick left out:
        `3 of 5 recipes, a majority (60 %); also 6a030d5 (2 recipes)`; a plurality says it is no majority)."""
        counted = f"{self.count} recipe{'s' if self.count != 1 else ''}"
        if self.others:
            counted = (f"{self.count} of {self.total} recipes, {majority_phrase(self.count, self.total)}; "
                       f"also {_listing(self.others)}")
        return f"{self.revision[:7]}…, {self.origin} ({self.commit[:7]}, {counted})"


def _listing(groups) -> str:
    return ", ".join(f"{value[:7] if _REVISION.match(value) else value} ({count} recipe{'s' if count != 1 else ''})"
                     for value, count in groups)


def branch_pin(branch: BranchRecipes, majority: bool, how_to_pick: str) -> BranchPin:
    """The single nixpkgs revision the branch's recipes pin; a UsageError says why there is none.

    `how_to_pick` ends the message for a branch with several pins (`set pick = "majority" ...`).
    Files with syntax problems are not counted.
    """
    label = branch.label
    if branch.error:
        raise GitError(f"{label}: {branch.error}")
    found = [f for f in builds(branch.recipes) if not f.problems]
    if not found:
        broken = sum(1 for f in branch.recipes if f.problems)
        what = f"{broken} recipe files with syntax problems and no other" if broken else "no"
        raise UsageError(f"{label} ({branch.commit[:7]}) has {what} recipes in {', '.join(branch.globs)}; "
                         "nothing to take a pin from (name another branch, or its recipe files with 'files')")
    agg = aggregate_builds(found)
    groups = [(value, len(paths)) for value, paths in agg.pins.groups]
    if not groups:
        why = ((f"its {len(agg.caller)} recipes use" if len(agg.caller) != 1 else "its 1 recipe uses") + " the caller's nixpkgs (Flox function arguments)" if agg.caller
               else "its recipes import <nixpkgs> without a pin")
        raise UsageError(f"{label} ({branch.commit[:7]}) pins no nixpkgs revision: {why}; align to a branch "
                         "with pinned recipes")
    if len(groups) > 1:
        first, second = groups[0][1], groups[1][1]
        if not majority:
            raise UsageError(f"{label} ({branch.commit[:7]}) uses {len(groups)} nixpkgs pins: {_listing(groups)}; "
                             f"{how_to_pick}")
        if first == second:
            raise UsageError(f"{label} ({branch.commit[:7]}) has no majority pin: {_listing(groups)}; align to "
                             "a branch with one pin")
    revision, count = groups[0]
    if not _REVISION.match(revision):
        raise UsageError(f"{label} ({branch.commit[:7]}) pins nixpkgs by an expression ({revision}), not a "
                         "revision; align to a branch that names its revision")
    total = sum(count for _, count in groups)
    return BranchPin(label, branch.commit, revision, count, total, tuple(groups[1:]), branch.root)


def read_branch_pin(directory: Path, ref: str, globs, majority: bool, what: str, how_to_pick: str,
                    cache: FactsCache | None = None) -> BranchPin:
    """The pin of branch (or commit-ish) `ref` of the local clone at `directory`.

    `what` starts every error about the repository or the ref (`--align-to ../x@main`).
    """
    from pinshift.facts.branch_recipes import repository_name
    from pinshift.git.repo import Repository

    repository = Repository.open_to_read(directory, what)
    commit = repository.commit_of(ref)
    if commit is None:
        close = repository.closest_branches(ref)
        known = f"closest branches: {', '.join(close)}" if close else \
            f"branches: {', '.join(name for name, _ in repository.local_branches()[:10]) or 'none'}"
        raise GitError(f"{what}: '{ref}' is not a branch or commit of {repository.root} ({known})")
    if ref == "HEAD":
        ref = repository.current_branch() or commit[:7]
    [branch] = read_branches(repository, [(ref, commit)], tuple(globs), cache=cache,
                             name=repository_name(repository.root))
    return branch_pin(branch, majority, how_to_pick)


def split_align_to(value: str) -> tuple[str, str]:
    """`../build-vllm@main` -> ("../build-vllm", "main"); no `@`: the repository's checked-out branch (HEAD)."""
    path, at, ref = value.rpartition("@")
    if not at:
        return value, "HEAD"
    if not path or not ref:
        raise UsageError(f"--align-to {value}: expected DIR@BRANCH (a local clone and its branch), e.g. "
                         "../build-vllm@main")
    return path, ref


# --- the recipe that aligns a branch (`pinshift status --align-to ... --recipe BRANCH`) ---------------


def toml_value(value) -> str:
    """A TOML value: strings as basic strings (JSON's escapes are TOML's), lists of them."""
    import json

    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def slug(text: str) -> str:
    """A recipe or branch name git and file systems take: other characters become `-`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "align"
