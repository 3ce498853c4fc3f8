"""pin-swap's `hash` parameter on real files: inserted, rewritten in the notation it had, removed, or warned.

The expected files (tests/fixtures/steps/pin-swap/hash-*.expected.nix) were written by hand; the hash value
is the stub nixpkgs' archive hash as nix-prefetch-url printed it, its base16 from `nix-hash --to-base16` and
its SRI the base64 of those bytes. Every output must parse with Nix and change only the intended tokens.
"""

from __future__ import annotations

import shutil

import pytest

from pinshift.demo.matrix import NEW_REV, OLD_REV
from step_golden import STEPS, expected, run_case, run_step

B32 = "1gkkysgrlljbd6qlavsib6jrwjcibdffdyg3miwpnzj2zs4s7z7j"
B16 = "f2fca389fe427e7b79ace3f9e65c5b91499ea559516f45b1694b529a9ff673be"
SRI = "sha256-8vyjif5Cfnt5rOP55lxbkUmepVlRb0WxaUtSmp/2c74="
Z32, Z16 = "0" * 52, "0" * 64
ZSRI = "sha256-" + "A" * 43 + "="
SWAP = {"old": "6a030d5", "new": NEW_REV}
URL = "https://github.com/NixOS/nixpkgs/archive/"

OLD_URL, NEW_URL = f'url = "{URL}{OLD_REV}.tar.gz";', f'url = "{URL}{NEW_REV}.tar.gz";'
WRITTEN = f'sha256 = "{B32}";'
CASES = {
    # case: (params, intended changes as replacements in Nix's canonical parse of the input, in order)
    "hash-insert": (dict(SWAP, hash=B32), [
        (f"{{ {OLD_URL} }}", f"{{ {WRITTEN} {NEW_URL} }}"),
        (f'name = "nixpkgs"; {OLD_URL}', f'name = "nixpkgs"; {WRITTEN} {NEW_URL}'),
        (f'{{ url = "{URL}6a030d5.tar.gz"; }}', f"{{ {WRITTEN} {NEW_URL} }}"),
        (f'fetchTarball "{URL}{OLD_REV}.tar.gz"', f"fetchTarball {{ {WRITTEN} {NEW_URL} }}"),
    ]),
    "hash-formats": (dict(SWAP, hash=B32), [
        (OLD_REV, NEW_REV), (f'"{Z16}"', f'"{B16}"'), (f'"sha256:{Z32}"', f'"sha256:{B32}"'),
        (f'"{Z32}"', f'"{B32}"'), (ZSRI, SRI), ('hash = ""', f'hash = "{SRI}"'),
    ]),
    "hash-elsewhere": (dict(SWAP, hash=B32), [(OLD_REV, NEW_REV)]),
    "hash-remove": (dict(SWAP, hash="remove"), [
        (OLD_REV, NEW_REV), (f'hash = "{ZSRI}"; ', ""), (f'sha256 = "{Z32}"; ', ""),
    ]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, tmp_path):
    _, _, after = run_case("pin-swap", case, CASES[case][0], tmp_path)
    assert after == expected("pin-swap", case)


@pytest.mark.parametrize("case", ["hash-insert", "hash-formats"])
def test_the_notation_of_the_value_given_does_not_matter(case, tmp_path):
    """An SRI or base16 `hash` writes the same bytes: inserted as base32, existing hashes in their own notation."""
    for value in (SRI, B16, "sha256:" + B32):
        where = tmp_path / value.replace("/", "_")
        where.mkdir()
        _, _, after = run_case("pin-swap", case, dict(SWAP, hash=value), where)
        assert after == expected("pin-swap", case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_second_run_changes_nothing_and_warns_nothing(case, tmp_path):
    shutil.copyfile(STEPS / "pin-swap" / f"{case}.expected.nix", tmp_path / "recipe.nix")
    plan, changed = run_step("pin-swap", CASES[case][0], tmp_path)
    assert changed == {} and plan.warnings == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_canonical_parse_changes_only_as_intended(case, tmp_path, nix_oracle):
    """Nix's canonical parse of the output is the input's with exactly the intended replacements."""
    before = (STEPS / "pin-swap" / f"{case}.nix").read_bytes()
    _, _, after = run_case("pin-swap", case, CASES[case][0], tmp_path)
    ok_before, canonical_before = nix_oracle(before)
    ok_after, canonical_after = nix_oracle(after)
    assert ok_before and ok_after, canonical_after
    intended = canonical_before
    for old, new in CASES[case][1]:
        assert old in intended, old
        intended = intended.replace(old, new)
    assert canonical_after == intended


def test_fetchers_that_hash_something_else_are_warned_not_written(tmp_path):
    plan, _, _ = run_case("pin-swap", "hash-elsewhere", CASES["hash-elsewhere"][0], tmp_path)
    assert [str(w) for w in plan.warnings] == [
        "recipe.nix:6:14: hash must be refreshed: recipe.nix:6 (sha256 still belongs to 6a030d5; fetchurl hashes "
        "the downloaded file itself, not the unpacked archive pinshift computes: update it by hand)",
        "recipe.nix:11:12: hash must be refreshed: recipe.nix:11 (hash still belongs to 6a030d5; fetchgit hashes "
        "a git checkout, not the unpacked archive pinshift computes: update it by hand)",
        "recipe.nix:17:12: hash must be refreshed: recipe.nix:17 (hash still belongs to 6a030d5; fetchFromGitHub "
        "with postFetch hashes something else than the unpacked archive: update it by hand)",
        "recipe.nix:22:14: hash must be refreshed: recipe.nix:22 (sha256 still belongs to 6a030d5; not a plain "
        "string: update it by hand)",
    ]


def test_remove_takes_the_whole_line_in_crlf_files_too(tmp_path):
    source = (f'builtins.fetchTarball {{\r\n  url = "{URL}{OLD_REV}.tar.gz";\r\n  sha256 = "{Z32}";\r\n}}\r\n')
    (tmp_path / "a.nix").write_bytes(source.encode())
    _, changed = run_step("pin-swap", dict(SWAP, hash="remove"), tmp_path)
    assert changed == {"a.nix": f'builtins.fetchTarball {{\r\n  url = "{URL}{NEW_REV}.tar.gz";\r\n}}\r\n'.encode()}


def test_keep_warns_and_remove_does_not(tmp_path):
    shutil.copyfile(STEPS / "pin-swap" / "hash-remove.nix", tmp_path / "recipe.nix")
    kept, changed = run_step("pin-swap", SWAP, tmp_path)
    assert len(kept.warnings) == 4 and all("hash must be refreshed" in str(w) for w in kept.warnings)
    assert Z32.encode() in changed["recipe.nix"]
    removed, _ = run_step("pin-swap", dict(SWAP, hash="remove"), tmp_path)
    assert removed.warnings == []


def test_fetchers_already_at_the_new_revision_get_the_hash_filled_in(tmp_path):
    """A branch swapped earlier with hash = "keep" (or by hand): the second run with a value adds what is missing."""
    (tmp_path / "swapped.nix").write_text(f'fetchTarball {{\n  url = "{URL}{NEW_REV}.tar.gz";\n}}\n')
    (tmp_path / "stale.nix").write_text(f'fetchTarball {{\n  url = "{URL}{NEW_REV}.tar.gz";\n  sha256 = "{Z32}";\n}}\n')
    (tmp_path / "other.nix").write_text(f'fetchTarball {{\n  url = "{URL}{"1" * 40}.tar.gz";\n}}\n')
    plan, changed = run_step("pin-swap", dict(SWAP, hash=SRI), tmp_path)
    assert changed == {
        "swapped.nix": f'fetchTarball {{\n  url = "{URL}{NEW_REV}.tar.gz";\n  sha256 = "{B32}";\n}}\n'.encode(),
        "stale.nix": f'fetchTarball {{\n  url = "{URL}{NEW_REV}.tar.gz";\n  sha256 = "{B32}";\n}}\n'.encode(),
    }
    assert plan.warnings == []
    keep, changed = run_step("pin-swap", SWAP, tmp_path)  # "keep" leaves fetchers at the new revision alone
    assert changed == {} and keep.warnings == []


def test_the_edits_say_what_they_did(tmp_path):
    plan, _, _ = run_case("pin-swap", "hash-insert", CASES["hash-insert"][0], tmp_path)
    reasons = sorted({edit.reason for change in plan.changed for edit in change.edits})
    assert reasons == ["pin-swap: 6a030d5 -> 0182a36", "pin-swap: insert sha256 of nixpkgs 0182a36"]
    plan, _, _ = run_case("pin-swap", "hash-remove", CASES["hash-remove"][0], tmp_path)
    assert "pin-swap: remove sha256 (it belonged to 6a030d5)" in {e.reason for c in plan.changed for e in c.edits}
