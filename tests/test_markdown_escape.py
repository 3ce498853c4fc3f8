"""Values from a commit stay inert in every Markdown report (issue 39 item 7): pinshift.languages.markdown_escape.

The module on each attack class (link, image, autolink, raw HTML, entity, emphasis, strikethrough, heading, list,
table pipe, mention, math, code spans with backtick runs), then the real CLI on real repositories: a Nix error
message with backticks and Markdown in `pinshift diff --format markdown`, a repository recipe whose step title
holds a link and an image run onto a branch whose name holds `|`, backticks and `@` (`migrate --format markdown`),
each report rendered by markdown-it-py (CommonMark + GFM tables) and checked: no image, link, bold, mention or
URL outside code, table rows keep their cells, values inside code spans round-trip verbatim. Last, 800 changed
recipes stay under `diff --markdown-limit` and the report says what it left out.
"""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from build_repos import commit
from conftest import git, require_nix
from pinshift.languages.markdown_escape import cell, code, fence, html_text, link, text

MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
HOSTILE = "`` ![x](http://e/x.png) **b** @team <img src=x> [l](http://e/l) ~~s~~ &amp; `x` ```y"
TITLE = "[click](http://e/x) ![img](http://e/x.png) **b** @team `` x | y"
BRANCH = "evil`|@team<b>#x"
CODE = re.compile(r"<code[^>]*>(.*?)</code>", re.S)

ATTACKS = [
    "![img](http://e/x.png)", "[link](http://e/)", "<http://e/auto>", "http://e/bare", "www.e.com/x",
    "<img src=x onerror=alert(1)>", "<b>bold</b>", "&lt;b&gt;", "**bold**", "__bold__", "*em*", "_em_",
    "~~strike~~", "_@team", "# heading", "- item", "+ item", "1. item", "> quote", "a | b | c", "@team", "@org/team",
    "$x^2$", "`code`", "```fence", "[ref]: http://e/", "\\*not escaped", "line\nbreak", "===",
]


def rendered(markdown: str) -> str:
    return MD.render(markdown)


