"""Acceptance: the seed 002 migration (recipe pytorch-2.10-cuda12_9) over a tree shaped like `pytorch-2.9`.

tests/fixtures/tree-2.9 holds the 66 seed recipes plus trap files; tree-2.10 is the
golden result, written by tests/fixtures/make_trees.py independently of the steps.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from pinshift.demo.matrix import NEW_REV, OLD_REV
from pinshift.files.tree import DirectoryTree
from pinshift.recipes.recipe import find_recipe, validate_recipe
from pinshift.planning.runner import plan_recipe
from pinshift.steps.registry import available_kinds
from step_golden import canonical_changes

FIXTURES = Path(__file__).parent / "fixtures"
TREE_29, TREE_210 = FIXTURES / "tree-2.9", FIXTURES / "tree-2.10"
PKGS = ".flox/pkgs"
sys.path.insert(0, str(FIXTURES))
import make_trees  # noqa: E402

if "rename-attr" not in available_kinds():
    pytest.skip("rename-attr (issue 3 part B) is not in migrations/ yet", allow_module_level=True)


def tree_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def migrate(root: Path):
    """Plan the bundled recipe over `root` and write the final bytes back; the Plan."""
    recipe = find_recipe("pytorch-2.10-cuda12_9")
    plan = plan_recipe(DirectoryTree(root), recipe, validate_recipe(recipe, available_kinds()))
    final = {}
    for step in plan.steps:
        for change in step.changed:
            final[change.path] = change.after
    for path, data in final.items():
        (root / path).write_bytes(data)
    return plan


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    root = tmp_path_factory.mktemp("seed") / "repo"
    shutil.copytree(TREE_29, root)
    plan = migrate(root)
    return root, plan


def out(migrated, name: str) -> bytes:
    return (migrated[0] / PKGS / name).read_bytes()


def test_fixture_trees_are_what_make_trees_writes():
    before, after = make_trees.build_trees()
    assert tree_files(TREE_29) == before
    assert tree_files(TREE_210) == after


def test_migration_reproduces_the_golden_tree_byte_for_byte(migrated):
    assert tree_files(migrated[0]) == tree_files(TREE_210)


def test_one_step_per_recipe_step_and_every_seed_recipe_changed_by_each(migrated):
    plan = migrated[1]
    assert [s.kind for s in plan.steps][:3] == ["pin-swap", "rename-attr", "metadata-rev"]
    seed = {f"{PKGS}/{v.filename}" for v in make_trees.variants()}
    for step in plan.steps[:3]:
        assert seed <= {f.path for f in step.changed}, step.kind
    assert not plan.refused, plan.refused


def test_the_swapped_sha256_is_left_and_warned(migrated):
    plan = migrated[1]
    warnings = [str(w) for w in plan.steps[0].warnings]
    assert warnings == [
        f"{PKGS}/trap-fetchfromgithub-sha256.nix:7:14: hash must be refreshed: "
        f"{PKGS}/trap-fetchfromgithub-sha256.nix:7 (sha256 still belongs to 6a030d5; "
        "set hash = \"compute\" or update it by hand)"
    ]
    assert b'sha256 = "0000000000000000000000000000000000000000000000000000";' in out(migrated, "trap-fetchfromgithub-sha256.nix")


def test_a_file_without_marker_is_skipped_with_a_warning(migrated):
    warnings = [str(w) for w in migrated[1].steps[2].warnings]
    assert warnings == [f"{PKGS}/trap-flox-function-args.nix: no .metadata-rev marker: skipped"]


# --- one assertion per trap ---------------------------------------------------------------


def test_trap_comment_mentioning_old_revision_untouched(migrated):
    assert out(migrated, "trap-comments-strings.nix").startswith(
        b"# Pinned to nixpkgs 6a030d535719c5190187c4cec156f335e95e3211 (6a030d5); uses python3Packages.torch\n"
    )


def test_trap_latin1_comment_bytes_untouched(migrated):
    assert b"# Maintainer: J\xf6rg (latin-1 byte on purpose)\n" in out(migrated, "trap-comments-strings.nix")


def test_trap_string_mentioning_old_revision_and_package_set_untouched(migrated):
    assert (b'pinNote = "nixpkgs 6a030d535719c5190187c4cec156f335e95e3211 provides python3Packages.torch 2.9.1";'
            in out(migrated, "trap-comments-strings.nix"))


def test_trap_marker_in_block_comment_untouched(migrated):
    assert (b"/* block comment: echo 7 > $out/.metadata-rev and nixpkgs_pinned.python3Packages */"
            in out(migrated, "trap-comments-strings.nix"))


def test_trap_postinstall_line_after_marker_untouched(migrated):
    assert (b'echo 2 > $out/.metadata-rev\n      echo "built with python3Packages from 6a030d5" > $out/.pin-note\n'
            in out(migrated, "trap-comments-strings.nix"))


def test_trap_python3PackagesExtra_untouched(migrated):
    data = out(migrated, "trap-extra-attrs.nix")
    assert b"extras = nixpkgs_pinned.python3PackagesExtra or { };" in data
    assert b"python3PackagesExtra = extras;" in data


def test_trap_python3Packages_old_segment_untouched(migrated):
    assert b"[ my.python3Packages_old.setuptools ]" in out(migrated, "trap-extra-attrs.nix")


def test_trap_shadowing_let_keeps_its_own_references(migrated):
    data = out(migrated, "trap-shadowing-let.nix")
    assert b"  python3Packages = nixpkgs_pinned.python313Packages;\n" in data
    assert b"torchFor = python3Packages: python3Packages.torch;" in data
    assert b"[ python3Packages.numpy ]" in data


def test_trap_other_fetchfromgithub_untouched(migrated):
    data = out(migrated, "trap-fetchfromgithub-sha256.nix")
    assert b'rev = "b0ef5e1a3e1c2b4d5f6a7b8c9d0e1f2a3b4c5d6e";' in data
    assert b'hash = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";' in data
    assert f'rev = "{NEW_REV}";'.encode() in data


def test_trap_bare_url_fetchtarball_swapped(migrated):
    assert (f'import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{NEW_REV}.tar.gz")'.encode()
            in out(migrated, "trap-bare-fetchtarball.nix"))


def test_trap_flox_function_argument_recipe_untouched(migrated):
    assert out(migrated, "trap-flox-function-args.nix") == (TREE_29 / PKGS / "trap-flox-function-args.nix").read_bytes()


def test_trap_rfc166_trailing_comma_kept(migrated):
    assert out(migrated, "trap-rfc166-trailing-comma.nix").startswith(
        b"{\n  pkgs ? import <nixpkgs> { },\n  lib ? pkgs.lib,\n}:\n"
    )


def test_trap_crlf_line_endings_and_missing_final_newline_kept(migrated):
    data = out(migrated, "trap-crlf.nix")
    assert data.count(b"\r\n") == data.count(b"\n") and not data.endswith(b"\n")


def test_no_old_revision_left_in_any_fetcher(migrated):
    for path, data in tree_files(migrated[0]).items():
        assert f"archive/{OLD_REV}".encode() not in data and f'rev = "{OLD_REV}"'.encode() not in data, path


# --- idempotence ----------------------------------------------------------------------------


def test_second_run_of_pin_swap_and_rename_changes_nothing(migrated, tmp_path):
    root = tmp_path / "again"
    shutil.copytree(migrated[0], root)
    plan = migrate(root)
    assert not plan.steps[0].changed and not plan.steps[1].changed
    assert not plan.steps[0].warnings or all("hash must be refreshed" not in str(w) for w in plan.steps[0].warnings)


def test_rerunning_the_migration_from_the_base_gives_the_same_tree(migrated, tmp_path):
    root = tmp_path / "fresh"
    shutil.copytree(TREE_29, root)
    migrate(root)
    assert tree_files(root) == tree_files(migrated[0])


# --- the Nix oracle ---------------------------------------------------------------------------


def test_every_output_parses_and_differs_canonically_only_by_the_intended_tokens(migrated, nix_oracle):
    intended = {(OLD_REV, NEW_REV), ("python3Packages", "python313Packages"), ("1", "2")}
    templates = dict(make_trees.TRAPS, **{"trap-crlf.nix": make_trees._crlf_template()})
    for path, before in tree_files(TREE_29).items():
        after = (migrated[0] / path).read_bytes()
        changes = canonical_changes(nix_oracle, before, after)
        assert set(changes) <= intended, (path, changes)
        template = templates.get(path.rsplit("/", 1)[-1])
        wanted = 3 if template is None else sum(template.count(k) for k in (b"@REV@", b"@PKGSET@", b"@MR@"))
        assert len(changes) == wanted, (path, changes)
