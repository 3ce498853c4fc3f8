"""`pinshift status` output: one row per repository × branch as a text table, a Markdown table, or JSON.

Text and Markdown show the figures a reader compares across branches (the seed's "Current State"
table): pins with their recipe counts when a branch mixes them, the package and its version, CUDA,
Python, GPU targets, package sets, the recipe pattern, variants, drift and, with a target, alignment.
Every column lists its values most used first, with counts when there are several. A value that is
unknown (`?`), only partly known (`13.x`, `3.x`) or read from the file names rather than the recipe's
content gets a footnote mark (`[1]` in text, `[^1]` in Markdown) and a line after the table saying
where it came from. What does not fit in a cell (a branch's syntax problems, files skipped, a branch
git could not read) follows the table too, one line per branch.

The text table fits the terminal: `width` columns (the command passes $COLUMNS, else the terminal's
width, else 100). While it is wider, these steps are taken in order (`FIT_STEPS`): Package Set left
out; Recipe Pattern abbreviated; GPU left out; Recipe Pattern left out; the counts in CUDA and Python
left out; Package shows only the main package, without counts; Nixpkgs Pin shows the two most used
(`+2`); Drift left out (a line per drifting branch follows the table); Variants left out; then the
widest of Package and Nixpkgs Pin is cut with `…`, one character at a time, to no less than 12
characters, then Branch too, in the middle (`pytor…hon311`) and never so far that two branches of a
repository look the same, and on a very narrow terminal every column (to 4 characters). When the branch
names cannot be cut apart within the width, each branch is a line of its own above its row. Every other line
is wrapped (pinshift.languages.fit). A line
under the table names what was left out; `wide=True` (`--wide`) shows every column in full. Markdown
and JSON keep everything. JSON (schema `pinshift.status/3`, docs/status-schema.json) carries every
count and every value's sources.
"""

from __future__ import annotations

import json
import re
from pinshift.languages import markdown_escape as md_escape
from pinshift.languages.display import printable, visible_data
from pinshift.languages.fit import cells, cut_middle, fit_line

from pinshift.status.status import CALLER, UNKNOWN, UNPINNED, BranchStatus, Counted, _REVISION, version_key
from pinshift.facts.matrix import majority_phrase
from pinshift.facts.notation import sm_key

SCHEMA = "pinshift.status/3"
NONE = "–"
DEFAULT_WIDTH = 100
COLUMNS = ("Repo", "Branch", "Nixpkgs Pin", "Package", "CUDA", "Python", "GPU", "Package Set", "Recipe Pattern",
           "Variants", "Drift")
# how the text table is made to fit, in order: (what, column)
FIT_STEPS = (
    ("drop", "Package Set"),
    ("short", "Recipe Pattern"),
    ("drop", "GPU"),
    ("drop", "Recipe Pattern"),
    ("short", "CUDA"),
    ("short", "Python"),
    ("short", "Package"),
    ("short", "Nixpkgs Pin"),
    ("drop", "Drift"),
    ("drop", "Variants"),
    ("cut", 12),
)

TRUNCATED = ("Package", "Nixpkgs Pin", "Branch")
_PATTERN_SHORT = {"Flox function args": "Flox args", " + source override": " + src"}


def _short(value: str) -> str:
    return value[:7] if _REVISION.match(value) else value


def _plural(count: int, word: str, plural: str = "") -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


class Footnotes:
    """Numbered explanations of cells, one number per distinct text, in the order first used."""

    def __init__(self, markdown: bool):
        self.markdown = markdown
        self.texts: dict[str, int] = {}

    def mark(self, text: str) -> str:
        number = self.texts.setdefault(text, len(self.texts) + 1)
        return f"{_NOTE}{number}{_END}" if self.markdown else f"[{number}]"

    def lines(self) -> list[str]:
        if self.markdown:
            return [f"[^{number}]: {md_escape.text(text)}" for text, number in self.texts.items()]
        return [f"[{number}] {text}" for text, number in self.texts.items()]


