"""How full Nix's parser stack gets: nesting deeper than Nix (2.8) can parse is a problem, as it is for Nix.

Nix parses with a bison GLR parser whose stack holds 10,000 entries; a file that needs more is "memory
exhausted" for Nix, however valid. Measured: 4,998 nested lists parse and 4,999 do not, 2,497 curried
lambdas with trailing-comma formals (`{ a0, }: { a1, }: … 1`) and not 2,498, 2,496 nested attrsets
(`{ a = { a = … }; }`), 3,331 `let … in`, 9,995 parentheses, a function of 4,998 formals. tree-sitter
parses any depth, so without this pinshift accepted files Nix rejects (and would write an edit making one).

The stack at a token is what an LR parser holds when it shifts it: for each enclosing production of
Nix's grammar, the symbols already read (`[` and the list so far for a list element; `let`, the
bindings and `in` for a let's body; `{` and one formal with its comma per formal before it), plus the
entry the parser starts with. `_helds` gives that count for each child of a tree-sitter node.

Nix's grammar has one ambiguity, which its GLR parser follows both ways until the next tokens decide: a
`{` where an expression starts opens formals or an attrset. Meanwhile both stacks grow, and each
reduction made then takes two entries (a state and the action, deferred). `{ a =` and `{ a }` peak at
14 entries over what was there before `{`, `{ a, ` at 12, `{ a ?` at 10; `{ }` at 8 and two more per
reduction its attrset reading makes on the token after it: 7 up to an expression, one per enclosing
body it ends (`x: { }: 1`, `{ }: { }: …` 1,663 deep is the limit), 4 before an operator, 3 before an
argument, 1 before `.`. These were measured with `nix-instantiate --parse` (nesting each shape inside
parentheses until Nix fails), and tests/test_nesting.py keeps them agreeing with it.

The walk visits only subtrees that could reach the limit: a subtree takes at most one entry per node it
holds (each entry held is a child read before, or the empty list, binding set or formals its parent
reduces first) besides a split's few, and a node's number of descendants is known without walking it.
Only the reductions of a split `{ }` can take more, two per enclosing body; so in a file holding an
empty `{ }` the bound is two entries per node. A file of fewer than some 5,000 nodes (10,000 without
`{ }`; 25 KB or so) is decided at its root.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from pinshift.syntax.source import Source

LIMIT = 9998  # the most entries Nix 2.8's parser stack holds (bison's YYMAXDEPTH 10,000, less what it keeps free)
_SLACK = 64  # more than a split adds besides its reductions

# parents whose first child starts where they start: a `{` opening the child opens the parent
_LEFTMOST = frozenset({"binary_expression", "apply_expression", "select_expression", "has_attr_expression",
                       "function_expression"})
# (parent type, field) where Nix expects an expression: a `{` opening it opens formals or an attrset
_EXPRESSION_SLOTS = frozenset({
    ("source_code", "expression"), ("function_expression", "body"), ("let_expression", "body"),
    ("with_expression", "environment"), ("with_expression", "body"), ("assert_expression", "condition"),
    ("assert_expression", "body"), ("if_expression", "condition"), ("if_expression", "consequence"),
    ("if_expression", "alternative"), ("binding", "expression"), ("formal", "default"),
    ("parenthesized_expression", "expression"), ("interpolation", "expression"), ("inherit_from", "expression"),
})
# (parent type, field) of a child that ends its parent: an expression ending there ends the parent too
_TAILS = frozenset({("function_expression", "body"), ("let_expression", "body"), ("with_expression", "body"),
                    ("assert_expression", "body"), ("if_expression", "alternative"), ("source_code", "expression")})
_AFTER_NAME = {"=": 14, ".": 14, "}": 14, ",": 12, "?": 10}  # `{ NAME X`: the peak over the entries before `{`
_OPERATORS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&&", "||", "->", "//", "++", "+", "-", "*", "/", "?"})
_CLOSERS = frozenset({"}", ")", "]", ";", ",", "then", "else", "in", ":", "@"})
_LITERAL = frozenset({"string_fragment", "escape_sequence", "dollar_escape"})
# an empty list the parser reduces right after a node's opening token: (entries then, index of that token)
_OPENINGS = {"list_expression": (2, 0), "attrset_expression": (2, 0), "rec_attrset_expression": (3, 1),
             "let_attrset_expression": (3, 1), "let_expression": (2, 0), "indented_string_expression": (2, 0)}
_EMPTY_BRACES = re.compile(rb"\{[ \t\r\n]*(?:\}|#|/\*)")  # `{ }` (or a `{` a comment follows): its splits cascade


class _Visit:
    """A node to look at: the entries before it, whether a `{` opening it opens an expression, how many
    enclosing productions end where it ends, and the node after it (None: the end of the file)."""

    __slots__ = ("node", "before", "slot", "tails", "after")

    def __init__(self, node: Node, before: int, slot: bool, tails: int, after: Node | None):
        self.node, self.before, self.slot, self.tails, self.after = node, before, slot, tails, after


def nesting_problem(doc: Source) -> tuple[int, str, str] | None:
    """(offset, message, "") of the first token Nix's parser stack has no room for, or None."""
    root = doc.root
    per_node = 2 if _EMPTY_BRACES.search(doc.data, 0, doc.end) else 1  # see the module docstring
    if per_node * root.descendant_count + _SLACK < LIMIT:
        return None
    pending = [_Visit(root, 1, False, 0, None)]
    while pending:
        visit = pending.pop()
        node, before = visit.node, visit.before
        if before + per_node * node.descendant_count + 2 * visit.tails + _SLACK < LIMIT:
            continue
        children = _children(node)
        if not children:
            if before + 1 > LIMIT:
                return node.start_byte, _message(before + 1), ""
            continue
        peak = _split(doc, visit, children) if visit.slot else 0
        if peak > LIMIT:
            return node.start_byte, _message(peak), ""
        opening = _OPENINGS.get(node.type)
        if opening is not None and before + opening[0] > LIMIT and len(children) > opening[1]:
            return children[opening[1]].start_byte, _message(before + opening[0]), ""  # the empty list after it
        helds = _helds(node, children)
        fields = _fields(node, children)
        formals = [i for i, c in enumerate(children) if c.type == "formal"] if node.type == "formals" else []
        found = []
        for index, child in enumerate(children):
            field = fields[index]
            slot = (node.type, field) in _EXPRESSION_SLOTS or (index == 0 and visit.slot and node.type in _LEFTMOST)
            if (node.type, field) in _TAILS or (index == 0 and node.type in _LEFTMOST):
                tails = visit.tails + (1 if (node.type, field) in _TAILS else 0)
            elif node.type == "formals":
                tails = 1 if formals and index == formals[-1] else 0  # the last formal: the formals reduce
            elif node.type == "formal" and field == "default":
                tails = visit.tails + 1  # the formal reduces
            else:
                tails = 0
            after = children[index + 1] if index + 1 < len(children) else visit.after
            found.append(_Visit(child, before + helds[index], slot, tails, after))
        if node.type == "formals" and len(children) > 2 and _is_comma(children[-2]):
            peak = before + len(children)  # `{ a, b, }`: an empty formals list reduced after the comma
            if peak > LIMIT:
                return children[-1].start_byte, _message(peak), ""
        pending.extend(reversed(found))  # source order: the first token too deep is the one reported
    return None


