"""pin-swap — replace a source revision in fetcher calls (the nixpkgs pin of a recipe).

What it changes, in calls of builtins.fetchTarball, fetchTarball, fetchurl, fetchzip,
fetchFromGitHub, fetchgit and builtins.fetchGit:
  - the `<rev>` of an `/archive/<rev>.tar.gz` (or `.zip`) url, in `url = "..."` or in a
    bare-URL call `fetchTarball "https://.../archive/<rev>.tar.gz"`;
  - the value of `rev = "<rev>";`.
The old revision may be abbreviated (`6a030d5`): before any file is changed it is
resolved by prefix against the revisions actually found at those places in every
file. A prefix found nowhere, or matching two different revisions, stops the run
with a message listing what was found (revision, path:line). If the old revision is
found nowhere but the new one is, the swap is already done and the step changes
nothing (running it twice is a no-op).

Hashes: a fetcher that carries `sha256`/`hash` cannot stay valid after a swap. With
`new-hash` the step writes it into that binding; without it the hash is left as it is
and the step warns "hash must be refreshed" at the hash (`--strict` makes that fatal).

Other file types (Markdown, Python, TOML, shell), when the step's files globs take them in:
each is read by its own parser and only string literals / string values / code blocks, links
and prose (never a branch-table row) / whole words change; see docs/doc-steps.md.

What it never touches: comments, and strings that are not a fetcher's url/rev,
unless `include-comments` / `include-strings` say so; revisions other than the
resolved old one; urls built with `${...}` interpolation keep their interpolations.

Parameters:
  old               str, required. The revision to replace, full or abbreviated (at least
                    4 hex digits).
  new               str, required. The new revision: exactly 40 hex digits.
  new-hash          str, optional (default: none). The hash to write into the swapped
                    fetcher's `sha256`/`hash` binding.
  include-strings   bool, default false. Also replace the old revision (full, or as
                    abbreviated in `old`, by the new one shortened to the same length)
                    inside every other string literal; never inside `${...}`.
  include-comments  bool, default false. The same inside comments.

Example recipe step:
    [[steps]]
    kind = "pin-swap"
    title = "Pin nixpkgs to 0182a36"
    [steps.params]
    old = "6a030d5"
    new = "0182a361324364ae3f436a63005877674cf45efb"
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pinshift.edits import Edit
from pinshift.migrations import _pin_swap_languages as other_languages
from pinshift.errors import ParamError
from pinshift.steps import StepContext, StepOutput
from pinshift.syntax.queries import STRING_TYPES, as_string, fetcher_calls, walk

NAME = "pin-swap"
LANGUAGES = ("nix", "markdown", "python", "toml", "shell")

_HEX = re.compile(r"[0-9a-f]+\Z")
_ARCHIVE = re.compile(rb"/archive/([0-9a-fA-F]{7,40})\.(?:tar\.gz|tar\.bz2|tar\.xz|zip)")
_REV = re.compile(rb"[0-9a-fA-F]{7,40}\Z")
_FETCHERS = (b"fetchTarball", b"fetchurl", b"fetchzip", b"fetchFromGitHub", b"fetchgit", b"fetchGit")


@dataclass(frozen=True)
class Params:
    old: str
    new: str
    new_hash: str | None = None
    include_strings: bool = False
    include_comments: bool = False

    def __post_init__(self) -> None:
        if not (4 <= len(self.old) <= 40 and _HEX.match(self.old.lower())):
            raise ParamError("old", f"'old' must be a revision of 4 to 40 hex digits, not {self.old!r}")
        if not (len(self.new) == 40 and _HEX.match(self.new.lower())):
            raise ParamError("new", f"'new' must be a full 40-hex-digit revision, not {self.new!r}")
        if self.new.lower().startswith(self.old.lower()):
            raise ParamError("new", f"'new' ({self.new}) is the same revision as 'old' ({self.old})")
        if self.new_hash is not None and (not self.new_hash or any(c in self.new_hash for c in '"\\$\n')):
            raise ParamError("new-hash", f"'new-hash' must be a plain hash string, not {self.new_hash!r}")


@dataclass(frozen=True)
class Resolved:
    """Params after `prepare`: `old_rev` is the full revision found in the files (None: nothing to do)."""

    params: Params
    old_rev: str | None


@dataclass(frozen=True)
class PinSite:
    """One place a fetcher names a revision: the bytes [start, end) spell `rev`; `call` is the FetcherCall."""

    start: int
    end: int
    rev: str
    call: object


def needles(params: Params) -> tuple[bytes, ...]:
    """Files mentioning no fetcher (and not the revision) hold nothing to swap."""
    return _FETCHERS + (params.old.encode(), params.old.lower().encode())


def pin_sites(doc) -> Iterator[PinSite]:
    """Every revision a fetcher call names, in source order."""
    for call in fetcher_calls(doc):
        if call.url is not None and (string := as_string(call.url)) is not None:
            for fragment in string.literals():
                for match in _ARCHIVE.finditer(doc.text(fragment)):
                    start = fragment.start_byte + match.start(1)
                    yield PinSite(start, start + len(match.group(1)), match.group(1).decode(), call)
        rev = call.rev
        if rev is not None and (string := as_string(rev)) is not None and len(string.parts) == 1:
            part = string.parts[0]
            if part.kind == "literal" and _REV.match(doc.text(part.node)):
                yield PinSite(part.node.start_byte, part.node.end_byte, doc.text(part.node).decode(), call)


def _matches(site_rev: str, old: str, full: str) -> bool:
    """Whether a site names the resolved revision (in full, or abbreviated no shorter than `old`)."""
    site = site_rev.lower()
    return len(site) >= len(old) and site.startswith(old) and full.startswith(site)


def survey(doc, params: Params | None = None) -> dict[str, list[str]]:
    """The revisions one document's fetchers name: {revision: ["path:line", ...]} (small, picklable)."""
    found: dict[str, list[str]] = {}
    # issue 6 hook: non-Nix files name revisions through their own parsers
    sites = pin_sites(doc) if other_languages.is_nix(doc) else other_languages.revision_sites(doc, params)
    for site in sites:
        found.setdefault(site.rev.lower(), []).append(f"{doc.path}:{doc.position(site.start)[0]}")
    return found


