"""The git layer on real repositories: opening (and refusing) states, names, commit trees, trailers."""

from __future__ import annotations

import os

import pytest
from conftest import git

from pinshift.errors import GitError
from pinshift.files.tree import SkippedFile
from pinshift.git.commit import add_worktree
from pinshift.git.repo import Repository, listed_files


def test_listed_files_is_kept(make_repo):
    root = make_repo({"a.nix": "{ }\n", ".gitignore": "ignored.nix\n"})
    (root / "ignored.nix").write_text("{ }\n")
    (root / "new.nix").write_text("{ }\n")
    assert listed_files(root) == [".gitignore", "a.nix", "new.nix"]


def test_commit_tree_reads_the_commit_not_the_work_tree(make_repo):
    data = b"{\r\n  x = 1;\r\n}"  # CRLF, no final newline: bytes exactly as committed
    root = make_repo({"pkgs/a.nix": data, "README.md": "hi\n"})
    commit = git(root, "rev-parse", "HEAD").strip()
    (root / "pkgs/a.nix").write_text("{ changed = true; }\n")
    (root / "pkgs/untracked.nix").write_text("{ }\n")
    tree = Repository.open(root).tree(commit)
    assert tree.paths() == ["README.md", "pkgs/a.nix"]
    assert tree.read("pkgs/a.nix") == data


def test_commit_tree_skips_symlinks_binaries_and_large_files(make_repo):
    root = make_repo({"a.nix": "{ }\n", "bin.nix": b"\0\1\2", "big.nix": "x" * 100})
    os.symlink("a.nix", root / "link.nix")
    git(root, "add", "link.nix")
    git(root, "commit", "-q", "-m", "link")
    repository = Repository.open(root)
    tree = repository.tree("HEAD")
    with pytest.raises(SkippedFile, match="link.nix: symlink"):
        tree.read("link.nix")
    with pytest.raises(SkippedFile, match="binary"):
        tree.read("bin.nix")
    tree.max_bytes = 50
    with pytest.raises(SkippedFile, match="larger than 50 bytes"):
        tree.read("big.nix")


@pytest.mark.parametrize("state, message", [
    ("plain", "not a git repository"),
    ("bare", "is a bare repository"),
    ("empty", "has no commits yet"),
    ("shallow", "is a shallow clone"),
])
def test_open_refuses_states_it_cannot_work_from(tmp_path, make_repo, state, message):
    target = tmp_path / "target"
    if state == "plain":
        target.mkdir()
    elif state == "bare":
        git(tmp_path, "init", "-q", "--bare", str(target))
    elif state == "empty":
        git(tmp_path, "init", "-q", str(target))
    else:
        source = make_repo({"a.nix": "{ }\n"})
        (source / "b.nix").write_text("{ }\n")
        git(source, "add", "b.nix")
        git(source, "commit", "-q", "-m", "second")
        git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(target))
    with pytest.raises(GitError, match=message):
        Repository.open(target)


def test_resolve_base_accepts_branches_remote_branches_and_commits(make_repo, tmp_path):
    root = make_repo({"a.nix": "{ }\n"}, branch="pytorch-2.9-python313")
    head = git(root, "rev-parse", "HEAD").strip()
    git(root, "update-ref", "refs/remotes/origin/pytorch-2.9-legacy", head)
    repository = Repository.open(root)
    assert repository.resolve_base("pytorch-2.9-python313") == head
    assert repository.resolve_base("origin/pytorch-2.9-legacy") == head
    assert repository.resolve_base(head[:7]) == head
    assert repository.resolve_base("HEAD~0") == head


def test_missing_base_lists_the_closest_branches(make_repo):
    root = make_repo({"a.nix": "{ }\n"}, branch="pytorch-2.9-python313")
    git(root, "branch", "main")
    git(root, "branch", "unrelated-topic")
    with pytest.raises(GitError) as raised:
        Repository.open(root).resolve_base("pytorch-2.9")
    assert "closest branches: pytorch-2.9-python313" in str(raised.value)
    assert "unrelated-topic" not in str(raised.value)


def test_step_records_read_pinshift_trailers(make_repo):
    root = make_repo({"a.nix": "{ }\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    git(root, "commit", "-q", "--allow-empty", "-m", "step one\n\nbody\n\nPinshift-Recipe: r\nPinshift-Step: 1/3 kind-a")
    git(root, "commit", "-q", "--allow-empty", "-m", "by hand")
    records = Repository.open(root).step_records(base, "HEAD")
    assert [(r.subject, r.recipes, r.steps, r.has_trailers) for r in records] == \
        [("by hand", (), (), False), ("step one", ("r",), ("1/3 kind-a",), True)]
    assert records[1].parents == (base,) and records[0].parents == (records[1].commit,)


def test_checked_out_at_names_the_worktree_holding_a_branch(make_repo):
    root = make_repo({"a.nix": "{ }\n"})
    git(root, "branch", "other")
    repository = Repository.open(root)
    assert repository.checked_out_at("main") == str(root)
    assert repository.checked_out_at("other") is None


def test_worktree_remove_leaves_nothing_for_prune(make_repo):
    root = make_repo({"a.nix": "{ }\n"})
    repository = Repository.open(root)
    worktree = add_worktree(repository, "HEAD")
    assert worktree.path.is_dir() and not worktree.path.is_relative_to(root)
    worktree.write("a.nix", b"{ x = 1; }\n")
    commit = worktree.commit(["a.nix"], "change\n")
    worktree.remove()
    assert not worktree.parent.exists()
    assert git(root, "worktree", "prune", "--dry-run", "-v") == ""
    assert len(git(root, "worktree", "list").splitlines()) == 1
    assert git(root, "cat-file", "-t", commit).strip() == "commit"  # objects remain; refs decide


def test_a_stop_while_a_worktree_is_removed_waits_until_it_is_gone(make_repo, monkeypatch):
    """A fan-out worker gets SIGTERM from its parent while it removes its scratch worktree after a Ctrl-C made
    its commit fail: the signal arriving between the directory and `.git/worktrees/<id>` left the latter (the
    suite's fan-out Ctrl-C test failed so, once, under load). The real signal is sent right after the directory
    is gone; the removal finishes, then the stop is raised."""
    import shutil
    import signal

    from pinshift.git import commit as commit_module
    from pinshift.interrupts import Interrupted, handling_signals

    repo = make_repo({"a.nix": "1\n"})
    repository = Repository.open(repo)
    worktree = add_worktree(repository, "HEAD")
    admin = commit_module.admin_dir(repository, worktree.path)
    assert admin is not None and admin.is_dir()
    real = shutil.rmtree
    calls = []

    def rmtree_then_stop(path, *args, **kwargs):
        real(path, *args, **kwargs)
        calls.append(path)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(commit_module.shutil, "rmtree", rmtree_then_stop)
    with pytest.raises(Interrupted):
        with handling_signals():
            worktree.remove()
    assert len(calls) == 2 and not admin.exists() and not worktree.parent.exists()
    assert git(repo, "worktree", "prune", "--dry-run", "-v") == ""
