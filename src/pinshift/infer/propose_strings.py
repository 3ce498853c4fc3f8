"""Candidates for replace-in-strings: text TARGET changed inside the strings bound at one binding path, or in comments.

A hunk inside the literal text of a string that is the value of a binding (`meta.longDescription`,
or `(oldAttrs.postInstall or "") + ''...''`) becomes `old` -> `new`, widened to whole words
(`12` -> `11` is `3.12` -> `3.11`) and then word by word until `old` occurs in that binding's
strings no more often than TARGET changed it (`Python: 3.12`, not the `3.12` of a paragraph
that says `Python 3.12 builds`). Whole lines deleted or added stay whole lines. `old` and
`new` are literal when `new` does not contain `old`; otherwise a regular expression that stops
matching once the text is there (see candidates.replacement). Files that need the same
replacement make one step; files that need another one at the same place make another step,
restricted to their group by the proof.

A change inside the text of a comment is one too (the pseudo path COMMENTS: `comments = true`);
the same replacement in several binding paths and comments of the same files is one step. Words
are widened without the brackets, quotes and commas around them (`(SM120,` is `SM120`). When `new`
contains `old`, context from the line is taken first (`3.13\n` -> `3.13 (CUDA build)\n`): a regular
expression only when no context says it literally. Titles say the change in words.

The `.metadata-rev` markers are left to metadata-rev.
"""

from __future__ import annotations

import re
from collections import defaultdict

from pinshift import languages
from pinshift.infer.candidates import Candidate, Setting, replacement, short
from pinshift.infer.state import State
from pinshift.migrations.metadata_rev import _MARKER
from pinshift.migrations.replace_in_strings import bound_strings
from pinshift.syntax.queries import STRING_TYPES, as_string, bindings, find_bindings, walk

MAX_WIDENING = 8


def _fragment(doc, start: int, end: int):
    """The literal fragment node of a string holding bytes start..end, and the string node; None outside one."""
    node = doc.root.descendant_for_byte_range(start, end)
    while node is not None and node.type not in STRING_TYPES:
        node = node.parent
    if node is None:
        return None
    for fragment in as_string(node).literals():
        if fragment.start_byte <= start and end <= fragment.end_byte:
            return fragment, node
    return None


def _binding_path(doc, string_node, by_node: dict) -> str | None:
    """The dotted path of the binding whose value is this string (alone or joined with `+`)."""
    node = string_node
    while node.parent is not None and (node.parent.type == "parenthesized_expression" or (
            node.parent.type == "binary_expression" and node.parent.child_by_field_name("operator") is not None
            and node.parent.child_by_field_name("operator").type == "+")):
        node = node.parent
    parent = node.parent
    if parent is None or parent.type != "binding" or parent.child_by_field_name("expression") != node:
        return None
    binding = by_node.get(parent.id)
    if binding is None or None in binding.path:
        return None
    return binding.dotted


