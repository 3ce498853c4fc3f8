"""Syntax problems of a Document: tree-sitter-nix's errors, two of its gaps forgiven, plus Nix's own rules.

tree-sitter-nix 0.1.0 (the PyPI release) rejects a trailing comma after the last
formal, `{ a, b, }:` or `args@{ a ? 1, }:`, although Nix accepts it (RFC 166 style).
It reports that comma either as a MISSING identifier in an empty `formal` or as an
ERROR node holding the lone comma. Exactly that shape is forgiven: one comma, after
a well-formed formal, followed only by comments and the closing brace. A formal whose
default is itself a function with such a comma (`{ a ? { b ? 1, }: 1, }:`, as nixfmt
writes it) is well-formed: its only "error" is the forgiven inner comma. Nix itself
rejects a comma after `...`, and so do we.

It also rejects an empty inherit, `inherit;` or `inherit (x);`, which Nix accepts (and
drops): it reports a MISSING identifier as the only attribute; exactly that is forgiven.

Nix (2.8, our oracle) also rejects a file that starts with a UTF-8 byte-order
mark, which tree-sitter silently skips; that is reported as a problem too, so
`pinshift parse` agrees with Nix. The BOM's bytes are still kept by every edit.
What Nix's parser checks beyond its grammar (paths, integers, duplicates, dynamic
attributes in inherit and let, an empty file) comes from parse_rules.py.

Examples:
    `{ a, b, }: a`      -> no problems
    `{ a = 1; inherit; }` -> no problems
    `{ a, ..., }: a`    -> one problem (Nix: "unexpected ','")
    `{ a,, }: a`        -> one problem
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from pinshift.syntax.parse_rules import rule_problems
from pinshift.syntax.source import Source



_NUMBER = re.compile(r"(?<![\w.])\d+(?!\w|\.\d)")  # as report/groups.py: not in a word, a version or a decimal


@dataclass(frozen=True)
class Problem:
    """One syntax problem, located by byte offset and by 1-based line and column (in bytes)."""

    path: str
    offset: int
    line: int
    column: int
    message: str
    source_line: str
    # shown after the message but not part of `key`: where a duplicate was first defined moves with edits
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}{self.detail}"

    @property
    def key(self) -> tuple[str, str]:
        """What identifies a problem independently of where edits moved it."""
        return (self.message, self.source_line.strip())

    @property
    def group_key(self) -> str:
        """What problems that repeat one another share: the message, its numbers written <n>
        (the rule report/groups.py applies to every finding)."""
        return _NUMBER.sub("<n>", self.message)


# The walk below keeps, for each node it is in, the node, its children and which child it entered last:
# a node's parent and siblings come from there. tree-sitter's `.parent` and `.prev_sibling` walk down from
# the root on every use, and the verdict of a trailing comma reads the formal before it, which may hold
# such commas itself (`{ a ? { b ? 1, }: 1, }:`): reading it again for each comma was exponential in the
# nesting (issue 29). One walk now decides every node once, children before their parent.


@dataclass
class _Frame:
    node: Node
    children: list[Node]
    entered: int = -1  # index in `children` of the child being walked


def _significant_at(siblings: Sequence[Node], index: int, step: int) -> int:
    """The index of the nearest sibling from `index` on in direction `step` (-1 or 1) that is not a comment (-1: none)."""
    while 0 <= index < len(siblings):
        if siblings[index].type != "comment":
            return index
        index += step
    return -1


def _significant(siblings: Sequence[Node], index: int, step: int) -> Node | None:
    found = _significant_at(siblings, index, step)
    return siblings[found] if found >= 0 else None


def _real_formal(node: Node | None, yields: dict[int, bool]) -> bool:
    """A formal without problems of its own (a forgiven trailing comma inside its default is none)."""
    if node is None or node.type != "formal":
        return False
    return not node.has_error or not yields.get(node.id, False)


def _forgiven(node: Node, path: list[_Frame], yields: dict[int, bool]) -> bool:
    """Whether the ERROR or MISSING `node` (the child `path[-1]` entered) is one of the two gaps forgiven."""
    parent = path[-1]
    at = parent.entered
    if node.is_missing and node.type == "identifier" and len(path) >= 2:
        holder, outer = parent.node, path[-2]
        if holder.type == "formal":  # `{ a, }:` -> a MISSING identifier in an empty formal after the comma
            if holder.start_byte != holder.end_byte or outer.node.type != "formals":
                return False
            comma = _significant_at(outer.children, outer.entered - 1, -1)
            after = _significant(outer.children, outer.entered + 1, 1)
            if comma < 0 or outer.children[comma].type != "," or after is None or after.type != "}":
                return False
            return _real_formal(_significant(outer.children, comma - 1, -1), yields)
        if holder.type == "inherited_attrs":  # `inherit;` -> a MISSING identifier as its only attribute
            after = _significant(outer.children, outer.entered + 1, 1)
            return (
                all(c == node or c.type == "comment" for c in parent.children)
                and outer.node.type in ("inherit", "inherit_from")
                and after is not None
                and after.type == ";"
            )
        return False
    if node.is_error and parent.node.type == "formals":  # `{ a ? 1, }:` -> an ERROR holding the lone comma
        children = node.children
        if len(children) != 1 or children[0].type != ",":
            return False
        after = _significant(parent.children, at + 1, 1)
        return after is not None and after.type == "}" and _real_formal(_significant(parent.children, at - 1, -1), yields)
    return False


def _verdicts(root: Node) -> tuple[dict[int, bool], set[int]]:
    """For each node that is or holds an ERROR or MISSING node: whether it yields a problem; and the forgiven ones.

    Children are decided before their parent, and siblings from left to right, so the formal before
    a trailing comma is decided when the comma is. Iterative: deep files cannot exhaust the stack.
    """
    yields: dict[int, bool] = {}
    forgiven: set[int] = set()
    if not (root.has_error or root.is_missing):
        return yields, forgiven
    path = [_Frame(root, root.children)]
    while path:
        frame = path[-1]
        frame.entered += 1
        if frame.entered < len(frame.children):
            child = frame.children[frame.entered]
            if not (child.has_error or child.is_missing):
                continue
            if (child.is_missing or child.is_error) and _forgiven(child, path, yields):
                forgiven.add(child.id)
                yields[child.id] = False
                continue
            path.append(_Frame(child, child.children))
            continue
        path.pop()
        node = frame.node
        own = node.is_missing or node.is_error  # an ERROR yields its inner problems, or itself
        yields[node.id] = own or any(yields.get(c.id, False) for c in frame.children)
    return yields, forgiven


def grammar_problem_nodes(root: Node) -> list[Node]:
    """The ERROR and MISSING nodes below `root` that are real problems (the gaps above forgiven), in source order.

    An ERROR that swallowed much of the file says little where it starts; the problems inside it point at
    the offending token (`"torch-${version";` -> the `";`), so those are reported when there are any.
    """
    yields, forgiven = _verdicts(root)
    found: list[Node] = []
    stack = [root] if yields.get(root.id) else []
    while stack:
        node = stack.pop()
        if node.is_missing or node.is_error:
            inner = [c for c in node.children if yields.get(c.id)] if node.is_error else []
            if not inner:
                found.append(node)
                continue
            stack.extend(reversed(inner))
            continue
        stack.extend(reversed([c for c in node.children if yields.get(c.id)]))
    return found


def forgiven_nodes(root: Node) -> set[int]:
    """The ids of the ERROR and MISSING nodes below `root` forgiven as tree-sitter-nix 0.1.0's gaps."""
    return _verdicts(root)[1]


