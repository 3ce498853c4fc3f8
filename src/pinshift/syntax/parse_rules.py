"""What Nix's parser (2.8) rejects although tree-sitter-nix's grammar accepts it.

`nix-instantiate --parse` checks more than the grammar while it builds its syntax tree:

- a file holding no expression (only comments, or nothing): "unexpected end of file";
- path literals with a trailing slash or an empty segment (paths.py);
- an integer literal above 2^63 - 1: "invalid integer"; a float literal out of a double's range
  (`1.8e308`, `1.0e-400`: C's strtod reports ERANGE): "invalid float";
- what Nix's grammar rejects and tree-sitter-nix's does not: a keyword as any name, `or` outside
  the places Nix takes it, chained comparisons (grammar_rules.py);
- what Nix's lexer reads otherwise: a form feed or vertical tab between tokens, a path where
  tree-sitter-nix reads an attribute name or an operator (lexer_rules.py);
- nesting deeper than Nix's parser stack holds (10,000 entries: 4,998 lists, 2,497 curried
  functions; nesting.py);
- `inherit ${x};` / `inherit (s) "a${b}";`: "dynamic attributes not allowed in inherit";
- `let ${x} = 1; in ...`: "dynamic attributes not allowed in let" (`rec { ${x} = 1; }` is fine);
- an attribute defined twice in one attrset, rec or let, a formal named twice (duplicates.py).

Undefined variables are left out on purpose: Nix reports them at parse time too, but recipes
are checked one file at a time and may name things their caller provides, so `pinshift parse`
accepts them; an edit that leaves a bound reference unbound is refused instead (edits.py).

`rule_problems(doc, regions)` checks the whole file, or, given byte ranges of a re-parsed
file, only what can have changed there: nodes overlapping a range, and the attrsets, lets and
functions around it (a conflict between bindings can arise anywhere below their container).
"""

from __future__ import annotations

import bisect
import functools
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal


from tree_sitter import Node, Query, QueryCursor

from pinshift.syntax.attrnames import static_name
from pinshift.syntax.language import nix_language
from pinshift.syntax.source import Source
from pinshift.syntax.duplicates import CONTAINERS, attribute_duplicates, formal_duplicates
from pinshift.syntax.grammar_rules import PATTERNS as GRAMMAR_PATTERNS, grammar_findings
from pinshift.syntax.lexer_rules import PATTERNS as LEXER_PATTERNS, lexer_findings
from pinshift.syntax.nesting import nesting_problem
from pinshift.syntax.paths import PATH_TYPES, Reread, check_path


INT_MAX = 2**63 - 1
DBL_MIN = Decimal(sys.float_info.min)

# (offset, message, detail): the detail (where the first definition is) is shown but not compared
Finding = tuple[int, str, str]

_CAPTURES = {
    "path": PATH_TYPES,
    "int": ("integer_expression",),
    "float": ("float_expression",),
    "inherit": ("inherited_attrs",),
    "container": CONTAINERS,
    "function": ("function_expression",),
}


def query_patterns() -> str:
    """The patterns of the one query every rule reads. Each is a single node (tests/test_growth.py): tree-sitter's
    query engine keeps a pattern with a child constraint open across the node's whole subtree, quadratic on a
    chain such as `a == a == …` (grammar_rules.py)."""
    patterns = " ".join("[%s] @%s" % (" ".join(f"({t})" for t in types), name) for name, types in _CAPTURES.items())
    return " ".join([patterns, GRAMMAR_PATTERNS, LEXER_PATTERNS])


@functools.lru_cache(maxsize=1)
def _query() -> Query:
    """One query for every rule: each pass over the tree is made in C, once."""
    return Query(nix_language(), query_patterns())


_FEW_SPANS = 32  # a query limited to a span still starts at the root: more spans, one query of the file


