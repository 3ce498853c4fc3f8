"""How a file lays out its code: line endings, indentation, spacing between bindings.

Steps that insert code (a binding, a marker line) read the file's own habits from
here, so the new bytes look as if the file's author had written them.
"""

from __future__ import annotations

from tree_sitter import Node

from pinshift.edits import Edit


def eol(data: bytes) -> bytes:
    """The file's line ending (CRLF if it uses any)."""
    return b"\r\n" if b"\r\n" in data else b"\n"


def indent_at(data: bytes, offset: int) -> bytes:
    """The leading whitespace of the line holding `offset`."""
    start = data.rfind(b"\n", 0, offset) + 1
    line = data[start:offset]
    return line[: len(line) - len(line.lstrip(b" \t"))]


def indent_step(indent: bytes) -> bytes:
    """One more level of indentation, in the file's character (a tab or two spaces)."""
    return b"\t" if indent.startswith(b"\t") else b"  "


def blank_line_before(data: bytes, offset: int) -> bool:
    """Whether the line above the one holding `offset` is blank (the file separates bindings so)."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    previous_start = data.rfind(b"\n", 0, max(line_start - 1, 0)) + 1
    return line_start > 0 and not data[previous_start:line_start].strip()


def insert_after_binding(data: bytes, bindings: list[Node], text: bytes, reason: str) -> Edit:
    """An edit adding `text` (one binding, without indentation) after the last of `bindings`.

    On its own line, indented like that binding (and after a blank line when the file
    separates its bindings so) when the last binding ends its line; otherwise on the
    same line after a space (`{ a = 1; }` becomes `{ a = 1; b = 2; }`).
    """
    last = bindings[-1]
    anchor = last.end_byte
    line_end = data.find(b"\n", anchor)
    line_end = len(data) if line_end < 0 else line_end
    rest = data[anchor:line_end].rstrip(b"\r").strip(b" \t")
    if rest and not rest.startswith(b"#"):
        return Edit(anchor, anchor, b" " + text, reason)
    if line_end > 0 and data[line_end - 1 : line_end] == b"\r":
        line_end -= 1
    newline = eol(data)
    separator = newline * 2 if len(bindings) > 1 and blank_line_before(data, last.start_byte) else newline
    return Edit(line_end, line_end, separator + indent_at(data, last.start_byte) + text, reason)
