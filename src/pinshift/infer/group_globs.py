"""Globs for a group of files: the `files` (or `select`) of a step that must apply to some files only.

A group is described by what its file names share and no other file's name has:

    >>> group_globs([".flox/pkgs/a-cuda12_8-sm90.nix", ".flox/pkgs/a-cuda12_8-sm61.nix"],
    ...             [".flox/pkgs/a-cpu-avx2.nix", ".flox/pkgs/a-darwin-mps.nix"])
    ('.flox/pkgs/*-cuda12_8-*.nix',)
    >>> group_globs([".flox/pkgs/a-cpu-avx2.nix", ".flox/pkgs/a-darwin-mps.nix"],
    ...             [".flox/pkgs/a-cuda12_8-sm90.nix"])
    ('.flox/pkgs/*-cpu-*.nix', '.flox/pkgs/*-darwin-*.nix')

When no part of the names is the group's alone, a part may be written with character
classes, position by position, among parts of one length (every GPU variant but the SM90 ones):

    >>> group_globs([".flox/pkgs/a-sm61-avx.nix", ".flox/pkgs/a-sm80-avx.nix", ".flox/pkgs/a-sm120-avx.nix"],
    ...             [".flox/pkgs/a-sm90-avx.nix", ".flox/pkgs/a-cpu-avx.nix"])
    ('.flox/pkgs/*-sm120-*.nix', '.flox/pkgs/*-sm[68][01]-*.nix')

Each glob matches only files of the group among `others` and the group (checked with
pinshift.files.globs, the matcher recipes use); a group no few globs describe gets its paths
listed one by one (`exact_globs`), and a step never gets more than MAX_LISTED of those
(`describe`: None beyond that).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pinshift.files.globs import matches

MAX_GLOBS = 4
MAX_LISTED = 8  # paths listed one by one at most, where no few globs say which files a step runs on
_CLASSABLE = re.compile(r"[A-Za-z0-9_.+]+\Z")


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


def _class_patterns(members: list[str]) -> list[tuple[str, int]]:
    """Globs naming one `-`-separated part with a character class where the members' parts differ
    (`*-sm[68][01]-*`): for each part position and length, among the members' names of that shape."""
    shapes: dict[tuple, list[str]] = {}
    for path in members:
        directory, stem, extension = _split(path)
        parts = stem.split("-")
        for index, part in enumerate(parts):
            if part and _CLASSABLE.match(part) and len(parts) > 1:
                where = "first" if index == 0 else "last" if index == len(parts) - 1 else "middle"
                shapes.setdefault((directory, extension, where, index, len(part)), []).append(part)
    found = []
    for (directory, extension, where, index, _), parts in shapes.items():
        if len(set(parts)) < 2:
            continue
        text = "".join(column[0] if len(set(column)) == 1 else "[" + "".join(sorted(set(column))) + "]"
                       for column in zip(*parts))
        body = {"first": f"{text}-*", "last": f"*-{text}", "middle": f"*-{text}-*"}[where]
        found.append((escape(directory) + body + escape(extension), index))
    return found


def describe(group: Iterable[str], others: Iterable[str]) -> tuple[str, ...] | None:
    """`files` for a step that must run on `group` only: a few globs, else at most MAX_LISTED paths; None beyond."""
    members = sorted(set(group))
    if not members:
        return None
    globs = group_globs(members, others)
    if globs is not None:
        return globs
    return exact_globs(members) if len(members) <= MAX_LISTED else None


def _pair_patterns(path: str) -> list[tuple[str, int]]:
    """Globs naming two `-`-separated parts of the file name (`dir/pytorch-*-cuda12_8-*.nix`): a group that is
    one kind of file *and* one variant, where neither part alone is the group's."""
    directory, stem, extension = _split(path)
    parts = stem.split("-")
    found = []
    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            if not parts[i] or not parts[j] or (i == 0 and j == len(parts) - 1):
                continue
            body = ("" if i == 0 else "*-") + escape(parts[i]) + ("-" if j == i + 1 else "-*-") + escape(parts[j])
            body += "" if j == len(parts) - 1 else "-*"
            found.append((escape(directory) + body + escape(extension), 500 + 10 * i + j))
    return found


def group_globs(group: Iterable[str], others: Iterable[str]) -> tuple[str, ...] | None:
    """A few globs matching every path of `group` and no path of `others`; None when there are none.

    Single parts of the names first (and character classes of them); two parts together only when
    those cannot say the group (`pytorch-*-cuda12_8-*`: the PyTorch recipes of CUDA 12.8, not its
    torchvision ones)."""
    members = sorted(set(group))
    outsiders = [p for p in set(others) if p not in set(members)]
    if not members:
        return None
    if len(members) == 1:
        return exact_globs(members)
    patterns = [pattern for path in members for pattern in _patterns(path)]
    patterns += [(pattern, index + 1000) for pattern, index in _class_patterns(members)]  # a tie: words win
    found = _cover(members, outsiders, patterns)
    if found is None:
        found = _cover(members, outsiders, patterns + [p for path in members for p in _pair_patterns(path)])
    return found


def _cover(members: list[str], outsiders: list[str], patterns: list[tuple[str, int]]) -> tuple[str, ...] | None:
    covers: dict[str, set[str]] = {}
    position: dict[str, int] = {}
    for pattern, index in patterns:
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
