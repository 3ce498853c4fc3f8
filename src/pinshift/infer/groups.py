"""Globs for a group of files: the `files` (or `select`) of a step that must apply to some files only.

A group is described by what its file names share and no other file's name has:

    >>> group_globs([".flox/pkgs/a-cuda12_8-sm90.nix", ".flox/pkgs/a-cuda12_8-sm61.nix"],
    ...             [".flox/pkgs/a-cpu-avx2.nix", ".flox/pkgs/a-darwin-mps.nix"])
    ('.flox/pkgs/*-cuda12_8-*.nix',)
    >>> group_globs([".flox/pkgs/a-cpu-avx2.nix", ".flox/pkgs/a-darwin-mps.nix"],
    ...             [".flox/pkgs/a-cuda12_8-sm90.nix"])
    ('.flox/pkgs/*-cpu-*.nix', '.flox/pkgs/*-darwin-*.nix')

Each glob matches only files of the group among `others` and the group (checked with
pinshift.globs, the matcher recipes use); a group no few globs describe gets its paths
listed one by one (`exact_globs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pinshift.globs import matches

MAX_GLOBS = 4


def escape(path: str) -> str:
    """`path` as a glob matching exactly that path (`[`, `*`, `?` made literal)."""
    return re.sub(r"([\[\]*?])", r"[\1]", path)


def exact_globs(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(escape(p) for p in sorted(set(paths)))


def _split(path: str) -> tuple[str, str, str]:
    """(directory with trailing slash or "", stem, extension with its dot or "")."""
    directory, _, name = path.rpartition("/")
    stem, dot, extension = name.rpartition(".")
    if not stem:
        stem, dot, extension = name, "", ""
    return (directory + "/" if directory else ""), stem, (dot + extension)


def _patterns(path: str) -> list[tuple[str, int]]:
    """Globs naming one `-`-separated part of the file name (`dir/*-part-*.ext`, `dir/part-*.ext`,
    `dir/*-part.ext`), each with the part's position: earlier parts name broader kinds (`cpu` before `avx2`)."""
    directory, stem, extension = _split(path)
    parts = stem.split("-")
    found = []
    for index, part in enumerate(parts):
        if not part:
            continue
        literal = escape(directory) + "{}" + escape(extension)
        if 0 < index < len(parts) - 1:
            found.append((literal.format(f"*-{escape(part)}-*"), index))
        elif index == 0 and len(parts) > 1:
            found.append((literal.format(f"{escape(part)}-*"), index))
        elif index == len(parts) - 1 and len(parts) > 1:
            found.append((literal.format(f"*-{escape(part)}"), index))
    return found


def group_globs(group: Iterable[str], others: Iterable[str]) -> tuple[str, ...] | None:
    """A few globs matching every path of `group` and no path of `others`; None when there are none."""
    members = sorted(set(group))
    outsiders = [p for p in set(others) if p not in set(members)]
    if not members:
        return None
    if len(members) == 1:
        return exact_globs(members)
    covers: dict[str, set[str]] = {}
    position: dict[str, int] = {}
    for path in members:
        for pattern, index in _patterns(path):
            if pattern not in covers:
                covers[pattern] = {p for p in members if matches(p, (pattern,))}
                position[pattern] = index
    usable = {pattern: covered for pattern, covered in covers.items()
              if not any(matches(p, (pattern,)) for p in outsiders)}
    chosen: list[str] = []
    left = set(members)
    while left and len(chosen) < MAX_GLOBS:
        best = max(usable, key=lambda p: (len(usable[p] & left), -position[p], p), default=None)
        if best is None or not usable[best] & left:
            return None
        chosen.append(best)
        left -= usable[best]
    return tuple(sorted(chosen)) if not left else None
