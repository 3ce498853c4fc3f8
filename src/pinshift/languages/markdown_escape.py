"""Values from a commit, written into Markdown so that they render as the characters they are, never as markup.

A commit message, a path, a branch name, a step title, a Nix error message: anyone who can open a pull
request writes them, and the report is a pull-request comment. Every Markdown output of pinshift puts
such a value in through one of these functions:

- `code(value)`: an inline code span whose backtick run is longer than any run inside (CommonMark), with a
  space on each side when the value starts or ends with a backtick; `table=True` also escapes `|` (GFM
  splits table cells before it reads code spans, and shows `\\|` as `|`).
- `fence(body)`: the fence for a code block, longer than any run of backticks or tildes inside.
- `text(value)`: prose outside code. Every character that can start markup (`\\ ` * _ [ ] ! < > # | ~ &
  $`, and a list marker, `=` or a rule at the start of the value) gets a backslash, so no emphasis, link, image,
  HTML tag, entity, heading, list, table cell, strikethrough or math can start; `@` and the `://` of a URL
  get an invisible word joiner (U+2060, written `&#8288;`) after them (`@` when no letter
  precedes it) (and `www.`), so GitHub neither notifies `@team` nor
  links `http://…`.
- `html_text(value)`: the same value inside a raw HTML block (`<details><summary>…`), where Markdown is
  not read: HTML-escaped, `@` and `://` joined as above.
- `link(label, url)`: a link whose destination is percent-encoded (a path with `)` or a space cannot end it).

Every function first shows control characters and bytes that are not UTF-8 as escapes
(pinshift.languages.display.printable), so a value stays on its line.

Examples:
    >>> code("a `` b")
    '```a `` b```'
    >>> code("``x")
    '``` ``x ```'
    >>> text("![img](http://e/x.png) **b** @team")
    '\\\\!\\\\[img\\\\](http:&#8288;//e/x.png) \\\\*\\\\*b\\\\*\\\\* @&#8288;team'
    >>> fence("```\\n~~~~")
    '`````'
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from pinshift.languages.display import printable

# WORD JOINER (U+2060), invisible, breaks `@name` mentions and `scheme://` autolinks; written as a character
# reference so that it stays ASCII and no later `printable` shows it as `\u2060`
JOINER = "&#8288;"
# `(` and `)` stay: with `[`, `]` and `!` escaped no link can start, and `1)` is caught as a list marker
# `_` between two letters or digits stays (`cuda12_9`): CommonMark never reads it as emphasis there
_PUNCTUATION = re.compile(r"([\\`*\[\]!<>#|~&$]|_(?![^\W_])|(?<![^\W_])_)")
_LINE_START = re.compile(r"^(=|[-+](?=[\s\-+]|$))")  # a rule, a setext underline or a list item
_LIST_START = re.compile(r"^([0-9]+)([.)])(?=\s|$)")  # `1. ` or `1) ` starting a value would start a list
_MENTION = re.compile(r"(?<![^\W_])@(?=\S)")  # no mention after a letter or digit (`repo@main`, an e-mail)
_SCHEME = re.compile(r"(:)(?=//)|(?<!\w)(www)(?=\.)", re.I)
_BACKTICKS = re.compile(r"`+")
_FENCE_RUNS = re.compile(r"`+|~+")


def _joined(value: str) -> str:
    """`@`, the `:` of `://` and a `www` before `.` followed by the word joiner."""
    return _SCHEME.sub(lambda m: (m.group(1) or m.group(2)) + JOINER, _MENTION.sub("@" + JOINER, value))


def text(value: str, line_start: bool = True) -> str:
    """`value` as literal prose: Markdown punctuation backslash-escaped, mentions and autolinks broken.

    `line_start`: the value may begin a line or a list item, where `- `, `1. `, `=` start a block; in a
    table cell or after other text they are only characters."""
    escaped = _PUNCTUATION.sub(r"\\\1", printable(value))
    if line_start:
        escaped = _LIST_START.sub(r"\1\\\2", _LINE_START.sub(r"\\\1", escaped))
    return _joined(escaped)


def cell(value: str) -> str:
    """`value` as literal text in one table cell: `text`, with runs of white space made one space."""
    return text(" ".join(printable(value).split()), line_start=False)


def code(value: str, table: bool = False) -> str:
    """An inline code span holding `value` verbatim, whatever backticks it holds; `table`: `|` escaped too."""
    value = printable(value)
    longest = max((len(run) for run in _BACKTICKS.findall(value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or (
        value.startswith(" ") and value.endswith(" ") and value.strip(" ")) else ""
    if table:
        value = value.replace("|", "\\|")
    return f"{ticks}{pad}{value}{pad}{ticks}"


def fence(body: str, least: int = 3) -> str:
    """The backtick fence for a code block holding `body`: longer than any backtick or tilde run inside."""
    longest = max((len(run) for run in _FENCE_RUNS.findall(body)), default=0)
    return "`" * max(least, longest + 1)


def html_text(value: str) -> str:
    """`value` inside raw HTML (a `<details>` block, where Markdown is not read): escaped, mentions broken."""
    return _joined(html.escape(printable(value), quote=True))


def html_code(value: str) -> str:
    """`<code>value</code>` for raw HTML blocks."""
    return f"<code>{html_text(value)}</code>"


def link(label: str, url: str) -> str:
    """`[label](url)`: `label` is Markdown already escaped (e.g. a `code` span); `url` is percent-encoded
    except for the characters a URL needs (`:/#?=&%@`), so no value in it can end the link."""
    return f"[{label}]({quote(url, safe=':/#?=&%@~+,;')})"
