"""Commits through git's plumbing equal the commits `git commit` makes in a scratch worktree (issue 15).

Both paths run on the same repository with the author and committer dates fixed, so equal
commit ids mean equal trees, messages, trailers, authors and committers. The worktree path
is chosen by the presence of a commit hook (a no-op `post-commit` here, which changes nothing).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest
from conftest import git
from migrate_repo import hook, scratch, swaps_args, worktree_dirs  # noqa: F401

from pinshift.demo.build import RECIPE, build_demo
from pinshift.demo.python_branch import BRANCH as PY312, RECIPE_FILE as PY311_RECIPE, build_python312_demo
from pinshift.git.commit import stripspace

PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]
FIXED = {"GIT_AUTHOR_DATE": "2026-11-23T10:00:00+0000", "GIT_COMMITTER_DATE": "2026-11-23T10:00:00+0000"}


def pinshift(root, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([*PINSHIFT, *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **FIXED, **(env or {})})
    assert done.returncode == 0, done
    return done


def commits(root, base: str, tip: str) -> list[str]:
    return git(root, "rev-list", "--reverse", f"{base}..{tip}").split()


def scratch_worktrees_used(root) -> bool:
    """Whether a run went through a scratch worktree: its post-commit hook left a mark."""
    return (root / ".git" / "used-a-worktree").exists()


def force_worktree(root) -> None:
    hook(root, "post-commit", 'touch "$(git rev-parse --git-common-dir)/used-a-worktree"\n')


def both_ways(root, base: str, *args: str) -> tuple[list[str], list[str]]:
    """The commits of `pinshift migrate ARGS --branch migrated` by plumbing, then (same branch name) by git commit."""
    pinshift(root, "migrate", *args, "--branch", "migrated")
    assert not scratch_worktrees_used(root)
    by_plumbing = commits(root, base, "migrated")
    git(root, "branch", "-D", "migrated")
    force_worktree(root)
    pinshift(root, "migrate", *args, "--branch", "migrated")
    assert scratch_worktrees_used(root)
    return by_plumbing, commits(root, base, "migrated")


def test_demo_migration_through_plumbing_equals_git_commit(tmp_path):
    root = build_demo(tmp_path / "demo")
    by_plumbing, by_worktree = both_ways(root, "pytorch-2.9", RECIPE)
    assert len(by_plumbing) == 4
    assert by_plumbing == by_worktree  # same ids: same trees, parents, messages, author, committer, dates
    assert git(root, "log", "-1", "--format=%(trailers:key=Pinshift-Step,valueonly)", "migrated").strip() == \
        "4/4 readme-branch-table"
    assert worktree_dirs(root) == []


def test_renames_through_plumbing_equal_git_commit_and_git_sees_renames(tmp_path):
    root = build_python312_demo(tmp_path / "demo")
    by_plumbing, by_worktree = both_ways(root, PY312, str(PY311_RECIPE))
    assert len(by_plumbing) == 4
    assert by_plumbing == by_worktree
    statuses = git(root, "diff", "-M", "--name-status", f"{by_plumbing[0]}^", by_plumbing[0]).splitlines()
    assert statuses and all(line.startswith("R") for line in statuses)


def test_a_pre_commit_hook_runs_and_the_result_equals_plumbing(tmp_path, make_repo):
    repo = make_repo({"pkgs/a.nix": '{ x = "alpha"; }\n', "pkgs/b.nix": '{ y = "beta"; }\n'}, branch="base")
    pinshift(repo, *swaps_args(repo, "--branch", "plumbing"))
    seen = tmp_path / "hook-saw"
    hook(repo, "pre-commit", f"git diff --cached --name-only >> {seen}\n")
    pinshift(repo, *swaps_args(repo, "--branch", "hooked"))
    assert seen.read_text().split() == ["pkgs/a.nix", "pkgs/b.nix"]  # step 1 staged a.nix, step 3 b.nix
    assert commits(repo, "base", "plumbing") == commits(repo, "base", "hooked")


def test_no_verify_skips_pre_commit_and_commit_msg_but_not_post_commit(make_repo):
    repo = make_repo({"pkgs/a.nix": '{ x = "alpha"; }\n'}, branch="base")
    hook(repo, "pre-commit", "exit 1\n")
    hook(repo, "commit-msg", "exit 1\n")
    pinshift(repo, *swaps_args(repo, "--no-verify"))
    assert not scratch_worktrees_used(repo)  # no hook would run: plumbing
    force_worktree(repo)
    pinshift(repo, *swaps_args(repo, "--no-verify", "--branch", "again"))
    assert scratch_worktrees_used(repo)  # post-commit runs even with --no-verify: a worktree
    assert commits(repo, "base", "swapped") == commits(repo, "base", "again")


def test_identity_from_the_repository_config_is_used(make_repo):
    repo = make_repo({"pkgs/a.nix": '{ x = "alpha"; }\n'}, branch="base")
    git(repo, "config", "user.name", "Recipe Maintainer")
    git(repo, "config", "user.email", "maintainer@example.org")
    pinshift(repo, *swaps_args(repo))
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "swapped").strip() == \
        "Recipe Maintainer <maintainer@example.org>|Recipe Maintainer <maintainer@example.org>"


@pytest.mark.skipif(not shutil.which("ssh-keygen"), reason="ssh-keygen makes the signing key")
def test_commit_gpgsign_with_an_ssh_key_signs_every_step(tmp_path, make_repo):
    repo = make_repo({"pkgs/a.nix": '{ x = "alpha"; }\n', "pkgs/b.nix": '{ y = "beta"; }\n'}, branch="base")
    key = tmp_path / "signing"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text(f"test@example.com {(tmp_path / 'signing.pub').read_text()}")
    for name, value in (("gpg.format", "ssh"), ("user.signingkey", str(key) + ".pub"), ("commit.gpgsign", "true"),
                        ("gpg.ssh.allowedSignersFile", str(allowed))):
        git(repo, "config", name, value)
    pinshift(repo, *swaps_args(repo))
    made = commits(repo, "base", "swapped")
    assert len(made) == 2
    for commit in made:
        verified = subprocess.run(["git", "verify-commit", commit], cwd=repo, capture_output=True, text=True)
        assert verified.returncode == 0, verified.stderr
        assert 'Good "git" signature for test@example.com' in verified.stderr


@pytest.mark.skipif(not shutil.which("gpg"), reason="gpg makes the signing key")
def test_commit_gpgsign_with_a_gpg_key_signs_every_step(tmp_path, make_repo):
    repo = make_repo({"pkgs/a.nix": '{ x = "alpha"; }\n'}, branch="base")
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home)}
    made = subprocess.run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Test <test@example.com>",
                           "ed25519", "sign", "never"], env={**os.environ, **env}, capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"gpg cannot make a key here: {made.stderr.strip()[:200]}")
    git(repo, "config", "commit.gpgsign", "true")
    pinshift(repo, *swaps_args(repo), env=env)
    [commit] = commits(repo, "base", "swapped")
    verified = subprocess.run(["git", "verify-commit", commit], cwd=repo, capture_output=True, text=True,
                              env={**os.environ, **env})
    assert verified.returncode == 0, verified.stderr
    assert "Good signature" in verified.stderr


def test_an_unsigned_repository_gets_unsigned_commits(make_repo):
    repo = make_repo({"pkgs/a.nix": '{ x = "alpha"; }\n'}, branch="base")
    pinshift(repo, *swaps_args(repo))
    assert "gpgsig" not in git(repo, "cat-file", "commit", "swapped")


def test_the_index_and_work_tree_of_the_user_are_untouched(make_repo):
    repo = make_repo({"pkgs/a.nix": '{ x = "alpha"; }\n'}, branch="base")
    (repo / "pkgs" / "a.nix").write_text("{ local = 1; }\n")
    git(repo, "add", "pkgs/a.nix")
    index = git(repo, "ls-files", "-s")
    pinshift(repo, *swaps_args(repo))
    assert git(repo, "ls-files", "-s") == index
    assert (repo / "pkgs" / "a.nix").read_text() == "{ local = 1; }\n"
    assert git(repo, "show", "swapped:pkgs/a.nix") == '{ x = "gamma"; }\n'


@pytest.mark.parametrize("message", [
    "Subject\n\nbody", "\n\n  Subject  \n\n\n\nbody\t\nmore \n\n\n", "Subject\r\n\r\nbody", "a\n \n\t\nb",
    "Ünïcode ✓\n\n\u00a0kept\u00a0\n", "", "\n\n",
])
def test_stripspace_is_gits(message, tmp_path):
    """pinshift's cleanup of a message equals `git stripspace` (what --cleanup=whitespace does)."""
    expected = subprocess.run(["git", "stripspace"], input=message.encode(), capture_output=True, check=True).stdout
    assert stripspace(message).encode() == expected


