"""python-constant through the real runner over real git repositories, checked against golden bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinshift.errors import RecipeError
from pinshift.files.tree import DirectoryTree
from pinshift.planning.plan import Outcome
from pinshift.recipes.recipe import load_recipe_file, validate_recipe
from pinshift.planning.runner import plan_recipe
from pinshift.steps.registry import available_kinds

DOCS = Path(__file__).parent / "fixtures" / "docs"

RECIPE = """
name = "constant-test"
files = ["**/*.py"]

[[steps]]
kind = "python-constant"
[steps.params.constants]
EXPECTED_TORCH_VERSION = "2.10.0"
EXPECTED_CUDA = "12.9"
[steps.params.asserts]
"torch.__version__" = "2.10.0"
"""


def run_step(root: Path, recipe_text: str = RECIPE):
    path = root.parent / "recipe.toml"
    path.write_text(recipe_text)
    recipe = load_recipe_file(path)
    return plan_recipe(DirectoryTree(root), recipe, validate_recipe(recipe, available_kinds(root))).steps[0]


def only_file(step):
    (change,) = step.files
    return change


def test_golden_output(make_repo):
    root = make_repo({"tests/torch_smoke.py": (DOCS / "torch_smoke.py").read_bytes()})
    change = only_file(run_step(root))
    assert change.outcome is Outcome.CHANGED and change.language == "python"
    assert change.after == (DOCS / "torch_smoke.expected.py").read_bytes()
    # the comment that mentions "2.9.1" and the inequality assertion are not touched
    assert change.after.count(b'"2.9.1"') == 2
    assert [(e.line, e.before, e.after) for e in change.edits] == [(4, b"2.9.1", b"2.10.0"), (11, b"2.9.1", b"2.10.0")]


def test_second_run_changes_nothing(make_repo):
    root = make_repo({"torch_smoke.py": (DOCS / "torch_smoke.expected.py").read_bytes()})
    assert only_file(run_step(root)).outcome is Outcome.UNCHANGED


def test_missing_constant_and_non_literal_are_warnings(make_repo):
    recipe = RECIPE.replace(
        'EXPECTED_CUDA = "12.9"', 'EXPECTED_CUDA = "12.9"\nNOT_A_LITERAL = "x"\nNOWHERE = "1"'
    )
    root = make_repo({"torch_smoke.py": (DOCS / "torch_smoke.py").read_bytes()})
    change = only_file(run_step(root, recipe))
    assert change.outcome is Outcome.CHANGED
    assert [str(w) for w in change.warnings] == [
        "torch_smoke.py:6:17: NOT_A_LITERAL is not a plain string literal that can spell 'x'; left alone",
        "torch_smoke.py: constant NOWHERE not found; nothing changed for it",
    ]


def test_only_module_level_assignments_are_constants(make_repo):
    source = b'def f():\n    EXPECTED_TORCH_VERSION = "2.9.1"\n'
    root = make_repo({"a.py": source})
    change = only_file(run_step(root))
    assert change.outcome is Outcome.UNCHANGED
    assert "constant EXPECTED_TORCH_VERSION not found; nothing changed for it" in [w.message for w in change.warnings]


def test_quotes_prefix_and_non_ascii_neighbours_are_kept(make_repo):
    source = "NOTE = 'ünïcode'; EXPECTED_TORCH_VERSION = r'2.9.1'  # é\r\nEXPECTED_CUDA = '''12.8'''".encode()
    root = make_repo({"a.py": source})
    change = only_file(run_step(root))
    assert change.after == "NOTE = 'ünïcode'; EXPECTED_TORCH_VERSION = r'2.10.0'  # é\r\nEXPECTED_CUDA = '''12.9'''".encode()


def test_escapes_the_quote_of_the_literal(make_repo):
    recipe = RECIPE.replace('EXPECTED_CUDA = "12.9"', "EXPECTED_CUDA = 'say \"hi\"'")
    root = make_repo({"a.py": b'EXPECTED_CUDA = "12.8"\n'})
    assert only_file(run_step(root, recipe)).after == b'EXPECTED_CUDA = "say \\"hi\\""\n'


def test_file_with_syntax_error_is_refused_and_left_alone(make_repo):
    root = make_repo({"a.py": b'EXPECTED_TORCH_VERSION = "2.9.1"\ndef broken(:\n'})
    change = only_file(run_step(root))
    assert change.outcome is Outcome.REFUSED
    assert change.reason.startswith("a.py:2:1: Python syntax error")
    assert change.after is None


def test_constant_values_must_be_strings(tmp_path):
    path = tmp_path / "recipe.toml"
    path.write_text(RECIPE.replace('EXPECTED_CUDA = "12.9"', "EXPECTED_CUDA = 12.9"))
    with pytest.raises(RecipeError, match=r"step 1 \(python-constant\): constants.EXPECTED_CUDA must be a string"):
        validate_recipe(load_recipe_file(path), available_kinds())