class _Change:
    """One hunk inside a string fragment, widened over equal context on both sides."""

    def __init__(self, path: str, fragment: bytes, target: bytes, start: int, end: int, new_start: int, new_end: int):
        self.path, self.fragment, self.target = path, fragment, target
        self.start, self.end, self.new_start, self.new_end = start, end, new_start, new_end
        self.turn = 0

    @property
    def old(self) -> bytes:
        return self.fragment[self.start : self.end]

    @property
    def new(self) -> bytes:
        return self.target[self.new_start : self.new_end]

    def _left(self) -> bool:
        if self.start == 0 or self.new_start == 0 or self.fragment[self.start - 1] != self.target[self.new_start - 1]:
            return False
        self.start -= 1
        self.new_start -= 1
        return True

    def _right(self) -> bool:
        if self.end >= len(self.fragment) or self.new_end >= len(self.target) \
                or self.fragment[self.end] != self.target[self.new_end]:
            return False
        self.end += 1
        self.new_end += 1
        return True

    def to_words(self) -> None:
        """Widen to whole words on both sides (a change inside a word takes the whole word): letters, digits
        and `_`, and `.`, `-`, `+` between them (`12.9`, `cuda12_9`, `x86_64-linux`), never the brackets,
        quotes and commas around a word (`(SM120,` is `SM120`), nor a full stop that ends a sentence."""
        if self.old[:1].isspace() and self.old[-1:].isspace() and self.old:
            return  # whole lines: already distinct
        while self.start > 0 and _word_at(self.fragment, self.start - 1, -1) and self._left():
            pass
        while self.end < len(self.fragment) and _word_at(self.fragment, self.end, 1) and self._right():
            pass
        if not self.old:
            self.widen()

    def literal_context(self) -> None:
        """Take in the fewest bytes of equal context, to the end of the line then to its start, that make `old`
        no longer part of `new` (`3.13` -> `3.13 (CUDA build)` is `3.13\\n` -> `3.13 (CUDA build)\\n`); word by word
        beyond the line when that is not enough. Unchanged when nothing does: a regular expression then."""
        start, end, new_start, new_end = self.start, self.end, self.new_start, self.new_end
        while self.old in self.new and not self.old.endswith(b"\n") and self._right():
            pass
        while self.old in self.new and not self.old.startswith(b"\n") and self._left():
            pass
        if self.old not in self.new:
            return
        while self.old in self.new and self.widen():
            pass
        if self.old in self.new:
            self.start, self.end, self.new_start, self.new_end = start, end, new_start, new_end

    def widen(self) -> bool:
        """One more word of context, alternating left and right; False when there is none."""
        for side in ((self._widen_left, self._widen_right) if self.turn % 2 == 0 else
                     (self._widen_right, self._widen_left)):
            self.turn += 1
            if side():
                return True
        return False

    def _widen_left(self) -> bool:
        moved = False
        while self.start > 0 and self.fragment[self.start - 1 : self.start].isspace() and self._left():
            moved = True
        while self.start > 0 and not self.fragment[self.start - 1 : self.start].isspace() and self._left():
            moved = True
        return moved

    def _widen_right(self) -> bool:
        moved = False
        while self.end < len(self.fragment) and self.fragment[self.end : self.end + 1].isspace() and self._right():
            moved = True
        while self.end < len(self.fragment) and not self.fragment[self.end : self.end + 1].isspace() and self._right():
            moved = True
        return moved


_BASE64_TAIL = re.compile(rb"[A-Za-z0-9+/]{20,}={0,2}\Z")


def _word_at(text: bytes, index: int, direction: int) -> bool:
    """Whether byte `index` belongs to the word being widened towards `direction` (-1: left, 1: right);
    the `=` padding that ends a base64 hash does."""
    byte = text[index : index + 1]
    if byte.isalnum() or byte == b"_":
        return True
    if byte == b"=" and direction == 1 and _BASE64_TAIL.search(text, 0, index):
        return True
    beyond = text[index + direction : index + direction + 1] if 0 <= index + direction < len(text) else b""
    return byte in (b".", b"-", b"+") and (beyond.isalnum() or beyond == b"_")


def _in_marker(fragment: bytes, start: int, end: int) -> bool:
    return any(m.start() <= end and start <= m.end() for m in _MARKER.finditer(fragment))


def string_changes(state: State, path: str, target_path: str) -> list[tuple[str, bytes, bytes, int]]:
    """(binding path, old, new, offset) for each change TARGET made inside a bound string of this file."""
    doc, target_doc = state.doc(path), state.target_doc(target_path)
    if doc is None or target_doc is None:
        return []
    by_node = None
    changes: list[tuple[_Change, int]] = []
    for hunk in state.hunks(path, target_path):
        held = _fragment(doc, hunk.start, hunk.end)
        target_held = _fragment(target_doc, hunk.new_start, hunk.new_end)
        if held is None or target_held is None:
            change = _comment_change(doc, target_doc, hunk)
            if change is not None:
                changes.append((change, hunk.start))
            continue
        fragment, string = held
        target_fragment, _ = target_held
        start, end = hunk.start - fragment.start_byte, hunk.end - fragment.start_byte
        if _in_marker(doc.text(fragment), start, end):
            continue
        if by_node is None:
            by_node = {b.node.id: b for b in bindings(doc)}
        binding_path = _binding_path(doc, string, by_node)
        if binding_path is None:
            continue
        change = _Change(binding_path, doc.text(fragment), target_doc.text(target_fragment), start, end,
                         hunk.new_start - target_fragment.start_byte, hunk.new_end - target_fragment.start_byte)
        change.to_words()
        change.where = (fragment.start_byte, target_fragment.start_byte)
        changes.append((change, hunk.start))
    changes = _merged(changes)
    texts: dict[str, list[bytes]] = {COMMENTS: [doc.data[s:e] for s, e in _comment_bodies(doc)]}
    for _ in range(MAX_WIDENING):
        wanted: dict[tuple[str, bytes], int] = defaultdict(int)
        for change, _ in changes:
            wanted[(change.path, change.old)] += 1
        crowded = []
        for change, _ in changes:
            if change.path not in texts:
                texts[change.path] = [doc.text(f) for b in find_bindings(doc, change.path)
                                      for s in bound_strings(b.value) for f in s.literals()]
            if sum(t.count(change.old) for t in texts[change.path]) > wanted[(change.path, change.old)]:
                crowded.append(change)
        if not crowded or not any(change.widen() for change in crowded):
            break
    for change, _ in changes:  # literal where a little more context can say it: regex only when none can
        if change.old and change.old in change.new:
            change.literal_context()
    return [(c.path, c.old, c.new, offset) for c, offset in changes if c.old]


