"""How what a recipe builds changed: two summaries compared attribute by attribute (pure, no Nix).

A summary (pinshift.evaluation.evaluation) is plain JSON values, compared member by member; a change is named by
its dotted attribute path (`nixpkgs.rev`, `package`, `meta.platforms`, `overrides[1].overrideAttrs`,
`propagatedBuildInputs[1].pname`): objects and lists of objects are walked, a list of plain values is one
value, and a member only one side has is one change with its whole value (`package_set[0]`).

A package-set rename is one change, not fifty: when `package` differs (`python3Packages.torch` →
`python313Packages.torch`), the symbolic values each side reads from its own package (`«python3Packages.torch.
version»`) and from its own set (`«python3Packages.numpy»`) are compared as the same value, so only `package`
changes, unless something else really differs (the source override an overlay gave python3Packages.torch).

Statuses of a recipe: `same`, `changed`, `broken` (evaluated on BASE, fails on TARGET), `fixed` (the reverse),
`failing` (fails on both: it never evaluated, which is not a regression), `added`, `removed`, and two that say
pinshift cannot tell: `cannot_tell` (the stand-in cannot evaluate a side for a reason of its own, a fetched source:
never `broken`) and `changed_untold` (the file changed in meaning but evaluates alike against the stand-in: set by
pinshift.evaluation.build_diff, which reads the files).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

STATUSES = ("broken", "changed", "changed_untold", "cannot_tell", "fixed", "failing", "added", "removed", "same")
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_'-]*|//")


@dataclass(frozen=True)
class Change:
    """One attribute whose value differs: `before`/`after` are JSON values (None: absent or null)."""

    attribute: str
    before: Any
    after: Any
    # the values as compared (a package-set rename folded in: `«⟨package⟩.version»`), for showing what differs
    same_before: Any = field(default=None, compare=False, repr=False)
    same_after: Any = field(default=None, compare=False, repr=False)


@dataclass
class RecipeDiff:
    """One recipe across two trees: its path on TARGET (on BASE for `removed`), where it came from when git
    followed a rename, its status, what changed, and Nix's errors."""

    path: str
    status: str
    old_path: str | None = None
    changes: list[Change] = field(default_factory=list)
    error: str | None = None  # on TARGET (broken, failing, an added recipe that fails)
    base_error: str | None = None  # on BASE (fixed, failing, a removed recipe that failed)
    reason: str | None = None  # why pinshift cannot tell (cannot_tell, changed_untold)

    @property
    def label(self) -> str:
        return f"{self.old_path} → {self.path}" if self.old_path and self.old_path != self.path else self.path


def _key(name: str) -> str:
    return name if _SIMPLE.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def _walked(value: Any) -> bool:
    """Whether a value is compared part by part: an object, or a list holding objects or lists."""
    return (isinstance(value, dict) and bool(value)) or (
        isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value))


@dataclass(frozen=True)
class _Renames:
    """What one side's symbolic paths become so that a package-set rename compares equal."""

    symbolic: tuple[tuple[str, str], ...] = ()  # «python3Packages.torch. -> «⟨package⟩. ...
    bare: tuple[str, str] | None = None  # a nested package's own name: python3Packages.numpy -> ⟨set⟩.numpy

    def __call__(self, value: Any) -> Any:
        if not self.symbolic:
            return value
        if isinstance(value, str):
            if "«" in value:
                for old, new in self.symbolic:
                    value = value.replace(old, new)
            if self.bare is not None and value.startswith(self.bare[0]):
                value = self.bare[1] + value[len(self.bare[0]):]
            return value
        if isinstance(value, list):
            return [self(item) for item in value]
        if isinstance(value, dict):
            return {key: self(item) for key, item in value.items()}
        return value


