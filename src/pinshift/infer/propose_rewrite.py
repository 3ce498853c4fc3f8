"""Candidates for `rewrite`, the last phase: a pattern for a change no other kind explained, made at several places.

What still differs after the other phases is read as syntax: in each Nix file, the changed node pairs and
the sites above them (`changed_nodes`). Sites whose change is the same edit (the same tokens removed and
added, in nodes of the same kinds) are generalised into one rule (`antiunify`): the parts that differ
between places become metavariables, the replacement reuses them (`toString $A` -> `builtins.toString
$A`, `lib.optional $A $B` -> `lib.optionals $A [ $B ]`). A rule is proposed only when:

- the rewrite step's own matcher, at each site, writes TARGET's bytes (sites where it does not are left
  out), and it does so at two places at least: one changed place is not a pattern, it is edited by hand;
- planned with the rewrite step (scope, refusals and all) on the files its places are in, it changes
  nothing TARGET did not change there. A rule that also matches a place TARGET left in the old form is
  narrowed with `inside` (a binding path around every place it explains: `*.enableMcpIntegration`), or
  not proposed. Places in other files it would change are for the proof, which narrows `files`;
- no smaller rules explain the same places (`lib.optional` -> `lib.optionals` explains one of the two
  changes of `lib.optional c x`; a rule for two neighbouring changes is two rules when each has its own).

Among rules explaining the same places, the one explaining most is tried first, then the shortest.
Bounded: the limits of `changed_nodes` and `antiunify`, at most `MAX_CLUSTERS` shapes of one edit and at
most `MAX_CHECKED` rules planned per run.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pinshift import languages
from pinshift.edits import apply_edits
from pinshift.errors import PinshiftError
from pinshift.infer.antiunify import Rule, generalise
from pinshift.infer.candidates import Candidate, Setting, short
from pinshift.infer.changed_nodes import Site, sites, untouched
from pinshift.infer.token_hunks import TOKEN, hunks, overreach
from pinshift.infer.state import State
from pinshift.migrations import _pattern, rewrite
from pinshift.steps.kind import StepContext
from pinshift.syntax.queries import bindings

MAX_CLUSTERS = 4
MAX_CHECKED = 24
INSIDE_TRIED = 6


@dataclass
class Proposal:
    rule: Rule
    sites: list[Site]
    regions: set = field(default_factory=set)
    inside: tuple[str, ...] = ()
    valid: bool | None = None

    @property
    def size(self) -> int:
        return len(self.rule.pattern) + len(self.rule.replacement)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(site.path for site in self.sites))


def _words(data: bytes) -> tuple[bytes, ...]:
    return tuple(token for token in TOKEN.findall(data) if not token.isspace())


def signature(site: Site) -> tuple:
    """What a site's change is, wherever it is: the node kinds and the tokens removed and added (not the spaces)."""
    edit = tuple((_words(h.old), _words(h.new)) for h in hunks(site.doc.text(site.before),
                                                               site.target_doc.text(site.after)))
    return site.before.type, site.after.type, tuple(pair for pair in edit if pair != ((), ()))


def _bindings_of(doc):
    """() -> {binding node id: Binding} of `doc`, found once, when first asked (only `inside` needs them)."""
    found: list[dict] = []

    def binding_of() -> dict:
        if not found:
            found.append({b.node.id: b for b in bindings(doc)})
        return found[0]

    return binding_of


def changed_sites(state: State) -> list[Site]:
    found = []
    for path, target_path in state.pairs():
        if languages.language_for(path) != "nix" or languages.language_for(target_path) != "nix":
            continue
        doc, target_doc = state.doc(path), state.target_doc(target_path)
        if doc is None or target_doc is None:
            continue
        found.extend(sites(path, doc, target_doc, state.hunks(path, target_path), _bindings_of(doc)))
    return found


def clusters(found: list[Site]) -> list[list[Site]]:
    """Sites of the same edit, split into the shapes that generalise together (each with two sites at least)."""
    groups: dict[tuple, list[Site]] = defaultdict(list)
    for site in found:
        groups[signature(site)].append(site)
    result = []
    for members in groups.values():
        if len(members) < 2:
            continue
        if generalise(members) is not None:  # the common case: one shape (checked with the matcher after)
            result.append(members)
            continue
        shapes: list[list[Site]] = []
        for site in members:
            home = next((shape for shape in shapes if generalise([shape[0], site]) is not None), None)
            if home is not None:
                home.append(site)
            elif len(shapes) < MAX_CLUSTERS:
                shapes.append([site])
        result.extend(shape for shape in shapes if len(shape) >= 2)
    return result