# --- cells ---------------------------------------------------------------------------------------


def _with_counts(entries: list[tuple[str, int]], counts: bool = True) -> str:
    """`a` alone; `a (40) / b (26)` when mixed (`a / b` without counts); `–` when empty."""
    if not entries:
        return NONE
    if len(entries) == 1 or not counts:
        return " / ".join(value for value, _ in entries)
    return " / ".join(f"{value} ({count})" for value, count in entries)


def _pin_entries(row: BranchStatus, code) -> list[tuple[str, int]]:
    """Pins, the caller's nixpkgs and unpinned recipes together, most used first."""
    entries = [(code(_short(value)), count) for value, count in row.pins]
    entries += [(CALLER, row.caller)] if row.caller else []
    entries += [(UNPINNED, row.unpinned)] if row.unpinned else []
    return sorted(entries, key=lambda entry: -entry[1])


def _weak(counted: Counted) -> bool:
    return bool(counted.sources) and all(source.startswith("file name") for source, _ in counted.sources)


def _explain(column: str, counted: Counted) -> str | None:
    """The footnote a value needs, None when its source is the recipe's own statement."""
    sources = "; ".join(f"{source} ({count})" if len(counted.sources) > 1 else source
                        for source, count in counted.sources)
    value = counted.value
    if column == "CUDA":
        if value == UNKNOWN:
            return f"CUDA ?: GPU recipes with {sources}"
        if value.endswith(".x"):
            return f"CUDA {value}: {sources}; neither the file names nor a cudaVersion binding say the minor"
        if _weak(counted):
            return f"CUDA {value}: read from the file names ({sources}); the recipes name no cudaPackages set"
        if any("minor from" in source for source, _ in counted.sources):
            return f"CUDA {value}: {sources}"
    elif column == "Python":
        if value == UNKNOWN:
            return f"Python ?: recipes with {sources}"
        if value.endswith(".x"):
            return f"Python {value}: {sources}; neither the file names nor pname say which"
        if _weak(counted):
            return f"Python {value}: read from the file names; {_after_file_name(counted)}"
    elif column == "GPU":
        if value == "sm?":
            return "sm?: CUDA builds that state no GPU target (nixpkgs builds its default capabilities)"
        if _weak(counted):
            return "GPU targets read from the file names (sm<N>): the recipes state no target of their own"
    return None


def _after_file_name(counted: Counted) -> str:
    reasons = {source.partition("; ")[2] for source, _ in counted.sources if "; " in source}
    return "; ".join(sorted(reasons)) or "the recipes do not say"


def _values(column: str, values: tuple[Counted, ...], notes: Footnotes, counts: bool, order=version_key) -> str:
    if not values:
        return NONE
    entries = []
    for counted in values:
        explanation = _explain(column, counted)
        entries.append((counted.value + (notes.mark(explanation) if explanation else ""), counted.recipes))
    return _with_counts(entries, counts)


def _gpu(row: BranchStatus, notes: Footnotes, markdown: bool) -> str:
    """`sm80 / sm90` for up to three targets (every one in Markdown), else `sm61–sm120 (9)`; `sm?` last."""
    if not row.gpu:
        return NONE
    ordered = sorted(row.gpu, key=lambda c: (c.value == "sm?",) + sm_key(c.value.split("+", 1)[0]))
    marked = []
    for counted in ordered:
        explanation = _explain("GPU", counted)
        marked.append((counted, notes.mark(explanation) if explanation else ""))
    if markdown or len(ordered) <= 3:
        return " / ".join(c.value + mark for c, mark in marked)
    known = [(c, mark) for c, mark in marked if c.value != "sm?"]
    marks = "".join(dict.fromkeys(mark for _, mark in known))
    span = f"{known[0][0].value}–{known[-1][0].value} ({len(known)}){marks}"
    return " / ".join([span] + [c.value + mark for c, mark in marked if c.value == "sm?"])