COMMENTS = "#comments"  # the pseudo binding path of text in comments (replace-in-strings' comments = true)


def _comment_bodies(doc) -> list[tuple[int, int]]:
    """(start, end) of the text of every comment: without `#`, or `/*` and `*/`."""
    found = []
    for comment in walk(doc.root, "comment"):
        block = doc.data.startswith(b"/*", comment.start_byte)
        found.append((comment.start_byte + (2 if block else 1), comment.end_byte - (2 if block else 0)))
    return found


def _comment_body(doc, start: int, end: int) -> tuple[int, int] | None:
    node = doc.root.descendant_for_byte_range(start, end)
    if node is None or node.type != "comment":
        return None
    block = doc.data.startswith(b"/*", node.start_byte)
    body = (node.start_byte + (2 if block else 1), node.end_byte - (2 if block else 0))
    return body if body[0] <= start and end <= body[1] else None


def _comment_change(doc, target_doc, hunk) -> "_Change | None":
    """A hunk inside the text of a comment, in BASE and TARGET alike, as a change of COMMENTS."""
    body, target_body = _comment_body(doc, hunk.start, hunk.end), _comment_body(target_doc, hunk.new_start, hunk.new_end)
    if body is None or target_body is None:
        return None
    change = _Change(COMMENTS, doc.data[body[0] : body[1]], target_doc.data[target_body[0] : target_body[1]],
                     hunk.start - body[0], hunk.end - body[0], hunk.new_start - target_body[0],
                     hunk.new_end - target_body[0])
    change.to_words()
    change.where = (body[0], target_body[0])
    return change


def _merged(changes: list[tuple["_Change", int]]) -> list[tuple["_Change", int]]:
    """Changes of one fragment that overlap or are apart by spaces only (same line) become one:
    `Python: 3.13` -> `Python 3.13 (CUDA 12.9 build)` rather than a colon removed and words added; so do
    alternatives joined by a slash (`RTX 3090/A40` -> `H100/L40S`)."""
    out: list[tuple[_Change, int]] = []
    for change, offset in sorted(changes, key=lambda item: (item[0].where, item[0].start)):
        if out:
            last, _ = out[-1]
            gap = change.fragment[last.end : change.start]
            if last.where == change.where and (change.start <= last.end or (gap.strip() in (b"", b"/")
                                                                             and b"\n" not in gap)):
                last.end, last.new_end = max(last.end, change.end), max(last.new_end, change.new_end)
                continue
        out.append((change, offset))
    return out


TITLE_TEXT = 40  # characters of old or new text a title shows


def where_words(paths) -> str:
    """Where a replacement is made, as a title says it: `meta.description`, `comments and preConfigure`,
    `comments, version and meta.description`; `comments and strings` beyond three places (the commit
    message lists them)."""
    places = (["comments"] if COMMENTS in paths else []) + [p for p in paths if p != COMMENTS]
    if len(places) > 3:
        return "comments and strings" if COMMENTS in paths else "strings"
    return places[0] if len(places) == 1 else ", ".join(places[:-1]) + " and " + places[-1]


