"""set-binding: set or insert `path = value;` where the recipe's attrset is; goldens, idempotence, oracle."""

from __future__ import annotations

import shutil

import pytest

from pinshift.errors import ParamError
from pinshift.steps import bundled_kinds
from step_golden import STEPS, canonical_changes, expected, run_case, run_step

CASES = {
    # case: (params, canonical token changes; None: an insertion, checked by golden + "only added")
    "seed-gpu": ({"path": "meta.maintainers", "value": "[ ]"}, None),
    "seed-gpu-pname": (
        {"path": "pname", "value": '"pytorch-python313-cuda12_9-sm61-avx-custom"'},
        [("", "- custom")],  # the canonical tokens split the string at "-"
    ),
    "crlf-no-final-newline": ({"path": "passthru.cudaVersion", "value": '"12.9"'}, None),
    "one-line-attrset": ({"path": "gpuArch", "value": '"sm_90"', "at": "passthru"}, None),
}


def _tree(tmp_path, text: str):
    (tmp_path / "recipe.nix").write_text(text)
    return tmp_path


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    plan, _, after = run_case("set-binding", case, CASES[case][0], tmp_path)
    assert after == expected("set-binding", case)
    assert plan.warnings == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_second_run_changes_nothing(case, tmp_path):
    shutil.copyfile(STEPS / "set-binding" / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step("set-binding", CASES[case][0], tmp_path)
    assert changed == {} and plan.warnings == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_parses_and_changes_only_what_was_set(case, nix_oracle):
    before = (STEPS / "set-binding" / f"{case}.nix").read_bytes()
    changes = canonical_changes(nix_oracle, before, expected("set-binding", case))
    if CASES[case][1] is not None:
        assert changes == CASES[case][1]
    else:  # an insertion: nothing removed, the new binding's name among the added tokens
        assert len(changes) == 1 and changes[0][0] == ""
        assert CASES[case][0]["path"].split(".")[-1] in changes[0][1]


def test_crlf_insertion_uses_crlf_and_keeps_the_missing_final_newline():
    after = expected("set-binding", "crlf-no-final-newline")
    assert b'\r\n\r\n    passthru.cudaVersion = "12.9";\r\n' in after and not after.endswith(b"\n")


def test_a_path_bound_to_a_non_attrset_is_reported(tmp_path):
    plan, changed = run_step("set-binding", {"path": "meta.platforms", "value": "[ ]"},
                             _tree(tmp_path, "x.overrideAttrs (o: {\n  meta = o.meta;\n})\n"))
    assert changed == {}
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:2:3: meta is not an attrset with bindings here: set meta.platforms by hand"
    ]


def test_a_file_without_the_target_is_reported(tmp_path):
    plan, changed = run_step("set-binding", {"path": "a", "value": "1"}, _tree(tmp_path, "{ overrideAttrs = 1; }\n"))
    assert changed == {}
    assert [w.message for w in plan.warnings] == ["found no overrideAttrs attrset: a not set"]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"path": "a", "value": "[ 1"}, "'value' is not a Nix expression (syntax error"),
        ({"path": "a", "value": "  "}, "'value' is not a Nix expression (it is empty)"),
        ({"path": "a.${b}", "value": "1"}, "'path' must be a dotted path of plain names"),
        ({"path": "a", "value": "1", "at": "x..y"}, "'at' must be a dotted path of plain names"),
        ({"value": "1"}, "missing parameter 'path'"),
    ],
)
def test_parameter_errors_name_the_key(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()["set-binding"].parse_params(params)
    assert message in str(error.value)