def _message(entries: int) -> str:
    return (f"syntax error: nesting deeper than Nix's parser allows (its stack holds {LIMIT:,} entries; "
            f"this needs {entries:,})")


def _children(node: Node) -> list[Node]:
    """`node`'s children as Nix's tokens and symbols: no comments, no MISSING formal after a trailing comma."""
    return [c for c in node.children if c.type != "comment" and not (c.type == "formal" and c.start_byte == c.end_byte)]


def _fields(node: Node, children: list[Node]) -> list[str | None]:
    """The field name of each of `children` (one pass over all of `node`'s children)."""
    wanted = {c.id: i for i, c in enumerate(children)}
    fields: list[str | None] = [None] * len(children)
    for position, child in enumerate(node.children):
        index = wanted.get(child.id)
        if index is not None:
            fields[index] = node.field_name_for_child(position)
    return fields


def _is_comma(node: Node) -> bool:
    """A comma, or tree-sitter-nix's ERROR holding a trailing comma (problems.py forgives it)."""
    return node.type == "," or (node.type == "ERROR" and node.child_count == 1 and node.children[0].type == ",")


def _helds(node: Node, children: list[Node]) -> list[int]:
    """Entries Nix's parser holds for `node`'s production when it starts reading each child."""
    kind = node.type
    count = len(children)
    if kind == "list_expression":
        return [0] + [2] * (count - 1)  # `[` and the list so far (an empty one reduced after `[`)
    if kind in ("binding_set", "inherited_attrs"):
        return [1] * count  # the bindings, or names, so far
    if kind == "attrpath":
        return [0] + [1 if c.type == "." else 2 for c in children[1:]]  # the path so far, and its `.`
    if kind == "formals":
        return [0] + [2 if c.type == "}" else i for i, c in enumerate(children) if i > 0]  # `{`, formals with commas
    if kind == "function_expression":
        helds, total = [], 0
        for child in children:
            helds.append(total)
            total += 3 if child.type == "formals" else 1  # `{ formals }` is three symbols
        return helds
    if kind in ("string_expression", "indented_string_expression", "path_expression", "hpath_expression"):
        return _string_helds(kind, children)
    if kind in ("attrset_expression", "rec_attrset_expression", "let_attrset_expression", "let_expression"):
        empty = not any(c.type == "binding_set" for c in children)  # an empty binding set is reduced all the same
        opening = 2 if kind in ("rec_attrset_expression", "let_attrset_expression") else 1
        return [i + (1 if empty and i >= opening else 0) for i in range(count)]
    return list(range(count))  # one entry per child read before: `(` e, e `+`, `if` c `then`, attrpath `=`, …