def _params(rule: Rule, inside: tuple[str, ...] = ()):
    return rewrite.Params(rule.pattern, rule.replacement, inside=inside)


def verified(rule: Rule, members: list[Site]) -> list[Site]:
    """The sites where the rewrite step's matcher, given the rule, writes exactly TARGET's code."""
    try:
        pattern, template = _params(rule).compiled
    except PinshiftError:  # (a ParamError: a rule the kind does not accept)
        return []
    found = []
    for site in members:
        match = _pattern.match(pattern, site.doc, site.before)
        if match is not None and not match.dropped and \
                _pattern.render(template, site.doc, match.captures) == site.target_doc.text(site.after):
            found.append(site)
    return found


def early(site: Site) -> bool:
    """Whether a site's change is one no other kind makes: a node of another shape, and no string text, binding,
    formal or inherited name added or taken away (those are replace-in-strings', set-binding's, pin-nixpkgs')."""
    return "shape" in site.changes and not site.changes & {"text", "names"}


def proposals(state: State, eligible=None) -> list[Proposal]:
    """Rules for the changed sites; with `eligible`, only for the sites it accepts and the sites inside them (which
    may tell `chosen` that smaller rules explain an eligible site's changes)."""
    found = []
    changed = changed_sites(state)
    if eligible is not None:
        wanted = set().union(*(site.regions for site in changed if eligible(site)))
        changed = [site for site in changed if site.regions <= wanted] if wanted else []
    for members in clusters(changed):
        rule = generalise(members)
        if rule is None:
            continue
        good = verified(rule, members)
        if len(good) >= 2:
            found.append(Proposal(rule, good, set().union(*(site.regions for site in good))))
    return found


# --- checking a rule with the step ----------------------------------------------------------------


def outcome(proposal: Proposal, inside: tuple[str, ...]) -> tuple[list[Site], bool]:
    """(the sites the step rewrites, whether it changes anything TARGET did not) in the files of the rule's places."""
    params = _params(proposal.rule, inside)
    rewritten = []
    for path in proposal.paths:
        mine = [site for site in proposal.sites if site.path == path]
        doc, target = mine[0].doc, mine[0].target_doc.data
        out = rewrite.plan(doc, params, StepContext(path))
        if out.refusals:
            return [], True
        try:
            after = apply_edits(doc.data, out.edits, doc)
        except PinshiftError:
            return [], True
        if after != doc.data and overreach(doc.data, after, target):
            return [], True
        rewritten += [site for site in mine if any(site.before.start_byte <= e.start and e.end <= site.before.end_byte
                                                   for e in out.edits)]
    return rewritten, False


def inside_globs(proposal: Proposal) -> list[tuple[str, ...]]:
    """`inside` values to try, innermost binding first: `*.NAME` of a binding around the first place, then its
    whole path; only those holding every place of the rule."""
    tried = []
    for dotted in proposal.sites[0].around:
        if "*" in dotted or any(c.isspace() for c in dotted):
            continue
        for glob in (f"*.{dotted.rpartition('.')[2]}", dotted):
            regex = _pattern.glob_regex((glob,))
            if (glob,) not in tried and all(any(regex.fullmatch(p) for p in site.around) for site in proposal.sites):
                tried.append((glob,))
    return tried[:INSIDE_TRIED]


class Checker:
    """Each proposal checked once, at most MAX_CHECKED of them."""

    def __init__(self):
        self.checked = 0

    def valid(self, proposal: Proposal) -> bool:
        if proposal.valid is not None:
            return proposal.valid
        proposal.valid = False
        if self.checked >= MAX_CHECKED:
            return False
        self.checked += 1
        for inside in [()] + inside_globs(proposal):
            try:
                rewritten, wrong = outcome(proposal, inside)
            except PinshiftError:  # (a ParamError: a binding path `inside` cannot say)
                continue
            if not wrong:
                if len(rewritten) >= 2:
                    proposal.sites, proposal.inside, proposal.valid = rewritten, inside, True
                    proposal.regions = set().union(*(site.regions for site in rewritten))
                return proposal.valid
        return False