def _versions(package, notes: Footnotes, short: bool) -> str:
    """`2.10.0 (override)`; `1.18.1 (override, 3) / 1.24.2 (override, 1)`; short: `1.18.1 / 1.24.2 (override)`."""
    shown: dict[tuple[str, str], int] = {}  # one part per value as shown: "real" and "pin" both show no origin
    for version in package.versions:
        mark = notes.mark(_unknown_version(package, version)) if version.value == UNKNOWN else ""
        origin = version.origin if version.origin in ("override", "recipe") else ""
        key = (version.value + mark, origin)
        shown[key] = shown.get(key, 0) + version.recipes
    parts = [(value, origin, count) for (value, origin), count in shown.items()]
    if len(parts) == 1:
        value, origin, _ = parts[0]
        return value + (f" ({origin})" if origin else "")
    if short:
        origins = {origin for _, origin, _ in parts}
        if len(origins) == 1:
            origin = origins.pop()
            return " / ".join(value for value, _, _ in parts) + (f" ({origin})" if origin else "")
        return " / ".join(value + (f" ({origin})" if origin else "") for value, origin, _ in parts)
    return " / ".join(f"{value} ({origin + ', ' if origin else ''}{count})" for value, origin, count in parts)


def _unknown_version(package, version) -> str:
    """`version ?: not stated in the recipes; --nixpkgs DIR reads it from each pin` (counts only for several reasons)."""
    reasons = "; ".join(f"{reason} ({_plural(count, 'recipe')})" if len(version.sources) > 1 else reason
                        for reason, count in version.sources)
    return f"version ?: not stated in the recipes; {reasons}"


def _packages(row: BranchStatus, notes: Footnotes, short: bool = False) -> str:
    """`pytorch 2.10.0 (override)`; companions after `;` (short: the main package only, `+2`)."""
    if not row.packages:
        return NONE
    shown = []
    for package in row.packages[:1] if short else row.packages:
        versions = _versions(package, notes, short)
        shown.append(f"{package.package} {versions}" if versions else package.package)
    more = len(row.packages) - 1
    if short and more:
        shown[0] += f" +{more}"
    return "; ".join(shown)


def _pins(row: BranchStatus, code, short: bool) -> str:
    entries = _pin_entries(row, code)
    if short and len(entries) > 2:
        return _with_counts(entries[:2]) + f" +{len(entries) - 2}"
    return _with_counts(entries)


def _drift(row: BranchStatus) -> str:
    markers = list(row.drift)
    if not row.files:
        markers.append("no recipe files")
    if row.problems:
        markers.append(f"{_plural(len(row.problems), 'unparsable file')}")
    if row.skipped:
        markers.append(f"{len(row.skipped)} skipped")
    return ", ".join(markers) or NONE


def _aligned(row: BranchStatus) -> str:
    alignment = row.alignment
    if alignment is None:
        return NONE
    if alignment.aligned:
        return "yes"
    if alignment.state == "partly":
        return f"partly ({alignment.on_target} of {alignment.total})"
    if row.caller and not row.pins:
        return f"no ({CALLER})"
    return "no" if alignment.total else NONE


def _pattern(value: str, text: bool, short: bool) -> str:
    if text:
        value = value.replace("self-contained ", "")
    if short:
        for long, abbreviated in _PATTERN_SHORT.items():
            value = value.replace(long, abbreviated)
    return value


# Markdown cells are put together from values read from commits with code spans and footnote marks between
# these private-use characters, then escaped piece by piece (`_escaped`): a value never becomes markup.
_CODE, _NOTE, _END = "\ue000", "\ue001", "\ue002"
_PIECES = re.compile(f"{_CODE}([^{_END}]*){_END}|{_NOTE}([0-9]+){_END}")


