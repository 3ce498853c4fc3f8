"""pin-nixpkgs's new binding, laid out like the file it goes into (a helper of migrations/pin_nixpkgs.py).

`binding_edit` writes `nixpkgs_pinned = import (builtins.fetchTarball { url = "..."; }) { ... };`
as the first binding of the file's top-level `let` (above the comments of what was first), or a
new `let ... in` on the body's first line; inline when that `let` or the body shares the line of
`let` / the colon. Indentation (tabs or spaces), line endings and a blank line after it follow
the file (pinshift.steps.layout).
"""

from __future__ import annotations

from pinshift.edits import Edit
from pinshift.steps import layout


def _binding_lines(params, indent: bytes) -> list[bytes]:
    """The binding on its own lines, each starting with `indent`."""
    step = layout.indent_step(indent)
    url = params.url.replace("{rev}", params.rev.lower()).encode()
    lines = [indent + params.name.encode() + b" = import (builtins.fetchTarball {",
             indent + step + b'url = "' + url + b'";']
    if params.hash is not None:
        lines.append(indent + step + b'sha256 = "' + params.hash.encode() + b'";')
    arguments = [(key, getattr(params, key)) for key in ("config", "overlays") if getattr(params, key) is not None]
    if not arguments:
        return lines + [indent + b"}) { };"]
    lines.append(indent + b"}) {")
    for key, value in arguments:
        value_lines = value.strip().encode().splitlines()
        lines.append(indent + step + key.encode() + b" = " + value_lines[0])
        lines.extend((indent + step + line if line.strip() else b"") for line in value_lines[1:])
        lines[-1] += b";"
    return lines + [indent + b"};"]


def _inline_binding(params) -> bytes:
    """The binding on one line."""
    url = params.url.replace("{rev}", params.rev.lower()).encode()
    fetch = b'{ url = "' + url + b'";' + (b' sha256 = "' + params.hash.encode() + b'";' if params.hash else b"") + b" }"
    arguments = b"".join(b" " + key.encode() + b" = " + getattr(params, key).strip().encode() + b";"
                         for key in ("config", "overlays") if getattr(params, key) is not None)
    return params.name.encode() + b" = import (builtins.fetchTarball " + fetch + b") {" + arguments + b" };"


def _comment_lines(params, indent: bytes) -> list[bytes]:
    """The `# comment` line above the binding (none without a comment)."""
    if params.comment is None:
        return []
    text = params.comment.strip().encode()
    return [indent + (text if text.startswith(b"#") else b"# " + text)]


def binding_edit(data: bytes, params, function, top_let, why: str) -> Edit:
    """The edit adding `params.name = import (...) { ... };` as the first binding of `top_let`,
    or in a new `let ... in` around the body of `function` when `top_let` is None."""
    eol = layout.eol(data)
    if top_let is not None:
        keyword = top_let.children[0]
        start = _next_token(data, keyword.end_byte, skip_comment=True)
        if b"\n" not in data[keyword.end_byte:start]:
            return Edit(start, start, _inline_binding(params) + b" ", why)
        line_start = data.rfind(b"\n", 0, start) + 1
        indent = layout.indent_at(data, start)
        bindings = [c for c in _binding_set_items(top_let) if c.type != "comment"]
        if data[start:start + 2] == b"in" and not bindings:  # `let\nin`: nothing to line up with
            indent = layout.indent_at(data, keyword.start_byte)
            indent += layout.indent_step(indent)
        lines = _comment_lines(params, indent) + _binding_lines(params, indent)
        separated = not bindings or len(bindings) == 1 or any(
            layout.blank_line_before(data, layout.comment_block_start(data, b.start_byte)) for b in bindings[1:])
        text = eol.join(lines) + eol + (eol if separated and bindings else b"")
        return Edit(line_start, line_start, text, why)
    colon = next(c for c in function.children if c.type == ":")
    start = _next_token(data, colon.end_byte, skip_comment=True)
    if b"\n" not in data[colon.end_byte:start]:
        return Edit(start, start, b"let " + _inline_binding(params) + b" in ", why)
    line_start = data.rfind(b"\n", 0, start) + 1
    indent = layout.indent_at(data, start)
    inner = indent + layout.indent_step(indent)
    lines = [indent + b"let"] + _comment_lines(params, inner) + _binding_lines(params, inner) + [indent + b"in"]
    return Edit(line_start, line_start, eol.join(lines) + eol, why)


def _binding_set_items(let) -> list:
    binding_set = next((c for c in let.named_children if c.type == "binding_set"), None)
    return list(binding_set.named_children) if binding_set is not None else []


def _next_token(data: bytes, offset: int, skip_comment: bool = False) -> int:
    """The first byte at or after `offset` that is not whitespace (nor, with `skip_comment`, a `#`
    comment ending the line `offset` is on: `let # the bindings` keeps its comment on its line)."""
    line_end = data.find(b"\n", offset)
    while offset < len(data) and data[offset : offset + 1] in (b" ", b"\t", b"\r", b"\n"):
        offset += 1
    if skip_comment and data[offset : offset + 1] == b"#" and (line_end < 0 or offset < line_end):
        return _next_token(data, line_end) if line_end >= 0 else len(data)
    return offset
