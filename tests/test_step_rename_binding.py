"""rename-binding (issue 34): a let/rec binding and every reference bound to it, by scope; goldens written by
hand, idempotence, refusals that keep meaning, Nix as the oracle (parse and evaluation)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import require_nix

from pinshift.errors import ParamError
from pinshift.steps.registry import bundled_kinds
from step_golden import STEPS, canonical_changes, expected, run_case, run_step

REGEX = {"from": r"python3\d+Custom", "to": "python311Custom", "regex": True}
CASES = {
    # case: (params, the canonical token changes: one per renamed name, each place)
    "vllm-python-branch": ({"from": "python312Custom", "to": "python311Custom"},
                           [("python312Custom", "python311Custom")] * 5),
    "shadowed": ({"from": "pyCustom", "to": "pyOld"}, [("pyCustom", "pyOld")] * 7),
    "crlf-quoted": (REGEX, [("python313Custom", "python311Custom")] * 2),
}


def _refusals(plan) -> list[str]:
    """Each refused file's reason without its `path:line:col: ` (the place is checked where it matters)."""
    return [f.reason.split(": ", 1)[1] for f in plan.refused]


def _tree(tmp_path, text: str):
    (tmp_path / "recipe.nix").write_text(text)
    return tmp_path


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    plan, _, after = run_case("rename-binding", case, CASES[case][0], tmp_path)
    assert after == expected("rename-binding", case)
    assert plan.warnings == [] and plan.refused == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_second_run_changes_nothing(case, tmp_path):
    shutil.copyfile(STEPS / "rename-binding" / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step("rename-binding", CASES[case][0], tmp_path)
    assert changed == {} and plan.warnings == [] and plan.refused == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_parses_and_only_the_names_change(case, nix_oracle):
    before = (STEPS / "rename-binding" / f"{case}.nix").read_bytes()
    assert canonical_changes(nix_oracle, before, expected("rename-binding", case)) == CASES[case][1]


def test_the_renamed_file_evaluates_to_what_it_did(nix_oracle):
    nix = require_nix()
    values = []
    for name in ("shadowed.nix", "shadowed.expected.nix"):
        result = subprocess.run([nix, "--eval", "--strict", str(STEPS / "rename-binding" / name)],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        values.append(result.stdout)
    assert values[0] == values[1] == '[ "3.12" [ "x" ] "inner" "attr" "data" 1 ]\n'


def test_a_rec_attribute_is_renamed_with_a_note(tmp_path):
    plan, _, _ = run_case("rename-binding", "shadowed", CASES["shadowed"][0], tmp_path)
    assert [n.message for f in plan.files for n in f.notes] == [
        "pyCustom is also an attribute of this rec attrset: whatever selects it from outside must say pyOld"]


def test_regex_renames_each_name_it_matches_and_leaves_the_name_it_already_gives(tmp_path):
    text = "let\n  python312Custom = 1;\n  python311Custom = 2;\n  python3Packages = 3;\nin python312Custom\n"
    (tmp_path / "a.nix").write_text("let python313Custom = 1; in python313Custom\n")
    (tmp_path / "b.nix").write_text("let python311Custom = 1; in python311Custom\n")
    _, changed = run_step("rename-binding", REGEX, tmp_path)
    assert changed == {"a.nix": b"let python311Custom = 1; in python311Custom\n"}
    other = tmp_path / "other"
    other.mkdir()
    plan, changed = run_step("rename-binding", REGEX, _tree(other, text))
    assert changed == {} and _refusals(plan) == [
        "python312Custom would become python311Custom, which this let already binds"]


# --- refused: the result would not mean what the file meant -------------------------------------


@pytest.mark.parametrize("text, message", [
    ("let a = 1; b = 2; in a\n", "a would become b, which this let already binds"),
    ("let a = 1; in let b = 5; in a + b\n", "a here would become b, which an inner let binds (at 1:19): "
                                           "it would refer to that instead"),
    ("{ b }: let a = 1; in a + b\n", "b here means the formal binding at 1:3; renaming a to b in this "
                                     "let would make it mean the renamed binding"),
    ("let a = 1; in a + b\n", "b here means nothing in this file (free); renaming a to b in this let would make it "
                              "mean the renamed binding"),
    ("with { b = 1; }; let a = 1; in a + b\n", "b here means a name from a `with`; renaming a to b in this let would "
                                               "make it mean the renamed binding"),
    ("let a = 1; in { inherit a; }\n", "inherit a; reads the binding at 1:5 and names an attribute by it: "
                                       "renaming it would rename that attribute too (write a = a; first, or rename by "
                                       "hand)"),
])
def test_a_rename_that_would_change_meaning_is_refused_and_the_file_left_alone(tmp_path, text, message):
    plan, changed = run_step("rename-binding", {"from": "a", "to": "b"}, _tree(tmp_path, text))
    assert changed == {} and _refusals(plan) == [message]


def test_two_names_the_regex_would_merge_are_refused(tmp_path):
    plan, changed = run_step("rename-binding", REGEX,
                             _tree(tmp_path, "let python312Custom = 1; python313Custom = 2; in 0\n"))
    assert changed == {} and _refusals(plan) == [
        "python312Custom and python313Custom would both become python311Custom in this let"]


@pytest.mark.parametrize("text, params, message", [
    ("let inherit (x) a; in a\n", {"from": "a", "to": "b"},
     "a is bound by an inherit here (its name also says where the value comes from): not renamed to b"),
    ("let a1 = 1; in a1\n", {"from": r"a(\d)", "to": r"\1a", "regex": True},
     "a1 would become '1a', which is not a plain Nix name: not renamed"),
])
def test_what_cannot_be_renamed_is_warned_and_left(tmp_path, text, params, message):
    plan, changed = run_step("rename-binding", params, _tree(tmp_path, text))
    assert changed == {} and [w.message for w in plan.warnings] == [message]


def test_comments_strings_plain_attributes_and_selects_are_never_touched(tmp_path):
    text = ('# a is the answer\nlet a = { a = 1; };\nin { a = a.a; s = "a ${toString a.a} a"; }\n')
    _, changed = run_step("rename-binding", {"from": "a", "to": "b"}, _tree(tmp_path, text))
    assert changed["recipe.nix"] == b'# a is the answer\nlet b = { a = 1; };\nin { a = b.a; s = "a ${toString b.a} a"; }\n'


@pytest.mark.parametrize("params, message", [
    ({"from": "a", "to": "a"}, "'to' is the same name as 'from'"),
    ({"from": "a.b", "to": "c"}, "'from' must be a plain Nix identifier, not 'a.b' (set regex = true for a pattern)"),
    ({"from": "a", "to": "let"}, "'to' must be a plain Nix identifier"),
    ({"from": "a(", "to": "b", "regex": True}, "'from' is not a valid regular expression"),
    ({"from": "a", "to": r"\1", "regex": True}, "'to' refers to a group 'from' does not have"),
    ({"to": "b"}, "missing parameter 'from'"),
])
def test_parameter_errors_name_the_key(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()["rename-binding"].parse_params(params)
    assert message in str(error.value)


def test_its_docstring_is_its_documentation(run_cli):
    result = run_cli("show", "--step", "rename-binding")
    assert result.exit_code == 0
    assert result.stdout.startswith("step kind rename-binding (bundled; files: nix)\n\nrename-binding — rename a `let`")
    assert "python3\\d+Custom" in result.stdout and "Refused" in result.stdout


# --- no input may hang it: linear in the file ------------------------------------------------------


def test_work_grows_linearly_with_the_bindings_renamed(tmp_path, monkeypatch):
    """n bindings renamed by one regex (n distinct names): one walk of each kind of node, and a constant number
    of scope look-ups per binding and per use, at n and 8n (counted, not timed)."""
    small, large = _counts(tmp_path, monkeypatch, 40), _counts(tmp_path, monkeypatch, 320)
    assert small["walk"] == large["walk"] == 3  # let/rec containers, variables, inherits: once each
    for name in ("binder_of", "resolve"):
        assert large[name] <= 8 * small[name] + 8, (name, small, large)
        assert large[name] <= 2 * 320, (name, large)  # about one per use: 320 renamed uses


def _counts(tmp_path, monkeypatch, n: int) -> dict[str, int]:
    from pinshift.migrations import rename_binding

    counts = {"walk": 0, "binder_of": 0, "resolve": 0, "inherited_binder": 0}
    with monkeypatch.context() as patch:
        for name in counts:
            original = getattr(rename_binding, name)

            def counted(*args, _name=name, _original=original, **kwargs):
                counts[_name] += 1
                return _original(*args, **kwargs)

            patch.setattr(rename_binding, name, counted)
        _rename_many(tmp_path, n)
    return counts


def _rename_many(tmp_path, n: int) -> None:
    bindings = "".join(f"  p{i}Custom = {{ v = {i}; }};\n  u{i} = p{i}Custom.v;\n" for i in range(n))
    folder = tmp_path / str(n)
    folder.mkdir()
    (folder / "recipe.nix").write_text(f"let\n{bindings}in {{ inherit u0; }}\n")
    _, changed = run_step("rename-binding", {"from": r"p(\d+)Custom", "to": r"q\1Custom", "regex": True}, folder)
    assert changed["recipe.nix"].count(b"Custom") == 2 * n and b"p0Custom" not in changed["recipe.nix"]