def _string_helds(kind: str, children: list[Node]) -> list[int]:
    """A string's pieces: Nix reads a run of text as one token, and the pieces so far as one symbol."""
    if kind == "indented_string_expression":
        return [0] + [2] * (len(children) - 1)  # `''` and the pieces so far (an empty list reduced after `''`)
    opening = 1  # `"`, or a path's first token
    helds, pieces, run = [0], 0, None
    for child in children[1:]:
        literal = child.type in _LITERAL or (child.type == "string_fragment")
        if literal and run is not None:
            helds.append(run)  # the same token as the text before it
            continue
        held = opening + (1 if pieces else 0)
        helds.append(held)
        run = held if literal else None
        pieces += 1
    return helds


def _first_token(node: Node | None) -> Node | None:
    while node is not None and node.child_count:
        node = next((c for c in node.children if c.type != "comment"), None)
    return node


def _split(doc: Source, visit: _Visit, children: list[Node]) -> int:
    """The peak of the split a `{` opening an expression makes (module docstring); 0 when there is none."""
    node = visit.node
    if node.type == "attrset_expression":
        inner = next((c for c in children if c.type == "binding_set"), None)
        first = _first_token(inner) if inner is not None else children[1] if len(children) > 1 else None
        second = _after_first_name(inner) if inner is not None else None
    elif node.type == "formals" and children[0].type == "{":
        first = _first_token(children[1]) if len(children) > 1 else None
        formal = children[1] if len(children) > 1 and children[1].type == "formal" else None
        parts = _children(formal) if formal is not None else []
        second = parts[1] if len(parts) > 1 else children[2] if formal is not None and len(children) > 2 else None
        if second is not None and second.type == "ERROR":
            second = _first_token(second)
    else:
        return 0
    if first is None:
        return 0
    if first.type == "}":  # `{ }`: both readings reduce an empty list, then the attrset reading reads on
        return visit.before + 8 + 2 * _reductions(node, visit)
    if first.type == "identifier" and doc.data[first.start_byte : first.end_byte] != b"or" and second is not None:
        return visit.before + _AFTER_NAME.get(second.type, 0)
    return 0


def _after_first_name(binding_set: Node) -> Node | None:
    """In `{ a = …` or `{ a.b = …`: the token after the first name (`=` or `.`)."""
    binding = next((c for c in binding_set.children if c.type != "comment"), None)
    if binding is None or binding.type != "binding":
        return None
    attrpath = binding.child_by_field_name("attrpath")
    parts = _children(attrpath) if attrpath is not None else []
    if len(parts) > 1:
        return parts[1]
    return next((c for c in binding.children if c.type == "="), None)


def _reductions(node: Node, visit: _Visit) -> int:
    """How many reductions the attrset reading of `{ }` makes on the token after it (two entries each)."""
    following = _first_token(visit.after)
    if node.type == "formals" or following is None or following.type in _CLOSERS:
        return 7 + visit.tails  # up to an expression, and one per enclosing production it ends
    if following.type in (".", "or"):
        return 1
    if following.type in _OPERATORS:
        return 4
    return 3  # an argument: `{ } x` applies it