def _describe(doc: Source, node: Node) -> str:
    if node.is_missing:
        return f"syntax error: missing {node.type!r}"
    text = doc.text(node)
    first = text.split()[0].decode("utf-8", "replace") if text.split() else ""
    if len(first) > 20:
        first = first[:20] + "…"
    return f"syntax error: unexpected {first!r}" if first else "syntax error"


NUL_MESSAGE = "syntax error: unexpected end of file at a NUL byte (Nix reads a NUL between tokens as the end)"
BOM = b"\xef\xbb\xbf"
BOM_MESSAGE = "syntax error: byte-order mark (Nix rejects a file starting with a UTF-8 BOM; remove its first 3 bytes)"


def find_problems(doc: Source, regions: Sequence[tuple[int, int]] | None = None) -> list[Problem]:
    """Every syntax problem in `doc`, in source order, forgiving only the gaps above.

    With `regions` (byte ranges of a re-parsed file), Nix's own rules are checked only around
    them (parse_rules.rule_problems); the grammar is always checked in full (it costs nothing
    on a tree without errors).
    """
    found = []
    if doc.data.startswith(BOM):
        # No source line: a problem's key includes it, and edits on line 1 must not make this one look new.
        found.append(Problem(doc.path, 0, 1, 1, BOM_MESSAGE, ""))
    located = [(node.start_byte, _describe(doc, node), "") for node in grammar_problem_nodes(doc.root)]
    if located and doc.end < len(doc.data):  # the tree ends at a NUL byte (reading.py): say why it ends there
        located.append((doc.end, NUL_MESSAGE, ""))
    located += rule_problems(doc, regions, grammar_problem_nodes)
    for offset, message, detail in sorted(located, key=lambda item: item[0]):
        line, column = doc.position(offset)
        found.append(Problem(doc.path, offset, line, column, message, doc.line_text(offset), detail))
    return found