def _escaped(cell: str, table: bool = True) -> str:
    """A Markdown cell (or line) from the pieces `_cell` marked: code spans, footnote marks, escaped text between."""
    out, at = [], 0
    for found in _PIECES.finditer(cell):
        text = cell[at:found.start()]
        out.append(md_escape.text(text, line_start=not table and not out))
        out.append(md_escape.code(found.group(1), table) if found.group(2) is None else f"[^{found.group(2)}]")
        at = found.end()
    out.append(md_escape.text(cell[at:], line_start=not table and not out))
    return "".join(out)


def _cell(row: BranchStatus, column: str, notes: Footnotes, markdown: bool, short: bool = False) -> str:
    """One cell of a row, in full or `short` (FIT_STEPS); footnote marks are taken from `notes`."""
    code = (lambda text: f"{_CODE}{text}{_END}") if markdown else (lambda text: text)
    if column == "Repo":
        return code(row.repository)
    if column == "Branch":
        return code(row.branch) if markdown else "  " + printable(row.branch)
    if row.error:
        return "unreadable" if column == "Drift" else "?"
    if column == "Nixpkgs Pin":
        return _pins(row, code, short)
    if column == "Package":
        return _packages(row, notes, short)
    if column in ("CUDA", "Python"):
        return _values(column, row.cuda if column == "CUDA" else row.python, notes, not short)
    if column == "GPU":
        return _gpu(row, notes, markdown)
    if column == "Package Set":
        return _with_counts([(code(c.value), c.recipes) for c in row.package_sets])
    if column == "Recipe Pattern":
        return _with_counts([(_pattern(c.value, not markdown, short), c.recipes) for c in row.patterns])
    if column == "Variants":
        return str(row.variants)
    if column == "Drift":
        return _drift(row)
    return _aligned(row)  # Aligned


def _footnotes(rows: list[BranchStatus], markdown: bool, verbose: bool) -> list[str]:
    """What did not fit in a cell: a branch git could not read, its unparsable files, skipped files."""
    lines = []
    for row in rows:
        label = f"{_CODE}{row.label}{_END}" if markdown else row.label
        if row.error:
            lines.append(f"{label}: cannot be read: {row.error}")
        if row.problems:
            shown = row.problems if verbose else row.problems[:1]
            more = "" if verbose or len(row.problems) == 1 else f" (and {len(row.problems) - 1} more; --verbose lists them)"
            lines.append(f"{label}: {_plural(len(row.problems), 'recipe file')} with syntax problems, not counted: "
                         f"{'; '.join(shown)}{more}")
        if row.skipped:
            shown = row.skipped if verbose else row.skipped[:1]
            more = "" if verbose or len(row.skipped) == 1 else f" (and {len(row.skipped) - 1} more)"
            lines.append(f"{label}: {_plural(len(row.skipped), 'file')} skipped: {'; '.join(shown)}{more}")
    return lines


def _target_counts(target) -> str:
    counted = _plural(target.count, "recipe")
    if target.others:
        counted = f"{target.count} of {target.total} pinned recipes, {majority_phrase(target.count, target.total)}"
    return f"{target.commit[:7]}, {counted}"


# --- formats -------------------------------------------------------------------------------------


def _header(target) -> list[str]:
    columns = list(COLUMNS)
    if target is not None:
        columns.append(f"Aligned to {target.label} ({target.revision[:7]})")
    return columns


def render_markdown(rows: list[BranchStatus], target=None, notes=(), verbose: bool = False) -> str:
    header = _header(target)
    footnotes = Footnotes(markdown=True)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    columns = list(COLUMNS) + (["Aligned"] if target is not None else [])
    for row in rows:
        lines.append("| " + " | ".join(_escaped(_cell(row, column, footnotes, True)) for column in columns) + " |")
    extra = [f"- {_escaped(line, table=False)}" for line in _footnotes(rows, True, verbose)]
    if target is not None:
        extra.append(f"- target: {md_escape.code(target.revision[:7])}, {md_escape.text(target.origin)} "
                     f"({md_escape.text(_target_counts(target))})")
    extra += [f"- note: {md_escape.text(note)}" for note in notes]
    definitions = footnotes.lines()
    return "\n".join(lines + ([""] + extra if extra else []) + ([""] + definitions if definitions else [])) + "\n"


