"""Where Nix's lexer (2.8) reads other tokens than tree-sitter-nix 0.1.0's, and so rejects what tree-sitter accepts.

tree-sitter lexes only what its parser can take next; Nix's lexer (flex) reads the longest token at each
place, whatever its parser expects. Two differences reach the verdict:

- **Whitespace.** Nix's is space, tab, CR and LF; tree-sitter-nix's is any `\\s`, so a form feed or a
  vertical tab between tokens (`1\\f`, `[ 1\\v2 ]`, `"${\\f1}"`) is "unexpected invalid token" for Nix
  only. Inside a string or a comment they are characters like any other. (No other byte is whitespace
  to tree-sitter-nix and not to Nix: no-break spaces and the like are errors for both.)
- **A path where tree-sitter reads a name or an operator.** Where Nix's path token
  `[a-zA-Z0-9._+-]*(/[a-zA-Z0-9._+-]+)+` starts, Nix reads a path. After the `.` of a select or the `?` of
  a has-attr, tree-sitter expects an attribute name and reads the `a` of `x. a/b` or `x ? a/b` as one,
  then `/b`; Nix reads the path `a/b`, which is no attribute name. Right after a has-attr
  (`x ? a /b`, `x ? a -b/c`, `x ? "a"/b`) tree-sitter reads an operator; Nix reads a path, which cannot
  follow a has-attr (it is no function to apply). Everywhere else tree-sitter expects a path where Nix
  reads one (`x.a/b` is one path for both, `f -b/c` applies `f` to one), and `x ? a / b`, `x ? a//b` are
  operators for both.

A lone CR ending a `#` comment and a NUL byte ending the file are lexer differences too; the tree is
parsed from the bytes as Nix reads them (reading.py), so the rules here and the grammar see Nix's tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from tree_sitter import Node

from pinshift.syntax.paths import path_token_end
from pinshift.syntax.source import Source

# single nodes: a pattern with a child constraint is quadratic in tree-sitter's query engine (grammar_rules.py)
PATTERNS = "(select_expression) @select (has_attr_expression) @has_attr"
_PATH_CHARS_AFTER = frozenset(bytes([c]) for c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-/")

_NOT_NIX_SPACE = re.compile(rb"[\x0b\x0c]")
_SPACES = {0x0B: "vertical tab ('\\v')", 0x0C: "form feed ('\\f')"}
_BLANKS = frozenset(b" \t\r\n")
_LINE_COMMENT = re.compile(rb"#[^\r\n]*")

Finding = tuple[int, str, str]


def lexer_findings(doc: Source, captures: Mapping[str, Sequence[Node]],
                   spans: Sequence[tuple[int, int]] | None) -> Iterator[Finding]:
    """The problems of the captures named above, and whitespace Nix does not take (within `spans`, when given)."""
    data = doc.data
    yield from _odd_spaces(doc, spans)
    for node in (*captures.get("select", ()), *captures.get("has_attr", ())):
        attrpath = node.child_by_field_name("attrpath")
        if attrpath is None or data[attrpath.end_byte : attrpath.end_byte + 1] not in _PATH_CHARS_AFTER:
            continue  # a path token reaching past an attribute name goes on right after the attrpath
        for name in attrpath.children_by_field_name("attr"):
            end = path_token_end(data, name.start_byte) if name.type == "identifier" else -1
            if end > name.end_byte:
                text = data[name.start_byte : end].decode("utf-8", "replace")
                yield name.start_byte, f"syntax error: {text!r} is a path for Nix, not an attribute name", ""
                break
    for node in captures.get("has_attr", ()):
        start = _after_blanks(data, node.end_byte, doc.end)
        end = path_token_end(data, start)
        if end > start:
            text = data[start:end].decode("utf-8", "replace")
            yield start, f"syntax error: unexpected path {text!r} (Nix reads a path here, not an operator; add spaces)", ""


def _odd_spaces(doc: Source, spans: Sequence[tuple[int, int]] | None) -> Iterator[Finding]:
    """Form feeds and vertical tabs between tokens (inside a string or a comment they are fine)."""
    data, stop = doc.data, doc.end
    offsets = sorted({match.start() for start, end in (spans if spans is not None else [(0, stop)])
                      for match in _NOT_NIX_SPACE.finditer(data, start, min(end, stop))})
    if not offsets:
        return
    root = doc.root
    for offset, node in zip(offsets, doc.ancestry.locate([(o, o + 1) for o in offsets])):
        if node.child_count == 0 and node.id != root.id:
            continue  # inside one token: a string's text or a comment
        yield offset, f"syntax error: unexpected {_SPACES[data[offset]]} (Nix's whitespace is space, tab, CR and LF)", ""


def _after_blanks(data: bytes, offset: int, end: int) -> int:
    """The first offset from `offset` on that is neither Nix's whitespace nor inside a comment."""
    while offset < end:
        byte = data[offset]
        if byte in _BLANKS:
            offset += 1
        elif byte == 0x23:  # `#` to the end of the line (a CR ends it too, for Nix)
            comment = _LINE_COMMENT.match(data, offset, end)
            assert comment is not None  # the pattern matches `#` alone
            offset = comment.end()
        elif data.startswith(b"/*", offset):
            close = data.find(b"*/", offset + 2, end)
            offset = end if close < 0 else close + 2
        else:
            return offset
    return end
