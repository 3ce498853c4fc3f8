"""pin-swap — replace a source revision in fetcher calls (the nixpkgs pin of a recipe).

What it changes, in calls of builtins.fetchTarball, fetchTarball, fetchurl, fetchzip,
fetchFromGitHub, fetchgit and builtins.fetchGit:
  - the `<rev>` of an `/archive/<rev>.tar.gz` (or `.zip`) url, in `url = "..."` or in a
    bare-URL call `fetchTarball "https://.../archive/<rev>.tar.gz"`;
  - the value of `rev = "<rev>";`.
The old revision may be abbreviated (`6a030d5`): before any file is changed it is
resolved by prefix against the revisions actually found at those places in every
file. A prefix matching two different revisions stops the run with a message listing
what was found (revision, path:line). A prefix found nowhere changes nothing, and each
file that pins another revision says so in a note (`pins 46336d4, not '6a030d5':
nothing to swap here`). If the old revision is found nowhere but the new one is, the
swap is already done and the step changes nothing (running it twice is a no-op).
Either way, in `pinshift migrate` a pin-swap that changes nothing on a base while
other steps change files stops that base: no branch is made for it (exit 1, the note
in the message), unless the recipe step says `optional = true` (docs/recipes.md).

Hashes: a fetcher that carries `sha256`/`hash` cannot stay valid after a swap; `hash`
says what happens (migrations/_pin_swap_hashes.py has the details):
  - "keep" (default): the hash stays and the step warns "hash must be refreshed" at it
    (`--strict` makes that fatal);
  - "remove": the `sha256`/`hash` binding is deleted (its line when it has its own);
  - "compute": pinshift computes the sha256 of the new revision's GitHub archive from a
    local nixpkgs clone, offline (`--nixpkgs DIR` or $PINSHIFT_NIXPKGS; as
    `nix-prefetch-url --unpack` would, see `pinshift hash`), then writes it as a value;
  - a value (Nix base32 as nix-prefetch-url prints it, or SRI `sha256-...`): that hash.
A value is written where it is the fetcher's hash (fetchTarball, fetchzip,
fetchFromGitHub): into an existing `sha256`/`hash` in the notation it had, or inserted
as `sha256 = "<base32>";` into a fetchTarball without one (the bare-URL form becomes
`{ url = ...; sha256 = ...; }`); fetchers already at the new revision get it too.
fetchurl and git fetchers hash something else: warned, never written.

The new revision may be a branch or tag of the clone (`new = "nixos-unstable"`) or an
abbreviated commit: the command resolves it to the full commit id before planning and
the report says which (`nixpkgs nixos-unstable = 0182a36...`); the recipe keeps the name.

Alignment: `new` may instead name another recipe repository's branch, as a table:
`new = { repo = "../build-vllm", ref = "main" }` (a local clone; a relative `repo` is
relative to the recipe repository). Before planning, pinshift reads that branch's
recipes straight from its commit (nothing checked out) and takes the one nixpkgs pin
they use; a branch whose recipes pin several revisions stops the run with each and its
count, unless `pick = "majority"` takes the most common one (a tie still stops it). A
branch with no pin (Flox function arguments) stops it too. The report and the commit
message say where the pin came from (`0182a36…, the pin of build-vllm@main`).
Keys: `repo`, `ref` (required), `pick` ("single" or "majority"), `files` (globs of the
recipe files read there, default [".flox/pkgs/**/*.nix"]).

Other file types (Markdown, Python, TOML, shell), when the step's files globs take them in:
each is read by its own parser and only string literals / string values / code blocks, links
and prose (never a branch-table row) / whole words change; see docs/doc-steps.md.

What it never touches: comments, and strings that are not a fetcher's url/rev,
unless `include-comments` / `include-strings` say so; revisions other than the
resolved old one; urls built with `${...}` interpolation keep their interpolations.

Parameters:
  old               str, required. The revision to replace, full or abbreviated (at least
                    4 hex digits).
  new               str or table, required. The new revision: 40 hex digits, or (with --nixpkgs
                    DIR) a branch, tag or abbreviated commit of that nixpkgs clone; or
                    { repo = "...", ref = "..." }: the pin of another repository's branch.
  hash              str, default "keep". "keep", "remove", "compute" (needs --nixpkgs DIR)
                    or a sha256 value; see Hashes above.
  new-hash          str, optional (default: none). Older form: this text written as it is
                    into every swapped fetcher's hash binding, nothing inserted (excludes `hash`).
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
    new = "0182a361324364ae3f436a63005877674cf45efb"   # or "nixos-unstable" with --nixpkgs DIR
    hash = "compute"                                   # sha256 from the --nixpkgs clone, offline

Aligned to a sibling repository's pin:
    [steps.params]
    old = "6a030d5"
    new = { repo = "../build-vllm", ref = "main" }     # the one pin build-vllm's main uses
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from pinshift.edits import Edit
from pinshift.migrations import _pin_swap_hashes as hashes
from pinshift.migrations import _pin_swap_languages as other_languages
from pinshift.errors import ParamError
from pinshift.nixpkgs.nar import parse_sha256, render_sha256
from pinshift.steps.kind import NixpkgsFacts, NixpkgsQuery, PinOf, StepContext, StepOutput
from pinshift.syntax.queries import STRING_TYPES, as_string, fetcher_calls, walk

NAME = "pin-swap"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): the pin and any fetcher's revision and hash.
BUILD_CHANGES = ("nixpkgs.rev", "nixpkgs.hash", "*.rev", "*.hash", "*.sha256", "*.url", "*fetchTarball*")
LANGUAGES = ("nix", "markdown", "python", "toml", "shell")

_HEX = re.compile(r"[0-9a-f]+\Z")
_ARCHIVE = re.compile(rb"/archive/([0-9a-fA-F]{7,40})\.(?:tar\.gz|tar\.bz2|tar\.xz|zip)")
_REV = re.compile(rb"[0-9a-fA-F]{7,40}\Z")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+@-]*\Z")
_HASH_MODES = ("keep", "remove", "compute")
_FETCHERS = (b"fetchTarball", b"fetchurl", b"fetchzip", b"fetchFromGitHub", b"fetchgit", b"fetchGit")


@dataclass(frozen=True)
class Params:
    old: str
    new: str | PinOf
    hash: str = "keep"
    new_hash: str | None = None
    include_strings: bool = False
    include_comments: bool = False

    def __post_init__(self) -> None:
        if not (4 <= len(self.old) <= 40 and _HEX.match(self.old.lower())):
            raise ParamError("old", f"'old' must be a revision of 4 to 40 hex digits, not {self.old!r}")
        if isinstance(self.new, PinOf):
            pass
        elif not (_is_full(self.new) or _NAME.match(self.new)) or any(t in self.new for t in ("..", "@{", "//")) \
                or self.new.endswith((".", "/", ".lock")):
            raise ParamError("new", f"'new' must be a full 40-hex-digit revision, or a branch, tag or abbreviated "
                                    f"commit of the --nixpkgs clone, not {self.new!r}")
        elif _is_full(self.new) and self.new.lower().startswith(self.old.lower()):
            raise ParamError("new", f"'new' ({self.new}) is the same revision as 'old' ({self.old})")
        if self.hash not in _HASH_MODES and parse_sha256(self.hash) is None:
            raise ParamError("hash", "'hash' must be \"keep\", \"remove\", \"compute\" or a sha256 (Nix base32 as "
                                     f"nix-prefetch-url prints it, or SRI sha256-...), not {self.hash!r}")
        if self.new_hash is not None and (not self.new_hash or any(c in self.new_hash for c in '"\\$\n')):
            raise ParamError("new-hash", f"'new-hash' must be a plain hash string, not {self.new_hash!r}")
        if self.new_hash is not None and self.hash != "keep":
            raise ParamError("new-hash", "'new-hash' and 'hash' exclude each other; give the value as 'hash'")

    @property
    def digest(self) -> bytes | None:
        """The sha256 to write (a literal `hash`), None for keep/remove/compute."""
        return parse_sha256(self.hash) if self.hash not in _HASH_MODES else None


def _is_full(rev) -> bool:
    return isinstance(rev, str) and len(rev) == 40 and bool(_HEX.match(rev.lower()))


_NEEDS_CLONE = 'hash = "compute" needs a local nixpkgs clone: pass --nixpkgs DIR or set PINSHIFT_NIXPKGS'


def nixpkgs_query(params: Params) -> NixpkgsQuery | None:
    """A `new` that is not a full commit id, or `hash = "compute"`, needs a nixpkgs clone (pinshift.facts.pin_inputs);
    a `new` table needs the other repository's branch read first."""
    compute = params.hash == "compute"
    if isinstance(params.new, PinOf):
        return NixpkgsQuery(params.new, compute, _NEEDS_CLONE)
    if _is_full(params.new) and not compute:
        return None
    if not _is_full(params.new):
        message = (f"'new' must be a full 40-hex-digit revision, not {params.new!r} (a branch, tag or abbreviated "
                   "commit needs a local nixpkgs clone to name it: pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)")
    else:
        message = _NEEDS_CLONE
    return NixpkgsQuery(params.new, compute, message)


