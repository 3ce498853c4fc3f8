"""README's Quick start and .ci/run agree: CI runs exactly the test command a newcomer reads."""

from __future__ import annotations

import os
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
CI_RUN = ROOT / ".ci" / "run"


def section_fences(title: str) -> list[str]:
    """The fenced code blocks under the `## title` heading, up to the next heading of that level."""
    tokens = MarkdownIt().parse(README)
    fences, inside = [], False
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            inside = tokens[index + 1].content.strip() == title
        elif inside and token.type == "fence":
            fences.append(token.content)
    return fences


def quick_start_commands() -> list[str]:
    fences = section_fences("Quick start")
    assert len(fences) == 2, f"Quick start must have exactly two fenced commands, found {len(fences)}"
    commands = []
    for fence in fences:
        lines = [line for line in fence.splitlines() if line.strip()]
        assert len(lines) == 1, f"each Quick start block is one command line, got {lines}"
        commands.append(lines[0])
    return commands


def test_quick_start_has_two_commands_demo_then_tests():
    demo, tests = quick_start_commands()
    assert demo.endswith("pinshift demo")
    assert "pytest" in tests and ".[test]" in tests


def test_ci_runs_readmes_test_command_verbatim():
    _, tests = quick_start_commands()
    script = CI_RUN.read_text("utf-8")
    commands = [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == tests  # the last thing CI does is the README's test command


def test_ci_installs_nix_and_never_skips_the_oracle():
    script = CI_RUN.read_text("utf-8")
    assert script.startswith("#!/usr/bin/env bash\n")
    assert os.access(CI_RUN, os.X_OK)
    assert "set -euo pipefail" in script
    assert "command -v nix-instantiate" in script and "apt-get install" in script and "nix-bin" in script
    assert 'export CI="${CI:-true}"' in script


def test_readme_says_how_to_run_the_oracle_tests():
    assert "## Oracle tests" in README
    assert "nix-instantiate" in README and "nix-bin" in README
