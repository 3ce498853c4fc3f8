"""A planned branch's facts (`{facts.…}`, pinshift.status.branch_facts.tree_facts) read in forked workers
when there are many recipes: the same facts, in the same order, as one process reads them."""

from __future__ import annotations

from pinshift.demo.matrix import OLD_REV, Variant, render_recipe, variants
from pinshift.facts.branch_recipes import ReadOptions, facts_of_files
from pinshift.facts.facts import recipe_facts
from pinshift.planning.pool import PARALLEL_MIN_FILES
from pinshift.status.branch_facts import tree_facts
from pinshift.syntax.document import parse_document


def _recipes(count: int) -> dict[str, bytes]:
    matrix = variants()
    files = {}
    for n in range(count):
        base = matrix[n % len(matrix)]
        text = render_recipe(Variant(base.gpu, base.isa, metadata_rev=1 + n % 3), OLD_REV)
        if n % 7 == 3:
            text += "{ broken = ; }\n"  # a recipe with a syntax problem is read (and counted) too
        files[f".flox/pkgs/r{count - n:04}.nix"] = f"{text}# recipe {n}\n".encode()
    return files


def test_workers_read_the_same_facts_in_path_order_as_one_process():
    files = _recipes(PARALLEL_MIN_FILES + 50)
    serial = [recipe_facts(parse_document(files[path], path)) for path in sorted(files)]
    assert facts_of_files(files, ReadOptions(jobs=2)) == serial
    assert facts_of_files(files, ReadOptions(jobs=1)) == serial
    assert any(facts.problems for facts in serial) and [f.path for f in serial] == sorted(files)


def test_tree_facts_are_the_same_whatever_the_workers(monkeypatch):
    files = _recipes(PARALLEL_MIN_FILES + 10)
    monkeypatch.setenv("PINSHIFT_JOBS", "1")
    one = tree_facts(files)
    monkeypatch.setenv("PINSHIFT_JOBS", "2")
    assert tree_facts(files) == one
    assert one[0]["variants"].value is not None
