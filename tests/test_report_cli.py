"""Report flags end to end: --format, --output, --check, --no-color, --markdown-limit, warnings on stderr.

The first half drives `report_options` + `emit` through a real click command over
a real tree; the second half runs `pinshift migrate` and `pinshift apply` and the
example GitHub Actions workflow (docs/examples/pinshift-pr.yml) through the real CLI.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner
from report_plans import REPORTS, build_plan, demo_files, fixture_files, write_tree

from pinshift.errors import UsageError
from pinshift.report import emit, options_from, report_options

ROOT = Path(__file__).parent.parent
WORKFLOW = ROOT / "docs" / "examples" / "pinshift-pr.yml"


@pytest.fixture(autouse=True)
def no_github_env(monkeypatch):
    for key in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "NO_COLOR"):
        monkeypatch.delenv(key, raising=False)


def report_command(root: Path) -> click.Command:
    @click.command()
    @report_options
    def report(report_format, report_output, no_color, check):
        plan = build_plan(root)
        plan.repository = ""
        raise SystemExit(emit(plan, options_from(report_format, report_output, no_color, check)))

    return report


def invoke(root: Path, *args: str, color: bool = False):
    return CliRunner().invoke(report_command(root), list(args), color=color, catch_exceptions=False)


@pytest.fixture
def tree(tmp_path):
    return write_tree(tmp_path / "tree", fixture_files())


def test_default_is_text_on_stdout_with_warnings_also_on_stderr(tree):
    result = invoke(tree)
    assert result.exit_code == 0
    assert result.stdout.startswith("recipe report-fixture: pytorch-2.9 (1111111) → pytorch-2.10-cuda12_9 (dry run)\n")
    assert "\x1b[" not in result.stdout  # not a terminal
    assert result.stderr.splitlines() == [
        "pinshift: warning: step 1: 2 files: check by hand: You can add the sha256 "
        "(first: .flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix:8:7; --verbose lists all)",
        "pinshift: refused: .flox/pkgs/broken.nix:1:1: syntax error: unexpected '{'; fix the file or exclude it from the step's files",
    ]
    verbose = invoke(tree, "--verbose")
    assert verbose.stderr.splitlines()[:2] == [
        "pinshift: warning: .flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix:8:7: check by hand: You can add the sha256",
        "pinshift: warning: .flox/pkgs/pytorch-python313-darwin-mps.nix:8:7: check by hand: You can add the sha256",
    ]


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_output_writes_the_same_report_to_a_file(tree, tmp_path, fmt):
    shown = invoke(tree, "--format", fmt).stdout
    target = tmp_path / f"report.{fmt}"
    result = invoke(tree, "--format", fmt, "--output", str(target))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert target.read_text(encoding="utf-8") == shown
    assert f"pinshift: report written to {target}" in result.stderr
    assert "pinshift: warning:" in result.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []  # no temp file left


def test_output_replaces_an_existing_file_atomically(tree, tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    target.chmod(0o640)
    assert invoke(tree, "--format", "json", "--output", str(target)).exit_code == 0
    assert json.loads(target.read_text())["schema"] == "pinshift.report/1"
    assert target.stat().st_mode & 0o777 == 0o640


def test_a_bad_output_path_fails_before_planning(tmp_path):
    with pytest.raises(UsageError, match=r"--output .*/nope/r.md: directory .*/nope does not exist; create it first"):
        options_from("markdown", str(tmp_path / "nope" / "r.md"), False, False)
    with pytest.raises(UsageError, match="is a directory; give a file name"):
        options_from("markdown", str(tmp_path), False, False)


def test_check_exits_1_when_something_would_change_and_still_prints(tree):
    result = invoke(tree, "--check", "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["would_change"] is True


def test_check_exits_0_when_nothing_would_change(tmp_path):
    root = write_tree(tmp_path, {".flox/pkgs/done.nix": b"{ }: 1\n"})
    result = invoke(root, "--check")
    assert result.exit_code == 0
    assert "nothing to change" in result.stdout


def test_markdown_limit_flag(tmp_path):
    root = write_tree(tmp_path, demo_files())
    result = invoke(root, "--format", "markdown", "--markdown-limit", "5000")
    assert result.exit_code == 0
    assert len(result.stdout) <= 5000
    assert "to stay under 5,000 characters" in result.stdout
    bad = invoke(root, "--markdown-limit", "10")
    assert bad.exit_code == 2
    assert "at least 1000" in bad.output


def test_github_actions_environment_turns_locations_into_links(tree, monkeypatch):
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "me/build-pytorch")
    text = invoke(tree, "--format", "markdown").stdout
    assert f"(https://github.com/me/build-pytorch/blob/{'1' * 40}/.flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix#L8)" in text
