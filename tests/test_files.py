"""Reading and writing recipe files: atomic writes keep the mode; what is not read is skipped with a reason."""

from __future__ import annotations

import os
import stat

import pytest

from conftest import git
from pinshift.files.tree import DEFAULT_MAX_BYTES, DirectoryTree, SkippedFile, check_content, write_atomic
from pinshift.git.repo import listed_files


def test_write_atomic_replaces_bytes_and_keeps_the_mode(tmp_path):
    target = tmp_path / "build.sh"
    target.write_bytes(b"old\r\n")
    target.chmod(0o754)
    inode = target.stat().st_ino
    write_atomic(target, b"new\r\nno final newline")
    assert target.read_bytes() == b"new\r\nno final newline"
    assert stat.S_IMODE(target.stat().st_mode) == 0o754
    assert target.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build.sh"]  # no temp file left behind


def test_write_atomic_scratch_mode_and_new_file(tmp_path):
    target = tmp_path / "new.nix"
    write_atomic(target, b"{ }\n", durable=False)
    assert target.read_bytes() == b"{ }\n"


def test_write_atomic_failure_leaves_no_temp_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "missing-dir" / "x.nix", b"data")
    assert list(tmp_path.iterdir()) == []


def test_write_through_a_symlink_inside_the_repo_keeps_the_link(tmp_path):
    (tmp_path / "real.nix").write_bytes(b"1\n")
    (tmp_path / "link.nix").symlink_to("real.nix")
    tree = DirectoryTree(tmp_path)
    assert tree.read("link.nix") == b"1\n"
    tree.write("link.nix", b"2\n")
    assert (tmp_path / "link.nix").is_symlink()
    assert (tmp_path / "real.nix").read_bytes() == b"2\n"


def test_symlink_out_of_the_repository_is_skipped_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.nix").write_bytes(b"{ secret = 1; }\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "escape.nix").symlink_to(outside / "secret.nix")
    (repo / "relative.nix").symlink_to("../outside/secret.nix")
    tree = DirectoryTree(repo)
    for name in ("escape.nix", "relative.nix"):
        with pytest.raises(SkippedFile, match=rf"^{name}: symlink to .*outside the repository; skipped$"):
            tree.read(name)
        with pytest.raises(SkippedFile):
            tree.write(name, b"overwritten")
    assert (outside / "secret.nix").read_bytes() == b"{ secret = 1; }\n"


def test_binary_file_is_skipped_with_a_reason(tmp_path):
    (tmp_path / "blob.nix").write_bytes(b"{ a = 1; }\0\x01\x02")
    with pytest.raises(SkippedFile, match=r"^blob.nix: binary file \(NUL byte\); skipped$"):
        DirectoryTree(tmp_path).read("blob.nix")


def test_oversized_file_is_skipped_before_reading_and_the_limit_is_configurable(tmp_path):
    (tmp_path / "big.nix").write_bytes(b"#" * 101 + b"\n")
    with pytest.raises(SkippedFile, match=r"^big.nix: larger than 100 bytes; skipped \(raise --max-bytes"):
        DirectoryTree(tmp_path, max_bytes=100).read("big.nix")
    assert DirectoryTree(tmp_path, max_bytes=102).read("big.nix").startswith(b"#")
    assert DEFAULT_MAX_BYTES == 10 * 1024 * 1024


def test_check_content_applies_the_same_rules_to_bytes_from_git():
    check_content("ok.nix", b"{ }\n")
    with pytest.raises(SkippedFile, match="binary"):
        check_content("b.nix", b"\0")
    with pytest.raises(SkippedFile, match="larger than 3 bytes"):
        check_content("l.nix", b"abcd", max_bytes=3)


def test_unreadable_file_is_skipped_with_a_reason(tmp_path):
    locked = tmp_path / "locked.nix"
    locked.write_bytes(b"{ }\n")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as root: chmod 000 does not stop reading (the directory case below covers it)")
        with pytest.raises(SkippedFile, match=r"^locked.nix: cannot read \(Permission denied\); skipped$"):
            DirectoryTree(tmp_path).read("locked.nix")
    finally:
        locked.chmod(0o644)


def test_path_that_cannot_be_read_as_a_file_is_skipped(tmp_path):
    """Root can read anything chmod forbids; a directory or a dangling link is unreadable even for root."""
    (tmp_path / "dir.nix").mkdir()
    (tmp_path / "dangling.nix").symlink_to("gone.nix")
    tree = DirectoryTree(tmp_path)
    with pytest.raises(SkippedFile, match=r"^dir.nix: a directory, not a regular file; skipped$"):
        tree.read("dir.nix")
    with pytest.raises(SkippedFile, match=r"^dangling.nix: symlink to a missing file; skipped$"):
        tree.read("dangling.nix")


def test_git_work_tree_listing_honours_gitignore(make_repo):
    repo = make_repo({".gitignore": "result/\n*.tmp.nix\n", "a.nix": "1\n", "pkgs/b.nix": "2\n"})
    (repo / "result").mkdir()
    (repo / "result" / "out.nix").write_bytes(b"3\n")
    (repo / "scratch.tmp.nix").write_bytes(b"4\n")
    (repo / "untracked.nix").write_bytes(b"5\n")
    assert DirectoryTree(repo, listing=listed_files).paths() == [".gitignore", "a.nix", "pkgs/b.nix", "untracked.nix"]
    sub = DirectoryTree(repo / "pkgs", listing=listed_files)
    assert sub.paths() == ["b.nix"]  # relative to the directory asked for, inside a larger work tree


def test_plain_directory_is_walked_without_git(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.nix").write_bytes(b"1\n")
    (tmp_path / "b.nix").write_bytes(b"2\n")
    assert DirectoryTree(tmp_path, listing=listed_files).paths() == ["b.nix", "x/a.nix"]


def test_deleted_tracked_file_is_not_listed(make_repo):
    repo = make_repo({"a.nix": "1\n", "b.nix": "2\n"})
    (repo / "b.nix").unlink()
    assert DirectoryTree(repo, listing=listed_files).paths() == ["a.nix"]
    assert "D b.nix" in git(repo, "status", "--short")  # git still tracks it; the tree lists what exists
