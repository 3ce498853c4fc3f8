"""What a branch's recipes say after a migration's steps, as the facts `{facts.NAME}` fills, and what they make of
a typed value.

The facts are `pinshift status`'s row of the planned tree (pinshift.status.status.branch_status over the facts of
each recipe, pinshift.facts.facts), not a second reading of the recipes: pin, Python, CUDA, GPU targets, variant
count, the package built and its version: as the recipes state it (`version = "2.10.0"` in an overlay), else,
with a nixpkgs clone, the attribute's version at the pin (`with_pin_versions`, read statically as `status
--nixpkgs` reads it), else unknown. A fact that is unknown keeps why (`BranchFact.source`) and is written `?`.

A typed value (`steps.kind.Claim`) is `confirmed`, `contradicted` (migrate refuses the branch) or `unchecked`
(no fact states it, or the fact is unknown: the report names it).

    >>> judge(Claim("columns.Python", "3.13", "python"), {"python": BranchFact("python", "3.12", "python312Packages")})
    Verdict(claim=Claim(key='columns.Python', value='3.13', fact='python', package=''), state='contradicted', fact=BranchFact(name='python', value='3.12', source='python312Packages'), why='')
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pinshift.steps.kind import Claim

UNKNOWN = "?"
_HEX = re.compile(r"[0-9a-fA-F]{7,40}\Z")


@dataclass(frozen=True)
class BranchFact:
    """One fact of the branch: `value` (None: unknown) and where it came from, or why it is unknown."""

    name: str
    value: str | None
    source: str

    @property
    def shown(self) -> str:
        return self.value if self.value is not None else UNKNOWN


@dataclass(frozen=True)
class Verdict:
    """What the facts make of a typed value: `state` confirmed, contradicted or unchecked (`why`)."""

    claim: Claim
    state: str
    fact: BranchFact | None = None
    why: str = ""


def tree_facts(files: Mapping[str, bytes], checkout=None) -> tuple[dict[str, BranchFact], list[str]]:
    """The facts of the recipes `files` (path -> bytes: the planned tree's recipe files) and the notes to show;
    `checkout` (a nixpkgs.checkout.NixpkgsCheckout) reads the package's version at each pin the recipes leave it to."""
    from pinshift.facts.branch_recipes import BranchRecipes, facts_of_files
    from pinshift.status.status import branch_status, package_versions, with_pin_versions

    recipes = facts_of_files(files)  # in forked workers when there are many, as status parses
    row = branch_status(BranchRecipes("", "", "", "", (), len(files), recipes))
    notes: list[str] = []
    if checkout is not None:
        notes = with_pin_versions([row], checkout)
    else:
        for package in row.packages:
            package.versions = package_versions(package, None)
    found = [_pins(row), *_revision(row), _counted("python", row.python, "Python", row.variants),
             _gpu_counted("cuda", row.cuda, "CUDA", row), _gpus(row), _variants(row), *_package(row, checkout)]
    found = [_plain_fact(fact) for fact in found]
    if row.problems:
        notes.append(f"{len(row.problems)} recipe{'s' if len(row.problems) != 1 else ''} with syntax problems are not "
                     f"counted in the facts (first: {row.problems[0]})")
    return {fact.name: fact for fact in found}, notes


# a fact is written into README cells and commit messages: a value read from a recipe (a version literal, a file
# name's package) that is not a short plain word, version or list of them is no fact (it could hold `|`, a newline, a
# trailer line, Markdown)
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~-]*(?: / [A-Za-z0-9][A-Za-z0-9._+~-]*)*\Z")
_LONGEST = 200


def _plain_fact(fact: BranchFact) -> BranchFact:
    """`fact`, or the same fact unknown when its value is not plain text (`_PLAIN`), saying so."""
    if fact.value is None or (len(fact.value) <= _LONGEST and _PLAIN.match(fact.value)):
        return fact
    shown = ascii(fact.value[:60]) + ("…" if len(fact.value) > 60 else "")
    return BranchFact(fact.name, None, f"the recipes state it as {shown}, which is not a plain value ({fact.source})")


def _pins(row) -> BranchFact:
    if row.caller or row.unpinned:
        who = row.caller + row.unpinned
        return BranchFact("pin", None, f"{who} recipe{'s' if who != 1 else ''} pin no nixpkgs of their own")
    if not row.pins:
        return BranchFact("pin", None, "no recipe pins nixpkgs")
    if len(row.pins) > 1:
        listed = ", ".join(f"{value[:12]} ({count})" for value, count in row.pins)
        return BranchFact("pin", None, f"the recipes pin {len(row.pins)} revisions: {listed}")
    value, count = row.pins[0]
    if not _HEX.match(value):
        return BranchFact("pin", None, f"the recipes pin an expression, {value}")
    return BranchFact("pin", value[:7].lower(), f"the nixpkgs pin of {_recipes(count)}")


def _revision(row) -> list[BranchFact]:
    pin = _pins(row)
    if pin.value is None:
        return [BranchFact("revision", None, pin.source)]
    value = row.pins[0][0].lower()
    if len(value) != 40:
        return [BranchFact("revision", None, f"the recipes abbreviate their pin to {value}")]
    return [BranchFact("revision", value, pin.source)]


def _recipes(count: int) -> str:
    return f"{count} recipe{'s' if count != 1 else ''}"


