"""tree-sitter-nix, loaded once: the language (for queries) and a parser (the bottom of the syntax layer)."""

from __future__ import annotations

import tree_sitter
import tree_sitter_nix

_LANGUAGE = tree_sitter.Language(tree_sitter_nix.language())
_PARSER: tree_sitter.Parser | None = None


def nix_language() -> tree_sitter.Language:
    """The tree-sitter language object, for callers that build queries."""
    return _LANGUAGE


def parser() -> tree_sitter.Parser:
    """The one parser of this process (tree-sitter parsers are reusable, not thread-safe; pinshift uses processes)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = tree_sitter.Parser(_LANGUAGE)
    return _PARSER
