"""The bytes of a file as Nix's lexer reads them, at the same offsets: what tree-sitter is given to parse.

Two things Nix (2.8) reads differently from tree-sitter-nix 0.1.0, at the level of bytes:

- **A `#` comment ends at a carriage return.** Nix's comment is `#[^\\r\\n]*`, tree-sitter-nix's runs to
  the line feed, so in `[ 1 #\\r2 ]` tree-sitter sees a comment where Nix sees `2 ]`. A lone CR (one not
  followed by LF) is read as a LF: the same length, so every offset stays, and nowhere else does the
  difference matter (CR and LF are both whitespace to both; inside a string or a `/* */` comment either
  is one more character, and the string's structure is the same).
- **A NUL byte between tokens ends the file.** Nix's lexer returns a NUL read as a token of its own as
  token 0, which its parser takes for the end of the input: `1 \\0 junk` parses (as `1`), `{ \\0 }` is
  "unexpected end of file". Inside a string or a comment a NUL is one more character for Nix
  (`"a\\0b"`, `# c\\0`), while tree-sitter-nix cannot read one anywhere. So for a file holding a NUL,
  a small lexer (`_nix_end`, Nix's token rules) finds the first NUL that Nix reads as a token; the tree
  is parsed from the bytes before it, each NUL inside a string or comment read as a space.
  `nix_end(data)` is that offset. The bytes after it stay in `Document.data` (an edit never touches
  them), and the commands that write files skip a Nix file holding a NUL (files/content.py), so
  nothing past it is written silently.

- **A home path interpolated right after `~/`** (`~/${x}`) is Nix's HPATH_START then `${`; tree-sitter-nix
  0.1.0 cannot parse it. It is read as `./${x}` (a path of two bytes before the interpolation, the same
  offsets); paths.py still reads the `~` in the file's bytes.

`nix_reading(data)` is what tree-sitter parses; for every file without a NUL, a lone CR or `~/${` (all
but a handful) it is `data` itself.

Examples:
    `[ 1 #\\r2 ]`   -> `[ 1 #\\n2 ]` (a list of two integers, as Nix reads it)
    `1 \\0 junk`    -> `1 `
    `"a\\0b" \\0 ]` -> `"a b" `
"""

from __future__ import annotations

import re

LONE_CR = re.compile(rb"\r(?!\n)")
HOME_INTERPOLATED = re.compile(rb"~/(?=\$\{)")

# Nix's token rules (lexer.l), as far as they decide where strings, comments and NUL tokens are
_PATH_CHAR = rb"[a-zA-Z0-9._+\-]"
_TOKENS = [re.compile(pattern) for pattern in (
    rb"[ \t\r\n]+",
    rb"#[^\r\n]*",
    rb"/\*(?:[^*]|\*+[^*/])*\*+/",
    rb"[a-zA-Z_][a-zA-Z0-9_'\-]*",                                  # ID (and keywords)
    rb"[0-9]+",                                                      # INT
    rb"(?:[1-9][0-9]*\.[0-9]*|0?\.[0-9]+)(?:[Ee][+-]?[0-9]+)?",      # FLOAT
    rb"%s*(?:/%s+)+/?" % (_PATH_CHAR, _PATH_CHAR),                   # PATH
    rb"%s*/(?=\$\{)" % _PATH_CHAR,                                   # PATH_SEG before an interpolation
    rb"~(?:/%s+)+/?|~/(?=\$\{)" % _PATH_CHAR,                        # HPATH
    rb"<%s+(?:/%s+)*>" % (_PATH_CHAR, _PATH_CHAR),                   # SPATH
    rb"[a-zA-Z][a-zA-Z0-9+\-.]*:[a-zA-Z0-9%/?:@&=+$,\-_.!~*']+",     # URI
    rb"\.\.\.|==|!=|<=|>=|&&|\|\||->|//|\+\+",
)]


def _string_end(data: bytes, at: int, stack: list[str]) -> int:
    """From inside a `"` string at `at`: the offset after the string's next token (Nix's STRING state)."""
    byte = data[at]
    if byte == 0x22:  # `"`
        stack.pop()
        return at + 1
    if byte == 0x5C:  # `\` and any byte
        return at + 2
    if byte == 0x24:  # `$`
        following = data[at + 1 : at + 2]
        if following == b"{":
            stack.append("code")
            return at + 2
        return at + (3 if following == b"\\" else 1 if following in (b'"', b"") else 2)
    return at + 1


def _indented_end(data: bytes, at: int, stack: list[str]) -> int:
    """From inside a `''` string at `at`: the offset after its next token (Nix's IND_STRING state)."""
    if data.startswith(b"''", at):
        if data.startswith(b"''$", at) or data.startswith(b"'''", at):
            return at + 3
        if data.startswith(b"''\\", at):
            return at + 4
        stack.pop()
        return at + 2
    if data[at] == 0x24:  # `$`
        following = data[at + 1 : at + 2]
        if following == b"{":
            stack.append("code")
            return at + 2
        return at + (1 if following in (b"'", b"") else 2)
    return at + 1


def _nix_end(data: bytes, quiet: list[int]) -> int:
    """Where Nix's parser sees the end of `data`: its first NUL read as a token (else its length).

    Each NUL before it that Nix reads inside a string or a comment goes to `quiet`.
    """
    stack = ["code"]  # what each `{`, `${`, `"` and `''` opened
    at, size = 0, len(data)
    while at < size:
        state = stack[-1]
        start = at
        if state == "string":
            at = _string_end(data, at, stack)
        elif state == "indented":
            at = _indented_end(data, at, stack)
        else:
            byte = data[at]
            if byte == 0:
                return at
            if data.startswith(b"''", at):
                stack.append("indented")
                at += 2
            elif byte == 0x22:
                stack.append("string")
                at += 1
            elif data.startswith(b"${", at) or byte == 0x7B:  # `${`, `{`
                stack.append("code")
                at += 2 if byte == 0x24 else 1
            elif byte == 0x7D:  # `}`
                if len(stack) > 1:
                    stack.pop()
                at += 1
            else:
                longest = max((m.end() for m in (t.match(data, at) for t in _TOKENS) if m is not None), default=at + 1)
                at = max(longest, at + 1)
        inner = data.find(b"\0", start, at)
        while inner >= 0:  # a NUL inside a string or a comment
            quiet.append(inner)
            inner = data.find(b"\0", inner + 1, at)
    return size


def nix_end(data: bytes) -> int:
    """The offset where Nix's parser sees the end of `data`: its first NUL between tokens, else its length."""
    return len(data) if b"\0" not in data else _nix_end(data, [])


def nix_reading(data: bytes) -> bytes:
    """`data` as tree-sitter must read it to see Nix's tokens (see the module docstring): `data` itself for
    a file with no NUL and no lone CR."""
    text = data
    if b"\0" in data:
        quiet: list[int] = []
        blanked = bytearray(data[: _nix_end(data, quiet)])
        for offset in quiet:
            blanked[offset] = 0x20
        text = bytes(blanked)
    if b"\r" in text:
        text = LONE_CR.sub(b"\n", text)
    if b"~/${" in text:
        text = HOME_INTERPOLATED.sub(b"./", text)
    return text


def read_as_is(data: bytes) -> bool:
    """Whether tree-sitter parses `data` itself (no NUL, no lone CR, no `~/${`): see the module docstring."""
    return (b"\0" not in data and (b"\r" not in data or LONE_CR.search(data) is None)
            and b"~/${" not in data)
