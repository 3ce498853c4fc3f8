"""Issue 14 §1-2 on the trial's shapes, through the real CLI: reports a reviewer reads in a minute.

The seed migration of the 66-recipe `pytorch-2.9` branch (`pinshift demo` builds it) as a pull-request
comment: under 20,000 characters, the README diff in full, each distinct change once. The trial's branch
had no `.metadata-rev` markers: its 66 warnings are one line. Expected values come from the branch as
git holds it and from difflib, never from pinshift's own rendering.
"""

from __future__ import annotations

import difflib
import json
import re

import pytest
from conftest import git

from pinshift.demo.build import BASE, build_demo

TARGET = "pytorch-2.10-cuda12_9"
PKGS = ".flox/pkgs"
NO_MARKER = "no .metadata-rev marker: skipped"


@pytest.fixture
def seed(tmp_path):
    """The seed's `pytorch-2.9` branch as `pinshift demo` builds it (66 recipes, the README's branch tables)."""
    return build_demo(tmp_path / "demo")


def dry_markdown(run_cli, root) -> str:
    result = run_cli("migrate", TARGET, "--dry-run", "--format", "markdown", cwd=root)
    assert result.exit_code == 0, result
    return result.stdout


def committed_steps(run_cli, root, tmp_path):
    """Migrate a clone of `root` for real: (the clone, the new branch's commits oldest first, one per step)."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", BASE, str(root), str(clone))
    assert run_cli("migrate", TARGET, "--from", f"origin/{BASE}", cwd=clone).exit_code == 0
    return clone, git(clone, "rev-list", "--reverse", f"origin/{BASE}..{TARGET}").split()


def changed_lines(before: str, after: str) -> tuple[str, ...]:
    """The -/+ lines of a zero-context diff (no headers, no @@ lines): what one file's change is."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return tuple(line for line in lines if line[:1] in "+-" and not line.startswith(("---", "+++")))


def test_seed_comment_is_short_has_the_readme_diff_in_full_and_each_change_once(seed, run_cli, tmp_path):
    text = dry_markdown(run_cli, seed)
    assert len(text) < 20_000

    clone, commits = committed_steps(run_cli, seed, tmp_path)
    assert len(commits) == 4
    # The README diff, computed here with difflib from the two READMEs git holds, appears whole.
    before = git(clone, "show", f"origin/{BASE}:README.md")
    after = git(clone, "show", f"{TARGET}:README.md")
    readme_diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                               "a/README.md", "b/README.md", n=3))
    assert readme_diff.count("\n@@ ") == 3 and readme_diff in text  # banner, two branch tables
    # The README diff is the first diff of the comment (documentation first).
    assert text.index("```diff\n--- a/README.md") < text.index("```diff\n--- a/.flox/pkgs/")

    # Each distinct change of each step (files whose -/+ lines are the same) appears exactly once.
    distinct: dict[tuple[int, tuple[str, ...]], list[str]] = {}
    for number, commit in enumerate(commits, start=1):
        for path in git(clone, "diff-tree", "--no-commit-id", "--name-only", "-r", commit).split():
            old = git(clone, "show", f"{commit}~1:{path}")
            new = git(clone, "show", f"{commit}:{path}")
            distinct.setdefault((number, changed_lines(old, new)), []).append(path)
    assert sorted(len(paths) for paths in distinct.values()) == [1, 7, 59, 66, 66]
    bodies = re.findall(r"^```diff\n(.*?)^```$", text, re.M | re.S)
    assert len(bodies) == len(distinct) == 5
    for (number, lines), paths in distinct.items():
        shown = [body for body in bodies if all(line in body.split("\n") for line in lines)]
        assert len(shown) == 1, (number, lines[:2], len(shown))
        if len(paths) > 1:
            assert f"#### Step {number}: {len(paths)} files with this change" in text

    # What changed, in words, before the diffs.
    words = text[text.index("### What changed"): text.index("### Diffs")]
    assert "- `6a030d5…` → `0182a36…` in `url = \"https://github.com/NixOS/nixpkgs/archive/6a030d5….tar.gz\";` — 66 files" \
        in words
    assert "- `python3Packages` → `python313Packages` — 66 files" in words
    assert "- `1` → `2` in `echo 1 > $out/.metadata-rev` (bump) — 66 files" in words


def marker_free(root):
    """The trial's branch: the seed's 66 recipes without their `echo N > $out/.metadata-rev` lines."""
    for path in (root / PKGS).glob("*.nix"):
        text = path.read_text()
        path.write_text("".join(line for line in text.splitlines(True) if ".metadata-rev" not in line))
    git(root, "commit", "-q", "-am", "the trial's branch has no .metadata-rev markers")
    return root


@pytest.fixture
def trial(tmp_path):
    return marker_free(build_demo(tmp_path / "trial"))


def first_recipe(root) -> str:
    return sorted(p.name for p in (root / PKGS).glob("*.nix"))[0]


def test_66_missing_markers_are_one_warning_line_everywhere(trial, run_cli):
    first = f"{PKGS}/{first_recipe(trial)}"
    line = f"warning: step 3: 66 files: {NO_MARKER} (first: {first}; --verbose lists all)"
    dry = run_cli("migrate", TARGET, "--dry-run", cwd=trial)
    assert dry.exit_code == 0, dry
    assert [l for l in dry.stdout.splitlines() if NO_MARKER in l] == [line.replace("step 3: ", "")]  # under step 3
    assert dry.stderr.splitlines() == [f"pinshift: {line}"]
    committed = run_cli("migrate", TARGET, cwd=trial)
    assert committed.exit_code == 0, committed
    assert [l for l in committed.stdout.splitlines() if NO_MARKER in l] == [line]
    assert "  3/4 ------- Bump .metadata-rev — no change, no commit, 66 warnings" in committed.stdout


