"""pin-swap over Markdown, Python, TOML and shell files: each through its parser, traps included."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinshift.demo.matrix import NEW_REV, OLD_REV, render_recipe, variants
from pinshift.errors import ParamError
from pinshift.files.tree import DirectoryTree
from pinshift.planning.plan import Outcome
from pinshift.recipes.recipe import load_recipe_file, validate_recipe
from pinshift.planning.runner import plan_recipe
from pinshift.steps.registry import available_kinds

DOCS = Path(__file__).parent / "fixtures" / "docs"
VARIANT = variants()[0]
NIX_PATH = f".flox/pkgs/{VARIANT.filename}"

FILES = {
    NIX_PATH: render_recipe(VARIANT),
    "README.md": (DOCS / "README.md").read_bytes(),
    "scripts/fetch_pin.py": (DOCS / "fetch_pin.py").read_bytes(),
    "manifest.toml": (DOCS / "manifest.toml").read_bytes(),
    "scripts/prefetch.sh": (DOCS / "prefetch.sh").read_bytes(),
}
GOLDEN = {
    "README.md": "README.pin-swapped.md",
    "scripts/fetch_pin.py": "fetch_pin.pin-swapped.py",
    "manifest.toml": "manifest.pin-swapped.toml",
    "scripts/prefetch.sh": "prefetch.pin-swapped.sh",
}
ALL_GLOBS = '["**/*.md", "**/*.py", "**/*.toml", "**/*.sh", ".flox/pkgs/**/*.nix"]'


def recipe_text(globs: str = ALL_GLOBS, extra: str = "") -> str:
    return f"""
name = "pins"
files = {globs}

[[steps]]
kind = "pin-swap"
[steps.params]
old = "6a030d5"
new = "{NEW_REV}"
{extra}
"""


def run(root: Path, text: str):
    path = root.parent / "recipe.toml"
    path.write_text(text)
    recipe = load_recipe_file(path)
    return plan_recipe(DirectoryTree(root), recipe, validate_recipe(recipe, available_kinds(root))).steps[0]


def by_path(step):
    return {f.path: f for f in step.files}


def test_each_file_through_its_parser_matches_golden(make_repo):
    step = run(make_repo(FILES), recipe_text())
    files = by_path(step)
    assert {path: (f.outcome, f.language) for path, f in files.items()} == {
        NIX_PATH: (Outcome.CHANGED, "nix"),
        "README.md": (Outcome.CHANGED, "markdown"),
        "scripts/fetch_pin.py": (Outcome.CHANGED, "python"),
        "manifest.toml": (Outcome.CHANGED, "toml"),
        "scripts/prefetch.sh": (Outcome.CHANGED, "shell"),
    }
    for path, golden in GOLDEN.items():
        assert files[path].after == (DOCS / golden).read_bytes(), path
    assert files[NIX_PATH].after == render_recipe(VARIANT, NEW_REV).encode()


def test_reasons_name_the_parser(make_repo):
    files = by_path(run(make_repo(FILES), recipe_text()))
    reasons = {path: {e.reason.split("(", 1)[1] for e in f.edits} for path, f in files.items() if path != NIX_PATH}
    assert reasons == {
        "README.md": {"markdown prose, via markdown-it)", "markdown link, via markdown-it)",
                      "markdown code block, via markdown-it)"},
        "scripts/fetch_pin.py": {"python string, via libcst)"},
        "manifest.toml": {"toml string value, via tomlkit)"},
        "scripts/prefetch.sh": {"shell word, textual match)"},
    }


def test_readme_branch_rows_and_branch_descriptions_keep_their_pins(make_repo):
    after = by_path(run(make_repo(FILES), recipe_text()))["README.md"].after
    before = FILES["README.md"]
    for line in before.splitlines():
        if line.startswith((b"| **`pytorch-2.9`**", b"| `pytorch-2.9-legacy`", b"- **`pytorch-2.9`**")):
            assert line in after.splitlines()
    assert after.count(OLD_REV.encode()) == 2  # the two branch-table rows that name it
    assert after.count(b"[`6a030d5`]") == 2


def test_python_comments_only_with_include_comments(make_repo):
    files = by_path(run(make_repo(FILES), recipe_text()))
    assert [str(w) for w in files["scripts/fetch_pin.py"].warnings] == [
        f"scripts/fetch_pin.py:4:54: {OLD_REV} left unchanged: in a comment (set include-comments to change comments)",
        "scripts/fetch_pin.py:8:64: 6a030d5 left unchanged: in a comment (set include-comments to change comments)",
    ]
    files = by_path(run(make_repo(FILES, name="again"), recipe_text(extra="include-comments = true")))
    assert files["scripts/fetch_pin.py"].after == (DOCS / "fetch_pin.pin-swapped-comments.py").read_bytes()
    assert files["scripts/fetch_pin.py"].warnings == []


def test_python_traps_longer_words_and_identifiers_stay(make_repo):
    after = by_path(run(make_repo(FILES), recipe_text()))["scripts/fetch_pin.py"].after
    assert f'OTHER_BRANCH = "{OLD_REV}abc"'.encode() in after
    assert b"x6a030d5 = 1" in after


def test_toml_keys_and_comments_stay_and_are_reported(make_repo):
    change = by_path(run(make_repo(FILES), recipe_text()))["manifest.toml"]
    assert b'[variants."6a030d5"]' in change.after and change.after.startswith(b"# Build manifest; pin 6a030d5")
    assert [w.message for w in change.warnings] == ["6a030d5 left unchanged: not inside a string value"] * 2


def test_other_file_types_are_opt_in(make_repo):
    step = run(make_repo(FILES), recipe_text('[".flox/pkgs/**/*.nix"]'))
    assert [f.path for f in step.files] == [NIX_PATH]


def test_docs_only_step_resolves_the_abbreviation_and_is_idempotent(make_repo):
    docs = {path: data for path, data in FILES.items() if path != NIX_PATH}
    files = by_path(run(make_repo(docs), recipe_text('["**/*.md", "**/*.py", "**/*.toml", "**/*.sh"]')))
    assert all(f.outcome is Outcome.CHANGED for f in files.values())
    swapped = {path: files[path].after for path in docs}
    step = run(make_repo(swapped, name="swapped"), recipe_text('["**/*.md", "**/*.py", "**/*.toml", "**/*.sh"]'))
    assert {f.path: f.outcome for f in step.files} == {path: Outcome.UNCHANGED for path in docs}


def test_docs_with_no_trace_of_either_revision_change_nothing(make_repo):
    root = make_repo({"notes.md": "nothing pinned here, only fetchTarball mentioned\n"})
    step = run(root, recipe_text('["**/*.md"]'))
    assert step.changed == [] and step.warnings == []


def test_swapped_recipe_still_parses(make_repo, nix_oracle):
    after = by_path(run(make_repo(FILES), recipe_text()))[NIX_PATH].after
    ok_before, canonical_before = nix_oracle(FILES[NIX_PATH].encode())
    ok_after, canonical_after = nix_oracle(after)
    assert ok_before and ok_after
    assert canonical_after == canonical_before.replace(OLD_REV, NEW_REV)
