"""No input may hang pinshift: the work a command does on a syntax tree grows linearly with the tree (issue 29).

Each shape below made a command super-linear on a small valid file (seconds to minutes under 100 KB, where a
bare tree-sitter parse takes milliseconds). Each test runs the real command in-process at size n and 8n and
COUNTS the work, never times it: every Python function call and every call into tree-sitter (the `call` and
`c_call` events of `sys.setprofile`), after one untimed run that imports what the command needs. Linear
work grows about 8x (less, with the command's fixed cost); quadratic work grows 64x, cubic 512x.

tree-sitter's `.parent` and sibling properties are no calls the profiler sees, yet each walks down from the
root (O(depth) per use): every executed read of one counts the tree's depth. The syntax layer reaches
parents only through `pinshift.syntax.ancestry` (cursor walks, and at most 64 reads of `.parent` per
tree), which `test_syntax_layer_reads_no_parent_directly` holds it to. The growth figures before and
after the fix are in docs/performance.md.
"""

from __future__ import annotations

import ast
import re
import functools
import sys
from pathlib import Path

import pytest

from pinshift.syntax.document import parse_document

SYNTAX_SOURCES = Path(__file__).resolve().parent.parent / "src" / "pinshift" / "syntax"
GROWTH = 8  # the size factor between the two runs
LINEAR = 10  # the most the count may grow for it (quadratic work grows 64x)


HIDDEN_WALKS = ("parent", "prev_sibling", "next_sibling", "prev_named_sibling", "next_named_sibling")
BY_DEPTH = ("descendant_for_byte_range", "named_descendant_for_byte_range", "descendant_for_point_range")


@functools.lru_cache(maxsize=1)
def _hidden_walk_lines() -> dict[str, dict[int, int]]:
    """file -> {line: how many `.parent`-like reads it holds}, for every module of pinshift and its step kinds."""
    import pinshift
    import pinshift.migrations

    roots = [Path(pinshift.__file__).parent, *map(Path, pinshift.migrations.__path__)]
    found: dict[str, dict[int, int]] = {}
    for path in {p.resolve(): p for root in roots for p in root.rglob("*.py")}.values():
        for node in _property_reads(path):
            lines = found.setdefault(str(path), {})
            lines[node.lineno] = lines.get(node.lineno, 0) + 1
    return found


def _property_reads(path: Path) -> list[ast.Attribute]:
    """`x.parent`, `x.prev_sibling`, ... read in a module: not `ancestry.parent(x)`, a call the profiler sees."""
    tree = ast.parse(path.read_text())
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in HIDDEN_WALKS and id(node) not in called]


def tree_depth(data: bytes) -> int:
    """The depth of the deepest node of `data`'s tree (one cursor walk)."""
    cursor = parse_document(data).root.walk()
    deepest = 0
    while True:
        deepest = max(deepest, cursor.depth)
        if cursor.goto_first_child() or cursor.goto_next_sibling():
            continue
        while cursor.goto_parent():
            if cursor.goto_next_sibling():
                break
        else:
            return deepest


def counted(run, data: bytes) -> int:
    """The work `run()` does on a file holding `data`, counted, never timed.

    Every Python function call and every call into C (`sys.setprofile`'s call and c_call events), plus
    what tree-sitter does out of the profiler's sight, at its worst-case cost: a parse counts the file's
    size in bytes; a `descendant_for_byte_range` (which walks down from the root) and every executed
    line's read of `.parent` or a sibling (a property, so no call the profiler sees, and a walk down from
    the root inside tree-sitter) count the depth of the file's tree.
    """
    depth, size = tree_depth(data), len(data)
    hidden = _hidden_walk_lines()
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call":
            count += 1
        elif event == "c_call":
            name = getattr(arg, "__name__", "")
            owner = type(getattr(arg, "__self__", None))
            if owner.__module__ != "tree_sitter":
                count += 1
            elif name == "parse":
                count += size
            elif name in BY_DEPTH:
                count += depth
            else:
                count += 1

    def trace(frame, event, arg):
        lines = hidden.get(frame.f_code.co_filename)
        if lines is None:
            return None

        def line(frame, event, arg):
            nonlocal count
            if event == "line":
                count += lines.get(frame.f_lineno, 0) * depth
            return line

        return line

    sys.setprofile(profile)
    sys.settrace(trace)
    try:
        run()
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return count


RENAME = ("apply", "rename-attr", "--set", "from=a", "--set", "to=zz", "--dry-run")
PIN = ("apply", "pin-nixpkgs", "--set", "rev=fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3", "--dry-run")


def _walks_into_nested_literals(n: int) -> str:
    """`{ a = { a = { … }; a.z = 1; }; a.z = 1; }`: each `a.z` walks into the literal beside it."""
    shape = "{ }"
    for _ in range(n):
        shape = "{ a = " + shape + "; a.z = 1; }"
    return "{ lib }: " + shape

