"""`pinshift recipes` and `pinshift show` through the real CLI: lookup order, origins, validation messages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
WORD_SWAP = FIXTURES / "migrations" / "word_swap.py"
RENAME_ATTR = Path(__file__).parents[1] / "migrations" / "rename_attr.py"
BUNDLED = "pytorch-2.10-cuda12_9"

MINE = """\
name = "mine"
description = "a recipe of this repository"
base = "main"
target = "next"

[[steps]]
kind = "replace-in-strings"
title = "Say CUDA 12.9"
[steps.params]
paths = ["meta.longDescription"]
old = "CUDA: 12.8"
new = "CUDA: 12.9"

[[steps]]
kind = "metadata-rev"
files = ["pkgs/*.nix"]
[steps.params]
value = 7
"""

WORDS = """\
name = "words"
[[steps]]
kind = "word-swap"
[steps.params]
old = "alpha"
new = "beta"
"""


def one_line_error(result, code: int = 2) -> str:
    """The failure contract: exit code, nothing on stdout, exactly one stderr line, no traceback."""
    assert result.exit_code == code, result
    assert result.stdout == "", result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def repo(make_repo):
    return make_repo({".pinshift/recipes/mine.toml": MINE, "default.nix": "{ }\n"})


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- listing and lookup order ---------------------------------------------------------------


def test_recipes_lists_repository_and_bundled_recipes_with_their_origin(run_cli, repo):
    result = run_cli("recipes", cwd=repo)
    assert result.exit_code == 0, result
    rows = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()}
    assert rows == {"mine": ".pinshift/recipes/mine.toml", BUNDLED: "bundled", "flox-args-to-pinned": "bundled"}
    assert "a recipe of this repository" in result.stdout


def test_recipes_from_a_subdirectory_finds_the_repository_root(run_cli, repo):
    (repo / "pkgs").mkdir()
    result = run_cli("recipes", cwd=repo / "pkgs")
    assert result.stdout.splitlines()[0].split()[:2] == ["mine", ".pinshift/recipes/mine.toml"]


def test_repository_recipe_shadows_the_bundled_one_of_the_same_name(run_cli, repo):
    write(repo, f".pinshift/recipes/{BUNDLED}.toml", MINE.replace('name = "mine"', f'name = "{BUNDLED}"'))
    listed = run_cli("recipes", cwd=repo)
    rows = {line.split()[0]: line.split()[1] for line in listed.stdout.splitlines()}
    assert rows[BUNDLED] == f".pinshift/recipes/{BUNDLED}.toml" and listed.stdout.count("bundled") == 1
    shown = run_cli("show", BUNDLED, cwd=repo)
    assert shown.exit_code == 0, shown
    assert shown.stdout.splitlines()[0] == f"recipe {BUNDLED} (repository: .pinshift/recipes/{BUNDLED}.toml)"
    assert "replace-in-strings" in shown.stdout and "pin-swap" not in shown.stdout


def test_show_repository_recipe_prints_every_parameter_with_defaults_marked(run_cli, repo):
    result = run_cli("show", "mine", cwd=repo)
    assert result.exit_code == 0, result
    assert result.stdout.splitlines() == [
        "recipe mine (repository: .pinshift/recipes/mine.toml)",
        "description  a recipe of this repository",
        "base         main",
        "target       next",
        "files        .flox/pkgs/**/*.nix",
        "",
        "step 1/2 replace-in-strings: Say CUDA 12.9",
        '  paths     = ["meta.longDescription"]',
        '  old       = "CUDA: 12.8"',
        '  new       = "CUDA: 12.9"',
        "  regex     = false (default)",
        "  comments  = false (default)",
        "  optional: no: if it changes nothing on a base, no branch is made",
        "",
        "step 2/2 metadata-rev: metadata-rev",
        "  files: pkgs/*.nix",
        "  value    = 7",
        '  missing  = "skip" (default)',
        "  start    = 1 (default)",
        "  optional: yes (metadata-rev's default)",
    ]


def test_show_recipe_given_as_a_path(run_cli, repo, tmp_path):
    path = write(tmp_path, "elsewhere/other.toml", MINE.replace('name = "mine"', 'name = "other"'))
    result = run_cli("show", str(path), cwd=repo)
    assert result.exit_code == 0, result
    assert result.stdout.splitlines()[0] == f"recipe other (file {path})"


def test_show_missing_recipe_path_is_a_usage_error(run_cli, repo):
    assert one_line_error(run_cli("show", "nowhere/x.toml", cwd=repo)) == \
        "pinshift: error: recipe file nowhere/x.toml does not exist"


def test_show_unknown_recipe_names_the_known_ones(run_cli, repo):
    line = one_line_error(run_cli("show", "nope", cwd=repo))
    assert line == f"pinshift: error: unknown recipe 'nope' (known: mine, flox-args-to-pinned, {BUNDLED}); `pinshift recipes` lists them"


def test_show_needs_exactly_one_of_recipe_step_or_steps(run_cli, repo):
    assert "name exactly one of RECIPE" in one_line_error(run_cli("show", cwd=repo))
    assert "name exactly one of RECIPE" in one_line_error(run_cli("show", "mine", "--steps", cwd=repo))


# --- repository step kinds ------------------------------------------------------------------


@pytest.fixture
def repo_with_kind(make_repo):
    return make_repo({".pinshift/recipes/words.toml": WORDS,
                      ".pinshift/migrations/word_swap.py": WORD_SWAP.read_bytes()})


def test_repository_migrations_are_listed_and_loaded_only_with_consent(run_cli, repo_with_kind):
    listed = run_cli("recipes", cwd=repo_with_kind)
    assert listed.exit_code == 0 and listed.stderr == "", listed
    assert ("note: step kind 'word-swap' in .pinshift/migrations/word_swap.py (not trusted: runs only with "
            "--trust-repo or after `pinshift trust`)") in listed.stdout
    assert one_line_error(run_cli("show", "words", cwd=repo_with_kind)) == (
        "pinshift: error: step kind 'word-swap' is repository code (.pinshift/migrations/word_swap.py), which "
        f"pinshift runs only with consent: rerun with --trust-repo, or trust this repository with "
        f"`pinshift trust {repo_with_kind}`")
    shown = run_cli("show", "words", "--trust-repo", cwd=repo_with_kind)
    assert shown.exit_code == 0, shown
    assert "note: step kind 'word-swap' loaded from .pinshift/migrations/word_swap.py" in shown.stdout
    assert '  old        = "alpha"\n' in shown.stdout
    assert shown.stderr == (f"pinshift: loading step kind 'word-swap' from {repo_with_kind}/.pinshift/migrations/"
                            "word_swap.py (trusted: --trust-repo)\n")


def test_recipes_kinds_and_show_steps_list_every_kind_with_its_origin(run_cli, repo_with_kind):
    kinds = run_cli("recipes", "--kinds", cwd=repo_with_kind)
    steps = run_cli("show", "--steps", cwd=repo_with_kind)
    assert kinds.exit_code == steps.exit_code == 0
    assert kinds.stdout == steps.stdout
    rows = {line.split()[0]: line.split()[1] for line in kinds.stdout.splitlines()}
    assert rows["word-swap"] == ".pinshift/migrations/word_swap.py"
    assert {"pin-swap", "metadata-rev", "replace-in-strings", "readme-branch-table", "python-constant"} <= set(rows)
    assert all(rows[k] == "bundled" for k in rows if k != "word-swap")
    assert "pin-swap   " in kinds.stdout and "replace a source revision in fetcher calls" in kinds.stdout


def test_a_repository_without_the_kind_rejects_the_recipe_that_needs_it(run_cli, make_repo):
    root = make_repo({".pinshift/recipes/words.toml": WORDS})
    line = one_line_error(run_cli("show", "words", cwd=root))
    assert line.startswith("pinshift: error: .pinshift/recipes/words.toml: step 1 (word-swap): unknown step kind "
                           "(known: clone-files, metadata-rev, pin-nixpkgs, pin-swap, ")
    shown = run_cli("show", "words", "--migrations", str(WORD_SWAP.parent), cwd=root)
    assert shown.exit_code == 0, shown
    assert f"note: step kind 'word-swap' loaded from {WORD_SWAP}" in shown.stdout


def test_show_step_documents_a_kind_from_its_module(run_cli, repo):
    result = run_cli("show", "--step", "pin-swap", cwd=repo)
    assert result.exit_code == 0, result
    lines = result.stdout.splitlines()
    assert lines[0] == "step kind pin-swap (bundled; files: nix, markdown, python, toml, shell)"
    assert lines[2].startswith("pin-swap — replace a source revision in fetcher calls")
    table = lines[lines.index("Parameters (as validated; keys are written kebab-case):") + 1:]
    assert [row.split()[0] for row in table] == ["old", "new", "hash", "new-hash", "include-strings", "include-comments"]
    assert table[0].split(None, 3)[1:3] == ["str", "required"]
    assert 'default: "keep"  "keep", "remove", "compute"' in table[2]
    assert "str | table { repo, ref, pick, files }  required" in table[1]  # `new` may be a table (issue 20)
    assert "str, optional" in table[3] and "default: none" in table[3]
    # columns are as wide as their widest cell (new's type)
    assert table[3].index("default: none") == table[2].index('default: "keep"') == table[1].index("required")
    assert table[4].rstrip().endswith("inside every other string literal; never inside `${...}`.")
    assert " ".join(table[5].split()).endswith("default: false The same inside comments.")


def test_show_step_literal_and_int_types(run_cli, repo):
    result = run_cli("show", "--step", "metadata-rev", cwd=repo)
    assert '  missing  "skip" | "insert" | "error"  default: "skip"  What to do without a marker.' in result.stdout
    assert "  value    int, optional" in result.stdout


def test_show_step_of_a_kind_from_migrations_dir(run_cli, repo):
    result = run_cli("show", "--step", "word-swap", "--migrations", str(WORD_SWAP.parent), cwd=repo)
    assert result.exit_code == 0, result
    assert result.stdout.startswith(f"step kind word-swap ({WORD_SWAP}; files: nix)\n\nword-swap — replace every")
    assert "  interrupt  str  default: \"\"\n" in result.stdout


def test_show_unknown_step_kind(run_cli, repo):
    line = one_line_error(run_cli("show", "--step", "warp", cwd=repo))
    assert line.startswith("pinshift: error: unknown step kind 'warp' (known: clone-files, metadata-rev, pin-nixpkgs, pin-swap, ")


def test_migrations_dir_that_does_not_exist(run_cli, repo):
    line = one_line_error(run_cli("recipes", "--kinds", "--migrations", "no-such-dir", cwd=repo))
    assert line == "pinshift: error: --migrations no-such-dir: not a directory"


# --- validation messages: file, step, kind, key -----------------------------------------------

RENAME_WITHOUT_TO = """\
name = "x"
[[steps]]
kind = "metadata-rev"
[[steps]]
kind = "rename-attr"
[steps.params]
from = "python3Packages"
"""


@pytest.mark.skipif(not RENAME_ATTR.exists(), reason=f"{RENAME_ATTR} (rename-attr) is not written yet")
def test_missing_parameter_names_file_step_kind_and_key(run_cli, repo):
    write(repo, "recipes/x.toml", RENAME_WITHOUT_TO)
    assert one_line_error(run_cli("show", "recipes/x.toml", cwd=repo)) == \
        "pinshift: error: recipes/x.toml: step 2 (rename-attr): missing parameter 'to'"


@pytest.mark.parametrize("text, message", [
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\n[[steps]]\nkind = "replace-in-strings"\n'
     '[steps.params]\npaths = ["a"]\nold = "b"\n',
     "recipes/x.toml: step 2 (replace-in-strings): missing parameter 'new'"),
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\n[[steps]]\nkind = "warp-drive"\n',
     "recipes/x.toml: step 2 (warp-drive): unknown step kind (known: clone-files, metadata-rev, pin-nixpkgs, pin-swap, "),
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\n[steps.params]\nmissing = "sometimes"\n',
     "recipes/x.toml: step 1 (metadata-rev): 'missing' must be one of 'skip', 'insert', 'error', not 'sometimes'"),
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\n[steps.params]\nvalue = "seven"\n',
     "recipes/x.toml: step 1 (metadata-rev): 'value' must be a whole number, not 'seven'"),
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\n[steps.params]\nvalues = 3\n',
     "recipes/x.toml: step 1 (metadata-rev): unknown parameter 'values' (known: missing, start, value)"),
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\ntitel = "typo"\n',
     "recipes/x.toml: step 1 (metadata-rev): unknown key 'titel' (known: files, kind, message, optional, params, title)"),
    ('name = "x"\nbranch = "main"\n[[steps]]\nkind = "metadata-rev"\n',
     "recipes/x.toml: unknown key 'branch' (known: base, bases, description, files, name, steps, target)"),
    ('name = "x"\n[[steps]]\ntitle = "no kind"\n',
     "recipes/x.toml: step 1: missing key 'kind'"),
    # issue 39 §9: a kind of the wrong type was called missing
    ('name = "x"\n[[steps]]\nkind = ["a"]\n',
     "recipes/x.toml: step 1: 'kind' must be the name of a step kind (a string), not an array"),
    ('name = "x"\n[[steps]]\nkind = 3\n',
     "recipes/x.toml: step 1: 'kind' must be the name of a step kind (a string), not an integer"),
    ('name = "x"\n[[steps]]\nkind = ""\n',
     "recipes/x.toml: step 1: 'kind' must be the name of a step kind (a string), not an empty string"),
    ('name = "x"\n', "recipes/x.toml: missing key 'steps'"),
    ('name = "x"\n[[steps]\nkind = "metadata-rev"\n', "recipes/x.toml: invalid TOML: "),
    ('name = "x"\nfiles = 3\n[[steps]]\nkind = "metadata-rev"\n',
     "recipes/x.toml: 'files' must be a list of glob strings"),
    # issue 21 §5: wrong types were accepted and written into commits as "['a']"
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\nmessage = ["a"]\n',
     "recipes/x.toml: step 1 (metadata-rev): 'message' must be a string, not an array"),
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\ntitle = 3\n',
     "recipes/x.toml: step 1 (metadata-rev): 'title' must be a string, not an integer"),
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\ntitle = { a = 1 }\n',
     "recipes/x.toml: step 1 (metadata-rev): 'title' must be a string, not a table"),
    # issue 21 §5: an invalid glob was an internal error (exit 3) when the files were matched
    ('name = "x"\n[[steps]]\nkind = "metadata-rev"\nfiles = ["[z-a]*.nix"]\n',
     "recipes/x.toml: step 1 (metadata-rev): 'files': invalid glob '[z-a]*.nix' (bad character range z-a)"),
    ('name = "x"\nfiles = ["ok/*.nix", "[z-a]*.nix"]\n[[steps]]\nkind = "metadata-rev"\n',
     "recipes/x.toml: 'files': invalid glob '[z-a]*.nix' (bad character range z-a)"),
])
def test_validation_errors_name_the_file_step_and_key(run_cli, repo, text, message):
    write(repo, "recipes/x.toml", text)
    line = one_line_error(run_cli("show", "recipes/x.toml", cwd=repo))
    assert line.startswith(f"pinshift: error: {message}"), line


def test_bad_repository_recipe_is_named_by_its_repository_path(run_cli, repo):
    write(repo, ".pinshift/recipes/broken.toml", 'name = "broken"\n[[steps]]\nkind = "pin-swap"\n')
    assert one_line_error(run_cli("show", "broken", cwd=repo)) == \
        "pinshift: error: .pinshift/recipes/broken.toml: step 1 (pin-swap): missing parameter 'old'"


def test_recipe_that_is_not_utf8(run_cli, repo):
    (repo / "recipes").mkdir()
    (repo / "recipes" / "x.toml").write_bytes(b'name = "\xff"\n')
    assert one_line_error(run_cli("show", "recipes/x.toml", cwd=repo)) == \
        "pinshift: error: recipes/x.toml: not UTF-8 text"


def test_broken_repository_step_script_is_listed_and_fails_as_its_own_error_when_needed(run_cli, make_repo):
    root = make_repo({".pinshift/migrations/broken.py": "import no_such_module_anywhere\n",
                      ".pinshift/recipes/r.toml": 'name = "r"\n[[steps]]\nkind = "broken"\n'})
    listed = run_cli("recipes", cwd=root)
    assert listed.exit_code == 0, listed
    assert "note: step kind 'broken' in .pinshift/migrations/broken.py (not trusted: " in listed.stdout
    result = run_cli("show", "r", "--trust-repo", cwd=root)
    assert result.exit_code == 2 and result.stdout == "", result
    assert result.stderr.splitlines() == [
        f"pinshift: loading step kind 'broken' from {root}/.pinshift/migrations/broken.py (trusted: --trust-repo)",
        f"pinshift: error: {root}/.pinshift/migrations/broken.py:1: step kind 'broken' failed while loading: "
        "ModuleNotFoundError: No module named 'no_such_module_anywhere'"]


# --- the bundled recipe -----------------------------------------------------------------------


@pytest.mark.skipif(not RENAME_ATTR.exists(), reason=f"{RENAME_ATTR} (rename-attr) is not written yet")
def test_show_bundled_seed_recipe(run_cli, tmp_path):
    result = run_cli("show", BUNDLED, cwd=tmp_path)
    assert result.exit_code == 0, result
    out = result.stdout
    assert out.splitlines()[0] == f"recipe {BUNDLED} (bundled: recipes/{BUNDLED}.toml)"
    assert "base         pytorch-2.9\ntarget       pytorch-2.10-cuda12_9\n" in out
    assert ('step 1/4 pin-swap: Pin nixpkgs to 0182a36 (the build-vllm/main pin)\n'
            '  old               = "6a030d5"\n'
            '  new               = "0182a361324364ae3f436a63005877674cf45efb"\n') in out
    assert ('  from         = "python3Packages"\n  to           = "python313Packages"\n'
            '  base         = "nixpkgs_pinned"\n  definitions  = "refuse" (default)\n') in out
    assert '  missing  = "skip"\n' in out
    assert "note:" not in out
