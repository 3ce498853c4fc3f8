"""`pinshift hash` against Nix on real git repositories: what `nix-prefetch-url --unpack` and `nix-hash` say of
the tarball `git archive --prefix=name/` makes (GitHub's archive), for every kind of tree entry and attribute.

Each case builds a repository, archives a commit the way GitHub does, asks Nix for the hash of the
tarball (nix-prefetch-url --unpack file://...) and of the unpacked directory (tar -x, nix-hash), and
checks that pinshift, reading only the clone's objects, prints the same.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import git, require_nix_tool


def oracle(repo: Path, rev: str, tmp_path: Path, name: str = "nixpkgs") -> str:
    """Nix's base32 sha256 of GitHub's archive of `rev`, two ways; they must agree."""
    tarball = tmp_path / f"{name}-{rev[:12]}.tar.gz"
    git(repo, "archive", f"--prefix={name}/", "-o", str(tarball), rev)
    prefetched = subprocess.run([require_nix_tool("nix-prefetch-url"), "--unpack", f"file://{tarball}"],
                                capture_output=True, text=True, check=True).stdout.strip()
    unpacked = tmp_path / f"unpacked-{rev[:12]}"
    unpacked.mkdir()
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(unpacked)], check=True)
    hashed = subprocess.run([require_nix_tool("nix-hash"), "--type", "sha256", "--base32", str(unpacked / name)],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert prefetched == hashed
    return prefetched


def build(root: Path, files: dict, symlinks: dict | None = None, executable=(), gitlinks=()) -> str:
    """A repository at `root` with one commit holding `files` (path -> bytes/str), `symlinks` (path -> target),
    `executable` paths (mode 100755) and `gitlinks` (submodule entries); its commit id."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "master")
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data.encode() if isinstance(data, str) else data)
    for path in executable:
        (root / path).chmod(0o755)
    for path, target in (symlinks or {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / path)
    git(root, "add", "-A")
    for path in gitlinks:
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{'12' * 20},{path}")
    git(root, "commit", "-q", "-m", "tree: $ and % in the subject")
    return git(root, "rev-parse", "HEAD").strip()


def pinshift_hash(run_cli, repo: Path, rev: str, *extra: str) -> str:
    result = run_cli("hash", rev, "--nixpkgs", str(repo), *extra)
    assert result.exit_code == 0, result
    return result.stdout.strip()


PLAIN = {
    "README.md": "# tree\n",
    "lib/default.nix": "{ }\n",
    "lib/deep/er/still.nix": "{ a = 1; }\n",
    "a-b": "sorts after the directory a bytewise",
    "a/inner": "x",
    "a.b/file": "y",
    "empty": "",
    "eight___": "12345678",
    "keep/.gitkeep": "",  # a directory that only holds a placeholder
    "spaced name/ünïcode.txt": "ü\n",
    "bin/tool": "#!/bin/sh\necho tool\n",
    "bin/data": "not executable\n",
}


def test_regular_executable_symlinks_nested_and_placeholder(run_cli, tmp_path):
    repo = tmp_path / "repo"
    rev = build(repo, PLAIN, symlinks={"link": "lib/default.nix", "bin/dir-link": "../lib", "dangling": "no/where"},
                executable=["bin/tool"])
    assert pinshift_hash(run_cli, repo, rev) == oracle(repo, rev, tmp_path)


def test_export_ignore_files_directories_and_a_directory_it_empties(run_cli, tmp_path):
    """`docs/` and `tests` go entirely; `emptied/` loses its only file but stays, as an empty directory, because
    git archive writes a directory as soon as it meets a file in it; `gone/` holds only an ignored directory and
    is not in the archive at all."""
    repo = tmp_path / "repo"
    files = dict(PLAIN, **{
        ".gitattributes": "docs/ export-ignore\ntests export-ignore\n*.log export-ignore\n"
                          "emptied/* export-ignore\ngone/inner/ export-ignore\n",
        "docs/manual.md": "m", "tests/t.nix": "t", "build.log": "l", "lib/sub/x.log": "l",
        "emptied/only": "o", "gone/inner/x": "x",
        "sub/.gitattributes": "local.txt export-ignore\n", "sub/local.txt": "ignored by a nested file",
        "sub/kept.txt": "kept",
    })
    rev = build(repo, files, symlinks={"ignored-link.log": "README.md"})
    expected = oracle(repo, rev, tmp_path)
    assert pinshift_hash(run_cli, repo, rev) == expected
    listing = subprocess.run(["tar", "-tzf", str(tmp_path / f"nixpkgs-{rev[:12]}.tar.gz")],
                             capture_output=True, text=True, check=True).stdout.split()
    assert "nixpkgs/emptied/" in listing and not any(p.startswith("nixpkgs/gone") for p in listing)


def test_export_subst_and_checkout_conversions_are_what_git_archive_writes(run_cli, tmp_path):
    repo = tmp_path / "repo"
    files = dict(PLAIN, **{
        ".gitattributes": "version.txt export-subst\nwindows.bat eol=crlf\nid.c ident\n",
        "version.txt": "commit $Format:%H$ short $Format:%h$ subject $Format:%s$ date $Format:%ad$\n",
        "windows.bat": "line one\nline two\n",
        "id.c": "/* $Id$ */\n",
        "untouched.txt": "$Format:%H$ stays without the attribute\n",
    })
    rev = build(repo, files)
    result = run_cli("hash", rev, "--nixpkgs", str(repo))
    assert result.stdout.strip() == oracle(repo, rev, tmp_path)
    assert "note: 1 export-subst file expanded as this clone's git does" in result.stderr


def test_submodule_is_an_empty_directory(run_cli, tmp_path):
    repo = tmp_path / "repo"
    rev = build(repo, PLAIN, gitlinks=["vendor/lib"])
    assert pinshift_hash(run_cli, repo, rev) == oracle(repo, rev, tmp_path)


def test_a_tree_whose_every_entry_is_ignored_is_an_empty_directory(run_cli, tmp_path):
    repo = tmp_path / "repo"
    rev = build(repo, {".gitattributes": "* export-ignore\n", "a/b": "b", "c": "c"})
    assert pinshift_hash(run_cli, repo, rev) == oracle(repo, rev, tmp_path)


def test_the_clones_own_settings_do_not_change_the_archive(run_cli, tmp_path):
    """GitHub's server has none of the clone's configuration: core.autocrlf, info/attributes, replace refs."""
    repo = tmp_path / "repo"
    rev = build(repo, dict(PLAIN, **{".gitattributes": "*.txt text\n", "notes.txt": "lf only\n"}))
    expected = oracle(repo, rev, tmp_path)
    git(repo, "config", "core.autocrlf", "true")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* export-ignore\n")
    blob = git(repo, "hash-object", "-w", "--stdin", "--path", "README.md").strip()  # a replace ref for a blob
    other = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=b"replaced\n",
                           capture_output=True, check=True).stdout.decode().strip()
    git(repo, "replace", blob, other)
    assert pinshift_hash(run_cli, repo, rev) == expected