def with_nixpkgs(params: Params, facts: NixpkgsFacts) -> Params:
    """`new` as its full commit id; `hash = "compute"` as the computed value (Nix base32)."""
    if facts.origin and facts.commit.lower().startswith(params.old.lower()):
        raise ParamError("new", f"'new' ({facts.commit[:7]}…, {facts.origin}) is the same revision as 'old' "
                                f"({params.old}): nothing to align")
    changes = {"new": facts.commit}
    if params.hash == "compute" and facts.archive_hash is not None:
        changes["hash"] = render_sha256(facts.archive_hash, "base32")
    return replace(params, **changes)


@dataclass(frozen=True)
class Resolved:
    """Params after `prepare`: `old_rev` is the full revision found in the files (None: nothing to do)."""

    params: Params
    old_rev: str | None
    absent: str = ""  # why nothing is swapped although files pin something: `old` is found nowhere


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


def pin_sites(doc) -> list[PinSite]:
    """Every revision a fetcher call names, in source order (found once per document: survey and plan share it)."""
    memo = getattr(doc, "memo", None)
    if memo is None:
        return list(_pin_sites(doc))
    if "pin_sites" not in memo:
        memo["pin_sites"] = list(_pin_sites(doc))
    return memo["pin_sites"]


def _pin_sites(doc) -> Iterator[PinSite]:
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
    query = nixpkgs_query(params)
    if isinstance(params.new, PinOf):  # only pinshift.facts.pin_inputs reads another repository's branch
        raise ParamError("new", f"pin-swap: 'new' names the pin of {params.new.label}, which the command "
                                "resolves before planning (pinshift migrate or apply)")
    if query is not None:  # the command did not complete the params from a clone (pinshift.facts.pin_inputs)
        raise ParamError("new" if not _is_full(params.new) else "hash", f"pin-swap: {query.without_clone}")
    old, new = params.old.lower(), params.new.lower()
    found = _merged(surveys)
    candidates = sorted((rev for rev in found if rev.startswith(old)), key=len)
    if not candidates:
        if any(new.startswith(rev) for rev in found if len(rev) >= len(old)):
            return Resolved(params, None)  # already swapped: nothing to do
        # no fetcher at all (a branch without recipes), or (a branch of a fan-out on another pin, or a typo in 'old'): nothing to swap, said per file
        return Resolved(params, None, f"no fetcher revision starts with '{params.old}' (found: {_listing(found)})")
    full = candidates[-1]
    if any(not full.startswith(rev) for rev in candidates):
        shown = {rev: found[rev] for rev in candidates}
        raise ParamError(
            "old", f"pin-swap: '{params.old}' is ambiguous (matches: {_listing(shown)}); give more digits in 'old'"
        )
    return Resolved(params, full)