def render_text(rows: list[BranchStatus], target=None, notes=(), verbose: bool = False,
                width: int = DEFAULT_WIDTH, wide: bool = False) -> str:
    """A summary line, then the table with one heading line per repository and its branches below it
    (no Repo column), "self-contained" left out of the pattern, fitted to `width` unless `wide`;
    footnotes and notes after it."""
    aligning = target is not None
    columns = list(COLUMNS[1:]) + (["Aligned"] if aligning else [])
    probe = Footnotes(markdown=False)  # the layout is chosen on cells whose marks are thrown away
    both = [{c: (_cell(row, c, probe, False), _cell(row, c, probe, False, short=True)) for c in columns}
            for row in rows]
    floors = {"Branch": _distinct_width(rows)}
    shown, short, left_out, cut = _fit(columns, both, width, wide, floors)
    stacked = not wide and _table_width(shown, short, cut, both) > width  # names too long to cut apart
    if stacked:  # each branch on a line of its own above its row, the table without Branch, indented
        shown, short, left_out, cut = _fit([c for c in columns if c != "Branch"], both, width - len(_STACK), wide)
    footnotes = Footnotes(markdown=False)  # numbered in the order the shown cells use them
    table = [[_cut(_cell(row, c, footnotes, False, short=c in short), cut.get(c), c) for c in shown] for row in rows]
    headers = ["Aligned" if c == "Aligned" else _cut(c, cut.get(c)) for c in shown]
    widths = [max(cells(line[i]) for line in [headers, *table]) for i in range(len(shown))]

    def table_line(values: list[str]) -> str:
        return ((_STACK if stacked else "")
                + "  ".join(value + " " * (w - cells(value)) for value, w in zip(values, widths))).rstrip()

    repositories = len({row.root for row in rows})
    summary = (f"{_plural(len(rows), 'branch', 'branches')} in {_plural(repositories, 'repository', 'repositories')}"
               + (f"; target: {target.revision[:7]}, {target.origin} ({_target_counts(target)})" if aligning else ""))
    lines = _wrap(summary, width, wide) + [""] + (["Branch (each above its row)"] if stacked else []) \
        + [table_line(headers)]
    current = None
    for row, line in zip(rows, table):
        if row.root != current:
            current = row.root
            lines.extend(_wrap(row.repository, width, wide))
        if stacked:  # a name wider than the screen is wrapped, never cut: two such names still differ
            name = printable(row.branch)
            lines.extend("  " + name[i:i + width - 2] for i in range(0, len(name), width - 2))
        lines.append(table_line(line))
    extra = []
    if left_out or short or cut:
        said = []
        if left_out:
            said.append(f"left out: {', '.join(left_out)}")
        if short:
            said.append(f"abbreviated: {', '.join(c for c in shown if c in short)}")  # `short` holds shown ones
        if cut:
            said.append(f"cut: {', '.join(cut)}")
        extra.append(f"({'; '.join(said)}; to fit {width} columns; --wide shows every column)")
    if "Drift" in left_out:
        extra += [f"drift: {row.label}: {_drift(row)}" for row in rows if not row.error and _drift(row) != NONE]
    extra += footnotes.lines() + _footnotes(rows, False, verbose) + [f"note: {note}" for note in notes]
    wrapped = [piece for line in extra for piece in _wrap(line, width, wide)]
    return "\n".join(lines + ([""] + wrapped if wrapped else [])) + "\n"


_STACK = "      "  # a row's indent under its branch when the names are too long for a Branch column


