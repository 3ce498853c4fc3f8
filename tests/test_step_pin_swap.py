"""pin-swap: golden outputs, hash handling, prefix resolution errors, idempotence, and the Nix oracle."""

from __future__ import annotations

import shutil

import pytest

from pinshift.demo.matrix import NEW_REV, OLD_REV
from pinshift.errors import ParamError, UsageError
from pinshift.facts.pin_inputs import fill
from pinshift.recipes.recipe import parse_recipe, validate_recipe
from pinshift.steps.registry import bundled_kinds
from step_golden import STEPS, canonical_changes, expected, run_case, run_step

SWAP = {"old": "6a030d5", "new": NEW_REV}
HASH = "sha256-CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC="
CASES = {
    # case: (params, intended canonical token changes)
    "seed-gpu": (SWAP, [(OLD_REV, NEW_REV)]),
    "fetchfromgithub-hash": (SWAP, [(OLD_REV, NEW_REV)]),
    "fetchfromgithub-new-hash": (dict(SWAP, **{"new-hash": HASH}), [(OLD_REV, NEW_REV), ("0000000000000000000000000000000000000000000000000000", "sha256 - CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC =")]),
    "bare-url-and-fetchgit": (SWAP, [("6a030d5", NEW_REV), (OLD_REV, NEW_REV), (OLD_REV, NEW_REV)]),
    "include-strings-comments": (dict(SWAP, **{"include-strings": True, "include-comments": True}),
                                 [(OLD_REV, NEW_REV), ("6a030d5", "0182a36"), (OLD_REV, NEW_REV), (OLD_REV, NEW_REV)]),
    "crlf-no-final-newline": (SWAP, [(OLD_REV, NEW_REV)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    _, _, after = run_case("pin-swap", case, CASES[case][0], tmp_path)
    assert after == expected("pin-swap", case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_second_run_changes_nothing(case, tmp_path):
    shutil.copyfile(STEPS / "pin-swap" / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step("pin-swap", CASES[case][0], tmp_path)
    assert changed == {} and plan.warnings == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_canonical_parse_changes_only_the_intended_tokens(case, nix_oracle):
    before = (STEPS / "pin-swap" / f"{case}.nix").read_bytes()
    assert canonical_changes(nix_oracle, before, expected("pin-swap", case)) == CASES[case][1]


def test_hash_is_kept_and_warned_without_new_hash(tmp_path):
    plan, before, after = run_case("pin-swap", "fetchfromgithub-hash", SWAP, tmp_path)
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:7:14: hash must be refreshed: recipe.nix:7 (sha256 still belongs to 6a030d5; "
        "set hash = \"compute\" or update it by hand)"
    ]
    assert b'sha256 = "0000000000000000000000000000000000000000000000000000";' in after


def test_new_hash_is_written_and_nothing_warned(tmp_path):
    plan, _, after = run_case("pin-swap", "fetchfromgithub-new-hash", CASES["fetchfromgithub-new-hash"][0], tmp_path)
    assert plan.warnings == []
    assert f'sha256 = "{HASH}";'.encode() in after
    assert b'hash = "sha256-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=";' in after  # the other fetcher's hash


def test_unrelated_fetcher_tag_and_interpolated_url_untouched(tmp_path):
    _, _, after = run_case("pin-swap", "bare-url-and-fetchgit", SWAP, tmp_path)
    assert f'archive/${{"{OLD_REV}"}}.tar.gz'.encode() in after
    assert f'note = "was {OLD_REV}";'.encode() in after
    assert b"# bare URL, abbreviated revision" in after


def test_without_include_flags_comments_and_strings_keep_the_old_revision(tmp_path):
    _, before, after = run_case("pin-swap", "include-strings-comments", SWAP, tmp_path)
    assert after == before.replace(f"archive/{OLD_REV}".encode(), f"archive/{NEW_REV}".encode())


def _tree(tmp_path, files: dict[str, str]):
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


def _fetch(rev: str) -> str:
    return f'import (builtins.fetchTarball {{\n  url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";\n}}) {{ }}\n'


def test_ambiguous_prefix_lists_each_revision_with_path_and_line(tmp_path):
    a, b = "6a030d5" + "a" * 33, "6a030d5" + "b" * 33
    root = _tree(tmp_path, {"a.nix": _fetch(a), "sub/b.nix": "\n" + _fetch(b)})
    with pytest.raises(ParamError) as error:
        run_step("pin-swap", SWAP, root)
    assert str(error.value) == (
        f"pin-swap: '6a030d5' is ambiguous (matches: {a} at a.nix:2; {b} at sub/b.nix:3); give more digits in 'old'"
    )
    assert (root / "a.nix").read_text() == _fetch(a)


def test_files_on_another_pin_change_nothing_and_say_so(tmp_path):
    """A branch on another pin (one base of a fan-out, or a typo in 'old'): nothing to swap, a note per file."""
    root = _tree(tmp_path, {"a.nix": _fetch("1" * 40), "b.nix": _fetch("1" * 40), "c.nix": "# 6a030d5 in a comment\n"})
    plan, changed = run_step("pin-swap", SWAP, root)
    assert changed == {} and plan.warnings == []
    notes = [str(n) for f in plan.files for n in f.notes]
    assert notes == ["a.nix:2:51: pins 1111111, not '6a030d5': nothing to swap here",
                     "b.nix:2:51: pins 1111111, not '6a030d5': nothing to swap here"]


def test_files_without_any_fetcher_change_nothing(tmp_path):
    """A branch without recipes (a fan-out's `main`): the recipe changes nothing there, no error."""
    root = _tree(tmp_path, {"c.nix": "# 6a030d5 in a comment\n"})
    plan, changed = run_step("pin-swap", SWAP, root)
    assert changed == {} and plan.warnings == [] and [n for f in plan.files for n in f.notes] == []


def test_full_old_revision_is_resolved_too(tmp_path):
    root = _tree(tmp_path, {"a.nix": _fetch(OLD_REV)})
    _, changed = run_step("pin-swap", {"old": OLD_REV, "new": NEW_REV}, root)
    assert changed == {"a.nix": _fetch(NEW_REV).encode()}


@pytest.mark.parametrize(
    "params, message",
    [
        ({"old": "6a030d5", "new": "0182 a36"}, "'new' must be a full 40-hex-digit revision, or a branch, tag or "
                                                "abbreviated commit of the --nixpkgs clone, not '0182 a36'"),
        ({"old": "6a030d5", "new": 'nixos"unstable'}, "'new' must be a full 40-hex-digit revision"),
        ({"old": "6a030d5", "new": "nixos..unstable"}, "'new' must be a full 40-hex-digit revision"),
        ({"old": "6a030d5", "new": NEW_REV, "hash": "sha256-short"}, "'hash' must be \"keep\", \"remove\", "
                                                                     "\"compute\" or a sha256"),
        ({"old": "6a030d5", "new": NEW_REV, "hash": "z" * 52}, "'hash' must be"),  # 52 chars, but bits beyond 256
        ({"old": "6a030d5", "new": NEW_REV, "hash": "remove", "new-hash": "x"}, "'new-hash' and 'hash' exclude"),
        ({"old": "6a0", "new": NEW_REV}, "'old' must be a revision of 4 to 40 hex digits, not '6a0'"),
        ({"old": "0182a36", "new": NEW_REV}, "is the same revision as 'old'"),
        ({"old": "6a030d5", "new": NEW_REV, "new-hash": 'x"y'}, "'new-hash' must be a plain hash string"),
        ({"new": NEW_REV}, "missing parameter 'old'"),
    ],
)
def test_invalid_parameters_are_refused_before_any_file_is_read(params, message):
    with pytest.raises(ParamError) as error:
        bundled_kinds()["pin-swap"].parse_params(params)
    assert message in str(error.value)


def test_recipe_with_short_new_revision_and_no_clone_names_file_step_and_key():
    """An abbreviated `new` is valid (a clone can name it); without a clone it stops before any file is read."""
    recipe = parse_recipe(
        {"name": "x", "steps": [{"kind": "pin-swap", "params": {"old": "6a030d5", "new": "0182a36"}}]}, "recipes/x.toml"
    )
    [(step, kind, params)] = validate_recipe(recipe, bundled_kinds())
    with pytest.raises(UsageError) as error:
        fill([("recipes/x.toml: step 1 (pin-swap)", kind, params)], None)
    assert str(error.value) == (
        "recipes/x.toml: step 1 (pin-swap): 'new' must be a full 40-hex-digit revision, not '0182a36' (a branch, "
        "tag or abbreviated commit needs a local nixpkgs clone to name it: pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"
    )


def test_unfilled_params_never_reach_a_file(tmp_path):
    """The step itself refuses a branch name or "compute" that no clone completed (pinshift.facts.pin_inputs)."""
    root = _tree(tmp_path, {"a.nix": _fetch(OLD_REV)})
    for params in ({"old": "6a030d5", "new": "nixos-unstable"}, dict(SWAP, hash="compute")):
        with pytest.raises(ParamError, match="needs a local nixpkgs clone"):
            run_step("pin-swap", params, root)
    assert (root / "a.nix").read_text() == _fetch(OLD_REV)


def test_documentation_names_every_parameter():
    doc = bundled_kinds()["pin-swap"].doc
    for key in ("old", "new", "hash", "new-hash", "include-strings", "include-comments", "[[steps]]"):
        assert key in doc
