"""Structural patterns for the `rewrite` step kind: Nix source with metavariables, compiled once, matched on trees.

A pattern is Nix syntax in which `$X` stands for one expression (or one attribute name, one formal) and
`$$$XS` for a run of list items, call arguments, formals or bindings, as ast-grep writes them. It is
parsed by tree-sitter-nix with each metavariable replaced by a placeholder identifier; a pattern that is
not an expression is tried as one binding (`default = false;`). Matching compares node kinds and token
text, comments and whitespace ignored. A call's arguments are one run (`f $$$ARGS` matches `f a b`).

Candidates are found from an anchor: the longest name or string text the pattern spells outside its
metavariables. Each place the file's bytes spell it is located once (one cursor sweep), and only the
few nodes above it that can hold the pattern's root are tried: each node is tried at most once, so the
work grows with the file, not with the file times its matches. A pattern with no such text (`$F $X`)
tries every node of its root's kind (one query).

Examples:
    >>> p = compile_pattern("toString $X", "pattern")
    >>> p.anchor, p.root.type, sorted(p.names)
    (b'toString', 'apply_expression', ['X'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from pinshift.errors import ParamError
from pinshift.syntax.document import Document, parse_document
from pinshift.syntax.queries import walk

_ONE = "__pinshiftMV_"
_SEQ = "__pinshiftSEQ_"
_SEQ_RE = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)")
_ONE_RE = re.compile(r"\$([A-Z_][A-Z0-9_]*)")
_RUNS = ("list_expression", "binding_set", "formals", "inherited_attrs", "apply_expression")
# a capture that is one term wherever it goes; anything else is put in parentheses where it is an operand
ATOMIC = frozenset({
    "variable_expression", "select_expression", "parenthesized_expression", "list_expression",
    "attrset_expression", "rec_attrset_expression", "let_attrset_expression", "string_expression",
    "indented_string_expression", "integer_expression", "float_expression", "path_expression",
    "hpath_expression", "spath_expression", "uri_expression",
})
# where a capture needs no parentheses: the whole replacement, a binding's value, inside ( ) or ${ }
_OPEN_CONTEXTS = frozenset({"binding", "parenthesized_expression", "interpolation", "source_code"})


@dataclass
class Pattern:
    """A compiled pattern: its parsed document, root node, metavariables and anchor."""

    source: str
    doc: Document
    root: Node
    names: set[str]  # every metavariable (without `$`)
    holes: dict[int, tuple[str, bool]]  # pattern node id -> (name, is a run)
    anchor: bytes | None  # text a match must spell (a name or string text), or None
    anchor_depth: int = 0  # how many nodes the anchor leaf sits below the root
    free: dict[int, str] = field(default_factory=dict)  # pattern variable node id -> the name it reads
    chains: set[int] = field(default_factory=set)  # apply chains matched as one run (head + arguments)


def _substituted(text: str, binding_runs: bool) -> str:
    def run(match: re.Match) -> str:
        name = _SEQ + match.group(1)
        return f"{name} = {name};" if binding_runs else name

    return _ONE_RE.sub(lambda m: _ONE + m.group(1), _SEQ_RE.sub(run, text))


def _parsed(text: str, key: str) -> tuple[Document, Node]:
    """The document of a pattern's Nix text (metavariables already replaced) and its root node."""
    tried = []
    for source, as_binding in ((text, False), ("{ " + text + (" }" if text.rstrip().endswith(";") else "; }"), True)):
        doc = parse_document(source.encode(), key)
        top = [c for c in doc.root.named_children if c.type != "comment"]
        if doc.problems or len(top) != 1:
            tried.append(doc.problems[0].message if doc.problems else "not one expression")
            continue
        node = top[0]
        if as_binding:
            binding_set = next((c for c in node.named_children if c.type == "binding_set"), None)
            entries = [c for c in binding_set.named_children if c.type != "comment"] if binding_set else []
            if len(entries) != 1:
                tried.append("not one binding")
                continue
            node = entries[0]
        return doc, node
    raise ParamError(key, f"'{key}' is not a Nix expression or one binding ({tried[0]}): {text!r}")


def compile_pattern(text: str, key: str) -> Pattern:
    """Parse `text` (a pattern or a replacement) into a Pattern; a ParamError names `key` when it is not Nix."""
    if not text.strip():
        raise ParamError(key, f"'{key}' is empty: write Nix source such as 'toString $X'")
    if _ONE in text or _SEQ in text:
        raise ParamError(key, f"'{key}' spells pinshift's placeholder names ({_ONE}, {_SEQ}): write $X instead")
    try:
        doc, root = _parsed(_substituted(text, False), key)
    except ParamError:
        doc, root = _parsed(_substituted(text, True), key)
    pattern = Pattern(text, doc, root, set(), {}, None)
    _find_holes(pattern)
    _find_anchor(pattern)
    return pattern


