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


def _renames(found: tuple[str, str, bool], old: str, new: str) -> bool:
    try:
        return Naming(*found).new_name(old) == new
    except PinshiftError:
        return False