def _renames(summary: dict, other: dict) -> _Renames:
    """This side's package and set, to placeholders both sides share (nothing when `package` is the same)."""
    mine, theirs = summary.get("package"), other.get("package")
    if not isinstance(mine, str) or not isinstance(theirs, str) or mine == theirs:
        return _Renames()
    pairs = [(f"«{mine}.", "«⟨package⟩."), (f"«{mine}»", "«⟨package⟩»")]
    own_set, other_set = mine.rpartition(".")[0], theirs.rpartition(".")[0]
    if own_set and other_set and own_set != other_set:
        pairs.append((f"«{own_set}.", "«⟨set⟩."))
        return _Renames(tuple(pairs), (f"{own_set}.", "⟨set⟩."))
    return _Renames(tuple(pairs))


def changes(before: dict, after: dict) -> list[Change]:
    """Every attribute whose value differs, `package` and `nixpkgs` first. Objects are compared member by member,
    lists of objects element by element; a member or element only one side has is one change (its whole value)."""
    left, right = _renames(before, after), _renames(after, before)
    found: list[Change] = []
    _compare(before, after, "", left, right, found)
    return sorted(found, key=lambda change: _order(change.attribute))


def _compare(old: Any, new: Any, prefix: str, left: "_Renames", right: "_Renames", found: list[Change]) -> None:
    if prefix in ("package", "nixpkgs"):  # the pin's own record (its overlays say what they say): compared as it is
        left = right = _Renames()
        if prefix == "package":
            if old != new:
                found.append(Change(prefix, old, new, old, new))
            return
    if isinstance(old, dict) and isinstance(new, dict) and _walked(old) and _walked(new):
        for name in sorted(set(old) | set(new)):
            where = f"{prefix}.{_key(name)}" if prefix else _key(name)
            if name not in old or name not in new:
                value_old, value_new = old.get(name), new.get(name)
                found.append(Change(where, value_old, value_new, left(value_old), right(value_new)))
            else:
                _compare(old[name], new[name], where, left, right, found)
        return
    if isinstance(old, list) and isinstance(new, list) and (_walked(old) or _walked(new)):
        for number in range(max(len(old), len(new))):
            where = f"{prefix}[{number}]"
            if number >= len(old) or number >= len(new):
                value_old = old[number] if number < len(old) else None
                value_new = new[number] if number < len(new) else None
                found.append(Change(where, value_old, value_new, left(value_old), right(value_new)))
            else:
                _compare(old[number], new[number], where, left, right, found)
        return
    same_old, same_new = left(old), right(new)
    if same_old != same_new:
        found.append(Change(prefix, old, new, same_old, same_new))


def _order(attribute: str) -> tuple:
    head = re.split(r"[.\[]", attribute, maxsplit=1)[0]
    rank = {"nixpkgs": 0, "package": 1, "package_set": 2, "override": 3, "overrides": 4}.get(head, 5)
    return (rank, attribute)


def compare(path: str, before, after, old_path: str | None = None) -> RecipeDiff:
    """The RecipeDiff of one recipe from its two Evaluations (None: the tree has no such recipe)."""
    if before is None:
        return RecipeDiff(path, "added", error=after.error, reason=_cannot(after))
    if after is None:
        return RecipeDiff(path, "removed", base_error=before.error)
    if _cannot(after) is not None:
        return RecipeDiff(path, "cannot_tell", old_path, error=after.error, base_error=before.error,
                          reason=_cannot(after))
    if _cannot(before) is not None:  # TARGET evaluates: nothing to compare it with; TARGET fails: that is its own
        if after.ok:
            return RecipeDiff(path, "cannot_tell", old_path, base_error=before.error, reason=f"on BASE, {_cannot(before)}")
        return RecipeDiff(path, "broken", old_path, error=after.error, base_error=before.error)
    if before.ok and after.ok:
        found = changes(before.summary, after.summary)
        return RecipeDiff(path, "changed" if found else "same", old_path, found)
    if before.ok:
        return RecipeDiff(path, "broken", old_path, error=after.error)
    if after.ok:
        return RecipeDiff(path, "fixed", old_path, base_error=before.error)
    return RecipeDiff(path, "failing", old_path, error=after.error, base_error=before.error)


