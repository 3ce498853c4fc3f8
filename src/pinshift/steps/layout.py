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


def comment_block_start(data: bytes, offset: int) -> int:
    """The start of the line holding `offset`, or of the whole-line `#` comments directly above it.

    Comments on the lines right above a binding belong to it: code inserted before
    the binding goes above them, and a blank line above them separates it.
    """
    start = data.rfind(b"\n", 0, offset) + 1
    while start > 0:
        previous = data.rfind(b"\n", 0, start - 1) + 1
        if not data[previous:start].strip().startswith(b"#"):
            break
        start = previous
    return start


def ends_its_line(data: bytes, offset: int) -> bool:
    """Whether nothing but whitespace or a `#` comment follows `offset` on its line."""
    line_end = data.find(b"\n", offset)
    rest = data[offset : len(data) if line_end < 0 else line_end].rstrip(b"\r").strip(b" \t")
    return not rest or rest.startswith(b"#")


def insert_after_binding(data: bytes, bindings: list[Node], text: bytes, reason: str,
                         after: Node | None = None, comment: bytes = b"") -> Edit:
    """An edit adding `text` (one binding, without indentation) after `after` (default: the last of `bindings`).

    On its own line, indented like that binding, when it ends its line: after a blank
    line when the file separates these bindings so (judged from the line above the
    binding that follows `after`, or above `after` itself when it is the last), with
    `comment` (a whole `# ...` line, without indentation) on the line above it.
    Otherwise on the same line after a space (`{ a = 1; }` becomes `{ a = 1; b = 2; }`),
    and without the comment: a `#` comment cannot share a line with code that follows it.
    """
    anchor = after if after is not None else bindings[-1]
    if not ends_its_line(data, anchor.end_byte):
        return Edit(anchor.end_byte, anchor.end_byte, b" " + text, reason)
    line_end = data.find(b"\n", anchor.end_byte)
    line_end = len(data) if line_end < 0 else line_end
    if line_end > 0 and data[line_end - 1 : line_end] == b"\r":
        line_end -= 1
    newline = eol(data)
    position = next((i for i, b in enumerate(bindings) if b == anchor), len(bindings) - 1)
    following = [b for b in bindings[position + 1 :] if b.type != "comment"]
    if following:
        separated = blank_line_before(data, comment_block_start(data, following[0].start_byte))
    else:
        separated = len(bindings) > 1 and blank_line_before(data, anchor.start_byte)
    indent = indent_at(data, anchor.start_byte)
    lines = (indent + comment + newline if comment else b"") + indent + text
    return Edit(line_end, line_end, (newline * 2 if separated else newline) + lines, reason)
