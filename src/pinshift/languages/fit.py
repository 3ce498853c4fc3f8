"""Lines that fit the screen: the width every text output is fitted to, and how a line is made to fit it.

The width (`output_width`) is `$COLUMNS` when it is set to a number, else the width of the terminal the
output goes to, else 100 (a pipe, a file, CI); never less than `MIN_WIDTH`. A line wider than that is
wrapped (`fit_line`): it breaks at a space, preferring one after `;`, then one after `,` or before `(`, when
that keeps at least half the line; the next lines hang under the first by four spaces, or under the value of a labelled line (`builds  66 recipes:
…`), or by a given indent. A single
token wider than a whole line (a long path, a branch name) is cut in the middle with `…`
(`cut_middle`: `.flox/pkgs/pytorch-py…cuda12_9-sm100-avx512.nix`), keeping its start and its end, which
tell two names apart. With `keep_tokens` (the commands' `--verbose`) a token is never cut: it gets a line
of its own, and only such a line may be wider than the width, because half a path names no file.

Unified diffs are content, not summary: renderers pass their lines through unchanged (a wrapped or cut
`+` line would be a different change). Width is counted in terminal cells: an East Asian wide character
takes two, a combining mark none, a tab eight (at most).

Examples:
    >>> fit_line("builds  66 recipes: nixpkgs 6a030d5 → 0182a36; python3Packages.torch → "
    ...          "python313Packages.torch; nothing else", 60)
    ['builds  66 recipes: nixpkgs 6a030d5 → 0182a36;', '        python3Packages.torch → python313Packages.torch;', '        nothing else']
    >>> cut_middle("pytorch-2.9-python311", 12)
    'pytor…hon311'
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable

DEFAULT_WIDTH = 100  # not a terminal and no $COLUMNS
MIN_WIDTH = 20  # narrower is taken as this: a hanging indent and a word must fit
HANG = "    "
_ROOM = 16  # the least room left on a line that a cut token takes rather than a line of its own
_WORD = re.compile(r"\S+\s*")
_LABEL = re.compile(r" *[a-z][a-z-]* {2,}(?=\S)")  # `builds  `, `base    `: a label whose value the next lines hang under
_STYLED = re.compile(r"((?:\x1b\[[0-9;]*m)+)([^\x1b]*)(\x1b\[0m)", re.S)
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def output_width(stream=None) -> int:
    """$COLUMNS, else the width of `stream`'s terminal (stdout's by default; False: a file), else 100; at least
    MIN_WIDTH."""
    import sys

    given = os.environ.get("COLUMNS", "").strip()
    if given.isdigit() and int(given) > 0:
        return max(int(given), MIN_WIDTH)
    stream = sys.stdout if stream is None else stream
    if stream is False:
        return DEFAULT_WIDTH
    try:
        if stream.isatty():
            return max(os.get_terminal_size(stream.fileno()).columns, MIN_WIDTH)
    except (OSError, ValueError, AttributeError):
        pass
    return DEFAULT_WIDTH


class Verbatim(str):
    """A line that is content, not summary (a unified diff's): `fit_line` passes it through unchanged."""


class Excerpt(str):
    """A line quoted from a file inside a summary (`infer`'s short diff of a residue): cut at its end with `…`,
    never wrapped, since a wrapped piece would read as another line of the file (`keep_tokens`: whole)."""


def cells(text: str) -> int:
    """The terminal cells `text` takes (colour escapes take none)."""
    if "\x1b" in text:
        text = _SGR.sub("", text)
    if text.isascii() and "\t" not in text:
        return len(text)
    return sum(_cell(char) for char in text)


def _cell(char: str) -> int:
    if char == "\t":
        return 8
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _head(text: str, room: int) -> str:
    """The longest start of `text` within `room` cells."""
    out, used = [], 0
    for char in text:
        used += _cell(char)
        if used > room:
            break
        out.append(char)
    return "".join(out)


def cut_middle(token: str, width: int) -> str:
    """`token` within `width` cells: its start and its end around `…` (the end gets the odd cell)."""
    if cells(token) <= width:
        return token
    if width <= 1:
        return "…"[:max(width, 0)]
    room = width - 1
    head = _head(token, room // 2)
    tail = _head(token[::-1], room - cells(head))[::-1]
    return f"{head}…{tail}"


def cut_end(text: str, width: int) -> str:
    """`text` within `width` cells, ending in `…` when cut."""
    if cells(text) <= width:
        return text
    return _head(text, max(width - 1, 0)) + "…"


def _break_at(words: list[str], width: int) -> int:
    """How many of the line's `words` stay on it: up to the last `;` word when that keeps half the line, else
    up to the last `,` word or before the last `(` word, else all."""
    for preferred in (lambda word, after: word.endswith(";"),
                      lambda word, after: word.endswith(",") or after.startswith("(")):
        used = 0
        best = 0
        for index, word in enumerate(words[:-1]):
            used += cells(word)
            if preferred(word.rstrip(), words[index + 1]) and used >= width // 2:
                best = index + 1
        if best:
            return best
    return len(words)


def fit_line(line: str, width: int, indent: str | None = None, keep_tokens: bool = False) -> list[str]:
    """`line` as lines of at most `width` cells: wrapped at spaces (preferring `; `, then `, ` and ` (`), the
    next lines indented by `indent` (default: the line's own indent and four spaces, or as far as the value of
    a `label  value` line); a token wider than a line cut in the middle, or with `keep_tokens` on a line of its
    own, whole. A `Verbatim` line (a unified diff's) is never changed; a line coloured as a whole is fitted
    without its colour, then each piece coloured."""
    width = max(width, MIN_WIDTH)
    if isinstance(line, Verbatim) or cells(line) <= width:
        return [line]
    if isinstance(line, Excerpt):
        return [line if keep_tokens else cut_end(line, width)]
    styled = _STYLED.fullmatch(line)
    if styled:
        start, inner, end = styled.groups()
        return [f"{start}{piece}{end}" for piece in fit_line(inner, width, indent, keep_tokens)]
    lead = line[: len(line) - len(line.lstrip(" "))]
    if cells(lead) > width // 2:
        lead = lead[: width // 2]
    label = _LABEL.match(line)
    hang = (" " * cells(label.group()) if label else lead + HANG) if indent is None else indent
    if cells(hang) > width // 2:
        hang = hang[: width // 2]
    out: list[str] = []
    prefix, words = lead, []  # the line being filled: its indent, its words (each with the spaces after it)

    def used() -> int:
        return cells(prefix) + sum(cells(word) for word in words)

    for word in _WORD.findall(line[len(lead):]):
        bare = word.rstrip()
        too_long = cells(hang) + cells(bare) > width  # wider than any line: cut, or whole on a line of its own
        if too_long and words and not keep_tokens and width - used() >= _ROOM:
            words.append(cut_middle(bare, width - used()) + word[len(bare):])
            continue
        if words and used() + cells(bare) > width:
            keep = len(words) if too_long else _break_at(words, width - cells(prefix))
            out.append((prefix + "".join(words[:keep])).rstrip())
            prefix, words = hang, words[keep:]
            while words and used() + cells(bare) > width:  # what was carried over fills a line of its own
                out.append((prefix + "".join(words)).rstrip())
                words = []
        if not words and cells(prefix) + cells(bare) > width:
            if keep_tokens:
                out.append(prefix + bare)
                prefix = hang
                continue
            word = cut_middle(bare, width - cells(prefix)) + word[len(bare):]
        words.append(word)
    if words:
        out.append((prefix + "".join(words)).rstrip())
    return out


def fit_lines(lines: Iterable[str], width: int, indent: str | None = None, keep_tokens: bool = False) -> list[str]:
    """Every line of `lines` fitted (`fit_line`), in order."""
    return [piece for line in lines for piece in fit_line(line, width, indent, keep_tokens)]


def fit_text(text: str, width: int, indent: str | None = None, keep_tokens: bool = False) -> str:
    """`text` (lines ending in newlines) with every line fitted; its final newline kept."""
    ending = "\n" if text.endswith("\n") else ""
    lines = text[: len(text) - len(ending)].split("\n") if text else []
    return "\n".join(fit_lines(lines, width, indent, keep_tokens)) + ending if lines else text


_BULLET = re.compile(r"( *)(?:[-*] |\d+\. )")


def reflow(lines: list[str], width: int) -> list[str]:
    """Prose (a step kind's documentation) fitted by paragraph: the lines of a paragraph (or list item) that does
    not fit are joined and wrapped again under its own indent; a paragraph that fits stays as written.

    A paragraph ends at a blank line, a new list item (`- `, `* `, `1. `) or a change of indent.
    """
    out: list[str] = []
    index = 0
    while index < len(lines):
        first = lines[index]
        if not first.strip():
            out.append(first)
            index += 1
            continue
        bullet = _BULLET.match(first)
        lead = len(first) - len(first.lstrip(" "))
        follow = bullet.end() if bullet else lead
        end = index + 1
        while end < len(lines) and lines[end].strip() and not _BULLET.match(lines[end]) \
                and len(lines[end]) - len(lines[end].lstrip(" ")) == follow:
            end += 1
        paragraph = lines[index:end]
        if all(cells(line) <= width for line in paragraph):
            out.extend(paragraph)
        else:
            joined = " ".join([paragraph[0].rstrip()] + [line.strip() for line in paragraph[1:]])
            out.extend(fit_line(joined, width, " " * follow))
        index = end
    return out


def fit_table(rows: list[list[str]], width: int, keep: int = 1, gap: int = 2) -> list[str]:
    """A table (its first row the header) with aligned columns; one wider than `width` is shown in blocks of
    columns, each repeating the first `keep` columns, a blank line between blocks; the repeated columns are cut
    in the middle only as far as the widest other column needs, and a cell wider than a whole line too.

    Examples:
        >>> fit_table([["gpu", "avx", "avx2"], ["sm90", "1", "1"]], 20)
        ['gpu   avx  avx2', 'sm90  1    1']
        >>> fit_table([["gpu", "a" * 9, "b" * 9], ["sm90", "1", "1"]], 20)
        ['gpu   aaaaaaaaa', 'sm90  1', '', 'gpu   bbbbbbbbb', 'sm90  1']
    """
    if not rows:
        return []
    width = max(width, MIN_WIDTH)
    count = max(len(row) for row in rows)
    rows = [list(row) + [""] * (count - len(row)) for row in rows]
    widths = [max(cells(row[i]) for row in rows) for i in range(count)]
    keep = min(keep, count)
    widest = max(widths[keep:], default=0)
    excess = sum(widths[:keep]) + gap * keep + widest - width
    while excess > 0 and max(widths[:keep]) > 4:  # the repeated columns leave no room for the widest other: cut
        index = widths[:keep].index(max(widths[:keep]))
        widths[index] -= 1
        excess -= 1
    blocks, current, used = [], [], sum(widths[:keep]) + gap * keep
    for i in range(keep, count):
        room = min(widths[i], width - (sum(widths[:keep]) + gap * keep))
        widths[i] = max(room, 1)
        if current and used + widths[i] > width:
            blocks.append(current)
            current, used = [], sum(widths[:keep]) + gap * keep
        current.append(i)
        used += widths[i] + gap
    blocks.append(current)
    out: list[str] = []
    for number, block in enumerate(blocks):
        if number:
            out.append("")
        columns = list(range(keep)) + block
        for row in rows:
            shown = [cut_middle(row[i], widths[i]) for i in columns]
            out.append((" " * gap).join(cell + " " * (widths[i] - cells(cell))
                                        for cell, i in zip(shown, columns)).rstrip())
    return out