def _find_holes(pattern: Pattern) -> None:
    doc = pattern.doc
    for node in walk(pattern.root):
        if node.type != "identifier":
            continue
        text = doc.text(node).decode()
        if text.startswith(_ONE) or text.startswith(_SEQ):
            is_run = text.startswith(_SEQ)
            name = text[len(_SEQ if is_run else _ONE):]
            hole, above = node, doc.ancestry.parent(node)
            # the largest node that is nothing but this placeholder: `$X` (a variable), `$$$XS` (a formal, a binding)
            while above is not None and hole.id != pattern.root.id and (
                doc.text(above).strip() == text.encode() or (is_run and above.type == "binding"
                                                             and doc.text(above) == f"{text} = {text};".encode())):
                hole, above = above, doc.ancestry.parent(above)
            if is_run and (above is None or above.type not in _RUNS):
                raise ParamError("pattern", f"$$${name} stands for a run of list items, call arguments, formals "
                                            f"or bindings; here it is not one: {pattern.source!r}")
            if hole.id == pattern.root.id:
                raise ParamError("pattern", f"${'$$' if is_run else ''}{name} alone matches everything: write "
                                            "the code around it (e.g. 'toString $X')")
            pattern.holes[hole.id] = (name, is_run)
            pattern.names.add(name)
            if is_run and above.type == "apply_expression":
                chain = above
                while (up := doc.ancestry.parent(chain)) is not None and up.type == "apply_expression" \
                        and up.child_by_field_name("function") == chain:
                    chain = up
                pattern.chains.add(chain.id)
        elif (parent := doc.ancestry.parent(node)) is not None and parent.type == "variable_expression":
            pattern.free[parent.id] = doc.text(node).decode()
    for node in walk(pattern.root, *_RUNS):
        runs = [c for c in _children(node, node.id in pattern.chains) if pattern.holes.get(c.id, ("", False))[1]]
        if len(runs) > 1:
            raise ParamError("pattern", f"at most one $$$ run per list, call, formals or attrset: {pattern.source!r}")


def _find_anchor(pattern: Pattern) -> None:
    """The longest name or string text outside the metavariables, and how deep below the root it sits."""
    best, depth = None, 0
    stack = [(pattern.root, 0)]
    while stack:
        node, level = stack.pop()
        if node.id in pattern.holes:
            continue
        if node.child_count == 0 and node.type in ("identifier", "string_fragment"):
            text = pattern.doc.text(node)
            if best is None or len(text) > len(best):
                best, depth = text, level
        stack.extend((c, level + 1) for c in node.children)
    pattern.anchor, pattern.anchor_depth = best, depth


def _children(node: Node, chained: bool = False) -> list[Node]:
    """A node's children without comments; an apply chain matched as a run (`chained`) is its head and arguments."""
    if chained and node.type == "apply_expression":
        arguments = []
        while node.type == "apply_expression":
            arguments.append(node.child_by_field_name("argument"))
            node = node.child_by_field_name("function")
        return [node, *reversed(arguments)]
    return [c for c in node.children if c.type != "comment"]


@dataclass
class Match:
    """One match: the node, what each metavariable captured, the free names it read and comments it spans."""

    node: Node
    captures: dict[str, Node | tuple[Node, ...]]
    reads: list[tuple[str, Node]]  # (name, the file's variable node)
    dropped: list[Node]  # comments between matched tokens that no capture holds


def candidates(pattern: Pattern, doc: Document, counter: list | None = None) -> list[Node]:
    """The nodes worth trying, each once: those above each anchor occurrence that have the root's kind."""
    root_type = pattern.root.type
    if pattern.anchor is None:
        return list(walk(doc.root, root_type))
    ranges = []
    data, needle = doc.data, pattern.anchor
    start = data.find(needle)
    while start >= 0:
        ranges.append((start, start + len(needle)))
        start = data.find(needle, start + len(needle))
    found, seen = [], set()
    ancestry = doc.ancestry
    for node in ancestry.locate(ranges):
        if node.child_count or doc.text(node) != needle:
            continue  # a longer name, or text inside a comment
        level, current = 0, node
        while current is not None:
            if level >= pattern.anchor_depth and not (pattern.chains and current.type == "apply_expression"):
                break  # deeper than the pattern (a run of arguments may make a call chain longer)
            current = ancestry.parent(current)
            level += 1
            if counter is not None:
                counter[0] += 1
            if current is not None and current.type == root_type and current.id not in seen:
                seen.add(current.id)
                found.append(current)
    return found


def match(pattern: Pattern, doc: Document, node: Node) -> Match | None:
    """The Match of `pattern` at `node`, or None."""
    found = Match(node, {}, [], [])
    return found if _match(pattern, doc, pattern.root, node, found) else None