def test_sri_format_and_every_way_to_name_the_revision(run_cli, tmp_path):
    repo = tmp_path / "repo"
    rev = build(repo, PLAIN)
    git(repo, "tag", "-a", "-m", "annotated", "25.05")
    git(repo, "branch", "nixos-unstable")
    base32 = oracle(repo, rev, tmp_path)
    for name in (rev, rev[:9], "master", "nixos-unstable", "25.05", "HEAD"):
        assert pinshift_hash(run_cli, repo, name) == base32
    sri = pinshift_hash(run_cli, repo, "master", "--format", "sri")
    from pinshift.nixpkgs.nar import parse_sha256

    assert sri.startswith("sha256-") and parse_sha256(sri) == parse_sha256(base32)


def test_work_tree_index_and_refs_of_the_clone_are_untouched(run_cli, tmp_path):
    repo = tmp_path / "repo"
    rev = build(repo, PLAIN)
    (repo / "README.md").write_text("edited, not committed\n")
    (repo / "untracked").write_text("u\n")
    git(repo, "add", "untracked")
    before = [git(repo, *args) for args in (["status", "--porcelain"], ["for-each-ref"], ["ls-files", "-s"])]
    index = (repo / ".git" / "index").read_bytes()
    pinshift_hash(run_cli, repo, rev)
    assert [git(repo, *args) for args in (["status", "--porcelain"], ["for-each-ref"], ["ls-files", "-s"])] == before
    assert (repo / ".git" / "index").read_bytes() == index


@pytest.mark.parametrize("layout", ["bare", "linked-worktree", "subdirectory"])
def test_bare_clones_worktrees_and_subdirectories_work(run_cli, tmp_path, layout):
    repo = tmp_path / "repo"
    rev = build(repo, PLAIN)
    expected = oracle(repo, rev, tmp_path)
    if layout == "bare":
        subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(tmp_path / "bare.git")], check=True)
        where = tmp_path / "bare.git"
    elif layout == "linked-worktree":
        git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
        where = tmp_path / "wt"
    else:
        where = repo / "lib"
    assert pinshift_hash(run_cli, where, rev) == expected
