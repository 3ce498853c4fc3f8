"""set-binding: set or insert `path = value;` where the recipe's attrset is; goldens, idempotence, oracle."""

from __future__ import annotations

import shutil

import pytest

from pinshift.errors import ParamError
from pinshift.steps.registry import bundled_kinds
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
    # `after` + `comment`: where a person would put it, laid out like the neighbours
    "after-with-comment": ({"path": "ninjaFlags", "value": '[ "-j32" ]', "after": "pname",
                            "comment": "Limit build parallelism to prevent memory saturation"}, None),
    "after-tabs-unseparated": ({"path": "ninjaFlags", "value": '[ "-j32" ]', "after": "pname",
                                "comment": "# Limit build parallelism"}, None),
    # issue 34: a companion recipe; the binding goes into the overrideAttrs that makes the file's value only
    "companion-inline": ({"path": "propagatedBuildInputs", "after": "pname",
                          "value": "(oldAttrs.propagatedBuildInputs or []) ++ [ customPytorch.out ]"}, None),
    "companion-import": ({"path": "propagatedBuildInputs", "after": "pname",
                          "value": "(oldAttrs.propagatedBuildInputs or []) ++ [ customPytorch.out ]"}, None),
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


def test_after_the_last_binding_keeps_the_files_blank_line_rule(tmp_path):
    text = "x.overrideAttrs (o: {\n  a = 1;\n\n  b = 2;\n})\n"
    plan, changed = run_step("set-binding", {"path": "c", "value": "3", "after": "b", "comment": "three"},
                             _tree(tmp_path, text))
    assert changed["recipe.nix"] == b"x.overrideAttrs (o: {\n  a = 1;\n\n  b = 2;\n\n  # three\n  c = 3;\n})\n"
    assert plan.warnings == []


def test_after_goes_above_the_comments_of_the_next_binding(tmp_path):
    text = "x.overrideAttrs (o: {\n  a = 1; # one\n\n  # about b\n  b = 2;\n})\n"
    _, changed = run_step("set-binding", {"path": "c", "value": "3", "after": "a"}, _tree(tmp_path, text))
    assert changed["recipe.nix"] == b"x.overrideAttrs (o: {\n  a = 1; # one\n\n  c = 3;\n\n  # about b\n  b = 2;\n})\n"


def test_after_a_dotted_binding_in_a_nested_attrset(tmp_path):
    text = "x.overrideAttrs (o: {\n  meta = {\n    a.b = 1;\n    c = 2;\n  };\n})\n"
    _, changed = run_step("set-binding", {"path": "meta.x", "value": "3", "after": "a.b"}, _tree(tmp_path, text))
    assert changed["recipe.nix"] == b"x.overrideAttrs (o: {\n  meta = {\n    a.b = 1;\n    x = 3;\n    c = 2;\n  };\n})\n"


@pytest.mark.parametrize("blank_line, expected_text", [
    ("auto", "x.overrideAttrs (o: {\n  a = 1;\n\n  c = 3;\n\n  b = 2;\n})\n"),  # as a and b are separated
    ("none", "x.overrideAttrs (o: {\n  a = 1;\n  c = 3;\n\n  b = 2;\n})\n"),
    ("before", "x.overrideAttrs (o: {\n  a = 1;\n\n  c = 3;\n\n  b = 2;\n})\n"),
])
def test_blank_line_overrides_the_files_habit_above_an_inserted_binding(tmp_path, blank_line, expected_text):
    text = "x.overrideAttrs (o: {\n  a = 1;\n\n  b = 2;\n})\n"
    _, changed = run_step("set-binding", {"path": "c", "value": "3", "after": "a", "blank-line": blank_line},
                          _tree(tmp_path, text))
    assert changed["recipe.nix"] == expected_text.encode()