def shown_text(text: str, other: str = "", limit: int = TITLE_TEXT) -> str:
    """`text` quoted on one line for a title; a long one shows the words where it differs from `other`.

        >>> shown_text("Python 3.12 builds share a pin")
        "'Python 3.12 builds share a pin'"
        >>> shown_text("pytorch-python311-cuda12_8-sm90-avx2-long-name", "pytorch-python311-cuda12_8-sm89-avx2-long-name", 20)
        "'…sm90…'"
    """
    one_line = " ".join(text.split())
    if len(one_line) <= limit:
        return repr(one_line)
    other = " ".join(other.split())
    head = 0
    while head < min(len(one_line), len(other)) and one_line[head] == other[head]:
        head += 1
    tail = 0
    while tail < min(len(one_line), len(other)) - head and one_line[-1 - tail] == other[-1 - tail]:
        tail += 1
    words = re.compile(r"[\w.+]")
    while head > 0 and words.match(one_line[head - 1]):
        head -= 1
    end = len(one_line) - tail
    while end < len(one_line) and words.match(one_line[end]):
        end += 1
    core = one_line[head:end].strip()
    if other and core and len(core) <= limit:
        return repr(("…" if head else "") + core + ("…" if end < len(one_line) else ""))
    if " " not in one_line:  # a hash, a revision: its start
        return repr(one_line[:16] + "…")
    return repr(short(one_line, limit))


def replacement_title(paths, old: str, new: str, regex: bool, limit: int = TITLE_TEXT) -> str:
    """What a replace-in-strings step does, in words (never its regular expression)."""
    where = where_words(paths)
    if not new.strip():
        return f"Remove {shown_text(old, limit=limit)} from {where}"
    if not old.strip():
        return f"Add {shown_text(new, limit=limit)} to {where}"
    if regex and new.startswith(old):
        return f"Add {shown_text(new[len(old):], limit=limit)} after {shown_text(old, limit=limit)} in {where}"
    if regex and new.endswith(old):
        return f"Add {shown_text(new[: -len(old)], limit=limit)} before {shown_text(old, limit=limit)} in {where}"
    return f"Say {shown_text(new, old, limit)} instead of {shown_text(old, new, limit)} in {where}"


def propose_string_replacements(state: State, setting: Setting) -> list[Candidate]:
    groups: dict[tuple, list[str]] = defaultdict(list)
    where: dict[tuple, tuple] = {}
    shown: dict[tuple, tuple[str, str]] = {}
    for path, target_path in state.pairs():
        if languages.language_for(path) != "nix":
            continue
        for binding_path, old, new, offset in string_changes(state, path, target_path):
            try:
                found = replacement(old.decode("utf-8"), new.decode("utf-8"))
            except UnicodeDecodeError:
                continue
            if found is None:
                continue
            key = (binding_path,) + found
            if path not in groups[key]:
                groups[key].append(path)
            where.setdefault(key, (path, offset))
            shown.setdefault(key, (old.decode("utf-8"), new.decode("utf-8")))
    merged: dict[tuple, list[str]] = {}  # one step for several places that change in the same files
    for key in sorted(groups, key=lambda k: where[k]):
        rest, files = key[1:], tuple(sorted(groups[key]))
        same = merged.get((rest, files))
        if same is not None:
            same.append(key[0])
        else:
            merged[(rest, files)] = [key[0]]
    found = []
    for (rest, files), places in merged.items():
        old, new, regex = rest
        paths = [p for p in places if p != COMMENTS]
        params: dict = {"paths": paths, "old": old, "new": new}
        if regex:
            params["regex"] = True
        if COMMENTS in places:
            params["comments"] = True
        first = min(((p,) + rest for p in places), key=lambda k: where[k])
        shown_old, shown_new = shown[first]
        listed = ", ".join((["comments"] if COMMENTS in places else []) + paths)
        listed = " and ".join(listed.rsplit(", ", 1))
        detail = (f"In {listed} of {len(files)} file{'s' if len(files) != 1 else ''}: "
                  f"{short(shown_old, 60)!r} -> {short(shown_new, 60)!r}.")
        title = replacement_title(places, shown_old, shown_new, regex)
        found.append(Candidate("replace-in-strings", params, title, files,
                               order=where[first], detail=detail, rivals=(tuple(places), old),
                               retitle=lambda limit, places=places, o=shown_old, n=shown_new, r=regex:
                               replacement_title(places, o, n, r, limit)))
    return found