def _counted(name: str, values, label: str, total: int) -> BranchFact:
    """One value of a Counted column (`3.13`), several joined (`3.12 / 3.13`); unknown where a recipe says none."""
    unknown = [c for c in values if c.value in (UNKNOWN, "3.x")]
    if not values:
        return BranchFact(name, None, f"no recipe states its {label}")
    if unknown:
        reason = unknown[0].sources[0][0] if unknown[0].sources else "not stated"
        return BranchFact(name, None, f"{_recipes(sum(c.recipes for c in unknown))} state no {label} ({reason})")
    ordered = sorted(values, key=lambda c: _number_key(c.value))
    sources = "; ".join(f"{c.value} from {', '.join(s for s, _ in c.sources[:2])} ({_recipes(c.recipes)})"
                        for c in ordered)
    return BranchFact(name, " / ".join(c.value for c in ordered), sources)


def _gpu_counted(name: str, values, label: str, row) -> BranchFact:
    if not any(kind == "gpu" for kind, _ in row.kinds):
        return BranchFact(name, None, "no GPU recipes")
    return _counted(name, values, label, row.variants)


def _gpus(row) -> BranchFact:
    from pinshift.facts.notation import sm_key

    gpus = sum(count for kind, count in row.kinds if kind == "gpu")
    if not gpus:
        return BranchFact("gpus", None, "no GPU recipes")
    named = sorted({c.value for c in row.gpu if c.value != "sm?"}, key=sm_key)
    if not named:
        return BranchFact("gpus", None, f"{_recipes(gpus)} build for the GPU and name no target")
    return BranchFact("gpus", " / ".join(named), f"the GPU targets of {_recipes(gpus)}")


def _variants(row) -> BranchFact:
    return BranchFact("variants", str(row.variants), "the build recipes under the recipe's files")


def _package(row, checkout) -> list[BranchFact]:
    if not row.packages:
        return [BranchFact("package", None, "no build recipes"), BranchFact("version", None, "no build recipes")]
    package = row.packages[0]
    named = BranchFact("package", package.package, f"{_recipes(package.recipes)} build it")
    attribute = BranchFact("attribute", package.attribute, f"the attribute {_recipes(package.recipes)} build")
    versions = package.versions
    unknown = [v for v in versions if v.value == UNKNOWN]
    if unknown or not versions:
        reason = unknown[0].sources[0][0] if unknown and unknown[0].sources else "not stated"
        if checkout is None and "--nixpkgs" not in reason:
            reason += "; --nixpkgs DIR reads it from the pin"
        return [named, attribute, BranchFact("version", None, f"{_recipes(sum(v.recipes for v in unknown))} of "
                                                   f"{package.package} state no version: {reason}")]
    ordered = sorted(versions, key=lambda v: _number_key(v.value))
    where = "; ".join(f"{v.value}: {_origin(v, checkout)}" for v in ordered)
    return [named, attribute, BranchFact("version", " / ".join(v.value for v in ordered), where)]


def _origin(version, checkout) -> str:
    source = version.sources[0][0] if version.sources else ""
    if version.origin == "pin":
        return f"{source} in the --nixpkgs clone {checkout.directory}"
    return f"stated by {_recipes(version.recipes)} ({version.origin}: {source})"


def _number_key(value: str) -> tuple:
    parts = re.split(r"[.\-]", value)
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


# --- typed values ------------------------------------------------------------------------------------------


def judge(claim: Claim, facts: Mapping[str, BranchFact], aliases: Iterable[str] = ()) -> Verdict:
    """What `facts` make of `claim`; `aliases` are the names of the package built (`pytorch`, `torch`), for a
    version claim that names one."""
    if claim.fact is None:
        return Verdict(claim, "unchecked", why="no fact of the recipes states it")
    fact = facts.get(claim.fact)
    if claim.fact == "version" and claim.package and claim.package not in set(aliases):
        built = facts["package"].shown if "package" in facts else UNKNOWN
        return Verdict(claim, "unchecked", fact, f"it names {claim.package}, the recipes build {built}")
    if claim.fact in ("pin", "revision"):
        fact = facts.get("revision") if facts.get("revision") and facts["revision"].value else facts.get("pin")
    if fact is None or fact.value is None:
        return Verdict(claim, "unchecked", fact, fact.source if fact is not None else "not known")
    return Verdict(claim, "confirmed" if _same(claim.fact, _plain(claim.value), fact.value) else "contradicted", fact)


def _plain(value: str) -> str:
    return re.sub(r"[*`]", "", value).strip()


def _same(name: str, typed: str, fact: str) -> bool:
    if name in ("pin", "revision"):
        typed, fact = typed.lower(), fact.lower()
        return bool(_HEX.match(typed)) and (fact.startswith(typed) or typed.startswith(fact))
    if name == "gpus":
        return _targets(typed) == _targets(fact)
    if name == "version":
        return typed.removeprefix("v") == fact
    if name == "variants":
        return typed.replace(",", "") == fact
    return typed == fact


def _targets(text: str) -> set[str]:
    """`SM90 / sm100`, `9.0, 10.0`, `90+100` -> {"sm90", "sm100"}."""
    out = set()
    for token in re.split(r"[\s/,+;]+", text.lower()):
        token = token.removeprefix("sm_").removeprefix("sm")
        if re.fullmatch(r"\d+\.\d", token):
            token = token.replace(".", "")
        if token:
            out.add(f"sm{token}")
    return out


def contradiction(verdict: Verdict) -> str:
    """`columns.PyTorch = "2.10.0", but the recipes say version 2.9.1 (torch at nixpkgs 0182a36 …)`."""
    claim, fact = verdict.claim, verdict.fact
    return (f"{claim.key} = \"{claim.value}\", but the branch's recipes say {fact.name} {fact.value} "
            f"({fact.source}); write \"{{facts.{fact.name}}}\" to take the fact, or correct the value")


def unchecked(verdict: Verdict) -> str:
    """`unchecked: columns.Min Driver = "560+" (no fact of the recipes states it)`."""
    return f"unchecked: {verdict.claim.key} = \"{verdict.claim.value}\" ({verdict.why})"
