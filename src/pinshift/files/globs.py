"""Recipe file globs (`.flox/pkgs/**/*.nix`) matched against repository-relative POSIX paths.

`**` matches any number of directories (including none), `*` and `?` never cross
a `/`, `[...]` is a character class. Python 3.11's fnmatch and PurePath.match
cannot express `**`, hence this small translator.

Examples:
    >>> matches(".flox/pkgs/a.nix", [".flox/pkgs/**/*.nix"])
    True
    >>> matches(".flox/pkgs/x/y/a.nix", [".flox/pkgs/**/*.nix"])
    True
    >>> matches("README.md", ["*.nix"])
    False
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def glob_problem(pattern: str) -> str | None:
    """Why `pattern` is not a usable glob (`[z-a]*.nix`: a reversed character range), or None.

    Examples:
        >>> glob_problem("[z-a]*.nix")
        'bad character range z-a'
        >>> glob_problem("**/*.nix") is None
        True
    """
    try:
        compile_glob(pattern)
    except re.error as error:
        return error.msg
    return None


def matches(path: str, patterns: Iterable[str]) -> bool:
    """True when `path` matches any of `patterns`."""
    return any(compile_glob(p).match(path) for p in patterns)
