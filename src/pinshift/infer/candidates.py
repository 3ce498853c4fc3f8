"""A candidate step: a kind, its parameters and the files whose differences suggested it.

Proposers (pinshift.infer.propose_*) read what still differs between the current state and
TARGET and return candidates; the proof (pinshift.infer.prove) plans each one and keeps it
only if every byte it changes is a change TARGET made. `intended` are the current paths the
evidence came from: when the step, run on the recipe's files, would also change other files,
the proof restricts its `files` to globs of that group.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Setting:
    """What every proposer may need to know about the run.

    `recipe_files`: the recipe's default `files`; `branches`: what `{base}`/`{target}` stand for
    (the branch names of BASE and TARGET); `base`/`target`: the refs as given, for messages.
    """

    recipe_files: tuple[str, ...]
    branches: dict[str, str]
    base: str
    target: str


@dataclass
class Candidate:
    """One step to try. `params` are written as recipes write them (kebab-case keys, TOML values)."""

    kind: str
    params: dict[str, Any]
    title: str
    intended: tuple[str, ...]
    detail: str = ""  # what the step does, a sentence or two: the body of its commit message
    files: tuple[str, ...] | None = None  # fixed step `files` (None: the recipe's, narrowed if needed)
    order: tuple = ()  # where the evidence is (path, offset): candidates of one phase are tried in this order
    # candidates of one phase with the same `rivals` key (pin-nixpkgs with other params, replace-in-strings of
    # the same `old` with another `new`) stand for groups of files: each runs on its own group only
    rivals: tuple = ()
    narrow_only: bool = False
    templated: tuple[str, ...] = ()  # params (and "title", "message") holding {base}/{target} on purpose
    retitle: Callable[[int], str] | None = None  # the title showing up to N characters of text (to tell steps apart)


def literal(text: str) -> str:
    """`text` as a recipe must write it to mean exactly `text`: braces doubled where `{name}` would be read
    as a placeholder (pinshift.recipes.placeholders); most text needs nothing.

        >>> literal("{ pkgs ? import <nixpkgs> {} }")
        '{ pkgs ? import <nixpkgs> {} }'
        >>> literal("https://example.org/{rev}.tar.gz")
        'https://example.org/{{rev}}.tar.gz'
    """
    from pinshift.recipes.placeholders import PlaceholderError, expand

    try:
        if expand(text, {}) == text:
            return text
    except PlaceholderError:
        pass
    return text.replace("{", "{{").replace("}", "}}")


def literal_value(value: Any) -> Any:
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, list):
        return [literal_value(v) for v in value]
    if isinstance(value, dict):
        return {k: literal_value(v) for k, v in value.items()}
    return value


def writable(value: Any) -> bool:
    """Whether every string in `value` is text a recipe can hold (no undecodable bytes, no NUL)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return "\0" not in value
    if isinstance(value, list):
        return all(writable(v) for v in value)
    if isinstance(value, dict):
        return all(writable(k) and writable(v) for k, v in value.items())
    return True


def replacement(old: str, new: str) -> tuple[str, str, bool] | None:
    """(old, new, regex) for a step that must replace `old` by `new` and be a no-op on its own output.

    Literal when `new` does not contain `old`; else a regular expression that no longer matches
    once the text is added (`A` -> `AB`: `A(?!B)`; `A` -> `BA`: `(?<!B)A`); None otherwise.

        >>> replacement("3.12", "3.11")
        ('3.12', '3.11', False)
        >>> replacement("-j32", "-j32 -v")
        ('\\\\-j32(?!\\\\ \\\\-v)', '-j32 -v', True)
    """
    if not old:
        return None
    if old not in new:
        return old, new, False
    template = new.replace("\\", "\\\\")
    if new.startswith(old) and new != old:
        return re.escape(old) + "(?!" + re.escape(new[len(old):]) + ")", template, True
    if new.endswith(old) and new != old:
        return "(?<!" + re.escape(new[: -len(old)]) + ")" + re.escape(old), template, True
    return None


def draft_message(title: str, detail: str) -> str:
    """A step's commit message: its title as the subject, what it does as the body (wrapped at 72)."""
    import textwrap

    if not detail:
        return ""
    body = textwrap.fill(detail, 72, break_long_words=False, break_on_hyphens=False)
    return f"{title}\n\n{body}\n"


def short(text: str, limit: int = 40) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    one_line = " ".join(text.split()) if "\n" in text else text
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
