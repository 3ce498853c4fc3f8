"""Text from files, made safe to show: control characters and bytes that are not UTF-8 become visible escapes.

A recipe file (or its name) can hold terminal escape sequences, a carriage return
that hides the rest of a line, or bidirectional overrides that reorder what a
reviewer reads ("Trojan Source"). Everything pinshift prints that comes from a
file's bytes or a file's name goes through `printable` first, so the terminal
shows `\\x1b[2J` instead of clearing the screen.

A file name need not be UTF-8 (git allows any bytes but `/` and NUL): pinshift decodes names with
`surrogateescape`, so the byte 0xff becomes the lone surrogate U+DCFF, which no UTF-8 output can hold.
The one rule for every output (text, Markdown and JSON alike): such a byte is shown as `\\xff`, four
characters, as a control character is; any other lone surrogate as `\\udXXX`. `visible_bytes` applies it
alone (JSON strings keep their newlines as JSON escapes).

Examples:
    >>> printable('x = "\\x1b[31mred";')
    'x = "\\\\x1b[31mred";'
    >>> printable("a\\rb\\tc")
    'a\\\\rb\\tc'
    >>> printable("crlf line\\r", keep_final_cr=True)
    'crlf line\\r'
    >>> printable(b"bad\\xff.nix".decode("utf-8", "surrogateescape"))
    'bad\\\\xff.nix'
"""

from __future__ import annotations

import re

# C0 controls except tab, DEL, C1 controls, and the Unicode marks that reorder or hide text
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                     "\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, decoded with surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep_newlines: bool = False, keep_final_cr: bool = False) -> str:
    """`text` with every control character shown as an escape (`\\x1b`, `\\r`, `\\u202e`); tabs stay.

    `keep_newlines`: for multi-line output, newlines stay. `keep_final_cr`: a line of a
    CRLF file keeps its final carriage return (it hides nothing there).
    """
    if keep_newlines:
        return "\n".join(printable(line, keep_final_cr=keep_final_cr) for line in text.split("\n"))
    if keep_final_cr and text.endswith("\r"):
        return _UNSAFE.sub(_escape, text[:-1]) + "\r"
    return _UNSAFE.sub(_escape, text)


def visible_bytes(text: str, json: bool = False) -> str:
    """`text` with only the lone surrogates shown (`\\xff` for the byte 0xff of a name that is not UTF-8);
    `json`: `text` is JSON, whose strings then read `\\xff` (the backslash written as JSON's `\\\\`).

    Examples:
        >>> visible_bytes("bad\\udcff.nix\\n")
        'bad\\\\xff.nix\\n'
        >>> visible_bytes('"bad\\udcff.nix"', json=True)
        '"bad\\\\\\\\xff.nix"'
    """
    if text.isascii():  # the common case, in C: nothing to show (a megabyte of report in a millisecond)
        return text
    try:
        text.encode("utf-8")  # no surrogate at all (a lone one cannot be encoded)
        return text
    except UnicodeEncodeError:
        pass
    if json:
        return _SURROGATE.sub(lambda match: "\\" + _escape(match), text)
    return _SURROGATE.sub(_escape, text)


def visible_data(value):
    """`value` (decoded JSON: dicts, lists, strings, numbers) with `visible_bytes` applied to every string and key,
    for the JSON outputs written with `ensure_ascii` (which would write `\\udcff`).

    Examples:
        >>> visible_data({"bad\\udcff": ["x\\udcfe", 1]})
        {'bad\\\\xff': ['x\\\\xfe', 1]}
    """
    if isinstance(value, str):
        return visible_bytes(value)
    if isinstance(value, dict):
        return {visible_data(key): visible_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_data(item) for item in value]
    return value
