"""Which parser reads a file, chosen by its name, and the one call that parses it.

Beside the parsers: `display` (text from files made safe to print) and `fit` (every text output fitted to the
screen's width), rules for what pinshift prints.

Every parsed document has `.path`, `.data` (the original bytes) and `.problems`
(syntax problems; edits that add one are refused). Nix files get a tree-sitter
Document; other languages register a module here (see `PARSERS`).

May import: pinshift.syntax.
"""

from __future__ import annotations

import importlib
from typing import Any

# language -> (module path, suffixes, exact file names)
PARSERS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "nix": ("pinshift.syntax.document", (".nix",), ()),
    "markdown": ("pinshift.languages.markdown", (".md", ".markdown"), ()),
    "python": ("pinshift.languages.python", (".py",), ()),
    "toml": ("pinshift.languages.tomlfile", (".toml",), ()),
    "shell": ("pinshift.languages.shell", (".sh", ".bash"), ()),
}


# what the reports name as the parser that read a file of each language
PARSER_NAMES = {
    "nix": "tree-sitter-nix",
    "markdown": "markdown-it-py",
    "python": "libcst",
    "toml": "tomlkit",
    "shell": "whole-word text match",
}


def parser_name(language: str) -> str:
    return PARSER_NAMES.get(language, language or "unknown")


def language_for(path: str) -> str | None:
    """The language of a repository-relative path, or None when no parser handles it."""
    name = path.rsplit("/", 1)[-1]
    for language, (_, suffixes, names) in PARSERS.items():
        if name in names or any(name.endswith(s) for s in suffixes):
            return language
    return None


def parse(language: str, data: bytes, path: str) -> Any:
    """Parse `data` as `language`; problems are reported on the document, never raised."""
    module_path = PARSERS[language][0]
    module = importlib.import_module(module_path)
    return module.parse_document(data, path)


def occurrences(doc: Any, language: str, needle: bytes, include_comments: bool = False) -> list:
    """Whole-word occurrences of `needle` in a non-Nix document, each marked editable or not by its parser.

    Used by pin-swap for Markdown, Python, TOML and shell files (see each module's `occurrences`).
    """
    module = importlib.import_module(PARSERS[language][0])
    return module.occurrences(doc, needle, include_comments)
