"""The modules that type-check stay clean: mypy over the per-file syntax checks (all of `syntax/`), the hunk
reader and the edit model (issue 44, docs/performance.md: making the hot path type-check is what compiling it
would need first; mypyc refuses a module with a type error and checks at run time what mypy let pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy is in the [test] extras: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parent.parent
CLEAN = ["src/pinshift/syntax", "src/pinshift/planning/changed_lines.py", "src/pinshift/edits.py"]
# errors in modules these import but that are not listed here are not theirs: --follow-imports=silent
FLAGS = ["--ignore-missing-imports", "--follow-imports=silent", "--no-incremental", "--no-error-summary"]


def _mypy(*targets: str) -> tuple[str, int]:
    out, err, status = mypy_api.run([*FLAGS, *targets])
    return out + err, status


def test_the_clean_modules_type_check():
    paths = [str(ROOT / target) for target in CLEAN]
    report, status = _mypy(*paths)
    assert status == 0, f"mypy found type errors in modules that were clean:\n{report}"
    assert len(list((ROOT / "src/pinshift/syntax").glob("*.py"))) >= 19  # the whole package, not an empty list


def test_mypy_as_run_here_finds_an_optional_node_used_as_a_node(tmp_path):
    """The same flags catch the kind of error the modules had (a node that may be None used as a node)."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from tree_sitter import Node\n\n\n"
        "def first_start(node: Node) -> int:\n"
        "    return node.child_by_field_name('attrpath').start_byte\n"
    )
    report, status = _mypy(str(probe))
    assert status == 1 and 'Item "None" of "Node | None" has no attribute "start_byte"' in report, report
