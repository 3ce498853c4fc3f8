"""readme-branch-table writes branch names and column values escaped (issue 45 item 8).

git allows `|` and backticks in a branch name (`git check-ref-format`), and a column value can hold anything. The
table must keep its number of cells in every row, a code span must stay one code span holding the name verbatim,
a link's address must stay one address, and every byte outside the edit must stay as it was. Checked with
markdown-it-py (CommonMark + GFM tables) on the step's output, for each way a README writes the branch cell
(a code span, plain text, a link, bold code), and once through the real CLI (`migrate` with `--branch`).
"""

from __future__ import annotations

import difflib
import html
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from conftest import git
from pinshift.files.tree import DirectoryTree
from pinshift.planning.runner import plan_recipe
from pinshift.recipes.recipe import load_recipe_file, validate_recipe
from pinshift.steps.registry import available_kinds

MD = MarkdownIt("commonmark").enable("table")
NIX = b'{ pkgs ? import <nixpkgs> {} }:\n# bytes that must not move: | ` ** \xc3\xa9\n{ x = 1; }\n'
NAMES = ["rel|a", "rel`a", "rel``a|b`", "`rel|a`", "rel|a**b**![x](http://e/x.png)"]
VALUES = ["2.10 | `rc`", "``", "**b** | ![x](http://e/x.png) @team"]
CELLS = {  # how the README writes the base's branch cell
    "code": "`main`",
    "plain": "main",
    "link": "[main](https://github.com/o/r/tree/main)",
    "bold code": "**`main`** ⬅️",
}


def readme(cell: str) -> str:
    return ("# Branches\n\nThis branch: `main`\n\n"
            "| Branch | PyTorch | Notes |\n|---|---|---|\n"
            f"| {cell} | 2.9.1 | keep \\| this |\n"
            "| `other` | 2.8.0 | old |\n\ntail text\n")


def recipe(target: str, value: str) -> str:
    def literal(text: str) -> str:
        return "'''" + text + "'''" if "'" not in text else repr(text)

    return f"""name = "t"
files = ["README.md"]
[[steps]]
kind = "readme-branch-table"
[steps.params]
base = "main"
target = {literal(target)}
[steps.params.columns]
PyTorch = {literal(value)}
"""


def planned(root: Path, text: str) -> bytes:
    path = root.parent / "recipe.toml"
    path.write_text(text)
    loaded = load_recipe_file(path)
    step = plan_recipe(DirectoryTree(root), loaded, validate_recipe(loaded, available_kinds(root))).steps[0]
    change = next(f for f in step.files if f.path == "README.md")
    assert change.after is not None, step
    return change.after


def rows(markdown: bytes) -> list[list[str]]:
    """Each table row's cells as markdown-it-py reads them (inner HTML)."""
    page = MD.render(markdown.decode("utf-8"))
    return [re.findall(r"<t[hd]>(.*?)</t[hd]>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", page, re.S)]


def codes(cell_html: str) -> list[str]:
    return [html.unescape(found) for found in re.findall(r"<code>(.*?)</code>", cell_html, re.S)]


@pytest.mark.parametrize("style", list(CELLS))
@pytest.mark.parametrize("target", NAMES)
def test_a_hostile_branch_name_keeps_the_row_whole(tmp_path, style, target):
    root = tmp_path / "repo"
    root.mkdir()
    before = readme(CELLS[style]).encode()
    (root / "README.md").write_bytes(before)
    after = planned(root, recipe(target, "2.10.0"))
    table = rows(after)
    assert [len(row) for row in table] == [3, 3, 3, 3], table  # header, base, target, other
    new = table[2]
    if style in ("code", "bold code"):
        assert codes(new[0]) == [target], new
    else:
        shown = html.unescape(re.sub(r"<[^>]+>", "", new[0])).replace("\u2060", "")
        assert shown == target, new
        assert "<img" not in new[0] and "<strong>b" not in new[0]
    if style == "link":
        assert new[0].count("<a href") == 1, new
    assert new[1] == "2.10.0" and new[2] == "keep | this"
    assert_only_base_lines_change(before, after)


def assert_only_base_lines_change(before: bytes, after: bytes) -> None:
    """Bytes outside the edit: only lines naming `main` change, and one line (the new row) is added."""
    old_lines, new_lines = before.split(b"\n"), after.split(b"\n")
    ops = [op for op in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    for _, i1, i2, _, _ in ops:
        assert all(b"main" in line for line in old_lines[i1:i2]), ops
    assert len(new_lines) == len(old_lines) + 1


@pytest.mark.parametrize("value", VALUES)
def test_a_hostile_column_value_keeps_the_row_whole(tmp_path, value):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text(readme(CELLS["code"]).replace("| 2.9.1 |", "| `2.9.1` |"))
    after = planned(root, recipe("rel-next", value))
    table = rows(after)
    assert [len(row) for row in table] == [3, 3, 3, 3], table
    assert codes(table[2][1]) == [value], table[2]  # the value replaced the one inside the code span, verbatim
    assert codes(table[1][1]) == ["2.9.1"]


def test_a_value_outside_code_is_escaped(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text(readme(CELLS["code"]))
    after = planned(root, recipe("rel-next", VALUES[2]))
    cell = rows(after)[2][1]
    assert "<img" not in cell and "<strong>" not in cell and "@team" not in cell, cell
    assert html.unescape(cell).replace("\u2060", "") == VALUES[2]


def test_through_the_cli_the_readme_and_the_nix_file_keep_every_other_byte(make_repo, run_cli):
    before = readme(CELLS["bold code"]).encode()
    root = make_repo({"README.md": before, "pkgs/a.nix": NIX, "recipe.toml": recipe("{target}", VALUES[0])})
    target = "rel|`x`"
    result = run_cli("migrate", str(root / "recipe.toml"), "--from", "main", "--branch", target, "--repo", str(root))
    assert result.exit_code == 0, result
    after = git(root, "show", f"{target}:README.md").encode()
    assert [len(row) for row in rows(after)] == [3, 3, 3, 3]
    assert git(root, "show", f"{target}:pkgs/a.nix").encode() == NIX
    assert_only_base_lines_change(before, after)  # the self-reference, the base row's marker, the new row
    assert codes(rows(after)[2][0]) == [target] and codes(rows(after)[2][1]) == [] and \
        html.unescape(rows(after)[2][1]) == VALUES[0]
