"""Anti-unification: one `rewrite` rule (pattern, replacement) from the same change made at several places.

Given sites (`changed_nodes.Site`: a node of the current file and its counterpart in TARGET) whose change
looks alike, the pattern is the first site's code with the parts that differ between the places made
metavariables, and the replacement is its TARGET code with the parts it copies from the pattern's
metavariables made the same metavariables:

    lib.optional cfg.verbose "--verbose"      ->  lib.optionals cfg.verbose [ "--verbose" ]
    lib.optional cfg.enable pkgs.hello        ->  lib.optionals cfg.enable [ pkgs.hello ]
    lib.optional $A $B                        ->  lib.optionals $A [ $B ]

The pattern side walks the sites' nodes together: the same bytes everywhere stay as written; a part the
TARGET side also holds at every place (the same bytes, at one position of the TARGET trees) becomes one
metavariable as a whole; a part of the same kind and shape is compared child by child; anything else
becomes a metavariable where one can stand (an expression, an attribute name), else the sites do not
generalise. The replacement side then needs, at each position, the same bytes everywhere, or one
metavariable's captures exactly (the rewrite writes a capture as written), or the same shape again;
a part that is neither (TARGET invents something that differs from place to place) means no rule.
The result is checked by the caller with the rewrite step's own matcher at every site.

Bounded: at most `SAMPLE` sites are generalised (the others are checked against the result), and the walk
stops `MAX_DEPTH` levels below a site.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pinshift.infer.changed_nodes import Site, children

SAMPLE = 64
MAX_DEPTH = 64
_NAMES = [chr(c) for c in range(ord("A"), ord("Z") + 1)]
# text a rule cannot hold: a `$NAME` outside a metavariable would be read as one, and pinshift's own placeholders
_UNSAYABLE = re.compile(r"\$\$\$|\$[A-Z_]|__pinshift")


@dataclass(frozen=True)
class Rule:
    pattern: str
    replacement: str


class _NoRule(Exception):
    pass


def _texts(group: list[tuple]) -> tuple[bytes, ...]:
    return tuple(doc.text(node) for doc, node in group)


def _shape_alike(group: list[tuple]) -> bool:
    first = group[0][1]
    count = len(children(first))
    return count > 0 and all(node.type == first.type and len(children(node)) == count for _, node in group)


def _columns(group: list[tuple]) -> list[list[tuple]]:
    """The children of each node, position by position."""
    rows = [[(doc, child) for child in children(node)] for doc, node in group]
    return [list(column) for column in zip(*rows)]


def _holeable(node, parent_type: str) -> bool:
    """Whether a metavariable can stand for `node`: an expression (not a string's inside), or an attribute name."""
    if node.type == "identifier":
        return parent_type == "attrpath"
    return node.is_named and node.type.endswith("_expression")


def _held(group: list[tuple]) -> set[tuple[bytes, ...]]:
    """The bytes at each position of TARGET's nodes walked together (as long as their shapes match)."""
    found = set()
    stack = [(group, 0)]
    while stack:
        current, depth = stack.pop()
        found.add(_texts(current))
        if depth < MAX_DEPTH and _shape_alike(current):
            stack.extend((column, depth + 1) for column in _columns(current))
    return found


def _pattern_holes(group, parent_type, held, holes, depth, head=False) -> bool:
    """Append to `holes` the node groups that become metavariables on the pattern side; False: no pattern.
    `head`: the nodes are the function a call applies, whose own function stays written where it is the same
    everywhere (`lib.optionals $A $B`, never `$F $B` for `lib.optionals cfg.x`), copied or not."""
    texts = _texts(group)
    if len(set(texts)) == 1:
        return True
    first = group[0][1]
    holeable = _holeable(first, parent_type)
    if holeable and texts in held and not head:
        holes.append(group)
        return True
    if depth < MAX_DEPTH and _shape_alike(group):
        mark = len(holes)
        calls = first.type == "apply_expression"
        if all(_pattern_holes(column, first.type, held, holes, depth + 1, calls and index == 0)
               for index, column in enumerate(_columns(group))):
            return True
        del holes[mark:]
    if holeable:
        holes.append(group)
        return True
    return False


def _replacement_holes(group, names: dict, holes, depth) -> bool:
    texts = _texts(group)
    if texts in names:
        holes.append((group[0][1], names[texts]))
        return True
    if len(set(texts)) == 1:
        return True
    if depth < MAX_DEPTH and _shape_alike(group):
        mark = len(holes)
        if all(_replacement_holes(column, names, holes, depth + 1) for column in _columns(group)):
            return True
        del holes[mark:]
    return False


def _pieces(doc, node, holes: list[tuple]) -> list[bytes]:
    """`node`'s code cut at each hole (node, name): the constant pieces around the holes."""
    data, out, last = doc.data, [], node.start_byte
    for hole, _ in sorted(holes, key=lambda h: h[0].start_byte):
        out.append(data[last:hole.start_byte])
        last = hole.end_byte
    out.append(data[last:node.end_byte])
    return out


def _spelled(doc, node, holes: list[tuple]) -> str | None:
    """`node`'s code with each hole (node, name) written `$name`; None when a constant piece would read as a
    metavariable (`"$HOME"`) or is not text."""
    pieces = _pieces(doc, node, holes)
    names = [name for _, name in sorted(holes, key=lambda h: h[0].start_byte)]
    try:
        texts = [piece.decode("utf-8") for piece in pieces]
    except UnicodeDecodeError:
        return None
    if any(_UNSAYABLE.search(text) or "\0" in text for text in texts):
        return None
    return texts[0] + "".join("$" + name + text for name, text in zip(names, texts[1:]))


def generalise(sites: list[Site]) -> Rule | None:
    """The rule the sites' changes have in common (None: none, or one a recipe cannot write)."""
    sample = sites[:SAMPLE]
    before = [(s.doc, s.before) for s in sample]
    after = [(s.target_doc, s.after) for s in sample]
    if not _shape_alike(before):
        return None  # (a metavariable alone is no pattern: the top node must be shared)
    holes: list[list[tuple]] = []
    held = _held(after)
    calls = before[0][1].type == "apply_expression"
    if not all(_pattern_holes(column, before[0][1].type, held, holes, 1, calls and index == 0)
               for index, column in enumerate(_columns(before))):
        return None
    if len(holes) > len(_NAMES):
        return None
    names: dict[tuple[bytes, ...], str] = {}
    pattern_holes = []
    for index, group in enumerate(holes):
        names.setdefault(_texts(group), _NAMES[index])
        pattern_holes.append((group[0][1], _NAMES[index]))
    replacement_holes: list[tuple] = []
    if not _replacement_holes(after, names, replacement_holes, 0):
        return None
    first = sample[0]
    pattern = _spelled(first.doc, first.before, pattern_holes)
    replacement = _spelled(first.target_doc, first.after, replacement_holes)
    return None if pattern is None or replacement is None else Rule(pattern, replacement)
