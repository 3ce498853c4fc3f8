"""metadata-rev: bump/set the `.metadata-rev` marker, insert it where missing; goldens, idempotence, oracle."""

from __future__ import annotations

import shutil

import pytest

from pinshift.errors import ParamError, StepFailed
from pinshift.steps.registry import bundled_kinds
from step_golden import STEPS, canonical_changes, expected, run_case, run_step

CASES = {
    # case: (params, intended canonical token changes; None: an insertion, checked by parse + golden)
    "bump": ({}, [("4", "5")]),
    "value": ({"value": 7}, [("12", "7"), ("3", "7")]),  # canonical order: passthru before postInstall
    "insert-binding": ({"missing": "insert"}, None),
    "insert-append": ({"missing": "insert", "value": 2}, None),
    "insert-crlf": ({"missing": "insert"}, None),
}
IDEMPOTENT = {  # with `value`, a second run is a no-op (an increment bumps again, by definition)
    "value": {"value": 7},
    "insert-binding": {"missing": "insert", "value": 1},
    "insert-append": {"missing": "insert", "value": 2},
    "insert-crlf": {"missing": "insert", "value": 1},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    plan, _, after = run_case("metadata-rev", case, CASES[case][0], tmp_path)
    assert after == expected("metadata-rev", case)
    assert plan.warnings == []


@pytest.mark.parametrize("case", sorted(IDEMPOTENT))
def test_second_run_with_value_changes_nothing(case, tmp_path):
    shutil.copyfile(STEPS / "metadata-rev" / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step("metadata-rev", IDEMPOTENT[case], tmp_path)
    assert changed == {} and plan.warnings == []


def test_increment_is_relative_to_its_input(tmp_path):
    shutil.copyfile(STEPS / "metadata-rev" / "bump.expected.nix", tmp_path / "recipe.nix")
    _, changed = run_step("metadata-rev", {}, tmp_path)
    assert b"echo 6 > $out/.metadata-rev" in changed["recipe.nix"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_parses_and_changes_only_the_intended_tokens(case, nix_oracle):
    before = (STEPS / "metadata-rev" / f"{case}.nix").read_bytes()
    after = expected("metadata-rev", case)
    changes = canonical_changes(nix_oracle, before, after)
    if CASES[case][1] is not None:
        assert changes == CASES[case][1]
    else:
        assert changes and all(b"metadata-rev" not in old.encode() for old, _ in changes)


def test_comment_marker_is_never_touched(tmp_path):
    _, _, after = run_case("metadata-rev", "value", {"value": 7}, tmp_path)
    assert b"# echo 9 > $out/.metadata-rev (a comment: never touched)" in after


def test_interpolated_marker_is_left_and_warned(tmp_path):
    plan, before, after = run_case("metadata-rev", "interpolated", {}, tmp_path)
    assert after == before
    assert [str(w) for w in plan.warnings] == ["recipe.nix:4:10: metadata-rev marker built with ${...}: left alone"]


def test_missing_marker_skip_warns_and_leaves_file(tmp_path):
    plan, before, after = run_case("metadata-rev", "skip", {"missing": "skip"}, tmp_path)
    assert after == before
    assert [str(w) for w in plan.warnings] == ["recipe.nix: no .metadata-rev marker: skipped"]


def test_missing_marker_error_stops_the_run(tmp_path):
    with pytest.raises(StepFailed) as error:
        run_case("metadata-rev", "skip", {"missing": "error"}, tmp_path)
    assert str(error.value) == 'recipe.nix: no .metadata-rev marker (missing = "error"); add one or use missing = "insert"'


def test_insert_keeps_crlf_tabs_and_missing_final_newline(tmp_path):
    _, _, after = run_case("metadata-rev", "insert-crlf", {"missing": "insert"}, tmp_path)
    assert after.count(b"\r\n") == after.count(b"\n") and not after.endswith(b"\n")
    assert b"\r\n\tpostInstall = (prev.postInstall or \"\") + ''\r\n\t\techo 1 > $out/.metadata-rev\r\n\t'';" in after


def test_insert_goes_after_a_trailing_comment(tmp_path):
    _, _, after = run_case("metadata-rev", "insert-binding", {"missing": "insert"}, tmp_path)
    assert b"    doCheck = false; # tests need a GPU\n    postInstall = (oldAttrs.postInstall or" in after


def test_insert_goes_into_the_build_the_file_makes_not_a_nested_one(tmp_path):
    """A companion recipe's inline PyTorch build comes first in the file; the marker belongs to the companion."""
    shutil.copyfile(STEPS / "set-binding" / "companion-inline.nix", tmp_path / "recipe.nix")
    _, changed = run_step("metadata-rev", {"missing": "insert"}, tmp_path)
    text = changed["recipe.nix"].decode()
    inner, outer = text.split("in\n  (nixpkgs_pinned")
    assert ".metadata-rev" not in inner
    assert "    postInstall = (oldAttrs.postInstall or \"\") + ''\n      echo 1 > $out/.metadata-rev\n    '';\n" in outer


@pytest.mark.parametrize(
    "params, message",
    [
        ({"missing": "maybe"}, "'missing' must be one of 'skip', 'insert', 'error', not 'maybe'"),
        ({"value": -1}, "'value' must be zero or more, not -1"),
        ({"value": "three"}, "'value' must be a whole number, not 'three'"),
        ({"count": 1}, "unknown parameter 'count'"),
    ],
)
def test_invalid_parameters(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()["metadata-rev"].parse_params(params)
    assert message in str(error.value)


def test_documentation_names_every_parameter():
    doc = bundled_kinds()["metadata-rev"].doc
    for key in ("value", "missing", "start", '"insert"', "[[steps]]"):
        assert key in doc
