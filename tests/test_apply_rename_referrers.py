"""`pinshift apply rename-files … PATH` follows every referrer in the repository, whatever PATH limits the
renamed files to (issue 46: `modules/lib` left the imports of `modules/other.nix` dangling, exit 0)."""

from __future__ import annotations

FILES = {
    "modules/lib/file-type.nix": "{ lib }: { t = 1; }\n",
    "modules/lib/default.nix": "{ lib }: import ./file-type.nix { inherit lib; }\n",
    "modules/other.nix": "{ lib }: { x = import ./lib/file-type.nix { inherit lib; }; }\n",
    "default.nix": "{ lib }: [ (import ./modules/lib/file-type.nix { inherit lib; }) ]\n",
    "skipped/far.nix": "{ lib }: import ../modules/lib/file-type.nix { inherit lib; }\n",
}
RENAME = ("apply", "rename-files", "--set", "from=file-type", "--set", "to=file-kind")


def test_referrers_outside_path_follow_the_rename(run_cli, make_repo, nix_oracle):
    root = make_repo(FILES)
    result = run_cli(*RENAME, "modules/lib", cwd=root)
    assert result.exit_code == 0, result
    assert not (root / "modules/lib/file-type.nix").exists() and (root / "modules/lib/file-kind.nix").exists()
    for path in ("modules/lib/default.nix", "modules/other.nix", "default.nix", "skipped/far.nix"):
        text = (root / path).read_text()
        assert text == FILES[path].replace("file-type", "file-kind"), path
        assert nix_oracle(text.encode())[0]


def test_from_a_subfolder_the_referrers_below_it_follow_and_the_rest_is_said(run_cli, make_repo):
    root = make_repo(FILES)
    result = run_cli(*RENAME, "lib", cwd=root / "modules")
    assert result.exit_code == 0, result
    assert "file-kind" in (root / "modules/other.nix").read_text()
    assert f"references from files outside {root / 'modules'} are not followed: run from the repository root" \
        in result.output


def test_an_excluded_referrer_is_refused_not_left_dangling(run_cli, make_repo):
    root = make_repo(FILES)
    result = run_cli(*RENAME, "--exclude", "skipped/**", "modules/lib", cwd=root)
    assert result.exit_code == 1, result
    assert "skipped/far.nix names modules/lib/file-type.nix, which this step takes away, but --exclude leaves it " \
           "out" in result.output
    assert (root / "modules/lib/file-type.nix").exists()  # nothing written
    assert (root / "modules/other.nix").read_text() == FILES["modules/other.nix"]
