"""What a Nix file means, apart from its comments and layout: a digest of its syntax tree's tokens.

Two files with the same digest have the same tokens in the same order (each token's kind and text; string and
path text as written), so the same tree: they differ at most in comments and in the whitespace between tokens.
Whitespace inside a string is a token's text, so a string re-indented counts as changed (which may change what
it means). A file Nix reads only up to a NUL byte is read as Nix reads it (`reading.nix_reading`). One walk,
each node visited once: linear in the file's size.

    >>> meaning(b"{ a = 1; } # note") == meaning(b"{\\n  a   = 1;\\n}\\n")
    True
    >>> meaning(b'{ a = "x"; }') == meaning(b'{ a = "x "; }')
    False
"""

from __future__ import annotations

import hashlib

from pinshift.syntax.language import parser
from pinshift.syntax.reading import nix_reading

_STRINGS = frozenset({"string_expression", "indented_string_expression"})


def meaning(data: bytes, visits: list[int] | None = None) -> str:
    """The digest of `data`'s tokens without comments (`visits`, when given, gets the number of nodes walked)."""
    source = nix_reading(data)
    tree = parser().parse(source)
    digest = hashlib.sha256()
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        count += 1
        kind = node.type
        if kind == "comment":
            continue
        children = node.children
        if not children:
            _token(digest, kind, source[node.start_byte:node.end_byte])
            continue
        if kind in _STRINGS:  # text of a string no child covers (none in this grammar): part of the string
            start = node.start_byte
            for child in children:
                if child.start_byte > start:
                    _token(digest, "text", source[start:child.start_byte])
                start = child.end_byte
        stack.extend(reversed(children))
    if visits is not None:
        visits.append(count)
    return digest.hexdigest()


def _token(digest, kind: str, text: bytes) -> None:
    name = kind.encode()
    digest.update(len(name).to_bytes(4, "big") + name + len(text).to_bytes(8, "big") + text)
