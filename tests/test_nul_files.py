"""A Nix file holding a NUL byte (issue 36): Nix reads a NUL between tokens as the end of the file.

`pinshift parse` reads such a file as Nix does (its verdict is Nix's, tests/test_cli_parse.py); every command
that edits files skips it with the reason, wherever the NUL is (it was edited when the NUL came after the
first 8 KiB, the bytes past it written back unseen), and says so in its summary.
"""

from __future__ import annotations

import pytest
from conftest import git
from migrate_repo import FILES, MIGRATIONS, SWAPS, scratch  # noqa: F401  (scratch: an autouse fixture)

from pinshift.files.tree import DirectoryTree, NulFile

# `alpha` before the NUL (a word the swap steps replace), after 8 KiB of comment
LATE = b'{ x = "alpha"; }\n' + b"#" * 9000 + b'\n\0{ x = "alpha"; }\n'
REASON = "pkgs/late.nix: NUL byte on line 3, where Nix may stop reading; skipped"


def test_a_nix_file_with_a_nul_byte_anywhere_is_skipped_and_carries_its_bytes(tmp_path):
    (tmp_path / "late.nix").write_bytes(LATE)
    (tmp_path / "late.txt").write_bytes(LATE)
    tree = DirectoryTree(tmp_path)
    with pytest.raises(NulFile, match=r"^late.nix: NUL byte on line 3, where Nix may stop reading; skipped") as held:
        tree.read("late.nix")
    assert held.value.data == LATE
    assert tree.read("late.txt") == LATE  # not a Nix file: a NUL after the first 8 KiB is text, as before


@pytest.mark.parametrize("dry_run", [True, False])
def test_apply_skips_a_nix_file_with_a_nul_byte_and_says_so(make_repo, run_cli, dry_run):
    root = make_repo({"pkgs/late.nix": LATE, "pkgs/a.nix": '{ x = "alpha"; }\n'})
    args = ("apply", "word-swap", "--migrations", str(MIGRATIONS), "--set", "old=alpha", "--set", "new=gamma",
            *(("--dry-run",) if dry_run else ()))
    result = run_cli(*args, cwd=root)
    assert result.exit_code == 0, result
    assert REASON in result.output
    assert "1 file changed, 1 edit, 0 warnings, 1 skipped, 0 refused" in result.output
    assert (root / "pkgs" / "late.nix").read_bytes() == LATE
    assert (root / "pkgs" / "a.nix").read_bytes() == (b'{ x = "alpha"; }\n' if dry_run else b'{ x = "gamma"; }\n')


def test_migrate_commits_nothing_to_a_nix_file_with_a_nul_byte(make_repo, run_cli):
    root = make_repo({**FILES, "pkgs/late.nix": LATE}, branch="base")
    result = run_cli("migrate", str(SWAPS), "--repo", str(root), "--migrations", str(MIGRATIONS), "--verbose")
    assert result.exit_code == 0, result
    assert REASON in result.output
    assert git(root, "show", "swapped:pkgs/late.nix") == LATE.decode()  # its `alpha` before the NUL is left as it was
    assert git(root, "show", "swapped:pkgs/a.nix") == '{ x = "gamma"; y = "beta"; }\n'
