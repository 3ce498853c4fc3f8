"""How a file's name changed: the rename-files (or clone-files) `from`/`to` that turns one name into another.

Names are compared token by token (runs of letters, digits and `_`, and single other characters),
so the change is a whole stretch of the name: `python312` -> `python311`, not `2` -> `1`.
"""

from __future__ import annotations

import re

from pinshift.errors import PinshiftError
from pinshift.infer.candidates import replacement
from pinshift.migrations._file_names import Naming

_NAME_TOKEN = re.compile(r"[A-Za-z0-9_]+|.", re.S)


def name_change(old: str, new: str) -> tuple[str, str, bool] | None:
    r"""The rename-files `from`/`to`/`regex` that turns file name `old` into `new` (None when none does).

        >>> name_change("pytorch-python312-cpu-avx2.nix", "pytorch-python311-cpu-avx2.nix")
        ('python312', 'python311', False)
        >>> name_change("a.nix", "pkg-a.nix")
        ('^(?!pkg\\-)', 'pkg-', True)
        >>> name_change("a.nix", "a-old.nix")
        ('(?<!\\-old)\\.', '-old.', True)
    """
    a, b = _NAME_TOKEN.findall(old), _NAME_TOKEN.findall(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    if head == len(a) - tail:  # an insertion: at the start, or before the token after it (the same in every name)
        inserted = "".join(b[head : len(b) - tail])
        if head == 0:
            found = ("^(?!" + re.escape(inserted) + ")", inserted.replace("\\", "\\\\"), True)
            return found if _renames(found, old, new) else None
        if tail == 0:
            return None
        tail -= 1
    found = replacement("".join(a[head : len(a) - tail]), "".join(b[head : len(b) - tail]))
    return found if found is not None and _renames(found, old, new) else None


def token_count(text: str) -> int:
    """How many name tokens `text` has: `cuda12_9` 1, `cuda12_9-sm100` 3."""
    return len(_NAME_TOKEN.findall(text))


def _renames(found: tuple[str, str, bool], old: str, new: str) -> bool:
    try:
        return Naming(*found).new_name(old) == new
    except PinshiftError:
        return False




def inserted_text(change: tuple[str, str, bool]) -> str | None:
    """What a regex name change inserts (`pkg-` for `^(?!pkg\\-)` -> `pkg-`), None for a literal replacement.

        >>> inserted_text((r"^(?!pkg\\-)", "pkg-", True)), inserted_text(("python312", "python311", False))
        ('pkg-', None)
        >>> inserted_text((r"(?<!\\-old)\\.", "-old.", True))
        '-old'
    """
    if not change[2]:
        return None
    new = change[1].replace("\\\\", "\\")
    prefix = re.match(r"\^\(\?!(.*)\)\Z", change[0])
    if prefix:
        return new
    before = re.match(r"\(\?<!(.*)\)(.*)\Z", change[0], re.S)
    after = re.match(r"(.*)\(\?!(.*)\)\Z", change[0], re.S)
    if before:
        token = re.sub(r"\\(.)", r"\1", before.group(2))
        return new[: len(new) - len(token)] if new.endswith(token) else new
    if after:
        token = re.sub(r"\\(.)", r"\1", after.group(1))
        return new[len(token):] if new.startswith(token) else new
    return new


def change_words(change: tuple[str, str, bool]) -> tuple[str, str]:
    """(how a name change reads in a title, its kind): ("cuda12_9 to cuda12_8", "replace"),
    ("the prefix pkg-", "prefix"), ("-old", "insert")."""
    inserted = inserted_text(change)
    if inserted is None:
        return f"{change[0]} to {change[1]}", "replace"
    if change[0].startswith("^(?!"):
        return f"the prefix {inserted}", "prefix"
    return inserted, "insert"
