"""The name Nix's parser gives an attribute, or None when only evaluation can tell (a dynamic attribute).

Nix (2.8) decides at parse time: an attribute is *static* when it is an identifier (`a`, also
`or`), a string without interpolation (`"a"`, `"a\\nb"`), or `${...}` around such a string
(`${"a"}`, `${("a")}`, `${''a''}`). Static names take part in duplicate checks and may be
inherited; anything else (`${x}`, `"${"a"}"`, `"a${b}"`) is dynamic. Names are bytes, decoded
like Nix decodes strings, so `"a"`, `"\\a"`, `${"a"}` and `a` are one name.

Indented strings are static only when Nix's lexer reads them as one piece: `''a$''` is the
pieces `a` and `$`, dynamic; `''a$$''` is one piece. Their value is the stripped text.
"""

from __future__ import annotations

import re

from tree_sitter import Node

_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t"}
_IND_PIECE = re.compile(rb"(?:[^$']|\$[^{']|'[^'$])+", re.S)
_OPENING_LINE = re.compile(rb"\A *\n")
_IND_SINGLE = {b"''$": b"$", b"$": b"$", b"'''": b"''", b"'": b"'"}


def static_name(data: bytes, node: Node) -> bytes | None:
    """The static name of an attrpath segment or inherited attribute; None when it is dynamic."""
    if node.type == "identifier":
        return None if node.is_missing else data[node.start_byte : node.end_byte]
    if node.type == "interpolation":
        inner = node.child_by_field_name("expression")  # not named_children[0]: `${/*c*/"a"}` holds a comment first
        while inner is not None and inner.type == "parenthesized_expression":
            inner = inner.child_by_field_name("expression")
        if inner is None:
            return None
        if inner.type == "indented_string_expression":
            return _indented_value(data, inner)
        return _string_value(data, inner) if inner.type == "string_expression" else None
    if node.type == "string_expression":
        return _string_value(data, node)
    return None


def _string_value(data: bytes, node: Node) -> bytes | None:
    """A double-quoted string without interpolation, unescaped as Nix does (CR and CRLF read as LF; Nix's
    unescaping stops at a NUL byte, so `"a\\0b"` is `a`)."""
    out = []
    for child in node.named_children:
        text = data[child.start_byte : child.end_byte]
        if child.type == "interpolation":
            return None
        if child.type == "escape_sequence":
            out.append(_ESCAPES.get(text[1:], text[1:]))
        elif child.type == "string_fragment":
            out.append(text.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
        # dollar_escape (`\` of `\$`): its `$` follows as a one-byte fragment
    value = b"".join(out)
    return value.split(b"\0", 1)[0] if b"\0" in data[node.start_byte : node.end_byte] else value


def _indented_value(data: bytes, node: Node) -> bytes | None:
    """An indented string Nix reads as one piece, with its indentation stripped; None otherwise.

    Nix's opening token is `''` with the spaces and the line feed after it (`''(\\ *\\n)?`), so the
    pieces start after them: `''\\n  a''` is the one piece `  a`, stripped to `a`.
    """
    if any(child.type == "interpolation" for child in node.named_children):
        return None
    content = _OPENING_LINE.sub(b"", data[node.start_byte + 2 : node.end_byte - 2], count=1)
    if not content:
        return b""
    if content in _IND_SINGLE:
        return _IND_SINGLE[content]
    if len(content) == 4 and content.startswith(b"''\\"):  # `''\X`: one escape, X one byte
        return _ESCAPES.get(content[3:], content[3:])
    if not _IND_PIECE.fullmatch(content):
        return None
    return _strip_indentation(content)


def _strip_indentation(text: bytes) -> bytes:
    """Nix's stripIndentation for a string of one piece."""
    lines = text.split(b"\n")
    indents = [len(line) - len(line.lstrip(b" ")) for line in lines if line.strip(b" ")]
    drop = min(indents) if indents else len(text)
    stripped = b"\n".join(line[drop:] if line.strip(b" ") else line[min(drop, len(line)) :] for line in lines)
    cut = stripped.rfind(b"\n")
    if cut >= 0 and not stripped[cut + 1 :].strip(b" "):
        stripped = stripped[: cut + 1]
    return stripped
