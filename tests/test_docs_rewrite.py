"""docs/rewrite.md's examples run as written (issue 46): its `nix PATH` blocks make a repository, each `sh`
command runs there through the real CLI on a fresh copy, and the lines it changes (`git diff`) are the
`diff` block that follows it; a command with no `diff` block after it is refused (exit 1, nothing written).
Every changed file must parse with the real `nix-instantiate --parse`."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import git

DOC = Path(__file__).resolve().parent.parent / "docs" / "rewrite.md"
BLOCK = re.compile(r"^```(\w+)(?: ([^\n]+))?\n(.*?)^```$", re.S | re.M)


def _blocks() -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2) or "", m.group(3)) for m in BLOCK.finditer(DOC.read_text())]


def _examples() -> list[tuple[str, list[str] | None]]:
    blocks = _blocks()
    found = []
    for index, (language, _, text) in enumerate(blocks):
        if language != "sh":
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        diff = following[2].splitlines() if following is not None and following[0] == "diff" else None
        found.append((text.strip(), diff))
    return found


def test_the_page_has_the_five_refactorings():
    commands = [command for command, _ in _examples()]
    assert len(commands) == 6
    assert sum("pattern=toString $X" in c for c in commands) == 2
    assert any("lib.optionals $C [ $X ]" in c for c in commands)
    assert any("inside=*.enableMcpIntegration" in c for c in commands)
    assert any("path=meta.maintainers" in c for c in commands)
    assert any("--exclude" in c for c in commands)


@pytest.mark.parametrize("number", range(6))
def test_each_example_changes_what_the_page_shows(number, make_repo, run_cli, nix_oracle):
    files = {path: text for language, path, text in _blocks() if language == "nix" and path}
    root = make_repo(files)
    command, diff = _examples()[number]
    args = shlex.split(command)
    assert args[0] == "pinshift"
    result = run_cli(*args[1:], cwd=root)
    git(root, "add", "-A")
    changed = [line for line in git(root, "diff", "--cached", "-M", "--no-color", "-U0").splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    if diff is None:
        assert result.exit_code == 1, result
        assert changed == [] and "refused" in result.output
        return
    assert result.exit_code == 0, result
    assert sorted(changed) == sorted(diff)
    for path in git(root, "diff", "--cached", "--name-only", "--diff-filter=AMR").split():
        assert nix_oracle((root / path).read_bytes())[0], path
