"""Nix archives (NAR) and Nix's notations of a sha256, in pure Python: no Nix needed at run time.

A NAR is how Nix serialises a file system tree before hashing it (`nix-hash`,
`nix-prefetch-url --unpack`, the `sha256` of `fetchTarball`). Every string is
written as its length (8 bytes, little-endian), its bytes, and zero padding to a
multiple of 8; the tree is written as nested parenthesised records:

    "nix-archive-1" node
    node      = "(" "type" ( regular | symlink | directory ) ")"
    regular   = "regular" [ "executable" "" ] "contents" <bytes>
    symlink   = "symlink" "target" <bytes>
    directory = "directory" { "entry" "(" "name" <name> "node" node ")" }

with a directory's entries sorted by name, bytewise. Only the executable bit of a
file is recorded: no other permission, owner or time.

Hash notations (`parse_sha256`, `render_sha256`): Nix's own base32 (52 characters of
`0123456789abcdfghijklmnpqrsvwxyz`, the digest read as one little-endian number
and written most significant digit first), base16 (64 hex digits), either one
optionally prefixed `sha256:`, and SRI (`sha256-` and standard base64).

Examples:
    >>> render_sha256(bytes(32), "base32")
    '0000000000000000000000000000000000000000000000000000'
    >>> render_sha256(bytes(32), "sri")
    'sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

BASE32_ALPHABET = "0123456789abcdfghijklmnpqrsvwxyz"
SHA256_SIZE = 32
BASE32_LENGTH = 52  # ceil(256 / 5)
FORMATS = ("base32", "sri", "base16")


# --- the tree a NAR describes ------------------------------------------------------------------


@dataclass
class Directory:
    """A directory: entry name (bytes, no `/`) -> node."""

    entries: dict[bytes, "Node"] = field(default_factory=dict)


@dataclass(frozen=True)
class File:
    """A regular file; `key` says where its contents come from (the caller's business: a blob id)."""

    key: object
    executable: bool = False


@dataclass(frozen=True)
class Symlink:
    """A symbolic link; its target is read through `key` like a file's contents."""

    key: object


Node = Directory | File | Symlink


def leaves(node: Node) -> Iterator[File | Symlink]:
    """The files and symlinks under `node` in the order a NAR holds them (names sorted bytewise)."""
    stack = [node]
    while stack:
        top = stack.pop()
        if isinstance(top, Directory):
            stack.extend(top.entries[name] for name in sorted(top.entries, reverse=True))
        else:
            yield top


# --- serialisation -----------------------------------------------------------------------------


def _string(data: bytes) -> bytes:
    return len(data).to_bytes(8, "little") + data + b"\0" * (-len(data) % 8)


_MAGIC = _string(b"nix-archive-1")
_OPEN, _CLOSE = _string(b"("), _string(b")")
_REGULAR = _OPEN + _string(b"type") + _string(b"regular")
_EXECUTABLE = _string(b"executable") + _string(b"")
_CONTENTS = _string(b"contents")
_SYMLINK = _OPEN + _string(b"type") + _string(b"symlink") + _string(b"target")
_DIRECTORY = _OPEN + _string(b"type") + _string(b"directory")
_ENTRY = _string(b"entry") + _OPEN + _string(b"name")
_NODE = _string(b"node")


def write_nar(root: Node, contents: Iterable[bytes], write: Callable[[bytes], object]) -> None:
    """Serialise `root` into `write`; the n-th item of `contents` holds the n-th of `leaves(root)`.

    Contents are consumed in that order and never all held at once, so a tree of any
    size streams through (pinshift feeds it from one `git cat-file --batch`).
    """
    supply = iter(contents)
    write(_MAGIC)
    _write_node(root, supply, write)
    if next(supply, None) is not None:
        raise ValueError("more contents than the tree has files and symlinks")


def _write_node(node: Node, supply: Iterator[bytes], write: Callable[[bytes], object]) -> None:
    if isinstance(node, Directory):
        write(_DIRECTORY)
        for name in sorted(node.entries):
            write(_ENTRY + _string(name) + _NODE)
            _write_node(node.entries[name], supply, write)
            write(_CLOSE)
        write(_CLOSE)
        return
    data = next(supply, None)
    if data is None:
        raise ValueError("fewer contents than the tree has files and symlinks")
    if isinstance(node, Symlink):
        write(_SYMLINK + _string(data) + _CLOSE)
        return
    write(_REGULAR + _EXECUTABLE + _CONTENTS if node.executable else _REGULAR + _CONTENTS)
    write(len(data).to_bytes(8, "little"))
    write(data)
    write(b"\0" * (-len(data) % 8) + _CLOSE)


def nar_bytes(root: Node, contents: Iterable[bytes]) -> bytes:
    """The whole NAR (for tests and small trees; `nar_sha256` streams)."""
    parts: list[bytes] = []
    write_nar(root, contents, parts.append)
    return b"".join(parts)


def nar_sha256(root: Node, contents: Iterable[bytes]) -> bytes:
    """The sha256 digest of the NAR of `root`: what `nix-hash --type sha256` prints (in its notation)."""
    digest = hashlib.sha256()
    write_nar(root, contents, digest.update)
    return digest.digest()


# --- notations ---------------------------------------------------------------------------------


def to_base32(digest: bytes) -> str:
    """Nix's base32: the digest as a little-endian number, 5 bits a character, most significant first."""
    number = int.from_bytes(digest, "little")
    length = (len(digest) * 8 - 1) // 5 + 1
    return "".join(BASE32_ALPHABET[(number >> (5 * n)) & 31] for n in range(length - 1, -1, -1))


def from_base32(text: str, size: int = SHA256_SIZE) -> bytes | None:
    """The digest a Nix base32 string spells, or None when it is not one (wrong length, letter or padding)."""
    if len(text) != (size * 8 - 1) // 5 + 1:
        return None
    number = 0
    for char in text:
        digit = BASE32_ALPHABET.find(char)
        if digit < 0:
            return None
        number = number << 5 | digit
    if number >> (size * 8):
        return None  # bits beyond the digest: Nix rejects these too
    return number.to_bytes(size, "little")


_SRI = re.compile(r"sha256-([A-Za-z0-9+/]{43}=)\Z")
_BASE16 = re.compile(r"[0-9a-fA-F]{64}\Z")


def hash_format(text: str) -> tuple[str, bool] | None:
    """(format, prefixed) of a sha256 as written: ("base32", False), ("sri", False), ("base16", True)...

    None when `text` is not a sha256 in any notation Nix accepts.
    """
    if _SRI.match(text):
        return ("sri", False) if _decode_sri(text) is not None else None
    prefixed = text.startswith("sha256:")
    rest = text.removeprefix("sha256:")
    if _BASE16.match(rest):
        return "base16", prefixed
    if from_base32(rest) is not None:
        return "base32", prefixed
    return None


def _decode_sri(text: str) -> bytes | None:
    try:
        digest = base64.b64decode(text.removeprefix("sha256-"), validate=True)
    except binascii.Error:
        return None
    return digest if len(digest) == SHA256_SIZE else None


def parse_sha256(text: str) -> bytes | None:
    """The digest of a sha256 in any notation `hash_format` knows, else None."""
    found = hash_format(text)
    if found is None:
        return None
    fmt, _ = found
    if fmt == "sri":
        return _decode_sri(text)
    rest = text.removeprefix("sha256:")
    return bytes.fromhex(rest) if fmt == "base16" else from_base32(rest)


def render_sha256(digest: bytes, fmt: str = "base32", prefixed: bool = False) -> str:
    """`digest` written in `fmt` ("base32", "sri" or "base16"), `sha256:`-prefixed when asked (not SRI)."""
    if fmt == "sri":
        return "sha256-" + base64.b64encode(digest).decode()
    text = digest.hex() if fmt == "base16" else to_base32(digest)
    return "sha256:" + text if prefixed else text