# --- blobs are streamed into git, never held all at once -------------------------------------------


class _Written:
    """A change whose bytes are made when read, as migrate's derived `after` is."""

    def __init__(self, path: str, size: int):
        self.path, self.mode, self._size = path, None, size

    @property
    def data(self) -> bytes:
        seed = self.path.encode()
        return (seed * (self._size // len(seed) + 1))[: self._size]  # distinct per path: no blob is shared


def _committer(repo):
    from pinshift.git.commit import PlumbingCommits
    from pinshift.git.repo import Repository

    repository = Repository.open(repo)
    return PlumbingCommits(repository, git(repo, "rev-parse", "HEAD").strip())


def test_a_commit_of_many_distinct_files_never_holds_their_bytes_at_once(make_repo):
    """300 files of 64 KiB (19 MiB): the peak of Python's allocations while committing stays below 2 MiB."""
    import tracemalloc

    repo = make_repo({"pkgs/a.nix": "{ }\n"})
    committer = _committer(repo)
    changes = (_Written(f"pkgs/p{n:03}.nix", 64 * 1024) for n in range(300))
    try:
        tracemalloc.start()
        head = committer.commit(changes, "Add 300 distinct files")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        committer.close()
    assert peak < 2 * 1024 * 1024, f"peak {peak} bytes while committing 19 MiB"
    listing = git(repo, "ls-tree", "-r", "--name-only", head).split()
    assert len(listing) == 301 and "pkgs/p299.nix" in listing
    assert git(repo, "cat-file", "-s", f"{head}:pkgs/p042.nix").strip() == str(64 * 1024)
    assert git(repo, "show", f"{head}:pkgs/p042.nix").startswith("pkgs/p042.nixpkgs/p042.nix")
    assert git(repo, "fsck", "--no-dangling").strip() == ""


def test_streamed_blobs_have_gits_ids_and_are_stored(make_repo):
    from pinshift.git.commit import BlobStream

    repo = make_repo({"a": "x\n"})
    with BlobStream(repo, dict(os.environ)) as blobs:
        first = blobs.add(b"same bytes\n")
        again = blobs.add(b"same bytes\n")
        other = blobs.add(b"other bytes\n")
    expected = subprocess.run(["git", "hash-object", "--stdin"], cwd=repo, input=b"same bytes\n",
                              capture_output=True, check=True).stdout.decode().strip()
    assert first == again == expected
    assert git(repo, "cat-file", "-p", first) == "same bytes\n"
    assert git(repo, "cat-file", "-p", other) == "other bytes\n"


def test_an_interrupted_commit_stops_git_and_moves_nothing(make_repo):
    """Ctrl-C while blobs stream: git fast-import is stopped, no commit is made, the user's branch is as it was."""
    repo = make_repo({"pkgs/a.nix": "{ }\n"})
    before = git(repo, "rev-parse", "HEAD")
    committer = _committer(repo)

    def changes():
        for n in range(50):
            yield _Written(f"pkgs/p{n}.nix", 4096)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        committer.commit(changes(), "never made")
    assert committer.head == before.strip()
    committer.close()
    assert git(repo, "rev-parse", "HEAD") == before
    assert git(repo, "status", "--porcelain") == ""
    leftover = subprocess.run(["pgrep", "-f", "git.*fast-import"], capture_output=True, text=True).stdout
    assert leftover.strip() == ""


def test_git_failing_to_store_blobs_is_one_clear_error(make_repo):
    """A fast-import that fails (here: the object store cannot be written) is a GitError naming it, no traceback."""
    from pinshift.errors import GitError

    repo = make_repo({"pkgs/a.nix": "{ }\n"})
    committer = _committer(repo)
    objects = repo / ".git" / "objects" / "pack"
    shutil.rmtree(objects)
    objects.write_text("not a directory\n")  # git cannot create its pack here, whoever runs the test
    try:
        with pytest.raises(GitError, match="git fast-import failed: "):
            committer.commit((_Written(f"pkgs/p{n}.nix", 2048) for n in range(20)), "never made")
    finally:
        committer.close()
        objects.unlink()
        objects.mkdir()


def _fast_import_in(root) -> bool:
    """Whether a `git fast-import` is running in `root` (read from /proc)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = open(f"/proc/{entry}/cmdline", "rb").read()
            where = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if b"fast-import" in command and where == str(root):
            return True
    return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc to see git fast-import running")
def test_ctrl_c_while_blobs_stream_into_git_leaves_no_temporary_pack_and_no_crash_report(make_repo):
    """A terminal's Ctrl-C (SIGINT to pinshift's process group) while git fast-import receives a step's blobs:
    exit 130, no branch, and .git holds no `tmp_pack_*` and no `fast_import_crash_*` (git, in a group of its
    own, is not killed mid-pack: pinshift ends the stream). Up to three attempts to land in the stream."""
    padding = "# " + "distinct padding " * 120 + "\n"
    files = {f"pkgs/p{n:04}.nix": f'{{ x = "alpha"; n = {n}; }}\n{padding}' for n in range(3000)}
    repo = make_repo(files, branch="base")
    caught = 0
    for attempt in range(3):
        process = subprocess.Popen([*PINSHIFT, *swaps_args(repo)], cwd=repo, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            while process.poll() is None and not _fast_import_in(repo):
                pass
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
            out, err = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        if process.returncode == 0:  # the stream ended before the signal: try again
            git(repo, "branch", "-D", "swapped")
            continue
        assert process.returncode == 130, err
        assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("pinshift: interrupted"), err
        caught += 1
        break
    assert caught, "no attempt was interrupted while blobs streamed"
    assert "swapped" not in git(repo, "branch", "--list")
    git_dir = repo / ".git"
    assert not list((git_dir / "objects" / "pack").glob("tmp_*"))
    assert not list(git_dir.glob("fast_import_crash_*"))
    assert not _fast_import_in(repo)
    assert git(repo, "fsck", "--no-dangling").strip() == ""
