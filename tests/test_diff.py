"""The unified-diff renderer agrees byte for byte with `git diff` (from the `---` line on)."""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import git
from pinshift.diff import diff_text, unified_diff

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
