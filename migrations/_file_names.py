"""Shared by rename-files and clone-files: the new name a file gets, and the self-references that follow it.

A file's name is changed by `from` -> `to` (a literal substring, every occurrence, or
with `regex` a Python regular expression and its replacement); the directory never
changes. Its *self-references* are the occurrences of its stem (the name without
`.nix`) as a whole token (not preceded or followed by a letter, digit, `_` or `-`) in
the literal text of its strings and in its comments: `pytorch-python312-cpu-avx` is
not a token of `pytorch-python312-cpu-avx2`, nor of `my-pytorch-python312-cpu-avx`.
Identifiers, paths and attribute names written without quotes never change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from pinshift.edits import Edit
from pinshift.errors import ParamError

_EDGE = rb"A-Za-z0-9_\-"
SELF_REFERENCE_NODES = ("comment", "string_fragment")


@dataclass(frozen=True)
class Naming:
    """`from` -> `to` on file names, validated once."""

    old: str
    new: str
    regex: bool

    def __post_init__(self) -> None:
        if not self.old:
            raise ParamError("from", "'from' must not be empty")
        if "/" in self.old or "/" in self.new:
            raise ParamError("to" if "/" in self.new else "from",
                             "'from' and 'to' change a file's name, not its directory: no '/' in them")
        if self.regex:
            try:
                re.compile(self.old).sub(self.new, "")  # also checks the group references in `to`
            except (re.error, IndexError) as error:
                raise ParamError("from", f"'from' is not a valid regular expression (or 'to' refers to a group "
                                         f"it does not have): {error}") from None
        elif self.old in self.new:
            raise ParamError("to", f"'to' contains 'from' ({self.old!r}): a second run would rename again")

    def new_name(self, name: str) -> str | None:
        """The file name `name` becomes, or None when the step leaves it as it is."""
        if self.regex:
            changed = re.sub(self.old, self.new, name)
        elif self.old in name:
            changed = name.replace(self.old, self.new)
        else:
            return None
        return changed if changed != name else None

    def targets(self, paths) -> list[tuple[str, str]]:
        """(path, new path) for each of `paths` whose name changes; the directory stays."""
        found = []
        for path in paths:
            directory, _, name = path.rpartition("/")
            new = self.new_name(name)
            if new is not None:
                found.append((path, f"{directory}/{new}" if directory else new))
        return found


def stem(path: str) -> str:
    """The file name without its extension: `.flox/pkgs/pytorch-python312-cpu-avx2.nix` -> `pytorch-python312-cpu-avx2`."""
    return PurePosixPath(path).stem


def self_reference_edits(doc, old_path: str, new_path: str, reason: str) -> list[Edit]:
    """Edits turning every whole-token occurrence of `old_path`'s stem in strings and comments into `new_path`'s."""
    old, new = stem(old_path).encode(), stem(new_path).encode()
    if old == new or old not in doc.data:
        return []
    pattern = re.compile(rb"(?<![" + _EDGE + rb"])" + re.escape(old) + rb"(?![" + _EDGE + rb"])")
    edits = []
    for match in pattern.finditer(doc.data):
        node = doc.root.descendant_for_byte_range(match.start(), match.end())
        if node is not None and node.type in SELF_REFERENCE_NODES:
            edits.append(Edit(match.start(), match.end(), new, reason))
    return edits