def test_blank_line_before_in_an_unseparated_attrset(tmp_path):
    _, changed = run_step("set-binding", {"path": "c", "value": "3", "blank-line": "before"},
                          _tree(tmp_path, "x.overrideAttrs (o: {\n  a = 1;\n  b = 2;\n})\n"))
    assert changed["recipe.nix"] == b"x.overrideAttrs (o: {\n  a = 1;\n  b = 2;\n\n  c = 3;\n})\n"


def test_a_missing_after_binding_is_reported_and_the_binding_goes_last(tmp_path):
    text = "x.overrideAttrs (o: {\n  a = 1;\n})\n"
    plan, changed = run_step("set-binding", {"path": "c", "value": "3", "after": "pname"}, _tree(tmp_path, text))
    assert changed["recipe.nix"] == b"x.overrideAttrs (o: {\n  a = 1;\n  c = 3;\n})\n"
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:1:21: no binding pname here to insert c after: inserted after the last binding"]


def test_a_comment_is_not_written_into_a_one_line_attrset(tmp_path):
    plan, changed = run_step("set-binding", {"path": "c", "value": "3", "comment": "three"},
                             _tree(tmp_path, "x.overrideAttrs (o: { a = 1; })\n"))
    assert changed["recipe.nix"] == b"x.overrideAttrs (o: { a = 1; c = 3; })\n"
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:1:29: the attrset is on one line: c inserted without its comment"]


def test_an_existing_binding_keeps_its_place_and_gets_no_comment(tmp_path):
    text = "x.overrideAttrs (o: {\n  a = 1;\n  c = 2;\n})\n"
    plan, changed = run_step("set-binding", {"path": "c", "value": "3", "after": "a", "comment": "three"},
                             _tree(tmp_path, text))
    assert changed["recipe.nix"] == b"x.overrideAttrs (o: {\n  a = 1;\n  c = 3;\n})\n"
    assert plan.warnings == []


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


# --- where: which overrideAttrs (issue 34) -------------------------------------------------------

# A stand-in for nixpkgs' derivations: overrideAttrs merges, and `out` (like a store path) is made from every
# input, so a derivation that lists its own `out` among its inputs cannot be evaluated, as with real nixpkgs.
STUB = """let
  mk = attrs: attrs // {
    overrideAttrs = f: mk (attrs // f attrs);
    override = args: mk (attrs // args);
    out = "${attrs.pname}-${builtins.concatStringsSep "+" attrs.propagatedBuildInputs}";
  };
in {
  python3Packages = {
    torch = mk { pname = "torch"; propagatedBuildInputs = [ "numpy" ]; };
    torchvision = mk { pname = "torchvision"; propagatedBuildInputs = [ "pillow" ]; };
  };
}
"""


def _evaluate(nix, tmp_path, recipe: bytes) -> tuple[bool, str]:
    import subprocess

    (tmp_path / "stub.nix").write_text(STUB)
    (tmp_path / "evaluated.nix").write_bytes(recipe)
    expression = "(import ./evaluated.nix { pkgs = import ./stub.nix; }).propagatedBuildInputs"
    result = subprocess.run([nix, "--eval", "--strict", "-E", expression],
                            cwd=tmp_path, capture_output=True, text=True)
    return result.returncode == 0, (result.stdout if result.returncode == 0 else result.stderr)


def test_the_binding_goes_into_the_overrideattrs_of_the_files_value_and_the_recipe_evaluates(tmp_path, nix_oracle):
    from conftest import require_nix

    nix = require_nix()
    params = CASES["companion-inline"][0]
    ok, shown = _evaluate(nix, tmp_path, expected("set-binding", "companion-inline"))
    assert ok and shown.strip() == '[ "pillow" "pytorch-python313-cuda12_8-sm61-avx-numpy" ]', shown
    # every overrideAttrs (the behaviour before `where`): customPytorch would list its own output
    plan, _, everywhere = run_case("set-binding", "companion-inline", dict(params, where="every"), tmp_path)
    assert everywhere.count(b"propagatedBuildInputs = ") == 2 and len(plan.changed[0].edits) == 2
    ok, shown = _evaluate(nix, tmp_path, everywhere)
    assert not ok and "infinite recursion" in shown