def _match(pattern: Pattern, doc: Document, want: Node, have: Node, found: Match) -> bool:
    hole = pattern.holes.get(want.id)
    if hole is not None:
        name, _ = hole
        if not have.is_named or have.type == "comment":
            return False
        if name in found.captures and not name.startswith("_"):
            return same_tokens(doc, found.captures[name], have)
        found.captures[name] = have
        return True
    if want.type != have.type:
        return False
    if want.child_count == 0 or have.child_count == 0:
        return want.child_count == have.child_count and pattern.doc.text(want) == doc.text(have)
    if want.id in pattern.free:
        found.reads.append((pattern.free[want.id], have))
    chained = want.id in pattern.chains
    wanted, had = _children(want, chained), _children(have, chained)
    found.dropped.extend(c for c in have.children if c.type == "comment")
    run = next((i for i, c in enumerate(wanted) if pattern.holes.get(c.id, ("", False))[1]), None)
    if run is None:
        return len(wanted) == len(had) and all(_match(pattern, doc, w, h, found) for w, h in zip(wanted, had))
    before, after = wanted[:run], wanted[run + 1:]
    if len(had) < len(before) + len(after):
        return False
    tail = had[len(had) - len(after):] if after else []
    if not all(_match(pattern, doc, w, h, found) for w, h in zip(before, had)):
        return False
    if not all(_match(pattern, doc, w, h, found) for w, h in zip(after, tail)):
        return False
    middle = tuple(had[len(before): len(had) - len(after)])
    if any(c.type == "comment" for c in middle):
        return False
    name = pattern.holes[wanted[run].id][0]
    if name in found.captures and not name.startswith("_"):
        return _same_run(doc, found.captures[name], middle)
    found.captures[name] = middle
    return True


def _tokens(doc: Document, node: Node) -> list[bytes]:
    return [doc.text(n) for n in walk(node) if n.child_count == 0 and n.type != "comment"]


def same_tokens(doc: Document, a, b) -> bool:
    """Whether two captures spell the same tokens (comments and whitespace aside)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and _same_run(doc, a, b)
    return _tokens(doc, a) == _tokens(doc, b)


def _same_run(doc: Document, a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(same_tokens(doc, x, y) for x, y in zip(a, b))


@dataclass(frozen=True)
class Template:
    """A replacement: its text with placeholders, where each goes, whether it must be one term there, and the
    names it reads that no metavariable supplies."""

    text: bytes
    slots: tuple[tuple[int, int, str, bool], ...]  # (start, end, name, needs one term), in order
    names: tuple[str, ...]
    binding: bool


def compile_template(text: str, pattern: Pattern) -> Template:
    """The replacement as a Template; its metavariables must all be captured by the pattern."""
    compiled = compile_pattern(text, "replacement")
    unknown = sorted(compiled.names - pattern.names)
    if unknown:
        raise ParamError("replacement", f"'replacement' uses ${unknown[0]}, which the pattern does not capture")
    if (compiled.root.type == "binding") != (pattern.root.type == "binding"):
        raise ParamError("replacement", "'replacement' must be a binding when the pattern is one, else an "
                                        "expression")
    doc, base = compiled.doc, compiled.root.start_byte
    slots = []
    for node in walk(compiled.root):
        hole = compiled.holes.get(node.id)
        if hole is None:
            continue
        parent = doc.ancestry.parent(node)
        open_context = node.id == compiled.root.id or parent is None or parent.type in _OPEN_CONTEXTS or hole[1]
        slots.append((node.start_byte - base, node.end_byte - base, hole[0], not open_context))
    slots.sort()
    return Template(doc.text(compiled.root), tuple(slots), tuple(sorted(set(compiled.free.values()))),
                    compiled.root.type == "binding")


def render(template: Template, doc: Document, captures: dict) -> bytes:
    """The replacement bytes: each slot filled with the captured bytes as written (in parentheses where needed)."""
    out, last = [], 0
    for start, end, name, one_term in template.slots:
        out.append(template.text[last:start])
        captured = captures[name]
        if isinstance(captured, tuple):
            text = doc.data[captured[0].start_byte: captured[-1].end_byte] if captured else b""
        else:
            text = doc.text(captured)
            if one_term and captured.type not in ATOMIC:
                text = b"(" + text + b")"
        out.append(text)
        last = end
    out.append(template.text[last:])
    return b"".join(out)


def glob_regex(globs: tuple[str, ...]) -> re.Pattern | None:
    """One regular expression for binding-path globs (`*` any run of characters; a leading `*.` may match nothing).

    >>> bool(glob_regex(("*.enable",)).fullmatch("enable")), bool(glob_regex(("*.enable",)).fullmatch("a.b.enable"))
    (True, True)
    """
    if not globs:
        return None
    parts = []
    for glob in globs:
        lead = ""
        if glob.startswith("*."):
            lead, glob = r"(?:.*\.)?", glob[2:]
        parts.append(lead + ".*".join(re.escape(piece) for piece in glob.split("*")))
    return re.compile("|".join(f"(?:{p})" for p in parts))
