"""Where a Nix file's syntax tree changed between the current state and TARGET: the changed node pairs.

The two trees are walked together from the root, only into children a hunk touches (`hunks.py`: the
bytes outside the hunks are the same in both files), as long as a node and its counterpart have the
same kind and as many children (comments aside). Where they stop matching (another kind, another
number of children, another token) is a *region*: `toString` became `builtins.toString`, `optional`
became `optionals`. A region is rarely a whole change (`lib.optional c x` -> `lib.optionals c [ x ]`
is two regions), so each region also gives its *sites*: the smallest enclosing node pair a pattern can
be (an expression other than a name or literal, or a binding) and up to `LEVELS` more above it, each
with the regions it holds. `propose_rewrite` generalises sites of the same change across places.

Bounded: one walk per file, each node visited at most once; at most `MAX_REGIONS` regions per file
(a file changed in more places is not a regular change a rule explains); sites larger than
`MAX_SITE_BYTES` or holding a comment are left out (a rule cannot say them, or would move the comment).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from pinshift.infer.token_hunks import Hunk
from pinshift.syntax.queries import walk

MAX_REGIONS = 256
LEVELS = 3
MAX_SITE_BYTES = 2048
MAX_CLIMB = 64  # parents climbed from a region to its sites
AROUND = 8  # bindings said around a site, innermost first
# expressions too small to be a pattern on their own: a name, a number, a literal (their parent is the site)
LEAVES = frozenset({
    "variable_expression", "integer_expression", "float_expression", "path_expression", "hpath_expression",
    "spath_expression", "uri_expression", "string_expression", "indented_string_expression",
})


@dataclass
class Site:
    """A node of the current file (`before`) and its counterpart in TARGET (`after`), with the regions it holds
    (ids unique over the run) and the binding nodes around it, innermost first (for `inside`)."""

    path: str
    doc: object
    target_doc: object
    before: object
    after: object
    level: int
    regions: set[tuple[str, int]] = field(default_factory=set)
    changes: set[str] = field(default_factory=set)  # what its regions are: `region_kind`
    hunks: list = field(default_factory=list, repr=False)  # the file's hunks (shared by its sites)
    up: dict = field(default_factory=dict, repr=False)  # the file's walked nodes' parent pairs (shared)
    binding_of: object = field(default=None, repr=False)  # () -> {binding node id: queries.Binding}, once per file
    _around: tuple | None = field(default=None, repr=False)

    @property
    def around(self) -> tuple[str, ...]:
        """The dotted paths of the bindings whose value holds the site, innermost first (found when first asked)."""
        if self._around is None:
            self._around = _around(self.before, self.up, self.binding_of()) if self.binding_of is not None else ()
        return self._around

    @property
    def key(self) -> tuple[str, int]:
        return self.path, self.before.id


def children(node) -> list:
    """A node's children without comments."""
    return [c for c in node.children if c.type != "comment"]


TEXT = frozenset({"string_fragment", "string_expression", "indented_string_expression", "escape_sequence",
                  "dollar_escape", "comment"})
LISTS_OF_NAMES = frozenset({"binding_set", "formals", "inherited_attrs"})


def region_kind(node, other) -> str:
    """"text" (a string's text: replace-in-strings'), "names" (bindings, formals or inherited names added or taken
    away: set-binding's, pin-nixpkgs'), "shape" (another kind of node, another number of children: no other kind's;
    a string that became a list too), or "word" (one token spelled otherwise: a rename's)."""
    if node.type in TEXT and other.type in TEXT:
        return "text"
    if node.type in LISTS_OF_NAMES and other.type in LISTS_OF_NAMES:
        return "names"
    if node.type != other.type or node.child_count != other.child_count:
        return "shape"
    return "word"


def siteable(node) -> bool:
    return node.type == "binding" or (node.type.endswith("_expression") and node.type not in LEAVES)


def untouched(hunks: list[Hunk], node) -> bool:
    """Whether TARGET has `node`'s bytes as they are: no hunk inside it (an insertion at its edge is outside)."""
    start, end = node.start_byte, node.end_byte
    return not any((h.start < end and h.end > start) or (h.start == h.end and start < h.start < end) for h in hunks)


def _touched(hunks: list[Hunk], starts: list[int], node) -> bool:
    """Whether a hunk lies in or at the edge of `node` (hunks are sorted and do not overlap)."""
    index = bisect.bisect_right(starts, node.end_byte)
    return index > 0 and hunks[index - 1].end >= node.start_byte


def regions(doc, target_doc, hunks: list[Hunk]) -> tuple[list[tuple], dict[int, tuple]]:
    """(the changed node pairs in source order, each walked node's parent pair by node id). Empty when the file
    changed in more than MAX_REGIONS places."""
    starts = [h.start for h in hunks]
    found: list[tuple] = []
    up: dict[int, tuple] = {}
    stack = [(doc.root, target_doc.root)]
    while stack:
        node, other = stack.pop()
        mine, theirs = children(node), children(other)
        if node.type != other.type or not mine or len(mine) != len(theirs):
            if doc.text(node) != target_doc.text(other):
                found.append((node, other))
                if len(found) > MAX_REGIONS:
                    return [], up
            continue
        for child, counterpart in reversed(list(zip(mine, theirs))):
            if _touched(hunks, starts, child):
                up[child.id] = (node, other)
                stack.append((child, counterpart))
    return found, up


def sites(path: str, doc, target_doc, hunks: list[Hunk], binding_of=None) -> list[Site]:
    """The sites of every region of one file (a node pair reached from several regions is one site, holding them
    all). `binding_of`: () -> {binding node id: its `queries.Binding`}, to say the bindings around a site."""
    found, up = regions(doc, target_doc, hunks)
    if not found:
        return []
    by_node: dict[int, Site] = {}
    for index, (node, other) in enumerate(found):
        kind = region_kind(node, other)
        level, climbed = -1, 0
        while node is not None and level < LEVELS and climbed < MAX_CLIMB:
            climbed += 1
            if siteable(node):
                level += 1
                site = by_node.get(node.id)
                if site is None:
                    site = by_node[node.id] = Site(path, doc, target_doc, node, other, level, hunks=hunks, up=up,
                                                   binding_of=binding_of)
                site.level = min(site.level, level)
                site.regions.add((path, index))
                site.changes.add(kind)
            node, other = up.get(node.id, (None, None))
    kept = []
    comments = [[c.start_byte for c in walk(d.root, "comment")] for d in (doc, target_doc)]
    for site in by_node.values():
        if site.before.end_byte - site.before.start_byte > MAX_SITE_BYTES or \
                site.after.end_byte - site.after.start_byte > MAX_SITE_BYTES:
            continue
        if _holds(comments[0], site.before) or _holds(comments[1], site.after):
            continue
        kept.append(site)
    return sorted(kept, key=lambda s: (s.before.start_byte, -s.before.end_byte))


def _holds(starts: list[int], node) -> bool:
    """Whether one of the sorted offsets lies inside `node`."""
    index = bisect.bisect_left(starts, node.start_byte)
    return index < len(starts) and starts[index] < node.end_byte


def _around(node, up: dict[int, tuple], binding_of: dict) -> tuple[str, ...]:
    """The dotted paths of the bindings whose value holds `node` (not `node` itself), innermost first (at most
    AROUND of them; a binding with a computed name ends the list)."""
    found = []
    parent = up.get(node.id)
    while parent is not None and len(found) < AROUND:
        binding = binding_of.get(parent[0].id)
        if binding is not None:
            if None in binding.path:
                break
            found.append(binding.dotted)
        parent = up.get(parent[0].id)
    return tuple(found)
