"""The Markdown report: a PR comment whose tables, details blocks and fences parse, under the size limit."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from report_plans import assert_golden, build_plan, demo_files, fixture_files, write_tree

from pinshift.planning.plan import FileChange, Outcome, Plan, StepPlan, Warning
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
    sm90 = ".flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix"
    # Two files with the same warning: one item, the first location linked (step 1 read the base commit)...
    assert (f"- **2 files**: check by hand: You can add the sha256 — first: [`{sm90}:8`]({LINK}/blob/{'1' * 40}"
            f"/{sm90}#L8) (step 1)\n") in text
    # ... and every location in the list under it.
    assert ("<details><summary>2 locations in <code>.flox/pkgs/</code></summary>\n\n"
            "- `pytorch-python313-cuda12_9-sm90-avx512.nix:8:7`\n- `pytorch-python313-darwin-mps.nix:8:7`\n") in text
    plain = render_markdown(plan)
    assert f"— first: `{sm90}:8` (step 1)" in plain
    assert "](http" not in plain


def test_a_later_steps_warning_links_to_the_previous_steps_commit():
    warned = FileChange("a.nix", Outcome.UNCHANGED, warnings=[Warning("a.nix", 3, 1, "look here")])
    plan = Plan("r", [StepPlan(1, 2, "k", "one", {}, commit="2" * 40),
                      StepPlan(2, 2, "k", "two", {}, files=[warned], commit="3" * 40)], dry_run=False)
    text = render_markdown(plan, link_base=LINK)
    assert f"- [`a.nix:3`]({LINK}/blob/{'2' * 40}/a.nix#L3): look here (step 2)\n" in text


def diff_headings(text: str) -> list[str]:
    return re.findall(r"^#### (Step \d+: .*)$", text, re.M)


def test_each_group_shows_one_diff_and_lists_its_files(fixture_plan, demo_plan):
    # The fixture's six changes all differ (CRLF, indentation, no final newline): six diffs, no file lists.
    text = render_markdown(fixture_plan)
    assert fences(text) == ["diff"] * 6 and len(diff_headings(text)) == 6
    assert text.count("files with this change") == 0
    assert "Caf\ufffd build" in text  # Latin-1 bytes shown with replacement characters
    # The demo's 132 changes are three distinct ones: three diffs, each group's files in a <details> list.
    text = render_markdown(demo_plan)
    assert fences(text) == ["diff"] * 3
    assert [h.split(" —")[0] for h in diff_headings(text)] == [
        "Step 1: 66 files with this change", "Step 2: 7 files with this change", "Step 2: 59 files with this change"]
    summaries = re.findall(r"<details><summary>(.*?)</summary>", text)
    assert summaries == ["66 locations in <code>.flox/pkgs/</code>", "66 files in <code>.flox/pkgs/</code>",
                         "7 files in <code>.flox/pkgs/</code>", "59 files in <code>.flox/pkgs/</code>"]
    assert text.count("<details>") == text.count("</details>") == 4
    assert len(text) < 20_000


def test_refused_and_skipped_files_are_listed(fixture_plan):
    text = render_markdown(fixture_plan)
    assert "- **refused** (step 1): .flox/pkgs/broken.nix:1:1: syntax error" in text
    assert "- **skipped** (step 2): .flox/pkgs/blob.nix: binary file (NUL byte); skipped" in text


def _edited(path: str, number: int, lines: int, language: str = "nix") -> FileChange:
    before = "".join(f"line {i}\n" for i in range(lines)).encode()
    after = before.replace(b"line 0\n", f"changed {number}\n".encode())
    return FileChange(path, Outcome.CHANGED, language, before=before, after=after)


def _sized_plan() -> Plan:
    """A README change (documentation) and three distinct recipe changes of growing size, one of them in 40 files."""
    readme = FileChange("README.md", Outcome.CHANGED, "markdown", before=b"# x\n" + b"row\n" * 30,
                        after=b"# y\n" + b"row\n" * 30)
    small, medium = _edited("pkgs/small.nix", 1, 1), _edited("pkgs/medium.nix", 2, 3)
    large = [_edited(f"pkgs/large-{i:02}-with-a-long-name.nix", 3, 3) for i in range(40)]
    for change in large:  # the same change in 40 files, with a long diff
        change.before = b"line 0\n" + b"".join(b"context %d\n" % i for i in range(3)) + b"tail\n" * 40
        change.after = change.before.replace(b"tail\n" * 40, b"new\n" * 40)
    return Plan("r", [StepPlan(1, 2, "k", "recipes", {}, files=[small, medium, *large]),
                      StepPlan(2, 2, "readme-branch-table", "readme", {}, files=[readme])])


def test_documentation_diffs_come_first_and_are_left_out_last():
    plan = _sized_plan()
    full = render_markdown(plan, limit=10**9)
    headings = diff_headings(full)
    assert headings[0].startswith("Step 2: `README.md`")  # documentation first, though step 2
    assert len(headings) == 4 and "_Left out" not in full
    readme_diff = full[full.index("```diff\n--- a/README.md"):]
    readme_diff = readme_diff[: readme_diff.index("```\n", 8) + 4]
    # Just too long: the file list goes first, every diff stays.
    text = render_markdown(plan, limit=len(full) - 100)
    assert "_File list left out" in text and "_Diff left out" not in text
    assert "_Left out 1 part (listed above) to stay under" in text
    # Tighter and tighter: then the recipe diffs, largest first; the README diff goes only with the last of them.
    recipe_diffs = {"86", "7", "5"}  # lines of the large (40 files), medium and small diffs
    seen, readme_gone = [], None
    for limit in range(len(full), 500, -25):
        text = render_markdown(plan, limit=limit)
        assert len(text) <= limit
        if "_… report cut" in text:
            break  # nothing left to leave out: the last resort
        left_out = set(re.findall(r"_Diff left out \((\d+) lines\)", text))
        if left_out and left_out not in seen:
            seen.append(left_out)
        if readme_diff not in text:
            assert recipe_diffs <= left_out and "_File list left out" in text, limit
            readme_gone = limit
    assert seen[:2] == [{"86"}, {"86", "7"}] and seen[-1] == recipe_diffs | {"8"}  # 8: the README's lines
    assert readme_gone is not None


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
    assert "- `a.nix`: look \\<here\\> (step 1)" in text
    assert "<details>" not in text