def _text_edits(doc, nodes, old_texts: list[tuple[bytes, bytes]], why: str) -> Iterator[Edit]:
    """Whole-word occurrences of each old text in `nodes` (`x6a030d5` and `6a030d5ff` are other words)."""
    for node in nodes:
        data = doc.text(node)
        for old, new in old_texts:
            pattern = re.compile(rb"(?<![0-9A-Za-z_])" + re.escape(old) + rb"(?![0-9A-Za-z_])")
            for match in pattern.finditer(data):
                start = node.start_byte + match.start()
                yield Edit(start, start + len(old), new, why)


def _names_new(site_rev: str, new: str) -> bool:
    site = site_rev.lower()
    return len(site) >= 7 and new.lower().startswith(site)


def plan(doc, params, context: StepContext) -> StepOutput:
    resolved = params if isinstance(params, Resolved) else prepare(params, [doc])
    out = StepOutput()
    full, params = resolved.old_rev, resolved.params
    old, new = params.old.lower(), params.new
    if not other_languages.is_nix(doc):  # issue 6 hook: Markdown, Python, TOML, shell
        if full is None:
            return out
        reason = f"pin-swap: {full[:7]} -> {new[:7]}"
        pairs = other_languages.replacements(full, params.old, new)
        return other_languages.plan_other(doc, pairs, reason, params.include_comments)
    calls: list[tuple[object, bool]] = []  # (fetcher call, swapped here)
    taken = []
    for site in pin_sites(doc):
        if full is not None and _matches(site.rev, old, full):
            out.edits.append(Edit(site.start, site.end, new.encode(), f"pin-swap: {full[:7]} -> {new[:7]}"))
            taken.append((site.start, site.end))
            calls = [(c, s) for c, s in calls if c is not site.call]
            calls.append((site.call, True))
        elif params.digest is not None and _names_new(site.rev, new) and all(c is not site.call for c, _ in calls):
            calls.append((site.call, False))  # already at the new revision: its hash is filled in too
    hashes.plan_hashes(doc, calls, params, out, (full or new)[:7])
    if full is None:
        sites = pin_sites(doc)
        if resolved.absent and sites:
            out.note(sites[0].start, f"pins {sites[0].rev[:7]}, not '{params.old}': nothing to swap here")
        return out
    reason = f"pin-swap: {full[:7]} -> {new[:7]}"
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
