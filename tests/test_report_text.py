"""The terminal report, its colour rules and the progress bar."""

from __future__ import annotations

import io

import click
import pytest
from report_plans import assert_golden, build_plan, demo_files, fixture_files, write_tree

from pinshift.planning.plan import Plan, StepPlan
from pinshift.report import ReportOptions, use_color
from pinshift.report.progress import ProgressBar, progress_bar
from pinshift.report.text import render_text


class Terminal(io.StringIO):
    """A text stream that says it is a terminal, as sys.stderr does in an interactive shell."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def fixture_plan(tmp_path):
    return build_plan(write_tree(tmp_path, fixture_files()))


def test_fixture_report_matches_golden(fixture_plan):
    assert_golden("fixture.txt", render_text(fixture_plan))


def test_demo_report_matches_golden(tmp_path):
    assert_golden("demo.txt", render_text(build_plan(write_tree(tmp_path, demo_files()))))


def test_headline_per_step_with_counts_then_diffs(fixture_plan):
    lines = render_text(fixture_plan).splitlines()
    assert lines[0] == "recipe report-fixture: pytorch-2.9 (1111111) → pytorch-2.10-cuda12_9 (dry run)"
    assert lines[2] == "step 1/2 text-swap: Pin nixpkgs to 0182a36 — 3 files changed, 3 edits, 2 warnings"
    assert lines[3] == ("parsed with: tree-sitter-nix (.flox/pkgs/latin1-comment.nix, "
                        ".flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix, .flox/pkgs/pytorch-python313-darwin-mps.nix)")
    assert lines[4] == "--- a/.flox/pkgs/latin1-comment.nix"
    assert lines[-1] == "2 steps, 3 files changed, 6 edits, 2 warnings, 2 skipped, 1 refused"


def test_crlf_and_missing_final_newline_show_in_the_diff(fixture_plan):
    text = render_text(fixture_plan)
    assert '-    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";\r\n' in text
    assert "\\ No newline at end of file" in text


def test_colour_only_decorates(fixture_plan):
    coloured = render_text(fixture_plan, color=True)
    assert "\x1b[32m+" in coloured and "\x1b[31m-" in coloured and "\x1b[33mwarning:" in coloured
    assert click.unstyle(coloured) == render_text(fixture_plan)
    assert "\x1b[" not in render_text(fixture_plan)


def test_committed_run_names_commits(tmp_path):
    text = render_text(build_plan(write_tree(tmp_path, fixture_files()), committed=True))
    assert "(committed)" in text.splitlines()[0]
    assert "\ncommit 2222222\n" in text and "\ncommit 3333333\n" in text


def test_nothing_to_change_is_said():
    text = render_text(Plan("r", [StepPlan(1, 1, "k", "t", {})]))
    assert text.endswith("1 step, 0 files changed, 0 edits, 0 warnings, 0 skipped, 0 refused — nothing to change\n")
    assert text.startswith("recipe r (dry run)\n")


@pytest.mark.parametrize(
    ("options", "env", "tty", "expected"),
    [
        (ReportOptions(), {}, True, True),
        (ReportOptions(), {}, False, False),
        (ReportOptions(), {"NO_COLOR": ""}, True, False),  # any value, even empty (no-color.org)
        (ReportOptions(color=False), {}, True, False),  # --no-color
        (ReportOptions(output="r.txt"), {}, True, False),
    ],
)
def test_colour_rules(monkeypatch, options, env, tty, expected):
    monkeypatch.delenv("NO_COLOR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    stream = Terminal() if tty else io.StringIO()
    assert use_color(options, stream) is expected


def terminal_not_ci(monkeypatch) -> None:
    """A terminal of a person's: no `CI`, no dumb `TERM` (the bar is off for those: test_progress_terminal.py)."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")


def test_progress_bar_draws_on_a_terminal_and_erases_itself(monkeypatch):
    terminal_not_ci(monkeypatch)
    stream = Terminal()
    with progress_bar("planning", stream=stream, min_files=10) as bar:
        assert isinstance(bar, ProgressBar)
        for number in range(1, 21):
            bar(number, 20)
    out = stream.getvalue()
    assert "\rplanning [###############...............] 10/20" in out
    assert "\rplanning [##############################] 20/20" in out
    assert out.endswith("\r\x1b[K")


def test_progress_bar_is_silent_for_pipes_and_short_runs(monkeypatch):
    terminal_not_ci(monkeypatch)
    with progress_bar(stream=io.StringIO()) as bar:
        assert bar is None
    stream = Terminal()
    with progress_bar(stream=stream, min_files=50) as bar:
        for number in range(1, 11):
            bar(number, 10)
    assert stream.getvalue() == ""


def test_progress_bar_follows_the_real_runner(tmp_path, monkeypatch):
    terminal_not_ci(monkeypatch)
    from report_plans import REPORTS

    from pinshift.files.tree import DirectoryTree
    from pinshift.recipes.recipe import load_recipe_file, validate_recipe
    from pinshift.planning.jobs import RunOptions
    from pinshift.planning.runner import plan_recipe
    from pinshift.steps.registry import load_kinds_from

    root = write_tree(tmp_path, demo_files())
    recipe = load_recipe_file(REPORTS / "recipe.toml")
    stream = Terminal()
    with progress_bar("planning", stream=stream) as bar:
        plan_recipe(DirectoryTree(root), recipe,
                    validate_recipe(recipe, load_kinds_from(REPORTS / "migrations")), RunOptions(progress=bar))
    assert stream.getvalue().count("] 66/66") == 1  # both steps run in one pass over the files