def _distinct_width(rows: list[BranchStatus]) -> int:
    """The narrowest Branch column (its two-space indent included) whose names, cut in the middle, still tell
    apart every two branches of one repository (`pytor…hon311` and `pytor…hon312`)."""
    names: dict[str, list[str]] = {}
    for row in rows:
        names.setdefault(row.root, []).append(row.branch)
    longest = max((cells(name) for name in (row.branch for row in rows)), default=0)
    for room in range(min(longest, 10), longest + 1):
        if all(len({cut_middle(name, room) for name in group}) == len(group) for group in names.values()):
            return room + 2
    return longest + 2


def _table_width(shown: list[str], short: set, cut: dict, rows: list[dict]) -> int:
    natural = {c: max([cells(c)] + [cells(r[c][1 if c in short else 0]) for r in rows]) for c in shown}
    return sum(min(natural[c], cut.get(c, natural[c])) for c in shown) + 2 * (len(shown) - 1)


def _fit(columns: list[str], rows: list[dict], width: int, wide: bool, floors: dict | None = None):
    """(columns shown, columns abbreviated, columns left out, column -> cut width) for a table within `width`.

    `rows` hold (full, short) cells per column. FIT_STEPS are taken in order while the table is too
    wide: a column is left out or abbreviated; `("cut", N)` narrows the widest of TRUNCATED one
    character at a time, none below N characters (nor below its `floors`: Branch keeps the names apart),
    and is taken only if that makes the table fit (the last one, as far as it goes).
    """
    floors = floors or {}
    shown, short, left_out, cut = list(columns), set(), [], {}
    if wide:
        return shown, short, left_out, cut

    def natural(column: str) -> int:
        return max([len(column)] + [len(r[column][1 if column in short else 0]) for r in rows])

    def total(narrowed: dict) -> int:
        return sum(min(natural(c), narrowed.get(c, 10**6)) for c in shown) + 2 * (len(shown) - 1)

    taken = []
    for index, (what, argument) in enumerate(FIT_STEPS):
        if total(cut) <= width:
            break
        if what == "cut":
            last = index == len(FIT_STEPS) - 1
            narrowable = [c for c in TRUNCATED if c in shown and c != "Branch"]
            narrowed = _narrowed({c: natural(c) for c in narrowable}, total(cut) - width, argument, floors)
            if last and total(narrowed) > width:  # the branch names are cut only when nothing else fits
                narrowed = _narrowed({c: natural(c) for c in TRUNCATED if c in shown}, total(cut) - width, argument,
                                     floors)
            if last and total(narrowed) > width:  # a very narrow terminal: every column
                narrowed = _narrowed({c: natural(c) for c in shown}, total(cut) - width, 4, floors)
            if total(narrowed) <= width or last:
                cut = narrowed
        elif argument not in shown:
            continue
        elif what == "drop":
            shown.remove(argument)
            left_out.append(argument)
            taken.append((what, argument))
        elif any(r[argument][0] != r[argument][1] for r in rows):
            short.add(argument)
            taken.append((what, argument))
    if not cut:  # a later step may have made room for an earlier one: undo what still fits, latest first
        for what, argument in reversed(taken):
            if what == "drop":
                shown.insert(min(columns.index(argument), len(shown)), argument)
                shown.sort(key=columns.index)
                if total(cut) > width:
                    shown.remove(argument)
                else:
                    left_out.remove(argument)
            else:
                short.discard(argument)
                if total(cut) > width:
                    short.add(argument)
    return shown, short & set(shown), left_out, cut


def _narrowed(widths: dict, excess: int, floor: int, floors: dict | None = None) -> dict:
    """Column -> width after taking `excess` characters from the widest columns, none below `floor` (nor below
    its own `floors`)."""
    narrowed = dict(widths)
    floors = floors or {}
    while excess > 0:
        candidates = [c for c in narrowed if narrowed[c] > max(floor, floors.get(c, 0))]
        if not candidates:
            break
        widest = max(candidates, key=lambda c: narrowed[c])
        narrowed[widest] -= 1
        excess -= 1
    return {c: w for c, w in narrowed.items() if w < widths[c]}