# name: (the file for size n, its size n, the command, the exit code, what its output must say)
SHAPES = {
    # item 1: the last formal before a trailing comma has a default holding another such function (nixfmt)
    "trailing-comma-defaults": (lambda n: "{ a ? " * n + "1" + ", }: 1" * n, 3, ("parse",), 0, "0 problems"),
    # item 2: references deep in a chain, resolved by scope
    "sum-of-free-names": (lambda n: " + ".join(["a"] * n), 60, RENAME, 0, "nothing to change"),  # `a` is free
    "sum-of-arguments": (lambda n: "{ a }: " + " + ".join(["a"] * n), 60, RENAME, 0, "+{ zz }: zz + zz + zz"),
    "with-chain": (lambda n: "{ a }: " + "with a; " * n + "a", 60, RENAME, 0, "+{ zz }: with zz; with zz;"),
    "or-chain": (lambda n: "{ a }: " + "a.b or " * n + "a", 60, RENAME, 0, "+{ zz }: zz.b or zz.b or"),
    "deep-attrsets": (lambda n: "{ a }: " + "{ b = " * n + "a" + "; }" * n, 100, RENAME, 0, "{ b = zz; }"),
    "deep-lets": (lambda n: "{ a }: " + "let b = 1; in " * n + "a", 100, RENAME, 0, "let b = 1; in zz"),
    "deep-lambdas": (lambda n: "{ a }: " + "b: " * n + "a", 100, RENAME, 0, "b: b: zz"),
    # item 2: attrsets merged with `//`, and nested, read by scan and lint (bindings through `//`)
    "update-chain-scan": (lambda n: " // ".join("{ a%d = 1; }" % i for i in range(n)), 40, ("scan",), 0, "recipes"),
    "update-chain-lint": (lambda n: " // ".join("{ a%d = 1; }" % i for i in range(n)), 40, ("lint",), 0, "linted"),
    "deep-attrsets-scan": (lambda n: "{ b = " * n + "1" + "; }" * n, 100, ("scan",), 0, "recipes"),
    "deep-attrsets-lint": (lambda n: "{ b = " * n + "1" + "; }" * n, 100, ("lint",), 0, "linted"),
    # item 2: `a//b` is `a // b` for Nix, one re-read of the file for all of them
    "update-without-spaces": (
        lambda n: "{ a, b }: {\n" + "".join("  x%d = a//b;\n" % i for i in range(n)) + "}\n", 50, ("parse",), 0, "0 problems"
    ),
    # item 2: many problems on one line: positions from a line index, lines cut, repeats grouped
    "repeated-attribute": (lambda n: "{ " + "a = 1; " * n + "}", 100, ("parse",), 1, "more like this"),
    # issue 31: the reference graph; each path literal's use is found by a climb of a few parents
    "many-imports-lint": (lambda n: "{ " + " ".join("a%d = import ./g%d.nix { b = 1; };" % (i, i) for i in range(n))
                          + " }", 40, ("lint",), 1, "R001"),
    "path-list-lint": (lambda n: "[ " + "./gone.nix " * n + "]", 100, ("lint",), 1, "R001"),
    "computed-chain-lint": (lambda n: 'import (./. + ' + ' + '.join(['"/a"'] * n) + ')', 100, ("lint",), 0, "R003"),
    "parenthesized-import-lint": (lambda n: "import " + "(" * n + "./gone.nix" + ")" * n, 100, ("lint",), 1, "R001"),
    "self-imports-rename": (lambda n: "{ " + " ".join("a%d = import ./x.nix;" % i for i in range(n)) + " }", 40,
                            ("apply", "rename-files", "--set", "from=x.", "--set", "to=renamed.", "--dry-run"), 0,
                            "import of a renamed recipe follows it"),
    # issue 36: a binding walking into an attrset literal read the literal whole, for every container around it
    "walks-into-nested-literals": (_walks_into_nested_literals, 40, ("parse",), 0, "0 problems"),
    # issue 36: the names around 1,000 edits of `lib.a or lib.a or …` were read once per edit, each the whole chain
    "or-defaults-pin-nixpkgs": (lambda n: "{ lib }: " + "lib.a or " * n + "lib.x", 60, PIN, 0, "nixpkgs_pinned.lib.x"),
    # issue 36: every `prev.x` of n overlays followed the same n layers to their definitions of x
    "overlays-reading-prev": (
        lambda n: "let pkgs = import <nixpkgs> { overlays = " + "[ (f: p: { x = p.x; }) ] ++ " * n + "[ ]; }; in pkgs.x",
        30, ("apply", "rename-attr", "--set", "from=x", "--set", "to=y", "--dry-run"), 1, "is defined here",
    ),
    # issue 36: a set followed through `let in` n deep (recursion, now on a list)
    "overlay-lets": (
        lambda n: "{ pkgs }: (pkgs.extend (final: prev: " + "let in " * n + "{ x = prev.x; })).x", 60,
        ("apply", "rename-attr", "--set", "from=x", "--set", "to=y", "--dry-run"), 1, "is defined here",
    ),
    # issue 36: `"a" + "a" + …` read by replace-in-strings (recursion, now on a list)
    "string-sum-replace": (
        lambda n: '{ description = ' + " + ".join(['"alpha"'] * n) + "; }", 60,
        ("apply", "replace-in-strings", "--set", 'paths=["description"]', "--set", "old=alpha", "--set", "new=gamma",
         "--dry-run"), 0, '"gamma" + "gamma"',
    ),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_work_grows_linearly(shape, tmp_path, run_cli):
    source, n, command, exit_code, says = SHAPES[shape]
    runs, printed = {}, {}
    for size in (n, n, GROWTH * n):  # the first run imports what the command needs and is not counted
        directory = tmp_path / f"{shape}-{size}-{len(runs)}"
        directory.mkdir()
        data = source(size).encode()
        (directory / "x.nix").write_bytes(data)
        args = (*command, str(directory / "x.nix")) if command == ("parse",) else (*command, str(directory))
        holder = {}
        work = counted(lambda: holder.setdefault("result", run_cli(*args)), data)
        result = holder["result"]
        assert result.exit_code == exit_code, result
        assert says in result.output and "Traceback" not in result.output
        runs[size], printed[size] = work, len(result.output)
    assert runs[GROWTH * n] <= LINEAR * runs[n], f"{shape}: work {runs[n]} at n={n}, {runs[GROWTH * n]} at {GROWTH * n}"
    assert printed[GROWTH * n] <= LINEAR * printed[n], f"{shape}: printed {printed[n]} bytes at n={n}, {printed[GROWTH * n]}"


class ScannedBytes(bytes):
    """bytes that count how many bytes their searches (count, find, rfind) look at."""

    scanned = 0

    def _span(self, args) -> int:
        start = args[1] if len(args) > 1 and args[1] is not None else 0
        end = args[2] if len(args) > 2 and args[2] is not None else len(self)
        return max(0, min(end, len(self)) - start)

    def count(self, *args):
        ScannedBytes.scanned += self._span(args)
        return bytes.count(self, *args)

    def find(self, *args):
        ScannedBytes.scanned += self._span(args)
        return bytes.find(self, *args)

    def rfind(self, *args):
        ScannedBytes.scanned += self._span(args)
        return bytes.rfind(self, *args)


def test_positions_of_many_problems_come_from_a_line_index():
    """One problem per line, 8,000 lines: finding each one's line and column reads no more than its line."""
    scanned = {}
    for size in (500, GROWTH * 500):
        data = ScannedBytes(("{\n" + "  a = 1;\n" * size + "}\n").encode())
        ScannedBytes.scanned = 0
        doc = parse_document(data, "x.nix")
        problems = doc.problems
        assert len(problems) == size - 1 and problems[-1].line == size + 1 and problems[-1].column == 3
        scanned[size] = ScannedBytes.scanned
    assert scanned[GROWTH * 500] <= LINEAR * scanned[500] + 1000, scanned


def test_a_long_line_is_cut_around_the_problem():
    """`{ a = 1; a = 1; … }` on one 56 KB line: each problem's line is a screen's width around its column."""
    doc = parse_document(b"{ " + b"a = 1; " * 8000 + b"}", "x.nix")
    problems = doc.problems
    assert len(problems) == 7999
    middle = problems[4000]
    assert middle.column == 3 + 4001 * 7 and len(middle.source_line) <= 120  # the 4,002nd `a`
    assert middle.source_line.startswith("…") and middle.source_line.endswith("…") and "a = 1;" in middle.source_line
    assert not problems[0].source_line.startswith("…")  # the line's start is shown as it is


def test_syntax_layer_reads_no_parent_directly():
    """tree-sitter answers `.parent` by walking down from the root; in a loop that is quadratic (issue 29)."""
    found = [f"{path.name}:{node.lineno}: .{node.attr}" for path in sorted(SYNTAX_SOURCES.glob("*.py"))
             if path.name != "ancestry.py" for node in _property_reads(path)]
    assert found == []


def test_the_rules_query_matches_single_nodes_only():
    """A query pattern with a child constraint (`(binary_expression left: (binary_expression …))`) stays open across
    the node's whole subtree in tree-sitter's query engine: on `a == a == …` 2,000 long it took 6 s (issue 36),
    unseen by the counts above (one call into C). So each pattern of the rules' one query is a single node (or an
    alternation of them), with predicates at most, and the rules look at parents and children in Python."""
    from pinshift.syntax.parse_rules import _query, query_patterns

    source, query = query_patterns(), _query()
    for index in range(query.pattern_count):
        pattern = source[query.start_byte_for_pattern(index) : query.end_byte_for_pattern(index)]
        bare = re.sub(r"@\w+", "", re.sub(r"\(#[^()]*\)", "", pattern))  # without predicates and captures
        assert not re.search(r"\(\s*[a-z_]+\s+[^)\s]", bare), f"pattern {index} has a child: {pattern}"