def test_where_names_the_let_binding_whose_overrideattrs_gets_it(tmp_path):
    _, _, after = run_case("set-binding", "companion-inline", {"path": "dontStrip", "value": "true", "after": "pname",
                                                                "where": "customPytorch"}, tmp_path)
    inner, outer = after.split(b"in\n  (nixpkgs_pinned")
    assert b'    pname = "pytorch-python313-cuda12_8-sm61-avx";\n    dontStrip = true;\n' in inner
    assert b"dontStrip" not in outer


@pytest.mark.parametrize("text, where, message", [
    ("let d = x.overrideAttrs (o: { a = 1; }); in { inherit d; }\n", "result",
     "no overrideAttrs makes the file's value (1 nested in other expressions): b not set (where = \"every\" sets "
     "it in each, or name the let binding)"),
    ("let d = x.overrideAttrs (o: { a = 1; }); in d\n", "e", "no let binding e made by overrideAttrs: b not set"),
])
def test_a_file_whose_value_is_not_made_by_overrideattrs_is_reported(tmp_path, text, where, message):
    plan, changed = run_step("set-binding", {"path": "b", "value": "1", "where": where}, _tree(tmp_path, text))
    assert changed == {} and [w.message for w in plan.warnings] == [message]


@pytest.mark.parametrize("text, expected_text", [
    # a variable bound by the let: followed to its value
    ("let d = x.overrideAttrs (o: { a = 1; }); in d\n", "let d = x.overrideAttrs (o: { a = 1; b = 1; }); in d\n"),
    # a chain: the outermost call
    ("(x.overrideAttrs (o: { a = 1; })).overrideAttrs (o: { a = 2; })\n",
     "(x.overrideAttrs (o: { a = 1; })).overrideAttrs (o: { a = 2; b = 1; })\n"),
    # both branches of an if, through with and assert
    ("{ c }: with c; assert true; if c then x.overrideAttrs (o: { a = 1; }) else y.overrideAttrs (o: { a = 2; })\n",
     "{ c }: with c; assert true; if c then x.overrideAttrs (o: { a = 1; b = 1; }) else y.overrideAttrs (o: { a = 2; b = 1; })\n"),
])
def test_the_files_value_is_followed_down_its_spine(tmp_path, text, expected_text):
    plan, changed = run_step("set-binding", {"path": "b", "value": "1"}, _tree(tmp_path, text))
    assert changed["recipe.nix"] == expected_text.encode() and plan.warnings == []


@pytest.mark.parametrize(
    "params, message",
    [
        ({"path": "a", "value": "1", "where": "a b"}, "'where' must be \"result\", \"every\" or the name of a let binding"),
        ({"path": "a", "value": "1", "where": "every", "at": "passthru"}, "'where' chooses an overrideAttrs; with 'at'"),
        ({"path": "a", "value": "[ 1"}, "'value' is not a Nix expression (syntax error"),
        ({"path": "a", "value": "  "}, "'value' is not a Nix expression (it is empty)"),
        ({"path": "a.${b}", "value": "1"}, "'path' must be a dotted path of plain names"),
        ({"path": "a", "value": "1", "at": "x..y"}, "'at' must be a dotted path of plain names"),
        ({"value": "1"}, "missing parameter 'path'"),
        ({"path": "a", "value": "1", "after": "b c"}, "'after' must be a dotted path of plain names"),
        ({"path": "a", "value": "1", "comment": "one\ntwo"}, "'comment' must be one non-empty line of text"),
        ({"path": "a", "value": "1", "comment": " "}, "'comment' must be one non-empty line of text"),
    ],
)
def test_parameter_errors_name_the_key(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()["set-binding"].parse_params(params)
    assert message in str(error.value)