_MARK = re.compile(r"\[\d+\]")


def _cut(cell: str, limit: int | None, column: str = "") -> str:
    """`cell` within `limit` characters, ending its text in `…`; every footnote mark is kept (those of the
    part cut off follow the `…`). A branch name is cut in the middle instead (`  pytor…hon311`): its start and
    its end tell it from its siblings."""
    if limit is None or len(cell) <= limit:
        return cell
    if column == "Branch":
        return "  " + cut_middle(cell[2:], limit - 2)
    pieces = _MARK.split(cell)
    marks = _MARK.findall(cell)
    budget = limit - 1 - sum(len(m) for m in marks)
    if budget < 0:
        return cell[: limit - 1] + "…"
    out, cut_at = [], None
    for index, text in enumerate(pieces):
        if cut_at is None:
            if len(text) > budget:
                out.append(text[:budget] + "…")
                cut_at = index
            else:
                out.append(text)
                budget -= len(text)
        if index < len(marks):
            out.append(marks[index])
    return "".join(out)


def _wrap(line: str, width: int, wide: bool) -> list[str]:
    return [line] if wide else fit_line(line, width)


UNCHECKED = "the versions each recipe builds at its real pin (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"


def render_json(rows: list[BranchStatus], target=None, notes=(), nixpkgs=None, real: bool = False) -> str:
    document = {
        "schema": SCHEMA,
        "nixpkgs": str(nixpkgs) if nixpkgs is not None else None,
        "align_to": None if target is None else {
            "label": target.label, "path": target.root, "commit": target.commit, "revision": target.revision,
            "recipes": target.count, "pinned_recipes": target.total,
            "others": [{"revision": value, "recipes": count} for value, count in target.others],
        },
        "branches": [_row_json(row) for row in rows],
        "notes": list(notes),
        "real": {"checked": real, "unchecked": [] if real else [UNCHECKED]},
    }
    # ASCII: every escape is JSON's own, nothing left for printable; a byte that is not UTF-8 reads `\\xff`
    return json.dumps(visible_data(document), indent=2) + "\n"


def _row_json(row: BranchStatus) -> dict:
    literal = lambda value: bool(_REVISION.match(value))  # noqa: E731
    return {
        "repository": row.repository,
        "path": row.root,
        "branch": row.branch,
        "commit": row.commit,
        "files": row.files,
        "variants": row.variants,
        "kinds": [{"kind": kind, "recipes": count} for kind, count in row.kinds],
        "pins": [{"revision": value if literal(value) else None, "expression": None if literal(value) else value,
                  "recipes": count, "pytorch": row.pytorch.get(value)} for value, count in row.pins],
        "uses_caller_nixpkgs": row.caller,
        "unpinned": row.unpinned,
        "hashed_pins": row.hashed,
        "packages": [{"package": p.package, "recipes": p.recipes, "attribute": p.attribute,
                      "versions": [{"version": v.value, "origin": v.origin or None, "recipes": v.recipes,
                                    "sources": [{"source": s, "recipes": n} for s, n in v.sources]}
                                   for v in p.versions]} for p in row.packages],
        "package_sets": [c.to_json("name") for c in row.package_sets],
        "cuda": [c.to_json("version") for c in row.cuda],
        "gpu": [c.to_json("target") for c in row.gpu],
        "python": [c.to_json("version") for c in row.python],
        "patterns": [c.to_json("pattern") for c in row.patterns],
        "drift": row.drift,
        "helpers": [{"path": path, "why": why} for path, why in sorted(row.helpers.items())],
        "problems": list(row.problems),
        "skipped": list(row.skipped),
        "error": row.error,
        "alignment": None if row.alignment is None else {
            "state": row.alignment.state, "aligned": row.alignment.aligned,
            "recipes_on_target": row.alignment.on_target, "recipes": row.alignment.total,
        },
    }
