"""`pinshift verify --nixpkgs DIR` checks each pin's sha256 against the archive hash computed from the clone (V106)."""

from __future__ import annotations

import json

from pinshift.demo.matrix import Variant, render_recipe
from pinshift.nixpkgs.nar import parse_sha256, render_sha256
from test_archive_hash import oracle
from test_verify import nixpkgs  # noqa: F401  (the stub nixpkgs clone fixture)

URL = "https://github.com/NixOS/nixpkgs/archive/"


def with_hash(rev: str, binding: str, variant=Variant("cpu", "avx2")) -> str:
    """A demo recipe pinned to `rev` whose fetchTarball carries `binding` (`sha256 = "...";`)."""
    text = render_recipe(variant, rev, "python313Packages")
    anchor = f'    url = "{URL}{rev}.tar.gz";\n'
    assert anchor in text
    return text.replace(anchor, anchor + f"    {binding}\n")


def verify_json(run_cli, *args):
    result = run_cli("verify", "--format", "json", *args)
    return result, json.loads(result.stdout)


def test_right_hashes_in_any_notation_pass(run_cli, nixpkgs, tmp_path):
    clone, first, _ = nixpkgs
    digest = parse_sha256(oracle(clone, first, tmp_path))
    (tmp_path / "pkgs").mkdir()
    (tmp_path / "pkgs" / "a.nix").write_text(with_hash(first, f'sha256 = "{render_sha256(digest)}";'))
    (tmp_path / "pkgs" / "b.nix").write_text(with_hash(first, f'sha256 = "{render_sha256(digest, "sri")}";'))
    result = run_cli("verify", str(tmp_path / "pkgs"), "--nixpkgs", str(clone))
    assert (result.exit_code, result.stdout) == (0, ""), result


def test_a_wrong_hash_is_one_error_naming_every_recipe_that_has_it(run_cli, nixpkgs, tmp_path):
    clone, first, _ = nixpkgs
    right = oracle(clone, first, tmp_path)
    (tmp_path / "pkgs").mkdir()
    for variant in (Variant("cpu", "avx2"), Variant("90", "avx512")):
        (tmp_path / "pkgs" / variant.filename).write_text(with_hash(first, f'sha256 = "{"0" * 52}";', variant))
    (tmp_path / "pkgs" / "empty.nix").write_text(with_hash(first, 'sha256 = "";'))  # a placeholder: not checked
    result, report = verify_json(run_cli, str(tmp_path / "pkgs"), "--nixpkgs", str(clone))
    assert result.exit_code == 1
    [finding] = report["findings"]
    assert finding["code"] == "V106" and finding["severity"] == "error"
    assert finding["message"] == (
        f"sha256 of nixpkgs {first[:7]}'s archive is {right}, not {'0' * 52}: Nix refuses the download "
        f"(fix with pin-swap hash = \"compute\", or `pinshift hash {first[:12]}`)")
    assert len(finding["files"]) == 2
    line = (tmp_path / "pkgs" / finding["path"].rsplit("/", 1)[1]).read_text().splitlines()[finding["line"] - 1]
    assert line[finding["column"] - 1:].startswith('"0000')


def test_fetchers_whose_hash_is_something_else_are_not_checked(run_cli, nixpkgs, tmp_path):
    clone, first, _ = nixpkgs
    text = with_hash(first, f'sha256 = "{"0" * 52}";').replace("builtins.fetchTarball {", "builtins.fetchurl {")
    (tmp_path / "fetchurl.nix").write_text(text)
    result, report = verify_json(run_cli, str(tmp_path / "fetchurl.nix"), "--nixpkgs", str(clone))
    assert [f["code"] for f in report["findings"]] == []


def test_rev_may_be_a_branch_only_a_remote_has(run_cli, nixpkgs, tmp_path):
    """`--rev nixos-unstable` in a fresh clone, where it is origin/nixos-unstable, as `pinshift hash` resolves it."""
    import subprocess

    from conftest import git

    clone, first, _ = nixpkgs
    git(clone, "branch", "nixos-unstable", first)
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", f"file://{clone}", str(fresh)], check=True)
    (tmp_path / "a.nix").write_text(with_hash(first, f'sha256 = "{oracle(clone, first, tmp_path)}";'))
    result = run_cli("verify", str(tmp_path / "a.nix"), "--nixpkgs", str(fresh), "--rev", "nixos-unstable")
    assert (result.exit_code, result.stdout) == (0, ""), result