def test_verbose_lists_each_missing_marker(trial, run_cli):
    dry = run_cli("migrate", TARGET, "--dry-run", "--verbose", cwd=trial)
    names = sorted(p.name for p in (trial / PKGS).glob("*.nix"))
    assert [l for l in dry.stdout.splitlines() if NO_MARKER in l] == [f"warning: {PKGS}/{n}: {NO_MARKER}" for n in names]
    assert len([l for l in dry.stderr.splitlines() if NO_MARKER in l]) == 66


def test_markdown_and_json_group_the_missing_markers_and_keep_every_detail(trial, run_cli):
    names = sorted(p.name for p in (trial / PKGS).glob("*.nix"))
    markdown = run_cli("migrate", TARGET, "--dry-run", "--format", "markdown", cwd=trial).stdout
    items = [l for l in markdown.splitlines() if NO_MARKER in l]
    assert items == [f"- **66 files**: {NO_MARKER} — first: `{PKGS}/{names[0]}` (step 3)"]
    assert "<details><summary>66 locations in <code>.flox/pkgs/</code></summary>\n\n" + \
        "".join(f"- `{n}`\n" for n in names) + "\n</details>" in markdown
    assert len(markdown) < 20_000
    data = json.loads(run_cli("migrate", TARGET, "--dry-run", "--format", "json", cwd=trial).stdout)
    step = data["steps"][2]
    assert len(step["warnings"]) == 66  # every per-file detail stays
    [group] = step["groups"]["warnings"]
    assert (group["message"], group["count"], group["files"]) == (NO_MARKER, 66, 66)
    assert [l["path"] for l in group["locations"]] == [w["path"] for w in step["warnings"]]


# --- hostile names in grouped output ------------------------------------------------------------------

RECIPE = b'{ pname = "demo"; postInstall = "echo 1 > $out/.metadata-rev"; }\n'
NO_MARKER_RECIPE = b'pkgs: pkgs.hello.overrideAttrs (old: { pname = "demo"; })\n'
HOSTILE_DIR = "p<i>`kgs"
BUMPED = ("a\x1b[2J.nix", "b`<summary>`.nix", "c<b>x.nix", "d\nline.nix")
UNMARKED = ("e\x1b[31m.nix", "f``x.nix", "g<details>.nix")


@pytest.fixture
def hostile(tmp_path):
    directory = tmp_path / HOSTILE_DIR
    directory.mkdir()
    for name in BUMPED:
        (directory / name).write_bytes(RECIPE)
    for name in UNMARKED:
        (directory / name).write_bytes(NO_MARKER_RECIPE)
    return tmp_path


def test_grouped_text_shows_hostile_names_as_escapes(hostile, run_cli):
    for extra in ((), ("--verbose",)):
        result = run_cli("apply", "metadata-rev", "--dry-run", HOSTILE_DIR, *extra, cwd=hostile)
        assert result.exit_code == 0, result
        assert "\x1b" not in result.output and "\\x1b[2J" in result.output
        if not extra:
            assert result.stdout.count("\n--- a/") == 1
            assert "… and 3 more files with this change (--verbose lists them)\n" in result.stdout
            assert [l for l in result.stderr.splitlines() if "marker" in l] == [
                f"pinshift: warning: 3 files: {NO_MARKER} (first: {HOSTILE_DIR}/e\\x1b[31m.nix; --verbose lists all)"]
        else:
            assert f"\n  {HOSTILE_DIR}/d\\nline.nix\n" in result.stdout  # a newline in a name stays on its line
            assert len([l for l in result.stderr.splitlines() if "marker" in l]) == 3


def test_grouped_markdown_keeps_its_structure_whatever_the_names(hostile, run_cli):
    from markdown_it import MarkdownIt

    result = run_cli("apply", "metadata-rev", "--dry-run", "--format", "markdown", HOSTILE_DIR, cwd=hostile)
    assert result.exit_code == 0, result
    text = result.stdout
    tokens = MarkdownIt("commonmark", {"html": True}).parse(text)
    html = "".join(t.content for t in tokens if t.type == "html_block")
    # Two lists (the bumped files, the unmarked files' locations), each one <details> block, nothing else as HTML.
    assert html.count("<details>") == html.count("</details>") == 2 and "<b>" not in html and "<i>" not in html
    spans = [c.content for t in tokens if t.type == "inline" for c in t.children or [] if c.type == "code_inline"]
    for name in ("b`<summary>`.nix", "c<b>x.nix", "f``x.nix", "g<details>.nix", "a\\x1b[2J.nix", "d\\nline.nix"):
        assert name in spans, (name, spans)
    assert "<summary>4 files in <code>p&lt;i&gt;`kgs/</code></summary>" in text
    data = json.loads(run_cli("apply", "metadata-rev", "--dry-run", "--format", "json", HOSTILE_DIR, cwd=hostile).stdout)
    [group] = data["steps"][0]["groups"]["changes"]
    assert sorted(group["files"]) == sorted(f"{HOSTILE_DIR}/{name}" for name in BUMPED)
