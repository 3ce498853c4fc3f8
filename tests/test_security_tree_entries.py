"""Paths from git are checked before they touch the disk (issue 39 item 1, issue 45 item 9).

A commit's tree may name an entry `..`, `.git` in any spelling a file system reads as `.git`, a name holding
`/` or a NUL, with a newline or an escape in the name shown (tests/hostile_trees.py writes such trees object by object, as
`git mktree` or a pull request's fetch would bring them). Every command that reads a commit is run on each,
through the real CLI on real repositories: exit 2 with one line naming the entry (escaped: no raw control
character reaches the terminal), no traceback, the victim file outside the repository unchanged, nothing
created outside the test's folders, the repository's refs, HEAD, index, work tree and worktrees as they were.
`status`, which reads every branch, shows such a branch as unreadable with the same line. The snapshot writer
itself never follows a link, at any level, even when the checks before it are bypassed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest

from conftest import git, require_nix
from hostile_trees import HOSTILE, hostile_commit, shown_name
from pinshift.evaluation.snapshots import Scratch
from pinshift.sandbox.tree_writer import SnapshotWriter
from pinshift.demo.build import demo_files
from pinshift.errors import PinshiftError
from pinshift.git import entry_names

RECIPE = '''name = "check"
description = "a test recipe"
files = [".flox/pkgs/**/*.nix"]

[[steps]]
kind = "rename-attr"
title = "Use python313Packages"
[steps.params]
from = "python3Packages"
to = "python313Packages"
'''
VERIFIED = ".flox/pkgs/pytorch-python313-cuda12_9-sm61-avx.nix"  # a recipe with a pin and a package set


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One repository whose branch `evil-<case>` holds each hostile case, a victim file outside it, a recipe
    and a .nix file outside it too."""
    require_nix()
    base = tmp_path_factory.mktemp("hostile")
    victim = base / "victim" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("untouched\n")
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    files = demo_files()
    for path in (VERIFIED, ".flox/pkgs/pytorch-python313-cuda12_9-sm75-avx.nix"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(files[path].encode() if isinstance(files[path], str) else files[path])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    env = dict(GIT_AUTHOR_NAME="Test", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="Test",
               GIT_COMMITTER_EMAIL="t@example.com")
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        commits = {case: hostile_commit(repo, "main", case, victim) for case in HOSTILE}
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key)
            else:
                os.environ[key] = value
    for case, commit in commits.items():
        git(repo, "branch", f"evil-{case}", commit)
    recipe = base / "recipe.toml"
    recipe.write_text(RECIPE)
    (base / "recipe.nix").write_bytes((repo / VERIFIED).read_bytes())
    return {"base": base, "repo": repo, "victim": victim, "commits": commits, "recipe": recipe}


def _state(repo: Path) -> tuple:
    """Everything of the repository a command must leave as it was."""
    index = (repo / ".git" / "index").read_bytes()
    return (git(repo, "for-each-ref", "--format=%(refname) %(objectname)"), git(repo, "symbolic-ref", "HEAD"),
            hashlib.sha256(index).hexdigest(), git(repo, "status", "--porcelain", "--ignored"),
            git(repo, "worktree", "list", "--porcelain"), git(repo, "stash", "list"))


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A temporary folder of this test's own for every scratch folder pinshift makes (checked empty after)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PINSHIFT_NIXPKGS", raising=False)
    return folder


COMMANDS = {
    "diff": lambda w, b: ("diff", "main", b, "--repo", str(w["repo"])),
    "diff-reversed": lambda w, b: ("diff", b, "main", "--repo", str(w["repo"]), "--format", "json"),
    "migrate-dry-run": lambda w, b: ("migrate", str(w["recipe"]), "--repo", str(w["repo"]), "--from", b,
                                     "--branch", "out", "--dry-run", "--format", "markdown"),
    "migrate": lambda w, b: ("migrate", str(w["recipe"]), "--repo", str(w["repo"]), "--from", b, "--branch", "out"),
    "infer": lambda w, b: ("infer", "main", b, "--repo", str(w["repo"])),
    "verify": lambda w, b: ("verify", str(w["base"] / "recipe.nix"), "--nixpkgs", str(w["repo"]), "--rev", b,
                            "--eval"),
    "hash": lambda w, b: ("hash", b, "--nixpkgs", str(w["repo"])),
}


