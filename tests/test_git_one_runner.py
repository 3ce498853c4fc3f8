"""One way to call git (issue 43): every git process starts in pinshift.git.run, no command imports GitPython,
and opening a repository through git (`locate`) keeps what GitPython's opening did: the path as the user
reached it, a clone's top (not a folder inside it) for `--nixpkgs`, one line for each state refused."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from pinshift.errors import GitError, UsageError
from pinshift.git.repo import Repository, listed_files, locate

SRC = Path(__file__).resolve().parent.parent / "src" / "pinshift"
RUNNER = SRC / "git" / "run.py"


def test_every_git_process_starts_in_git_run():
    """Outside pinshift.git.run no module spells a command line that starts with git (`["git", ...]`, in any
    call or variable), nor imports GitPython; the runner itself starts git both ways it can."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n == "git" or n.startswith("git.") for n in names):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: imports GitPython")
            elif (isinstance(node, (ast.List, ast.Tuple)) and node.elts and isinstance(node.elts[0], ast.Constant)
                  and node.elts[0].value == "git" and path != RUNNER):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)[:60]}")
    assert found == []
    text = RUNNER.read_text()
    assert 'subprocess.run(["git", *args]' in text and 'subprocess.Popen(["git", *args]' in text


def test_status_and_migrate_never_import_gitpython(make_repo, tmp_path):
    root = make_repo({"a.nix": "{ }\n"})
    script = ("import sys, json\nfrom pinshift.cli import main\n"
              "for args in (['status'], ['migrate', 'flox-args-to-pinned', '--dry-run']):\n"
              "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
              "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300)
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "pinshift.git.repo" in loaded
    assert not [m for m in loaded if m == "git" or m.startswith("git.")]


def test_a_repository_reached_through_a_link_keeps_the_path_as_given(make_repo, tmp_path):
    root = make_repo({"pkgs/a.nix": "{ }\n"})
    link = tmp_path / "link"
    link.symlink_to(root)
    repository = Repository.open(link / "pkgs")
    assert repository.root == link and repository.git_dir == str(link / ".git")
    with pytest.raises(GitError) as raised:
        repository.resolve_base("no-such-branch")
    assert f"of {link};" in str(raised.value)
    assert listed_files(link / "pkgs") == ["a.nix"]


def test_where_git_finds_each_kind_of_repository(make_repo, tmp_path):
    root = make_repo({"a.nix": "{ }\n"})
    inside = locate(root / ".git" / "refs")
    assert (inside.work_tree, inside.git_dir) == (str(root), str(root / ".git"))  # as GitPython found it
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "bare.git"))
    bare = locate(tmp_path / "bare.git" / "refs")
    assert (bare.work_tree, bare.git_dir) == (None, str(tmp_path / "bare.git"))
    git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "linked"))
    linked = locate(tmp_path / "linked")
    assert linked.work_tree == str(tmp_path / "linked") and linked.common_dir == str(root / ".git")
    (tmp_path / "plain").mkdir()
    assert locate(tmp_path / "plain") is None and locate(tmp_path / "missing") is None
    with pytest.raises(GitError, match="is a bare repository"):
        Repository.open(tmp_path / "bare.git")
    assert Repository.open_to_read(tmp_path / "linked", "--repo x").current_branch() is None


def test_a_nixpkgs_clone_is_given_by_its_top_not_a_folder_inside(make_repo):
    from pinshift.nixpkgs.checkout import NixpkgsCheckout

    root = make_repo({"pkgs/top-level/all-packages.nix": "{ }\n"})
    head = git(root, "rev-parse", "HEAD").strip()
    for where in (root, root / ".git"):
        assert NixpkgsCheckout(where).resolve("main") == head
    with pytest.raises(UsageError, match=r"--nixpkgs .*/pkgs: not a git repository; "):
        NixpkgsCheckout(root / "pkgs")


def test_an_archive_git_cannot_write_is_an_error_and_the_tree_comes_out_whole(make_repo, tmp_path):
    import tarfile

    from pinshift.git.objects import write_archive
    from pinshift.git.run import GitFailed

    root = make_repo({"a.nix": "{ }\n", "d/b.nix": "{ b = 1; }\n"})
    repository = Repository.open(root)
    with open(tmp_path / "out.tar", "wb") as output:
        write_archive(repository, "HEAD", output)
    with tarfile.open(tmp_path / "out.tar") as archive:
        assert sorted(m.name for m in archive if m.isfile()) == ["a.nix", "d/b.nix"]
    with pytest.raises(GitFailed) as raised, open(tmp_path / "bad.tar", "wb") as output:
        write_archive(repository, "0" * 40, output)
    assert raised.value.status != 0 and raised.value.stderr.strip()
