"""pin-swap beyond `.nix`: revisions in Markdown, Python, TOML and shell files, each read by its own parser.

pin-swap (migrations/pin_swap.py) handles Nix fetcher calls itself and calls
here for every other document its globs let in. Each language module decides
which occurrences may change (`pinshift.languages.<language>.occurrences`):
Python string literals (comments only with include-comments) via libcst, TOML
string values via tomlkit, Markdown code blocks, links and prose (never a row
of a branch table) via markdown-it, shell scripts by whole word (textual).
Every edit's reason names the parser that allowed it; an occurrence that was
left alone is a warning, except a branch-table row or a paragraph describing
another branch, which are left alone by design (readme-branch-table owns those rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from pinshift import languages
from pinshift.edits import Edit
from pinshift.steps.kind import StepOutput
from pinshift.syntax.document import Document as NixDocument

_HEX_WORD = re.compile(rb"(?<![A-Za-z0-9_])[0-9a-fA-F]{7,40}(?![A-Za-z0-9_])")


class RevisionSite(NamedTuple):
    """A revision named in a non-Nix file (pin-swap's `prepare` lists these next to fetcher sites)."""

    rev: str
    start: int


def is_nix(doc) -> bool:
    return isinstance(doc, NixDocument)


def replacements(full: str, old: str, new: str) -> list[tuple[bytes, bytes]]:
    """The full old revision, and the abbreviation `old` as given, each with its new counterpart."""
    pairs = [(full.encode(), new.encode())]
    if len(old) < 40:
        pairs.append((old.encode(), new[: len(old)].encode()))
    return pairs


def _language(doc) -> str:
    return languages.language_for(doc.path) or "text"


def revision_sites(doc, params) -> Iterator[RevisionSite]:
    """Editable hex words starting with the old revision or the new one shortened alike.

    Only full revisions and words exactly as long as `old` count: in prose a
    `6a030d5ff` is more likely a typo or another hash than a revision to resolve.

    pin-swap resolves an abbreviated `old` from these (and sees that a file already
    holding only the new revision needs nothing).
    """
    language = _language(doc)
    prefixes = (params.old.lower().encode(), params.new[: len(params.old)].lower().encode())
    tokens = {
        m.group(0) for m in _HEX_WORD.finditer(doc.data)
        if m.group(0).lower().startswith(prefixes) and len(m.group(0)) in (len(params.old), 40)
    }
    for token in sorted(tokens):
        for occurrence in languages.occurrences(doc, language, token):
            if occurrence.editable:
                yield RevisionSite(token.decode().lower(), occurrence.start)


def plan_other(doc, replacements: Iterable[tuple[bytes, bytes]], reason: str, include_comments: bool) -> StepOutput:
    """Edits replacing each (old, new) pair wherever the document's parser allows it; warnings elsewhere."""
    out = StepOutput()
    language = _language(doc)
    for old, new in replacements:
        for occurrence in languages.occurrences(doc, language, old, include_comments):
            if occurrence.editable:
                how = "textual match" if occurrence.parser == "text" else f"via {occurrence.parser}"
                out.edits.append(Edit(occurrence.start, occurrence.end, new,
                                      f"{reason} ({language} {occurrence.where}, {how})"))
            elif occurrence.where not in ("branch table", "branch description"):
                out.warn(occurrence.start, f"{old.decode()} left unchanged: {occurrence.reason}")
    return out