def _untouched(world, before, scratch: Path, cwd: Path) -> None:
    assert world["victim"].read_text() == "untouched\n"
    assert os.listdir(world["victim"].parent) == ["victim.txt"]
    assert _state(world["repo"]) == before
    assert os.listdir(scratch) == []  # nothing made, or all of it removed
    assert os.listdir(cwd) == []
    assert not list(world["base"].rglob("pwned"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_that_reads_a_commit_refuses_every_hostile_entry(world, run_cli, scratch, tmp_path, command):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    before = _state(world["repo"])
    for case, commit in world["commits"].items():
        result = run_cli(*COMMANDS[command](world, f"evil-{case}"), cwd=cwd)
        assert result.exit_code == 2, (case, result)
        assert result.stdout == "", (case, result)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, (case, result)
        line = lines[0]
        assert line.isprintable(), (case, line)  # no raw control character from the entry's name
        assert commit[:12] in line, (case, line)
        if case == "nul":  # git itself cannot read the tree: its own words, one line
            assert "too-short tree object" in line, line
        else:
            assert f"commit {commit[:12]} holds an unsafe tree entry: " in line, (case, line)
            assert shown_name(case) in line, (case, line)
        _untouched(world, before, scratch, cwd)


def test_status_shows_a_hostile_branch_as_unreadable_naming_the_entry(world, run_cli, scratch, tmp_path):
    """`status` reads every branch and writes nothing: a hostile branch is a row marked unreadable, and its note is
    the same line the other commands refuse with."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    before = _state(world["repo"])
    result = run_cli("status", "--repo", str(world["repo"]), "--wide", cwd=cwd)
    assert result.exit_code == 0, result
    assert "Traceback" not in result.output
    assert all(line.isprintable() for line in result.output.splitlines()), result.output
    text = " ".join(result.output.split())  # the notes are wrapped to the width
    for case, commit in world["commits"].items():
        row = next(line for line in result.stdout.splitlines() if line.split()[:1] == [f"evil-{case}"])
        assert row.split()[-1] == "unreadable", (case, row)
        if case != "nul":
            assert f"commit {commit[:12]} holds an unsafe tree entry: " in text, case
            assert " ".join(shown_name(case).split()) in text, case
    _untouched(world, before, scratch, cwd)


def test_a_normal_commit_of_the_same_repository_still_works(world, run_cli, scratch, tmp_path):
    """The checks refuse the hostile entries, not the repository: main itself diffs and hashes."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = run_cli("diff", "main", "main", "--repo", str(world["repo"]), cwd=cwd)
    assert result.exit_code == 0, result
    result = run_cli("hash", "main", "--nixpkgs", str(world["repo"]), cwd=cwd)
    assert result.exit_code == 0 and len(result.stdout.strip()) == 52, result


def test_a_name_with_a_newline_is_read_and_shown_escaped(world, run_cli, scratch, tmp_path):
    """git checks out names with control characters, so pinshift reads them too; every line shows them escaped."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(world["repo"]), str(repo))
    name = ".flox/pkgs/new\nline\x1b[2J.nix"
    (repo / name).write_text("{ }: { x = 1; }\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a name with a newline")
    result = run_cli("diff", "origin/main", "HEAD", "--repo", str(repo), cwd=cwd)
    assert result.exit_code == 0, result
    assert "\x1b" not in result.output
    assert "new\\nline\\x1b[2J.nix" in result.stdout, result.stdout
    assert os.listdir(scratch) == []


# --- the rules themselves -------------------------------------------------------------------------------------------

REFUSED = {
    "..": "'..' component", "a/../b": "'..' component", ".flox/pkgs/../../x": "'..' component",
    ".": "'.' component", "./a": "'.' component", "a/.": "'.' component",
    ".git": "'.git'", ".GIT/config": "'.git'", ".Git": "'.git'", "a/.gIt/b": "'.git'", ".git.": "'.git'",
    ".git ": "'.git'", ".git. . ": "'.git'", "git~1": "'.git'", "GIT~1/x": "'.git'", "git~1.": "'.git'",
    ".git::$INDEX_ALLOCATION": "'.git'", ".git:stream": "'.git'", ".g\u200cit": "'.git'", "\ufeff.git": "'.git'",
    ".gi\u200dt\u206a": "'.git'", "sub\\.git": "'.git'", "a\\git~1\\b": "'.git'",
    "/etc/passwd": "an absolute path", "a//b": "an empty name", "a/": "an empty name", "": "an empty name",
    "new\nline/.git": "'.git'", "\x1b[2J/../x": "'..' component",
}
ACCEPTED = [".github/workflows/ci.yml", ".gitignore", ".gitmodules", ".gitattributes", "git~10", "git~2", ".git2",
            "a.git", "x.git/y", "...", "..a", "a..", ".x", "caf\u00e9.nix", "bad\udcff.nix", "with space.nix",
            "[brackets]*?.nix", "\u00e9\u200c.nix", "emoji-\U0001f600.nix", ".flox/pkgs/a.nix",
            "new\nline.nix", "tab\there", "esc\x1b[2J.nix", "nel\x85", "ls\u2028"]  # git checks these out; reports escape them


@pytest.mark.parametrize("path", sorted(REFUSED))
def test_a_path_git_refuses_is_refused_with_its_reason(path):
    why = entry_names.reason(path)
    assert why is not None and REFUSED[path] in why, why
    error = entry_names.UnsafeEntry("a" * 40, path, why)
    assert str(error).isprintable() and "\n" not in str(error)


@pytest.mark.parametrize("path", ACCEPTED)
def test_a_path_git_checks_out_is_accepted(path):
    assert entry_names.reason(path) is None


def test_shown_escapes_what_a_terminal_would_act_on():
    assert entry_names.shown("a\nb") == "'a\\nb'"
    assert entry_names.shown("\x1b[2J") == "'\\x1b[2J'"
    assert entry_names.shown("rtl\u202eevil") == "'rtl\\u202eevil'"
    assert entry_names.shown("bad\udcff") == "'bad\\xff'"
    assert entry_names.shown("it's\\") == "'it\\'s\\\\'"
    assert entry_names.shown("caf\u00e9") == "'caf\u00e9'"


# --- the writer: descriptors, never a link -------------------------------------------------------------------------


@pytest.fixture
def roots(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    return root, outside


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("level", ["top", "middle", "parent"])
def test_the_writer_never_follows_a_linked_folder(roots, level):
    """A folder replaced by a link to elsewhere (at the top, in the middle or as the file's own folder): the
    write is refused in one line and nothing lands outside; the checks upstream are not involved."""
    root, outside = roots
    with SnapshotWriter(root) as writer:
        writer.write("a/b/c/first.nix", b"1")
    linked = {"top": root / "a", "middle": root / "a" / "b", "parent": root / "a" / "b" / "c"}[level]
    os.rename(linked, root / "moved")
    os.symlink(outside, linked)
    opened = _fds()
    with pytest.raises(PinshiftError) as caught:
        with SnapshotWriter(root) as writer:
            writer.write("a/b/c/second.nix", b"2")
    assert "cannot write 'a/b/c/second.nix' into the snapshot" in str(caught.value)
    assert list(outside.iterdir()) == []
    assert _fds() == opened


def test_the_writer_never_writes_through_a_linked_file(roots):
    root, outside = roots
    (root / "a").mkdir()
    os.symlink(outside / "target.txt", root / "a" / "x.nix")
    with pytest.raises(PinshiftError):
        with SnapshotWriter(root) as writer:
            writer.write("a/x.nix", b"overwritten")
    assert not (outside / "target.txt").exists()


def test_the_writer_refuses_dotdot_whatever_the_callers_checked(roots):
    root, outside = roots
    (root / "a").mkdir()
    for path in ("../outside/x", "a/../../outside/x", "a/./x", "/x", "a//x", ".git/config"):
        with pytest.raises(PinshiftError):
            with SnapshotWriter(root) as writer:
                writer.write(path, b"x")
    assert list(outside.iterdir()) == []
    assert [p.name for p in root.iterdir()] == ["a"] and list((root / "a").iterdir()) == []


def test_a_hard_link_never_goes_through_a_linked_folder_of_either_tree(roots, tmp_path):
    root, outside = roots
    with SnapshotWriter(root) as writer:
        writer.write("a/b/x.nix", b"x")
    after = tmp_path / "after"
    after.mkdir()
    os.symlink(outside, after / "a")
    with pytest.raises(PinshiftError):
        with SnapshotWriter(root, create=False) as source, SnapshotWriter(after) as writer:
            writer.link(source, "a/b/x.nix")
    assert list(outside.iterdir()) == []
    os.unlink(after / "a")
    os.rename(root / "a", tmp_path / "moved")
    os.symlink(tmp_path / "moved", root / "a")  # the source tree's folder is a link now: not read through
    with pytest.raises(PinshiftError):
        with SnapshotWriter(root, create=False) as source, SnapshotWriter(after) as writer:
            writer.link(source, "a/b/x.nix")
    assert not (after / "a" / "b" / "x.nix").exists()


def test_deep_and_wide_trees_are_written_exactly_with_few_descriptors(roots, tmp_path):
    """Deeper than the descriptors kept open (the chain is reopened from the nearest open folder), and many
    folders side by side: every file written with its bytes, shared by hard link in the later tree."""
    root, _ = roots
    deep = "/".join(f"d{i}" for i in range(SnapshotWriter.OPEN_FOLDERS * 2 + 5))
    paths = [f"{deep}/leaf.nix", f"{deep[:40]}/mid.nix", "top.nix", f"{deep}/leaf2.nix"]
    paths += [f"wide/f{i}/x{j}.nix" for i in range(200) for j in range(3)]
    opened = _fds()
    with SnapshotWriter(root) as writer:
        for index, path in enumerate(paths):
            writer.write(path, f"{index}".encode())
            assert _fds() - opened <= SnapshotWriter.OPEN_FOLDERS + 2
    assert _fds() == opened
    for index, path in enumerate(paths):
        assert (root / path).read_bytes() == f"{index}".encode()
    after = tmp_path / "after"
    after.mkdir()
    with SnapshotWriter(root, create=False) as source, SnapshotWriter(after) as writer:
        for path in paths + ["absent/none.nix"]:
            writer.link(source, path)
    assert _fds() == opened
    assert all(os.stat(after / p).st_ino == os.stat(root / p).st_ino for p in paths)
    assert not (after / "absent").exists()


def test_scratch_writes_a_commit_and_a_later_state_through_the_writer(world, tmp_path, monkeypatch):
    """Scratch.commit and Scratch.after on a real commit: files as git has them, shared ones hard-linked."""
    from pinshift.git.repo import Repository

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    repository = Repository.open(world["repo"])
    tree = repository.tree(repository.resolve_base("main"))
    with Scratch() as scratch:
        before = scratch.commit("before", tree)
        later = scratch.after("after", before, {VERIFIED: b"{ }: 2\n", "new/file.nix": b"{ }: 3\n"})
        later.materialise()
        for path in tree.paths():
            assert (before.root / path).read_bytes() == tree.read(path)
        shared = ".flox/pkgs/pytorch-python313-cuda12_9-sm75-avx.nix"
        assert os.stat(later.root / shared).st_ino == os.stat(before.root / shared).st_ino
        assert (later.root / VERIFIED).read_bytes() == b"{ }: 2\n"
        assert (later.root / "new/file.nix").read_bytes() == b"{ }: 3\n"
        with pytest.raises(PinshiftError):
            scratch.after("worse", before, {"../escape.nix": b"x"}).materialise()
    assert not (tmp_path / "escape.nix").exists()


# --- issue 45 item 9: hash of what is not a commit -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["blob", "tree", "annotated-blob"])
def test_hash_of_a_tag_naming_a_blob_or_tree_says_so(world, run_cli, scratch, tmp_path, kind):
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(world["repo"]), str(repo))
    target = {"blob": "HEAD:" + VERIFIED, "tree": "HEAD^{tree}", "annotated-blob": "HEAD:" + VERIFIED}[kind]
    obj = git(repo, "rev-parse", target).strip()
    if kind == "annotated-blob":
        git(repo, "tag", "-a", "-m", "a tag", "thetag", obj)
    else:
        git(repo, "tag", "thetag", obj)
    result = run_cli("hash", "thetag", "--nixpkgs", str(repo))
    assert result.exit_code == 2 and result.stdout == "", result
    assert result.stderr.splitlines() == [
        f"pinshift: error: nixpkgs revision 'thetag' names a {'tree' if kind == 'tree' else 'blob'} in {repo}, not a "
        "commit; give a commit id, a branch or a tag of a commit"], result


def test_the_scratch_worktree_refuses_a_path_git_would_not_check_out(world, tmp_path):
    """A migration committing through a worktree (when hooks run) writes only paths git's rules allow: a step
    that named `../x` or `.git/config` is refused before anything is written."""
    from pinshift.errors import GitError
    from pinshift.git.commit import add_worktree
    from pinshift.git.repo import Repository

    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(world["repo"]), str(repo))
    repository = Repository.open(repo)
    worktree = add_worktree(repository, repository.resolve_base("HEAD"))
    try:
        for path in ("../escape.nix", ".git/config", "a/../../escape.nix", ".flox/GIT~1/x"):
            for write in (lambda: worktree.create(path, b"x", "100644"), lambda: worktree.write(path, b"x"),
                          lambda: worktree.delete(path)):
                with pytest.raises(GitError, match="cannot write .* in the scratch worktree"):
                    write()
        assert not (worktree.path.parent / "escape.nix").exists()
        assert (worktree.path / ".git").is_file()  # the worktree's own link to the repository, untouched
    finally:
        worktree.remove()
