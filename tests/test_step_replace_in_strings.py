"""replace-in-strings: literal and regex replacement in strings bound at given paths; goldens, idempotence, oracle."""

from __future__ import annotations

import shutil

import pytest

from pinshift.errors import ParamError
from pinshift.steps.registry import bundled_kinds
from step_golden import STEPS, canonical_changes, expected, run_case, run_step

CUDA = {"paths": ["meta.longDescription"], "old": "CUDA: 12.8", "new": "CUDA: 12.9"}
CASES = {
    # case: (params, intended canonical token changes)
    "long-description": (CUDA, [("8", "9")]),
    "interpolation-and-concat": (CUDA, [("8", "9"), ("8", "9"), ("8", "9")]),
    "regex": ({"paths": ["meta.longDescription"], "old": r"CUDA: 12\.(\d)\b", "new": r"CUDA: 12.9 (was 12.\1)",
               "regex": True}, [("", "9 ( was 12 ."), ("", ")")]),  # as difflib aligns the tokens
    # issue 34: a version bump's header comments follow its strings (comments are not in Nix's canonical parse)
    "header-comments": ({"paths": ["meta.description", "meta.longDescription"], "old": "vLLM 0.15.1",
                         "new": "vLLM 0.16.0", "comments": True}, [("15", "16"), ("1", "0"), ("15", "16"), ("1", "0")]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    plan, _, after = run_case("replace-in-strings", case, CASES[case][0], tmp_path)
    assert after == expected("replace-in-strings", case)
    assert plan.warnings == []


@pytest.mark.parametrize("case", ["long-description", "interpolation-and-concat", "header-comments"])
def test_second_run_changes_nothing(case, tmp_path):
    shutil.copyfile(STEPS / "replace-in-strings" / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step("replace-in-strings", CASES[case][0], tmp_path)
    assert changed == {} and plan.warnings == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_parses_and_changes_only_the_intended_tokens(case, nix_oracle):
    before = (STEPS / "replace-in-strings" / f"{case}.nix").read_bytes()
    assert canonical_changes(nix_oracle, before, expected("replace-in-strings", case)) == CASES[case][1]


def test_other_bindings_comments_and_interpolations_are_untouched(tmp_path):
    _, _, after = run_case("replace-in-strings", "interpolation-and-concat", CUDA, tmp_path)
    assert b'(${"CUDA: 12.8"})' in after
    assert b'meta.description = "CUDA: 12.8";' in after
    assert b'meta."longDescription-extra" = "CUDA: 12.8";' in after
    _, _, after = run_case("replace-in-strings", "long-description", CUDA, tmp_path)
    assert after.startswith(b"# CUDA: 12.8 -- PyTorch optimized for")
    assert b'echo "CUDA: 12.8 (cudaSupport=true' in after


def test_replacement_that_would_change_the_string_syntax_is_warned_not_made(tmp_path):
    params = dict(CUDA, new='CUDA "12.9"')
    plan, before, after = run_case("replace-in-strings", "interpolation-and-concat", params, tmp_path)
    messages = [w.message for w in plan.warnings]
    assert messages == ["meta.longDescription: not replacing 'CUDA: 12.8': it would contain a quote or backslash"]
    assert after.count(b'CUDA "12.9"') == 2  # the two in the ''...'' string, where a quote is plain text


def test_comments_alone_with_empty_paths_and_never_the_comment_markers(tmp_path):
    (tmp_path / "a.nix").write_text('# a # b\n/* a # b */ { x = "a # b"; }\n')
    plan, changed = run_step("replace-in-strings", {"paths": [], "old": "#", "new": "%", "comments": True}, tmp_path)
    assert changed == {"a.nix": b'# a % b\n/* a % b */ { x = "a # b"; }\n'} and plan.warnings == []


@pytest.mark.parametrize("text, params, message", [
    ("# one\n{ }\n", {"old": "one", "new": "1\ntwo"}, "comment: not replacing 'one': it would break the line (the rest "
                                                        "would be code)"),
    ("/* one */ { }\n", {"old": "one", "new": "*/ x"}, "comment: not replacing 'one': it would contain */ (the end of "
                                                      "the comment)"),
])
def test_a_replacement_that_would_end_a_comment_is_warned_not_made(tmp_path, text, params, message):
    (tmp_path / "a.nix").write_text(text)
    plan, changed = run_step("replace-in-strings", dict(params, paths=[], comments=True), tmp_path)
    assert changed == {} and [w.message for w in plan.warnings] == [message]


def test_without_comments_true_comments_are_never_searched(tmp_path):
    _, _, after = run_case("replace-in-strings", "header-comments",
                           dict(CASES["header-comments"][0], comments=False), tmp_path)
    assert after.startswith(b"# vLLM 0.15.1 for") and b'description = "vLLM 0.16.0 for' in after


def test_binding_that_is_not_a_string_is_reported(tmp_path):
    (tmp_path / "a.nix").write_text("{ d }: { meta.longDescription = d; }\n")
    plan, changed = run_step("replace-in-strings", CUDA, tmp_path)
    assert changed == {}
    assert [str(w) for w in plan.warnings] == ["a.nix:1:33: meta.longDescription is not a string literal: left alone"]


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(CUDA, new="CUDA: 12.8.1"), "'new' contains 'old'"),
        (dict(CUDA, old=""), "'old' must not be empty"),
        (dict(CUDA, paths=["meta..x"]), "'paths' must list dotted binding paths"),
        (dict(CUDA, old="(", regex=True), "'old' is not a valid regular expression"),
        (dict(CUDA, new=r"\2", regex=True), "'new' refers to a group 'old' does not have"),
        ({"old": "a", "new": "b"}, "missing parameter 'paths'"),
        (dict(CUDA, paths=[]), "'paths' must list dotted binding paths"),
    ],
)
def test_invalid_parameters(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()["replace-in-strings"].parse_params(params)
    assert message in str(error.value)


def test_documentation_names_every_parameter():
    doc = bundled_kinds()["replace-in-strings"].doc
    for key in ("paths", "old", "new", "regex", "[[steps]]"):
        assert key in doc
