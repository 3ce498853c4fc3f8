"""A fan-out's target branches (issue 28 item 1, issue 29 item 10): what `{base}` stands for, and every
target checked before the first commit.

`{base}` in the target template is the name the user gave: a local branch as it is, a remote-tracking
branch without its remote (`origin/x` → `x`), a tag's name, a commit id as typed, `HEAD` as the branch
it points at (a detached HEAD: the commit's short id). Two bases that make one branch, a target that is
another base, two targets git cannot hold together (`r/a` beside `r/a/b`) and a name git cannot store
stop the run with one line and exit 2 before any work; the user's branches stay as they were.
"""

from __future__ import annotations

from conftest import git
from fanout_repo import pin_branches, pinshift, repo  # noqa: F401
from migrate_repo import snapshot, worktree_dirs

BUNDLED = "pytorch-2.10-cuda12_9"


def one_line(done, code: int = 2) -> str:
    assert done.returncode == code, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_a_tag_among_the_bases_never_replaces_the_recipe_bases_branch(repo):
    """The issue's sequence: `{base}` of the tag `rel2` was the recipe's base, and `--force` replaced the
    user's own `pytorch-2.9-x` (its commit `precious` lost)."""
    git(repo, "branch", "pytorch-2.9-python311", "pytorch-2.9")
    git(repo, "checkout", "-qb", "pytorch-2.9-x", "pytorch-2.9")
    (repo / "MYWORK").write_text("mine\n")
    git(repo, "add", "MYWORK")
    git(repo, "commit", "-qm", "precious")
    git(repo, "checkout", "-q", "main")
    git(repo, "tag", "rel2", "pytorch-2.9")
    precious = git(repo, "rev-parse", "pytorch-2.9-x")
    done = pinshift(repo, "migrate", BUNDLED, "--from", "rel2", "--from", "pytorch-2.9-python311",
                    "--branch", "{base}-x", "--force")
    assert done.returncode == 0, done
    assert git(repo, "rev-parse", "pytorch-2.9-x") == precious
    assert "rel2 → rel2-x" in done.stdout and "pytorch-2.9-python311 → pytorch-2.9-python311-x" in done.stdout
    assert git(repo, "rev-parse", "rel2-x~4") == git(repo, "rev-parse", "rel2^{commit}")
    assert git(repo, "merge-base", "pytorch-2.9-python311-x", "pytorch-2.9-python311") == \
        git(repo, "rev-parse", "pytorch-2.9-python311")


