"""The Markdown report: a PR comment whose tables, details blocks and fences parse, under the size limit."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from report_plans import assert_golden, build_plan, demo_files, fixture_files, write_tree

from pinshift.plan import FileChange, Outcome, Plan, StepPlan, Warning
from pinshift.report.markdown import DEFAULT_LIMIT, render_markdown

LINK = "https://github.com/example/build-pytorch"


def gfm():
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def tables(text: str) -> list[list[list[str]]]:
    """Every table as rows of cell texts, as a GitHub-flavoured Markdown parser reads it."""
    found, rows, row = [], None, None
    for token in gfm().parse(text):
        if token.type == "table_open":
            rows = []
        elif token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append(token.content)
        elif token.type == "tr_close":
            rows.append(row)
            row = None
        elif token.type == "table_close":
            found.append(rows)
    return found


def fences(text: str) -> list[str]:
    return [t.info for t in gfm().parse(text) if t.type == "fence"]


@pytest.fixture
def fixture_plan(tmp_path):
    return build_plan(write_tree(tmp_path / "fixture", fixture_files()))


@pytest.fixture(scope="module")
def demo_plan(tmp_path_factory):
    return build_plan(write_tree(tmp_path_factory.mktemp("demo"), demo_files()))


def test_fixture_report_matches_golden(fixture_plan):
    assert_golden("fixture.md", render_markdown(fixture_plan, link_base=LINK))


def test_committed_fixture_report_matches_golden(tmp_path):
    plan = build_plan(write_tree(tmp_path, fixture_files()), committed=True)
    assert_golden("fixture-committed.md", render_markdown(plan, link_base=LINK))


def test_demo_report_matches_golden_and_fits_a_github_comment(demo_plan):
    text = render_markdown(demo_plan, link_base=LINK)
    assert len(text) <= DEFAULT_LIMIT < 65_536
    assert_golden("demo.md", text)


def test_summary_table_has_one_row_per_step_and_escaped_pipes(fixture_plan):
    text = render_markdown(fixture_plan)
    [table] = tables(text)
    assert table[0] == ["#", "step", "kind", "files changed", "edits", "warnings"]
    assert table[1] == ["1", "Pin nixpkgs to 0182a36", "`text-swap`", "3", "3", "2"]
    # The title holds a `|`; it stays one cell.
    assert table[2] == ["2", "Use python313Packages | explicitly", "`text-swap`", "3", "3", "0"]


def test_commit_column_only_when_not_a_dry_run(tmp_path):
    plan = build_plan(write_tree(tmp_path, fixture_files()), committed=True)
    [table] = tables(render_markdown(plan))
    assert table[0][-1] == "commit"
    assert [row[-1] for row in table[1:]] == ["`2222222`", "`3333333`"]


def test_title_names_recipe_base_and_target(fixture_plan):
    first = render_markdown(fixture_plan).splitlines()[0]
    assert first == "## pinshift: `report-fixture` — `pytorch-2.9 (1111111)` → `pytorch-2.10-cuda12_9`"


def test_warnings_link_to_the_line_in_the_commit_the_step_read(tmp_path):
    plan = build_plan(write_tree(tmp_path, fixture_files()), committed=True)
    text = render_markdown(plan, link_base=LINK + "/")
    assert (
        f"- [`.flox/pkgs/pytorch-python313-darwin-mps.nix:8`]({LINK}/blob/{'1' * 40}"
        f"/.flox/pkgs/pytorch-python313-darwin-mps.nix#L8): check by hand: You can add the sha256 (step 1)"
    ) in text
    plain = render_markdown(plan)
    assert "- `.flox/pkgs/pytorch-python313-darwin-mps.nix:8`: check by hand" in plain
    assert "](http" not in plain


def test_every_changed_file_has_a_collapsible_diff(fixture_plan):
    text = render_markdown(fixture_plan)
    changed = sum(len(s.changed) for s in fixture_plan.steps)
    assert text.count("<details>") == text.count("</details>") == changed
    assert fences(text) == ["diff"] * changed
    assert "Caf\ufffd build" in text  # Latin-1 bytes shown with replacement characters


def test_refused_and_skipped_files_are_listed(fixture_plan):
    text = render_markdown(fixture_plan)
    assert "- **refused** (step 1): .flox/pkgs/broken.nix:1:1: syntax error" in text
    assert "- **skipped** (step 2): .flox/pkgs/blob.nix: binary file (NUL byte); skipped" in text


def diff_blocks(text: str) -> dict[tuple[int, str], tuple[str, int]]:
    """(step, path) -> ("kept" | "left out", characters) for every file in the Changes section."""
    found, step = {}, 0
    for match in re.finditer(
        r"^### Step (\d+)|^(<details><summary><code>(.*?)</code>.*?</details>\n)|^- <code>(.*?)</code> .*? diff left out",
        text, re.M | re.S,
    ):
        if match.group(1):
            step = int(match.group(1))
        elif match.group(2):
            found[(step, match.group(3))] = ("kept", len(match.group(2)))
        else:
            found[(step, match.group(4))] = ("left out", 0)
    return found


def test_diffs_are_left_out_largest_first_to_fit_the_limit(demo_plan):
    full = diff_blocks(render_markdown(demo_plan, limit=10**9))
    text = render_markdown(demo_plan, limit=40_000)
    assert len(text) <= 40_000
    blocks = diff_blocks(text)
    assert blocks.keys() == full.keys() and len(blocks) == 132
    kept = [full[k][1] for k, (state, _) in blocks.items() if state == "kept"]
    left_out = [full[k][1] for k, (state, _) in blocks.items() if state == "left out"]
    assert kept and left_out
    assert min(left_out) >= max(kept)
    assert f"_Left out {len(left_out)} diffs of 132 (largest first) to stay under 40,000 characters" in text
    [table] = tables(text)
    assert len(table) == 3
    assert text.count("<details>") == text.count("</details>") == len(kept) == len(fences(text))


def test_the_largest_diff_goes_first(fixture_plan):
    full_text = render_markdown(fixture_plan, limit=10**9)
    full = diff_blocks(full_text)
    largest = max(full, key=lambda k: full[k][1])
    text = render_markdown(fixture_plan, limit=len(full_text) - 200)
    assert [k for k, (state, _) in diff_blocks(text).items() if state == "left out"] == [largest]
    assert "_Left out 1 diff of 6 (largest first)" in text


def test_a_tiny_limit_still_holds(demo_plan):
    text = render_markdown(demo_plan, limit=1000)
    assert len(text) <= 1000
    assert text.startswith("## pinshift: `report-fixture`")


def test_fence_grows_when_the_diff_contains_backticks():
    change = FileChange("a.nix", Outcome.CHANGED, before=b"# ```x```\na = 1;\n", after=b"# ```x```\na = 2;\n")
    text = render_markdown(Plan("r", [StepPlan(1, 1, "k", "t", {}, files=[change])]))
    assert "````diff" in text
    assert fences(text) == ["diff"]


def test_nothing_to_change_and_positionless_warnings():
    change = FileChange("a.nix", Outcome.UNCHANGED, warnings=[Warning("a.nix", 0, 0, "look <here>")])
    text = render_markdown(Plan("r", [StepPlan(1, 1, "k", "t", {}, files=[change])]), link_base=LINK)
    assert "Nothing to change." in text
    assert "- `a.nix`: look &lt;here&gt; (step 1)" in text
    assert "<details>" not in text
