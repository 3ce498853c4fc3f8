"""A parsed Nix file that keeps its original bytes next to the tree-sitter tree.

Nothing is ever decoded and re-encoded: every position is a byte offset into
`Document.data`, so BOMs, CRLF, tabs, non-UTF-8 bytes and a missing final
newline survive every edit that does not touch them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import tree_sitter
import tree_sitter_nix

_LANGUAGE = tree_sitter.Language(tree_sitter_nix.language())
_PARSER: tree_sitter.Parser | None = None


def nix_language() -> tree_sitter.Language:
    """The tree-sitter language object, for callers that build queries."""
    return _LANGUAGE


def _parser() -> tree_sitter.Parser:
    global _PARSER
    if _PARSER is None:
        _PARSER = tree_sitter.Parser(_LANGUAGE)
    return _PARSER


@dataclass(frozen=True)
class Problem:
    """One syntax problem, located by byte offset and by 1-based line and column (in bytes)."""

    path: str
    offset: int
    line: int
    column: int
    message: str
    source_line: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"

    @property
    def key(self) -> tuple[str, str]:
        """What identifies a problem independently of where edits moved it."""
        return (self.message, self.source_line.strip())


@dataclass
class Document:
    """A Nix source file: its path (as the user should read it), its bytes and its tree."""

    path: str
    data: bytes
    tree: tree_sitter.Tree = field(repr=False)

    @property
    def root(self) -> tree_sitter.Node:
        return self.tree.root_node

    def text(self, node: tree_sitter.Node) -> bytes:
        """The exact bytes a node covers."""
        return self.data[node.start_byte : node.end_byte]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset; the column counts bytes."""
        line_start = self.data.rfind(b"\n", 0, offset) + 1
        line = self.data.count(b"\n", 0, offset) + 1
        return line, offset - line_start + 1

    def line_text(self, offset: int) -> str:
        """The source line holding `offset`, decoded leniently for messages only."""
        start = self.data.rfind(b"\n", 0, offset) + 1
        end = self.data.find(b"\n", offset)
        if end < 0:
            end = len(self.data)
        return self.data[start:end].rstrip(b"\r").decode("utf-8", "replace")

    def location(self, offset: int) -> str:
        """`path:line:col` for a byte offset, as every message prints it."""
        line, column = self.position(offset)
        return f"{self.path}:{line}:{column}"

    @cached_property
    def problems(self) -> tuple[Problem, ...]:
        from pinshift.syntax.problems import find_problems

        return tuple(find_problems(self))


def parse_document(data: bytes, path: str = "<memory>") -> Document:
    """Parse bytes into a Document; syntax problems are reported by `Document.problems`, never raised."""
    return Document(path=path, data=data, tree=_parser().parse(data))