def outside_code(rendered_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", CODE.sub("", rendered_html)))


def assert_inert(rendered_html: str) -> None:
    """No live markup from a value: no image, link, emphasis, strikethrough, raw HTML; no mention or URL in text."""
    for tag in ("<img", "<a ", "<strong>b<", "<strong>bold<", "<em>em<", "<s>", "<del>", "<b>", "<h1", "<blockquote>\n<p>quote"):
        assert tag not in rendered_html, (tag, rendered_html)  # pinshift's own bold is `**broken**`, `**Step 1: …**`
    prose = outside_code(rendered_html)
    assert not re.search(r"@\w", prose), prose
    assert not re.search(r"https?://|www\.", prose, re.I), prose


def code_texts(rendered_html: str) -> list[str]:
    return [html.unescape(found) for found in CODE.findall(rendered_html)]


# --- the module -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ATTACKS)
def test_text_renders_every_attack_as_its_own_characters(value):
    page = rendered(f"- {text(value)}\n")
    assert_inert(page)
    shown = outside_code(page).strip().replace("\u2060", "")
    assert shown == value.replace("\n", "\\n"), page


@pytest.mark.parametrize("value", ["`", "``", "a`b", "a``b```c", "`x`", " `lead", "trail` ", " x ", "``` ~~~",
                                   HOSTILE, "a|b"])
def test_code_spans_round_trip_any_backtick_run(value):
    page = rendered(code(value) + "\n")
    assert code_texts(page) == [value], page
    in_table = rendered(f"| a | b |\n|---|---|\n| {code(value, table=True)} | {cell(value)} |\n")
    assert code_texts(in_table) == [value], in_table
    assert in_table.count("<td>") == 2, in_table


def test_a_fence_is_longer_than_any_run_inside():
    body = "```\n~~~~\n`````` x\n"
    marker = fence(body)
    page = rendered(f"{marker}diff\n{body}{marker}\n![x](http://e/x.png)\n")
    assert html.unescape(page).count("`````` x") == 1 and len(marker) == 7
    assert page.count("<pre>") == 1 and "<img" in page  # the image after the block is ours: the block was closed


def test_html_text_is_inert_inside_a_details_block():
    page = rendered(f"<details><summary>{html_text(HOSTILE)}</summary>\n\n- x\n\n</details>\n")
    assert "<img" not in page and "<b>" not in page and "<a " not in page
    assert "@team" not in page and "@&#8288;team" in page


def test_a_link_destination_cannot_be_ended_by_a_path():
    page = rendered(link(code("x"), "https://github.com/o/r/blob/c/a) ![i](http://e/i.png) (.nix#L3") + "\n")
    assert page.count("<a href") == 1 and "<img" not in page


# --- the real CLI ----------------------------------------------------------------------------------------------------


@pytest.fixture
def hostile_repo(make_repo):
    """main: a recipe that evaluates and a repository recipe `evil` (step title, message, replacement all hostile);
    a branch with a hostile name whose recipe throws HOSTILE."""
    require_nix()
    recipe = f'''name = "evil"
description = "evil ![d](http://e/d.png) @team"
files = ["*.nix"]
[[steps]]
kind = "replace-in-strings"
title = {TITLE!r}
message = "subject ![m](http://e/m.png) @team"
[steps.params]
paths = ["msg"]
old = "fine"
new = {HOSTILE!r}
'''
    root = make_repo({"a.nix": 'rec { msg = "fine"; out = if msg == "fine" then 1 else throw msg; }\n',
                      ".pinshift/recipes/evil.toml": recipe})
    nix_string = HOSTILE.replace("\\", "\\\\").replace('"', '\\"').replace("${", "\\${")
    commit(root, {"a.nix": f'throw "{nix_string}"\n'}, "break ![c](http://e/c.png) @team", branch=BRANCH)
    git(root, "checkout", "-q", "main")
    return root


def test_diff_markdown_keeps_a_hostile_error_message_inside_code(hostile_repo, run_cli):
    result = run_cli("diff", "main", BRANCH, "--repo", str(hostile_repo), "--format", "markdown")
    assert result.exit_code == 1, result
    page = rendered(result.stdout)
    assert_inert(page)
    assert any(HOSTILE in value for value in code_texts(page)), page
    assert BRANCH in code_texts(page), page


def test_migrate_markdown_keeps_titles_branch_names_and_errors_inert(hostile_repo, run_cli):
    result = run_cli("migrate", "evil", "--repo", str(hostile_repo), "--from", BRANCH,
                     "--branch", "out|`x`", "--dry-run", "--format", "markdown", "--allow-broken")
    # from the branch whose recipe already throws, and from main, where the step breaks the recipe
    from_main = run_cli("migrate", "evil", "--repo", str(hostile_repo), "--from", "main", "--branch", BRANCH + "2",
                        "--dry-run", "--format", "markdown", "--allow-broken")
    for done in (result, from_main):
        assert done.exit_code == 0, done
        page = rendered(done.stdout)
        assert_inert(page)
        rows = re.findall(r"<tr>(.*?)</tr>", page, re.S)
        assert rows and all(row.count("<t") == rows[0].count("<t") for row in rows), rows
        assert TITLE in outside_code(page).replace("\u2060", ""), page
    page = rendered(from_main.stdout)
    assert any(HOSTILE in value for value in code_texts(page)), page  # the edit and the error, verbatim
    assert f"{BRANCH}2" in code_texts(page)


# --- the size limit ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def eight_hundred(tmp_path_factory):
    """800 recipes, each changed differently on `next` (800 groups): 90,000+ characters of Markdown unlimited."""
    require_nix()
    root = tmp_path_factory.mktemp("many") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    names = {f"pkgs/recipe-with-a-long-name-{n:04d}.nix": f'{{ pname = "r{n}"; version = "1.0.{n}"; }}\n'
             for n in range(800)}
    commit(root, names, "base")
    commit(root, {path: data.replace("1.0.", "2.0.") for path, data in names.items()}, "bump", branch="next")
    return root


@pytest.mark.parametrize("limit", [None, "5000"])
def test_diff_markdown_fits_the_limit_and_says_what_it_left_out(eight_hundred, run_cli, limit):
    extra = () if limit is None else ("--markdown-limit", limit)
    result = run_cli("diff", "main", "next", "--repo", str(eight_hundred), "--format", "markdown", *extra)
    assert result.exit_code == 0, result
    assert len(result.stdout) <= int(limit or 65_000), len(result.stdout)
    assert "800 recipes: 800 changed" in result.stdout
    said = re.search(r"- … ([0-9]+) groups of ([0-9]+) recipes \(\1 changed\) left out to stay under the size limit; "
                     r"`--format json` lists every recipe", result.stdout)
    assert said, result.stdout[-500:]
    shown = result.stdout.count("- **changed** — ")
    assert shown + int(said.group(1)) == 800 and shown > 0
    assert "recipe-with-a-long-name-0000.nix" in result.stdout  # the report keeps its head, leaves out the last
    assert "recipe-with-a-long-name-0799.nix" not in result.stdout


def test_diff_markdown_limit_below_1000_is_refused(eight_hundred, run_cli):
    result = run_cli("diff", "main", "next", "--repo", str(eight_hundred), "--format", "markdown",
                     "--markdown-limit", "10")
    assert result.exit_code == 2 and "must be at least 1000 characters" in result.stderr, result


# --- the other Markdown outputs: lint, verify, scan, status, a fan-out run -------------------------------------------

FILE = "![i](x.png) **b** @team |p| `q`.nix"  # a file name may hold all of it (not `/`)
OTHER = "rel|`x`@team<b>"


@pytest.fixture
def hostile_names(make_repo):
    """A broken recipe whose name is Markdown, beside two Flox recipes; a branch whose name is too."""
    from build_repos import fixture_files

    files = {path: data for path, data in fixture_files("flox").items() if path.startswith(".flox/pkgs/")}
    files[f".flox/pkgs/{FILE}"] = "{ x = ;\n"
    files[".pinshift/recipes/evil.toml"] = f"""name = "evil"
files = [".flox/pkgs/*.nix"]
[[steps]]
kind = "replace-in-strings"
title = {TITLE!r}
[steps.params]
paths = ["pname"]
old = "torchvision"
new = "vision"
"""
    root = make_repo(files)
    git(root, "branch", OTHER)
    return root


@pytest.mark.parametrize("args", [
    ("lint", ".", "--format", "markdown"),
    ("verify", ".", "--format", "markdown"),
    ("scan", ".", "--format", "markdown", "--verbose"),
    ("status", "--format", "markdown"),
    ("migrate", "evil", "--from", "main", "--from", OTHER, "--branch", "{base}-n", "--dry-run", "--format", "markdown"),
])
def test_every_markdown_output_keeps_names_inert(hostile_names, run_cli, args):
    result = run_cli(*args, cwd=hostile_names)
    assert result.exit_code in (0, 1), result
    page = rendered(result.stdout)
    assert_inert(page)
    assert "\\u2060" not in result.stdout  # the joiner is a character reference, never shown as an escape
    for table in re.findall(r"<table>(.*?)</table>", page, re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
        assert len({row.count("<t") for row in rows}) == 1, rows  # every row keeps the header's cells
    shown = [value.replace("\u2060", "") for value in code_texts(page)]
    prose = outside_code(page).replace("\u2060", "")
    names = {"lint": [], "verify": [FILE], "scan": [FILE], "status": [FILE, OTHER], "migrate": [OTHER, TITLE]}
    for name in names[args[0]]:
        assert any(name in value for value in shown) or name in prose, (name, result.stdout)
