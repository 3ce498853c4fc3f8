"""The unified-diff renderer agrees byte for byte with `git diff` (from the `---` line on)."""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import git
from pinshift.planning.unified_diff import diff_text, unified_diff

CASES = {
    "one line": (b"{\n  rev = \"6a030d5\";\n}\n", b"{\n  rev = \"0182a36\";\n}\n"),
    "crlf": (b"a\r\nb\r\nc\r\n", b"a\r\nB\r\nc\r\n"),
    "no final newline, unchanged last line": (b"a\nb\nc", b"A\nb\nc"),
    "no final newline, changed last line": (b"a\nb\nc", b"a\nb\nC"),
    "final newline removed": (b"x\n", b"x"),
    "final newline added": (b"x", b"x\n"),
    "latin-1 bytes": (b"# caf\xe9\nrev = 1;\n", b"# caf\xe9\nrev = 2;\n"),
    "two hunks": (
        b"".join(b"line %d\n" % i for i in range(30)),
        b"".join(b"line %d\n" % i for i in range(30)).replace(b"line 2\n", b"two\n").replace(b"line 25\n", b"x\n"),
    ),
    "insertion at end": (b"a\n", b"a\nb\n"),
}


def git_diff(tmp_path, before: bytes, after: bytes) -> bytes:
    """What `git diff` prints for f.nix changed from `before` to `after` in a real repository."""
    target = tmp_path / "f.nix"
    target.write_bytes(before)
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "core.autocrlf", "false")
    git(tmp_path, "add", "f.nix")
    git(tmp_path, "commit", "-q", "-m", "before")
    target.write_bytes(after)
    out = subprocess.run(["git", "diff", "--no-color", "--", "f.nix"], cwd=tmp_path, capture_output=True).stdout
    # git appends a guessed function name to hunk headers; pinshift's headers stop at `@@`
    return re.sub(rb"(?m)^(@@ [^@]+ @@).*$", rb"\1", out[out.index(b"--- a/") :])


@pytest.mark.parametrize("name", list(CASES))
def test_matches_git_diff(name, tmp_path):
    before, after = CASES[name]
    assert unified_diff("f.nix", before, after) == git_diff(tmp_path, before, after)


def test_no_change_is_empty():
    assert unified_diff("f.nix", b"same\n", b"same\n") == b""
    assert diff_text("f.nix", b"same", b"same") == ""


def test_crlf_is_shown_not_normalised():
    diff = unified_diff("f.nix", b"a\r\n", b"b\r\n")
    assert b"-a\r\n+b\r\n" in diff


def test_text_rendering_replaces_undecodable_bytes_only_for_display():
    text = diff_text("f.nix", b"# \xe9\nx = 1;\n", b"# \xe9\nx = 2;\n")
    assert " # \ufffd\n-x = 1;\n+x = 2;\n" in text


def test_context_lines_are_configurable():
    before = b"".join(b"%d\n" % i for i in range(10))
    after = before.replace(b"5\n", b"five\n")
    diff = unified_diff("f.nix", before, after, context=1)
    assert b"@@ -5,3 +5,3 @@\n 4\n-5\n+five\n 6\n" in diff


# --- the windowed diff is a correct diff ---------------------------------------------------------
# It diffs only the stretch between the common first and last lines. Where lines repeat, a change
# can be placed in more than one way, and neither it nor difflib's whole-file diff is always the
# smaller (difflib is not minimal); the properties are: it applies to `before` giving `after`, and it
# only adds or removes lines of that differing stretch.

from hypothesis import given, settings
from hypothesis import strategies as st

from pinshift.planning.unified_diff import _lines


def _differing_stretch(before: bytes, after: bytes) -> int:
    """Lines of both files between their common first and last lines (a diff needs no more)."""
    old, new = _lines(before), _lines(after)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return len(old) + len(new) - 2 * (head + tail)


def _changed_lines(patch: bytes) -> int:
    return sum(1 for line in patch.splitlines()[2:] if line[:1] in (b"+", b"-"))


def _apply(before: bytes, patch: bytes) -> list[bytes]:
    """Apply a unified diff to `before`, checking every context and removed line; the new lines."""
    old = _lines(before)
    lines: list[bytes] = []
    for line in patch.splitlines(keepends=True)[2:]:
        if line.startswith(b"\\") and lines:
            lines[-1] += line  # "\ No newline at end of file" belongs to the line above
        else:
            lines.append(line)
    out, position, index = [], 0, 0
    while index < len(lines):
        header = re.match(rb"@@ -(\d+)(?:,(\d+))? ", lines[index])
        assert header, lines[index]
        start = int(header.group(1))
        length = int(header.group(2)) if header.group(2) is not None else 1
        first = start - 1 if length else start
        out.extend(old[position:first])
        position, index = first, index + 1
        while index < len(lines) and not lines[index].startswith(b"@@"):
            tag, element = lines[index][:1], lines[index][1:]
            if tag in (b" ", b"-"):
                assert old[position] == element
                position += 1
            if tag in (b" ", b"+"):
                out.append(element)
            index += 1
    return out + old[position:]


_LINE = st.sampled_from([b"a\n", b"b\n", b"  x = 1;\n", b"\n", b"}\n", b"c\r\n"])


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(_LINE, min_size=0, max_size=60),
    edits=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 3), st.lists(_LINE, max_size=3)), max_size=4),
    final_newline=st.booleans(),
    context=st.integers(0, 4),
)
def test_windowed_diff_applies_and_changes_only_the_differing_stretch(lines, edits, final_newline, context):
    new = list(lines)
    for at, drop, insert in edits:
        at = min(at, len(new))
        new[at : at + drop] = insert
    before, after = b"".join(lines), b"".join(new)
    if not final_newline:
        before, after = before.rstrip(b"\n"), after.rstrip(b"\n")
    patch = unified_diff("f", before, after, context)
    assert (patch == b"") == (before == after)
    if patch:
        assert _apply(before, patch) == _lines(after)
        assert _changed_lines(patch) <= _differing_stretch(before, after)


def test_an_absolute_path_gets_single_slash_prefixes():
    patch = unified_diff("/tmp/x/a.nix", b"a\n", b"b\n")
    assert patch.splitlines()[:2] == [b"--- a/tmp/x/a.nix", b"+++ b/tmp/x/a.nix"]