def _cannot(evaluation) -> str | None:
    return getattr(evaluation, "cannot_tell", None)


def normal_changes(diff: RecipeDiff, before: dict | None, after: dict | None) -> tuple:
    """The changes of `diff` as a key that is equal for recipes changed the same way (renames folded in)."""
    if before is None or after is None:
        return tuple((c.attribute, _json(c.before), _json(c.after)) for c in diff.changes)
    left, right = _renames(before, after), _renames(after, before)
    return tuple((c.attribute, _json(c.before if c.attribute == "package" else left(c.before)),
                  _json(c.after if c.attribute == "package" else right(c.after))) for c in diff.changes)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- groups: recipes that changed the same way ------------------------------------------------------------------


@dataclass
class DiffGroup:
    """Recipes with one status and the same changes (or the same error): shown as one line, the first named."""

    status: str
    recipes: list[RecipeDiff]

    @property
    def first(self) -> RecipeDiff:
        return self.recipes[0]


def group(diffs: Iterable[RecipeDiff], keys: dict[str, tuple] | None = None) -> list[DiffGroup]:
    """Groups in status order (broken first), each in the path order of its first recipe. `keys`: path -> the key of
    its changes (`normal_changes`), else the changes as they are."""
    found: dict[tuple, DiffGroup] = {}
    for diff in sorted(diffs, key=lambda d: d.path):
        if diff.status == "changed":
            key = (keys or {}).get(diff.path) or tuple((c.attribute, _json(c.before), _json(c.after))
                                                      for c in diff.changes)
        elif diff.status in ("cannot_tell", "changed_untold"):
            key = (diff.reason,)
        elif diff.status in ("broken", "failing", "added"):
            key = (diff.error,)
        elif diff.status in ("fixed", "removed"):
            key = (diff.base_error,)
        else:
            key = ()
        found.setdefault((diff.status, key), DiffGroup(diff.status, [])).recipes.append(diff)
    return sorted(found.values(), key=lambda g: (STATUSES.index(g.status), g.first.path))


def counts(diffs: Iterable[RecipeDiff]) -> dict[str, int]:
    found = {status: 0 for status in STATUSES}
    for diff in diffs:
        found[diff.status] += 1
    return found


# --- words: a change as people read it ------------------------------------------------------------------------------


def short_rev(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}", value):
        return value[:7]
    return shown(value)


_FIRST = ("owner", "repo", "rev", "tag", "url", "version", "package")


def nix_like(value: Any) -> str:
    """A summary value written as Nix reads: `fetchFromGitHub { owner = "pytorch"; repo = "pytorch"; rev = "v2.10.0";
    … }` (a recorded call), `{ a = 1; }`, `[ "x" "y" ]`; strings quoted unless symbolic (`«…»`)."""
    if isinstance(value, str):
        return value if value.startswith("«") and value.endswith("»") else json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[ " + " ".join(nix_like(item) for item in value) + " ]" if value else "[ ]"
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(next(iter(value.values())), dict) and "." not in next(iter(value)):
            name, arguments = next(iter(value.items()))
            if name not in ("//",):
                return f"{name} {nix_like(arguments)}"
        names = sorted(value, key=lambda n: (_FIRST.index(n) if n in _FIRST else len(_FIRST), n))
        inner = " ".join(f"{_key(n)} = {nix_like(value[n])};" for n in names)
        return "{ " + inner + " }" if inner else "{ }"
    return json.dumps(value)


def shown(value: Any, width: int | None = None) -> str:
    """A value in a line: strings as they are (symbolic ones `«python313Packages.torch.src»`), others as Nix reads
    them (`nix_like`), cut at `width` characters (60 for a string, 80 for the rest)."""
    if value is None:
        return "(none)"
    text = value if isinstance(value, str) else nix_like(value)
    width = width or (60 if isinstance(value, str) else 80)
    text = text.replace("\n", "⏎")
    return text if len(text) <= width else text[: width - 1] + "…"