def test_base_names_of_a_commit_a_remote_branch_and_head(repo, tmp_path):
    short = git(repo, "rev-parse", "--short=9", "pytorch-2.9").strip()
    git(repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    git(repo, "update-ref", "refs/remotes/origin/pytorch-2.9-b", "pytorch-2.9-b")
    git(repo, "checkout", "-q", "main")
    done = pinshift(repo, "migrate", "../recipe.toml", "--from", short, "--from", "origin/pytorch-2.9-b",
                    "--from", "HEAD", "--dry-run")
    assert done.returncode == 0, done
    rows = done.stdout
    assert f"{short} → {short}-pin0182a36" in rows
    assert "origin/pytorch-2.9-b → pytorch-2.9-b-pin0182a36" in rows
    assert "HEAD → main-pin0182a36" in rows
    git(repo, "checkout", "-q", "--detach", "pytorch-2.9")
    detached = git(repo, "rev-parse", "--short", "HEAD").strip()
    done = pinshift(repo, "migrate", "../recipe.toml", "--from", "HEAD", "--from", "main", "--dry-run")
    assert f"HEAD → {detached}-pin0182a36" in done.stdout, done


def test_two_bases_that_make_one_branch_stop_before_any_work(repo, tmp_path):
    """`--from origin/X --from X`: the loser used to fail after all its commits with git's `update_ref failed`."""
    git(repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    git(repo, "update-ref", "refs/remotes/origin/pytorch-2.9", "pytorch-2.9-b")
    git(repo, "checkout", "-q", "main")
    before = snapshot(repo)
    for force in ((), ("--force",)):
        line = one_line(pinshift(repo, "migrate", "../recipe.toml", "--from", "origin/pytorch-2.9", "--from",
                                 "pytorch-2.9", *force))
        assert line == ("pinshift: error: --from origin/pytorch-2.9 and --from pytorch-2.9 both make branch "
                        "'pytorch-2.9-pin0182a36' ({base} is 'pytorch-2.9' for both); run them separately or "
                        "name the branches with --branch"), line
    line = one_line(pinshift(repo, "migrate", "../recipe.toml", "--from", "HEAD", "--from", "main", "--dry-run"))
    assert "--from HEAD and --from main both make branch 'main-pin0182a36'" in line, line
    assert snapshot(repo) == before
    assert worktree_dirs(repo) == []


def test_a_target_that_is_another_base_or_cannot_sit_beside_another_target_stops_the_run(repo):
    git(repo, "branch", "pytorch-2.9-pin0182a36", "pytorch-2.9")
    git(repo, "tag", "rel", "pytorch-2.9")
    git(repo, "branch", "rel/b", "pytorch-2.9-b")
    before = snapshot(repo)
    line = one_line(pinshift(repo, "migrate", "../recipe.toml", "--from", "pytorch-2.9", "--from",
                             "pytorch-2.9-pin0182a36", "--force"))
    assert line == ("pinshift: error: --from pytorch-2.9 would make branch 'pytorch-2.9-pin0182a36', which is the "
                    "base --from pytorch-2.9-pin0182a36; a run never moves a base: name the branches with --branch"), line
    line = one_line(pinshift(repo, "migrate", "../recipe.toml", "--from", "rel", "--from", "rel/b",
                             "--branch", "r/{base}", "--dry-run"))
    assert line == ("pinshift: error: --from rel and --from rel/b would make branches 'r/rel' and 'r/rel/b', which "
                    "git cannot hold together; name the branches with --branch"), line
    assert snapshot(repo) == before


def test_a_failed_head_base_shows_its_real_target(repo):
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "main-pin0182a36", "main")
    done = pinshift(repo, "migrate", "../recipe.toml", "--from", "HEAD", "--from", "pytorch-2.9-b")
    assert done.returncode == 1, done
    assert "HEAD → main-pin0182a36" in done.stdout
    assert "failed: HEAD: branch 'main-pin0182a36' already exists" in done.stdout
    assert "HEAD-pin0182a36" not in done.stdout + done.stderr


def test_a_branch_name_git_cannot_store_is_refused_before_any_work_also_in_a_dry_run(repo):
    """Issue 29 item 10: over 250 bytes in a component, git's files cannot hold the ref (its `.lock` file
    exceeds the file system's 255); found before the first commit, one line, exit 2."""
    long = "x" * 251
    before = snapshot(repo)
    for dry in (("--dry-run",), ()):
        line = one_line(pinshift(repo, "migrate", "../recipe.toml", "--from", "pytorch-2.9", "--branch", long, *dry))
        assert "too long" in line and "251 bytes" in line, line
        line = one_line(pinshift(repo, "migrate", "../recipe.toml", "--from", "pytorch-2.9", "--from", "pytorch-2.9-b",
                                 "--branch", "{base}-" + "y" * 240, *dry))
        assert "too long" in line and "--from pytorch-2.9" in line, line
    assert snapshot(repo) == before
    assert pin_branches(repo) == []
    fits = "z" * 250  # the longest a component can be
    done = pinshift(repo, "migrate", "../recipe.toml", "--from", "pytorch-2.9", "--branch", fits)
    assert done.returncode == 0, done
    assert git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{fits}")


def test_a_single_run_never_targets_the_branch_its_base_is_read_from(repo):
    git(repo, "checkout", "-q", "pytorch-2.9")
    before = snapshot(repo)
    for base in ("HEAD", "refs/heads/pytorch-2.9"):
        line = one_line(pinshift(repo, "migrate", "../recipe.toml", "--from", base, "--branch", "pytorch-2.9", "--force",
                                 "--dry-run"))
        assert line == ("pinshift: error: the target branch 'pytorch-2.9' is the base itself; name a new branch "
                        "with --branch"), line
    assert snapshot(repo) == before
