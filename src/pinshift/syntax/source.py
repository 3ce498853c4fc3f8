"""What the syntax checks read of a parsed file: `Source`, the part of a Document they need.

The checks (problems.py, parse_rules.py) run on a Document, and Document asks them for its own
problems; naming the Document type here instead of importing document.py keeps the import graph
one-way: document.py -> problems.py -> parse_rules.py -> source.py.
"""

from __future__ import annotations

from typing import Protocol

from tree_sitter import Node

from pinshift.syntax.ancestry import Ancestry


LINE_WIDTH = 100  # bytes of a long source line a message shows, around the place it points at


class Source(Protocol):
    """A parsed file: its path as the user reads it, its bytes, its tree and where things are."""

    path: str
    data: bytes

    @property
    def end(self) -> int:
        """Where Nix stops reading `data` (its first NUL byte, else its length): the tree ends there."""
        ...

    @property
    def root(self) -> Node: ...

    @property
    def ancestry(self) -> Ancestry: ...

    def text(self, node: Node) -> bytes: ...

    def position(self, offset: int) -> tuple[int, int]: ...

    def line_text(self, offset: int, width: int = LINE_WIDTH) -> str: ...

    @classmethod
    def parsed(cls, data: bytes, path: str) -> Source:
        """A fresh parse of `data` as a file at `path` (parse_rules reparses a file with tokens reread)."""
        ...