def kept_inside(finer: Proposal, proposal: Proposal) -> bool:
    """Whether `finer`'s pattern matches, inside one of `proposal`'s places, code TARGET kept as it was and that it
    would change: then `proposal` only says where the change is by the code around it (`{ x = toString $A;
    y = toString $B; }` because TARGET kept `y`'s `toString`), not what the change is."""
    try:
        pattern, template = _params(finer.rule).compiled
    except PinshiftError:
        return False
    seen: dict[str, list] = {}
    for site in proposal.sites:
        if site.path not in seen:
            seen[site.path] = _pattern.candidates(pattern, site.doc)
        for node in seen[site.path]:
            if not (site.before.start_byte <= node.start_byte and node.end_byte <= site.before.end_byte):
                continue
            match = _pattern.match(pattern, site.doc, node)
            if match is not None and untouched(site.hunks, node) and \
                    _pattern.render(template, site.doc, match.captures) != site.doc.text(node):
                return True
    return False


def chosen(found: list[Proposal], eligible=None) -> list[Proposal]:
    """The rules to propose (those `eligible` says, all without it): most places explained first, then the
    shortest; none claiming a place another took; none whose places smaller valid rules explain together
    (eligible or not: a rename's word is rename-attr's, even beside a change of shape); none that a smaller
    rule shows to be working around a place TARGET kept (`kept_inside`)."""
    checker = Checker()
    order = sorted(found, key=lambda p: (-len(p.regions), p.size, p.rule.pattern))
    claimed: set = set()
    result = []
    for proposal in order:
        if (eligible is not None and not eligible(proposal)) or proposal.regions & claimed:
            continue
        finer = [other for other in order if other is not proposal and other.size < proposal.size
                 and other.regions <= proposal.regions]
        if any(kept_inside(other, proposal) for other in finer):
            continue
        covered = set().union(*(other.regions for other in finer
                                if not other.regions & claimed and checker.valid(other))) if finer else set()
        if covered >= proposal.regions or not checker.valid(proposal) or proposal.regions & claimed:
            continue
        result.append(proposal)
        claimed |= proposal.regions
    return result


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _title(proposal: Proposal, limit: int) -> str:
    where = f" in {proposal.inside[0]}" if proposal.inside else ""
    return f"Rewrite '{short(proposal.rule.pattern, limit)}' as '{short(proposal.rule.replacement, limit)}'{where}"


def propose_shape_rewrites(state: State, setting: Setting) -> list[Candidate]:
    """Before the renames: rules for changes of shape (`lib.optional c x` -> `lib.optionals c [ x ]`), so that
    rename-attr does not take their one renamed word and leave the rest to a rule that cannot say it."""
    return candidates(chosen(proposals(state, early), lambda proposal: all(early(site) for site in proposal.sites)))


def propose_rewrites(state: State, setting: Setting) -> list[Candidate]:
    """Last: rules for whatever the other kinds left (`default = false;` -> `default = true;`)."""
    return candidates(chosen(proposals(state)))


def candidates(found: list[Proposal]) -> list[Candidate]:
    result = []
    for proposal in found:
        params: dict = {"pattern": proposal.rule.pattern, "replacement": proposal.rule.replacement}
        if proposal.inside:
            params["inside"] = list(proposal.inside)
        paths = proposal.paths
        first = min(proposal.sites, key=lambda s: (s.path, s.before.start_byte))
        where = f" inside {proposal.inside[0]}" if proposal.inside else ""
        result.append(Candidate(
            "rewrite", params, _title(proposal, 40), paths, order=(first.path, first.before.start_byte),
            retitle=lambda limit, proposal=proposal: _title(proposal, limit),
            detail=f"{short(proposal.rule.pattern, 80)} becomes {short(proposal.rule.replacement, 80)}{where}, at "
                   f"{_plural(len(proposal.sites), 'place')} in {_plural(len(paths), 'file')}: what differs from "
                   f"place to place is a metavariable."))
    return result