def _captures(doc: Source, regions: Sequence[tuple[int, int]] | None) -> dict[str, list[Node]]:
    spans = _merged(regions, len(doc.data)) if regions is not None else []
    if regions is None or len(spans) > _FEW_SPANS:
        return QueryCursor(_query()).captures(doc.root)
    found: dict[str, dict[int, Node]] = {}
    for start, end in spans:
        cursor = QueryCursor(_query())
        cursor.set_byte_range(start, end)
        for name, nodes in cursor.captures(doc.root).items():
            bucket = found.setdefault(name, {})
            for node in nodes:
                bucket[node.id] = node
    return {name: sorted(nodes.values(), key=lambda n: n.start_byte) for name, nodes in found.items()}


_NAME_PLACES = ("attrpath", "inherited_attrs")


def inside_literal_text(doc: Source, ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether each byte range [start, end) lies inside one literal fragment of a string that names no attribute.

    Such bytes hold no path, number, name or binder: an edit that only rewrites them (a pin's
    revision in a URL, a marker in a build script) cannot break any rule or unbind any reference.
    """
    ancestry = doc.ancestry
    for (start, end), node in zip(ranges, ancestry.locate(ranges)):
        if node.type != "string_fragment" or not (node.start_byte <= start and end <= node.end_byte):
            return False
        string = ancestry.parent(node)
        holder = ancestry.parent(string) if string is not None else None
        if holder is not None and holder.type == "interpolation":
            holder = ancestry.parent(holder)
        if holder is not None and holder.type in _NAME_PLACES:
            return False
    return True


def _merged(regions: Sequence[tuple[int, int]], size: int, gap: int = 256) -> list[tuple[int, int]]:
    """The regions widened by a byte each side (an edit beside a node touches it), overlapping or
    near ones joined: one query over a stretch costs less than one per edit."""
    spans: list[list[int]] = []
    for start, end in sorted(regions):
        start, end = max(start - 1, 0), min(end + 1, size)
        if spans and start <= spans[-1][1] + gap:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [(start, end) for start, end in spans]


def _is_empty(doc: Source) -> bool:
    return not doc.root.has_error and all(c.type == "comment" for c in doc.root.children)


def _update_readings(doc: Source, rereads: list[Reread], grammar_nodes: Callable) -> Iterator[Finding]:
    """The fragments Nix reads as `a // b` whose reading does not parse (paths.py), decided in one re-read.

    Nix reads every such fragment of the file that way, so the file is parsed once more with all of
    them rewritten (it was re-parsed once per fragment: quadratic in a file of `xN = a//b;`). A problem
    of that reading the file does not have, or a path problem inside a rewritten fragment, is blamed on
    the fragment holding it, else on the nearest one before it. `grammar_nodes(root)` lists the
    grammar's problems (problems.grammar_problem_nodes, handed in by problems.find_problems, so that
    this module does not import the one that imports it).
    """
    rereads = sorted({r.start: r for r in rereads}.values(), key=lambda r: r.start)
    pieces, spans, cursor, shift = [], [], 0, 0
    for reread in rereads:
        pieces += [doc.data[cursor : reread.start], reread.replacement]
        start = reread.start + shift
        spans.append((start, start + len(reread.replacement)))
        shift += len(reread.replacement) - (reread.end - reread.start)
        cursor = reread.end
    pieces.append(doc.data[cursor:])
    other = type(doc).parsed(b"".join(pieces), doc.path)
    starts = [start for start, _ in spans]
    shifts = [end - r.end for (_, end), r in zip(spans, rereads)]  # new offset - old offset after each span
    old = Counter((n.start_byte, n.type, n.is_missing) for n in grammar_nodes(doc.root))
    blamed: set[int] = set()
    for node in grammar_nodes(other.root):
        index = bisect.bisect_right(starts, node.start_byte) - 1
        inside = index >= 0 and node.start_byte < spans[index][1]
        if not inside:
            key = (node.start_byte - (shifts[index] if index >= 0 else 0), node.type, node.is_missing)
            if old[key]:
                old[key] -= 1
                continue
        blamed.add(max(index, 0))
    for path in _captures(other, spans).get("path", ()):
        index = bisect.bisect_right(starts, path.start_byte) - 1
        if index < 0 or path.start_byte >= spans[index][1] or index in blamed:
            continue
        if next(check_path(other.data, path), None) is not None:
            blamed.add(index)
    for index in sorted(blamed):
        yield rereads[index].cut, rereads[index].message(doc.data), ""


def rule_problems(doc: Source, regions: Sequence[tuple[int, int]] | None,
                  grammar_nodes: Callable) -> Iterator[Finding]:
    """Nix's parse-time rules broken in `doc` (only around `regions`, when given), unsorted."""
    if _is_empty(doc):
        yield doc.end, "syntax error: unexpected end of file (the file holds no expression)", ""
    too_deep = nesting_problem(doc)  # decided at the root for a file of fewer than 10,000 nodes
    if too_deep is not None:
        yield too_deep
    if regions is not None and inside_literal_text(doc, regions):
        return
    captures = _captures(doc, regions)
    data = doc.data
    rereads = []
    for node in captures.get("path", ()):
        for finding in check_path(data, node):
            if isinstance(finding, Reread):
                rereads.append(finding)
            else:
                yield finding[0], finding[1], ""
    if rereads:
        yield from _update_readings(doc, rereads, grammar_nodes)
    yield from grammar_findings(doc, captures)
    yield from lexer_findings(doc, captures, _merged(regions, len(data)) if regions is not None else None)
    for node in captures.get("int", ()):
        text = data[node.start_byte : node.end_byte]
        if len(text) >= 19 and text.isdigit() and int(text) > INT_MAX:
            yield node.start_byte, f"syntax error: invalid integer '{text.decode()}' (above 2^63 - 1)", ""
    for node in captures.get("float", ()):
        text = data[node.start_byte : node.end_byte]
        if (b"e" in text.lower() or len(text) > 300) and _float_out_of_range(text):
            yield node.start_byte, f"syntax error: invalid float '{text.decode()}' (out of range)", ""
    for node in captures.get("inherit", ()):
        for attr in node.children_by_field_name("attr"):
            if not attr.is_missing and static_name(data, attr) is None:
                yield attr.start_byte, "syntax error: dynamic attributes not allowed in inherit", ""
    indexes: dict = {}  # each attrset literal's bindings by first name, shared by the containers around it
    for node in captures.get("container", ()):
        if node.type == "let_expression":
            yield from _dynamic_in_let(data, node)
        for duplicate in attribute_duplicates(data, node, indexes):
            line, column = doc.position(duplicate.first.start_byte)
            yield (
                duplicate.node.start_byte,
                f"syntax error: attribute '{duplicate.dotted}' already defined",
                f" (first defined at {line}:{column})",
            )
    for node in captures.get("function", ()):
        for identifier, name in formal_duplicates(data, node):
            spelled = name.decode("utf-8", "replace")
            yield identifier.start_byte, f"syntax error: duplicate formal function argument '{spelled}'", ""


def _float_out_of_range(text: bytes) -> bool:
    """Whether glibc's strtod sets ERANGE: overflow, or an inexact result below the smallest normal double."""
    mantissa, _, exponent = text.lower().partition(b"e")
    digits = mantissa.replace(b".", b"").lstrip(b"0")
    if not digits:
        return False  # zero is exact
    if exponent and abs(int(exponent)) > 10_000:  # far outside any double, and outside Decimal's reach
        return True
    exact = Decimal(text.decode())
    value = float(exact)
    if math.isinf(value):
        return True
    return exact != 0 and exact.copy_abs() < DBL_MIN and Decimal(value) != exact


def _dynamic_in_let(data: bytes, let: Node) -> Iterator[Finding]:
    binding_set = next((c for c in let.named_children if c.type == "binding_set"), None)
    for binding in binding_set.named_children if binding_set is not None else ():
        if binding.type != "binding":
            continue
        first = binding.child(0).child(0)  # attrpath, its first attr; an identifier is always static
        if first is not None and first.type != "identifier" and static_name(data, first) is None:
            yield first.start_byte, "syntax error: dynamic attributes not allowed in let", ""
