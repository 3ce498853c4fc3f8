"""Path literals the way Nix's lexer reads them, for the cases tree-sitter-nix 0.1.0 lets through.

tree-sitter-nix takes any run of path characters and slashes as one path fragment.
Nix (2.8) lexes a path greedily as one token matching

    PATH   [a-zA-Z0-9._+-]*(/[a-zA-Z0-9._+-]+)+/?      (or PATH_SEG [a-zA-Z0-9._+-]*/ right before `${`)
    HPATH  ~(/[a-zA-Z0-9._+-]+)+/?                     (or exactly `~/` right before `${`)

and then reads the rest of the path as string pieces, with two rules of its own:

- the token and the pieces after it may not end the path with `/`: "path has a trailing slash"
  (`/a/`, `./a/${b}/`);
- before the first `${`, at most one more piece may follow the first token, and with no `${` at all
  none may (`/foo//bar` is the token `/foo/` and the piece `/bar`: "unexpected PATH_END"). So an
  empty segment (`//`) is an error before the first interpolation, and allowed after it
  (`/foo/${x}//bar` is fine).

A fragment that does not start with a path token at all (`a//b`, `f //b x`) is not a path for
Nix: it reads `a // b`, the update operator (`a//b//c` is `a // b // c`: each rest that does not
start a path token is split again). `check_path` hands such a fragment back as a `Reread`; the
caller reads the file again with all of them rewritten at once, as Nix reads them (parse_rules.py).

Examples:
    `./a/b.nix`, `/foo//${x}`, `~/a/${x}/b`  -> no problem
    `/a/`, `./a/${b}/`                     -> "path has a trailing slash"
    `/foo//bar`, `a/b//c`                  -> "empty segment"
    `~//foo`                               -> "invalid home path"
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

_CHAR = rb"[a-zA-Z0-9._+\-]"
_PATH = re.compile(rb"%s*(?:/%s+)+/?" % (_CHAR, _CHAR))
_HPATH = re.compile(rb"~(?:/%s+)+/?" % _CHAR)
_SEGMENT = re.compile(rb"%s*/" % _CHAR)
_RUN = re.compile(rb"%s+" % _CHAR)

PATH_TYPES = ("path_expression", "hpath_expression")

# (offset, message) found in a path node; offsets are absolute
Finding = tuple[int, str]


def path_token_end(data: bytes, offset: int) -> int:
    """Where the PATH token Nix's lexer reads at `offset` ends (`a/b`, `/b`, `.b/c`, `-b/c`), or -1 when none starts there.

    Nix's lexer does not know what the parser expects: where such a token starts, it is a path, also
    where tree-sitter-nix reads a name or an operator (lexer_rules.py).
    """
    match = _PATH.match(data, offset)
    return match.end() if match is not None else -1


def _pieces(data: bytes, node: Node) -> list[tuple[int, bytes | None]]:
    """The path's literal pieces (offset, bytes) and interpolations (offset, None), in order."""
    return [
        (child.start_byte, None if child.type == "interpolation" else data[child.start_byte : child.end_byte])
        for child in node.children
    ]


def _one_piece(text: bytes) -> bool:
    """Whether Nix reads `text` (inside a path, after its first token) as a single string piece."""
    return any(pattern.fullmatch(text) for pattern in (_PATH, _SEGMENT, _RUN))


@dataclass(frozen=True)
class Reread:
    """A path fragment Nix reads as the update operator: bytes [start, end) read as `replacement`."""

    start: int
    end: int
    cut: int  # where its first `//` is: where a problem of that reading is reported
    replacement: bytes

    def message(self, data: bytes) -> str:
        text = data[self.start : self.end].decode("utf-8", "replace")
        reading = self.replacement.decode("utf-8", "replace")
        return f"syntax error: {text!r} is not a path for Nix but {reading!r}, which does not parse here"


def check_path(data: bytes, node: Node) -> Iterator[Finding | Reread]:
    """Where and why Nix rejects the path literal `node` (nothing when it accepts it).

    A fragment Nix does not read as a path at all comes back as a `Reread`, for the caller to decide.
    """
    pieces = _pieces(data, node)
    if not pieces:
        return
    start, first = pieces[0]
    if first is None:
        return
    before_interpolation = len(pieces) > 1 and pieces[1][1] is None
    home = node.type == "hpath_expression" or first.startswith(b"~")  # `~/${x}` is read as `./${x}` (reading.py)
    if before_interpolation and (first == b"~/" if home else _SEGMENT.fullmatch(first)):
        token = first  # `a/${`, `~/${`: Nix's PATH_SEG / HPATH_START before an interpolation
    else:
        match = (_HPATH if home else _PATH).match(first)
        if match is None:
            if home:
                yield start, f"syntax error: invalid home path {first.decode('utf-8', 'replace')!r}"
                return
            reread = _not_a_path(start, first)
            if reread is not None:
                yield reread
            return
        token = match.group()
    rest = first[len(token) :]
    if rest and not (before_interpolation and _one_piece(rest)):
        empty = first.find(b"//")
        at = start + (empty if empty >= 0 else len(token))
        yield at, f"syntax error: empty segment ('//') in path {first.decode('utf-8', 'replace')!r}"
        return
    last_offset, last = pieces[-1]
    if last is not None and last.endswith(b"/"):
        yield last_offset + len(last) - 1, "syntax error: path has a trailing slash"


def _not_a_path(start: int, first: bytes) -> Reread | None:
    """`a//b` is `a // b` for Nix, `a//b//c` is `a // b // c`: split at each `//` until a rest starts a path."""
    cut = first.find(b"//")
    if cut < 0:  # not something tree-sitter-nix produces; say nothing rather than guess
        return None
    parts, at = [], 0
    while cut >= 0 and not first.startswith(b"~", at) and (at == 0 or _PATH.match(first, at) is None):
        parts.append(first[at:cut])
        at = cut + 2
        cut = first.find(b"//", at)
    return Reread(start, start + len(first), start + first.index(b"//"), b" // ".join(parts + [first[at:]]))