def change_words(change: Change) -> str:
    """`nixpkgs 6a030d5 → 0182a36`, `python3Packages.torch → python313Packages.torch`, `version 2.10.0 →
    «python313Packages.torch.version»`; in a multi-line string only the first line that differs."""
    before, after = change.before, change.after
    if change.attribute == "nixpkgs.rev":
        return f"nixpkgs {short_rev(before)} → {short_rev(after)}"
    if change.attribute == "package":
        return f"{shown(before)} → {shown(after)}"
    if isinstance(before, str) and isinstance(after, str) and ("\n" in before or "\n" in after):
        old_lines, new_lines = before.split("\n"), after.split("\n")
        same_old = change.same_before.split("\n") if isinstance(change.same_before, str) else old_lines
        same_new = change.same_after.split("\n") if isinstance(change.same_after, str) else new_lines
        if len(same_old) != len(old_lines) or len(same_new) != len(new_lines):
            same_old, same_new = old_lines, new_lines
        for number, (old, new) in enumerate(zip(same_old, same_new)):
            if old != new:
                return f"{change.attribute}: {_line(old_lines[number], old, new)} → {_line(new_lines[number], new, old)}"
        extra = old_lines[len(new_lines):] or new_lines[len(old_lines):]
        line = next((text.strip() for text in extra if text.strip()), "")
        side = "removed" if len(old_lines) > len(new_lines) else "added"
        return f"{change.attribute}: {side} {shown(line)}"
    if isinstance(before, str) and isinstance(after, str) and max(len(before), len(after)) > 60:
        old, new = window(before, after)
        return f"{change.attribute} {old} → {new}"
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after) and len(
            nix_like(before)) + len(nix_like(after)) > 160:  # long lists: the items that differ, each in its window
        same_old = change.same_before if isinstance(change.same_before, list) else before
        same_new = change.same_after if isinstance(change.same_after, list) else after
        if len(same_old) == len(same_new) == len(before):
            parts = []
            for number, (old, new) in enumerate(zip(before, after)):
                if same_old[number] == same_new[number]:
                    continue
                if isinstance(old, str) and isinstance(new, str):
                    old, new = window(old, new)
                else:
                    old, new = shown(old), shown(new)
                parts.append(f"{change.attribute}[{number}] {old} → {new}")
            if parts:
                return "; ".join(parts)
    return f"{change.attribute} {shown(before)} → {shown(after)}"


def window(before: str, after: str, width: int = 60, context: int = 24) -> tuple[str, str]:
    """Two long strings cut to where they differ: up to `context` characters before the first difference and a few
    after its end, `…` where text is left out (a string of a recorded call: `…"cutlass"; rev = "v3.1.0"; …`).

    >>> window('-DX=«fetchFromGitHub { owner = "NVIDIA"; repo = "cutlass"; rev = "v3.1.0"; }»',
    ...        '-DX=«fetchFromGitHub { owner = "NVIDIA"; repo = "cutlass"; rev = "v3.5.0"; }»')
    ('… = "cutlass"; rev = "v3.1.0"; }»', '… = "cutlass"; rev = "v3.5.0"; }»')
    """
    if len(before) <= width and len(after) <= width:
        return shown(before), shown(after)
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - context)

    def piece(text: str) -> str:
        end = min(len(text), len(text) - suffix + 8)
        part = ("…" if start > 0 else "") + text[start:end] + ("…" if end < len(text) else "")
        return shown(part, width + context)

    return piece(before), piece(after)


_SYMBOLS = re.compile(r"^(?:«[^»]*»)+")


def _line(text: str, compared: str, other: str) -> str:
    """One line of a changed string: symbolic values it starts with that equal the other side's shown as `…`."""
    mine, theirs = _SYMBOLS.match(compared), _SYMBOLS.match(other)
    if mine and theirs and mine.group() == theirs.group():
        own = _SYMBOLS.match(text)
        if own:
            text = "…" + text[own.end():]
    return shown(text.strip())