def _merged(surveys: Iterable[dict[str, list[str]]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for one in surveys:
        for rev, places in one.items():
            found.setdefault(rev, []).extend(places)
    return found


def _listing(found: dict[str, list[str]], limit: int = 6) -> str:
    if not found:
        return "no fetcher revisions at all"
    items = []
    for rev, places in sorted(found.items(), key=lambda item: item[1][0])[:limit]:
        more = f" and {len(places) - 1} more" if len(places) > 1 else ""
        items.append(f"{rev} at {places[0]}{more}")
    if len(found) > limit:
        items.append(f"{len(found) - limit} more revisions")
    return "; ".join(items)


def prepare(params: Params, docs: Iterable) -> Resolved:
    """Resolve an abbreviated `old` against the revisions the fetchers actually name."""
    return resolve(params, (survey(doc, params) for doc in docs))


def resolve(params: Params, surveys: Iterable[dict[str, list[str]]]) -> Resolved:
    """`prepare` from per-file surveys (the runner may gather them while it plans; see runner)."""
    old, new = params.old.lower(), params.new.lower()
    found = _merged(surveys)
    candidates = sorted((rev for rev in found if rev.startswith(old)), key=len)
    if not candidates:
        if any(new.startswith(rev) for rev in found if len(rev) >= len(old)):
            return Resolved(params, None)  # already swapped: nothing to do
        raise ParamError(
            "old", f"pin-swap: no fetcher revision starts with '{params.old}' (found: {_listing(found)}); check 'old'"
        )
    full = candidates[-1]
    if any(not full.startswith(rev) for rev in candidates):
        shown = {rev: found[rev] for rev in candidates}
        raise ParamError(
            "old", f"pin-swap: '{params.old}' is ambiguous (matches: {_listing(shown)}); give more digits in 'old'"
        )
    return Resolved(params, full)


def _hash_edits(doc, call, params: Params, out: StepOutput, short: str) -> None:
    for key, node in sorted(call.hashes.items()):
        string = as_string(node)
        literal = string is not None and not string.indented and all(p.kind == "literal" for p in string.parts)
        line = doc.position(node.start_byte)[0]
        if params.new_hash is not None and literal:
            inner_start = node.start_byte + 1
            out.edits.append(Edit(inner_start, node.end_byte - 1, params.new_hash.encode(), f"pin-swap: new {key}"))
        else:
            out.warn(
                node.start_byte,
                f"hash must be refreshed: {doc.path}:{line} ({key} still belongs to {short}; "
                "pass new-hash or update it by hand)",
            )


def _text_edits(doc, nodes, old_texts: list[tuple[bytes, bytes]], why: str) -> Iterator[Edit]:
    """Whole-word occurrences of each old text in `nodes` (`x6a030d5` and `6a030d5ff` are other words)."""
    for node in nodes:
        data = doc.text(node)
        for old, new in old_texts:
            pattern = re.compile(rb"(?<![0-9A-Za-z_])" + re.escape(old) + rb"(?![0-9A-Za-z_])")
            for match in pattern.finditer(data):
                start = node.start_byte + match.start()
                yield Edit(start, start + len(old), new, why)


def plan(doc, params, context: StepContext) -> StepOutput:
    resolved = params if isinstance(params, Resolved) else prepare(params, [doc])
    out = StepOutput()
    full, params = resolved.old_rev, resolved.params
    if full is None:
        return out
    old, new = params.old.lower(), params.new
    reason = f"pin-swap: {full[:7]} -> {new[:7]}"
    if not other_languages.is_nix(doc):  # issue 6 hook: Markdown, Python, TOML, shell
        pairs = other_languages.replacements(full, params.old, new)
        return other_languages.plan_other(doc, pairs, reason, params.include_comments)
    swapped_calls, taken = [], []
    for site in pin_sites(doc):
        if _matches(site.rev, old, full):
            out.edits.append(Edit(site.start, site.end, new.encode(), reason))
            taken.append((site.start, site.end))
            if all(c is not site.call for c in swapped_calls):
                swapped_calls.append(site.call)
    for call in swapped_calls:
        _hash_edits(doc, call, params, out, full[:7])
    old_texts = [(full.encode(), new.encode())]
    if len(params.old) < 40:
        old_texts.append((params.old.encode(), new[: len(params.old)].encode()))
    extra: list[Edit] = []
    if params.include_strings:
        literals = [part for string in map(as_string, walk(doc.root, *STRING_TYPES))
                    if string is not None for part in string.literals()]
        extra.extend(_text_edits(doc, literals, old_texts, reason + " (string)"))
    if params.include_comments:
        extra.extend(_text_edits(doc, walk(doc.root, "comment"), old_texts, reason + " (comment)"))
    out.edits.extend(e for e in extra if not any(s <= e.start < t for s, t in taken))
    return out
