"""What Nix's grammar (2.8) rejects although tree-sitter-nix 0.1.0's accepts it: keywords as names, `or`, chains.

- **A keyword as a name.** tree-sitter-nix reads `if then else assert with let in rec inherit` as a
  keyword only where its grammar expects one, and as an identifier elsewhere; Nix's lexer always reads
  a keyword. So a keyword is never a variable, a formal, an argument or an `@` name (`{ a, in }: 1`,
  `{ a, rec ? 1 }: 1`, `a@{ if }: 1`, `{ }@if: 1`, `[ in ]`), nor an attribute name (`x.rec`, `inherit let;`).
- **`or`** is a keyword for Nix too, allowed in two places only:
  - as an attribute name: `{ or = 1; }`, `x.or`, `x ? or`, `inherit (x) or;`, `let or = 1; in 1`;
  - right after a simple expression (a name, a literal, `( )`, `{ }`, `[ ]`), where it is the variable
    `or` applied to it (nixpkgs once had a function named `or`): `f or`, `f g or` (`f (g or)`),
    `[ f or ]` (one element), `(f) or`, `1 or`, and as a select's default `x.a or y or` (`x.a or (y or)`).
  Anywhere else it is an error: `let or = 1; in or`, `[ or ]`, `f (or)`, `{ or }: 1`, `a@{ or }: 1`,
  `or: 1`, `{ a ? or }: 1`, `f or or`, `x.a or or`, `x.${or}`, `x.a or` (a default must follow).
- **Chained comparisons.** `==` and `!=` do not associate, nor do `<`, `>`, `<=` and `>=`: `a == b == c`,
  `a != b == c`, `a < b < c`, `a <= b >= c` are errors (parenthesise one side), which tree-sitter-nix reads
  left to right. The two kinds mix (`a < b == c` is `(a < b) == c`), and `a ? b ? c` is fine.

`PATTERNS` joins parse_rules.py's one query of the file; `grammar_findings` reads its captures. The
patterns are single nodes (a keyword-named identifier, a comparison operator) and the rest is decided
here: tree-sitter's query engine keeps a pattern with a child constraint open across the whole
subtree, so `(binary_expression left: (binary_expression …))` on `a == a == … ` 2,000 long took 6 s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from tree_sitter import Node

from pinshift.syntax.source import Source

KEYWORDS = ("if", "then", "else", "assert", "with", "let", "in", "rec", "inherit")
_EQUALITY = frozenset({"==", "!="})
_ORDER = frozenset({"<", ">", "<=", ">="})
_ATTRIBUTE_PLACES = ("attrpath", "inherited_attrs")

PATTERNS = " ".join([
    "((identifier) @named_keyword (#any-of? @named_keyword %s))" % " ".join(f'"{k}"' for k in (*KEYWORDS, "or")),
    "[%s] @comparison" % " ".join(f'"{o}"' for o in sorted(_EQUALITY | _ORDER)),
])

# what Nix's grammar calls expr_simple: `or` right after one of these is the variable `or` applied to it
SIMPLE = frozenset({
    "variable_expression", "integer_expression", "float_expression", "string_expression",
    "indented_string_expression", "path_expression", "hpath_expression", "spath_expression", "uri_expression",
    "parenthesized_expression", "attrset_expression", "let_attrset_expression", "rec_attrset_expression",
    "list_expression",
})

Finding = tuple[int, str, str]


def grammar_findings(doc: Source, captures: Mapping[str, Sequence[Node]]) -> Iterator[Finding]:
    """The problems of the captures named above (see the module docstring), unsorted."""
    data, ancestry = doc.data, doc.ancestry
    or_variables = []
    for node in captures.get("named_keyword", ()):
        word = _text(data, node)
        holder = ancestry.parent(node)
        kind = holder.type if holder is not None else ""
        if kind in _ATTRIBUTE_PLACES:
            if word != "or":
                yield node.start_byte, f"syntax error: unexpected keyword '{word}' as an attribute name", ""
        elif word != "or":
            yield node.start_byte, f"syntax error: unexpected keyword '{word}' (a keyword is not a name)", ""
        elif kind == "variable_expression" and holder is not None:  # (a kind is only read of a holder)
            or_variables.append(holder)
        else:  # a formal, an argument, an @ name
            yield node.start_byte, "syntax error: unexpected keyword 'or' (it cannot name an argument)", ""
    for node in _misplaced_or(doc, or_variables):
        yield node.start_byte, "syntax error: unexpected keyword 'or' (a variable 'or' only follows a simple expression: `f or`)", ""
    for operator in captures.get("comparison", ()):
        if _chained(ancestry.parent(operator), operator.type):
            yield operator.start_byte, f"syntax error: unexpected '{operator.type}' (comparisons do not chain: add parentheses)", ""


def _chained(binary: Node | None, operator: str) -> bool:
    """Whether the comparison `binary` has an operand that is a comparison of its own kind, unparenthesised."""
    if binary is None or binary.type != "binary_expression":
        return False
    kind = _EQUALITY if operator in _EQUALITY else _ORDER
    for side in ("left", "right"):
        operand = binary.child_by_field_name(side)
        inner = operand.child_by_field_name("operator") if operand is not None and operand.type == "binary_expression" else None
        if inner is not None and inner.type in kind:
            return True
    return False


def _text(data: bytes, node: Node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _is_or(data: bytes, node: Node) -> bool:
    return node.type == "variable_expression" and data[node.start_byte : node.end_byte] == b"or"


def _takes_or(data: bytes, node: Node | None) -> bool:
    """Whether `or` right after the expression `node` is the variable `or` applied to it (Nix's `expr_simple OR_KW`).

    A select with a default ends in its default (`x.a or y or` is `x.a or (y or)`), however deep.
    """
    while node is not None and node.type == "select_expression" and node.child_by_field_name("default") is not None:
        node = node.child_by_field_name("default")
    return node is not None and node.type in SIMPLE and not _is_or(data, node)


def _misplaced_or(doc: Source, variables: Sequence[Node]) -> list[Node]:
    """The variables `or` Nix does not read as one (see the module docstring)."""
    data = doc.data
    wrong: list[Node] = []
    in_lists: dict[int, tuple[Node, set[int]]] = {}
    for variable in variables:
        holder = doc.ancestry.parent(variable)
        if holder is not None and holder.type == "apply_expression" and _same(holder.child_by_field_name("argument"), variable):
            function = holder.child_by_field_name("function")
            last = function.child_by_field_name("argument") if function is not None and function.type == "apply_expression" else function
            if not _takes_or(data, last):
                wrong.append(variable)
        elif holder is not None and holder.type == "list_expression":
            in_lists.setdefault(holder.id, (holder, set()))[1].add(variable.id)
        else:
            wrong.append(variable)
    for holder, ids in in_lists.values():  # one pass over each list: `[ f or or … ]` stays linear
        previous = None
        for element in holder.named_children:
            if element.type == "comment":
                continue
            if element.id in ids and not _takes_or(data, previous):
                wrong.append(element)
            previous = element
    return wrong


def _same(a: Node | None, b: Node) -> bool:
    return a is not None and a.id == b.id
