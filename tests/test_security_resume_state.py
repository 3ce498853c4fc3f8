"""`--resume` reads a branch's commits as hostile input and its base as it is now (issue 45 items 6 and 7).

A commit message is written by whoever commits: `Pinshift-Step: 7/3 rename-attr` used to make `--resume` say
"nothing to do" with steps 2 and 3 never run. Every trailer on the branch is held to the recipe (number in
1..N, N the recipe's count, the step's kind and subject, each step once and in order, one unbroken chain of
pinshift's commits), the steps without a commit are planned again, and a branch made on a base commit the
base has since left is stopped with the rebase and the fresh run to choose from. Each refusal: exit 2, one
line, nothing changed (refs, HEAD, checkout, worktrees).
"""

from __future__ import annotations

import re

import pytest
from conftest import git
from migrate_repo import (FILES, assert_nothing_left, assert_one_line_error, hook, repo, scratch,  # noqa: F401
                          snapshot, swaps_args)

STEP1, STEP2, STEP3 = "Swap alpha for gamma", "Swap nothing (no file has zzz)", "Swap beta for delta everywhere"


def on_branch(root, branch: str, *messages: str, start: str = "base") -> None:
    """Make `branch` from `start` by hand: one empty commit per message (anyone can write these)."""
    git(root, "switch", "-q", "-c", branch, start)
    for message in messages:
        git(root, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message)
    git(root, "switch", "-q", "base")


def step(subject: str, value: str, recipe: str = "swaps") -> str:
    return f"{subject}\n\n1 file changed, 1 edit\n\nPinshift-Recipe: {recipe}\nPinshift-Step: {value}\n"


def refused(root, run_cli, *fragments: str, extra: tuple[str, ...] = ()) -> str:
    before = snapshot(root)
    result = run_cli(*swaps_args(root, "--resume", *extra))
    assert_one_line_error(result, 2, *fragments)
    assert_nothing_left(root, before)
    assert "\x1b" not in result.output
    return result.stderr


# --- item 6: the trailers held to the recipe ------------------------------------------------


@pytest.mark.parametrize("value, fragment", [
    ("7/3 word-swap", "says step '7/3 word-swap', but recipe swaps has 3 steps"),  # above N: was "nothing to do"
    ("4/4 word-swap", "but recipe swaps has 3 steps"),  # another count
    ("1/1 word-swap", "but recipe swaps has 3 steps"),
    ("0/3 word-swap", "which is not 'n/N kind'"),  # zero
    ("-1/3 word-swap", "which is not 'n/N kind'"),  # negative
    ("x/3 word-swap", "which is not 'n/N kind'"),  # not a number
    ("1/three word-swap", "which is not 'n/N kind'"),
    ("\u0661/3 word-swap", "which is not 'n/N kind'"),  # an Arabic-Indic one: a digit to Python's int()
    ("01/3 word-swap", "which is not 'n/N kind'"),  # a leading zero pinshift never writes
    ("1/3", "which is not 'n/N kind'"),  # no kind
    ("1/3 word-swap trailing", "which is not 'n/N kind'"),
    ("1 /3 word-swap", "which is not 'n/N kind'"),
    ("1/3  word-swap", "which is not 'n/N kind'"),
    ("9" * 5000 + "/3 word-swap", "which is not 'n/N kind'"),  # int() of it would raise, not refuse
    ("1/3 rename-attr", "says step 1/3 is 'rename-attr', but recipe swaps's step 1 is word-swap"),  # kind
    ("1/3 word-swap\x1b[31m", "is 'word-swap\\x1b[31m'"),  # a terminal escape: shown escaped, never raw
])
def test_a_forged_step_trailer_is_refused(repo, run_cli, value, fragment):
    on_branch(repo, "swapped", step(STEP1, value))
    refused(repo, run_cli, fragment, "the branch was not made by this recipe (swaps)", "--resume")


def test_a_trailer_git_folds_over_two_lines_is_refused(repo, run_cli):
    on_branch(repo, "swapped", step(STEP1, "1/3\n  word-swap"))
    refused(repo, run_cli, "which is not 'n/N kind'")


@pytest.mark.parametrize("trailers, fragment", [
    ("Pinshift-Recipe: other\nPinshift-Step: 1/3 word-swap", "says recipe 'other', not swaps"),
    ("Pinshift-Recipe: swaps", "has 1 Pinshift-Recipe and 0 Pinshift-Step trailers"),
    ("Pinshift-Step: 1/3 word-swap", "has 0 Pinshift-Recipe and 1 Pinshift-Step trailers"),
    ("Pinshift-Recipe: swaps\nPinshift-Step: 1/3 word-swap\nPinshift-Step: 3/3 word-swap",
     "has 1 Pinshift-Recipe and 2 Pinshift-Step trailers"),
    ("Pinshift-Recipe: swaps\nPinshift-Recipe: swaps\nPinshift-Step: 1/3 word-swap",
     "has 2 Pinshift-Recipe and 1 Pinshift-Step trailers"),
])
def test_trailers_other_than_one_of_each_for_this_recipe_are_refused(repo, run_cli, trailers, fragment):
    on_branch(repo, "swapped", f"{STEP1}\n\n{trailers}\n")
    refused(repo, run_cli, fragment)


def test_a_subject_that_is_not_the_steps_is_refused(repo, run_cli):
    """Step 2 changes nothing and so never has a commit; a hand-made one claiming it differs in its subject."""
    on_branch(repo, "swapped", step(STEP1, "1/3 word-swap"), step("by hand", "2/3 word-swap"))
    stderr = refused(repo, run_cli, "says step 2/3 word-swap with subject 'by hand'", f"that step's is '{STEP2}'")
    assert git(repo, "rev-parse", "--short", "swapped").strip() in stderr  # the commit is named


def test_a_step_twice_is_refused(repo, run_cli):
    on_branch(repo, "swapped", step(STEP1, "1/3 word-swap"), step(STEP1, "1/3 word-swap"))
    first = git(repo, "rev-parse", "--short", "swapped~1").strip()
    refused(repo, run_cli, "says step 1/3 again", f"(also {first})")


def test_steps_out_of_order_are_refused(repo, run_cli):
    on_branch(repo, "swapped", step(STEP3, "3/3 word-swap"), step(STEP1, "1/3 word-swap"))
    refused(repo, run_cli, "says step 1/3 after step 3/3", "out of order")


def test_a_commit_without_trailers_between_the_steps_is_refused(repo, run_cli):
    on_branch(repo, "swapped", step(STEP1, "1/3 word-swap"), "by hand\n", step(STEP3, "3/3 word-swap"))
    middle = git(repo, "rev-parse", "--short", "swapped~1").strip()
    refused(repo, run_cli, f"commit {middle} on branch 'swapped' has no Pinshift trailers but sits between")


def test_a_merge_among_the_steps_is_refused(repo, run_cli):
    on_branch(repo, "side", "side work\n")
    on_branch(repo, "swapped", step(STEP1, "1/3 word-swap"))
    git(repo, "switch", "-q", "swapped")
    git(repo, "merge", "-q", "--no-ff", "side", "-m", step(STEP3, "3/3 word-swap"))
    git(repo, "switch", "-q", "base")
    stderr = refused(repo, run_cli, "the branch was not made by this recipe")
    assert "has no Pinshift trailers but sits between" in stderr or "is not made on" in stderr


def test_a_merge_claiming_a_step_is_refused(repo, run_cli):
    on_branch(repo, "side", step(STEP1, "1/3 word-swap").replace("1 edit", "2 edits"))  # another commit
    on_branch(repo, "swapped", step(STEP1, "1/3 word-swap"))
    git(repo, "switch", "-q", "swapped")
    git(repo, "merge", "-q", "--no-ff", "side", "-m", step(STEP3, "3/3 word-swap"))
    git(repo, "switch", "-q", "base")
    stderr = refused(repo, run_cli, "the branch was not made by this recipe")
    assert "says step 1/3 again" in stderr or "is not made on" in stderr


def test_a_step_missing_that_would_have_changed_files_is_refused(repo, run_cli):
    """Step 1 changes three files on the base: a branch with only step 3's commit skipped it."""
    on_branch(repo, "swapped", step(STEP3, "3/3 word-swap"))
    base = git(repo, "rev-parse", "--short", "base").strip()
    refused(repo, run_cli, "has no commit for step 1/3 (word-swap), but that step changes 2 files on "
                           f"{base}, where it would have run")


def test_the_check_runs_in_a_dry_run_and_in_a_fan_out(repo, run_cli):
    on_branch(repo, "swapped", step(STEP1, "7/3 rename-attr"))
    refused(repo, run_cli, "but recipe swaps has 3 steps", extra=("--dry-run",))
    git(repo, "branch", "second", "base")
    on_branch(repo, "second-out", step(STEP1, "7/3 rename-attr"))
    forged = git(repo, "rev-parse", "second-out")
    result = run_cli(*swaps_args(repo, "--resume", "--from", "base", "--from", "second", "--branch", "{base}-out"))
    assert result.exit_code == 1, result
    assert re.search(r"failed: second: commit [0-9a-f]+ on branch 'second-out' says step '7/3 rename-attr'",
                     result.stdout), result.stdout
    assert git(repo, "rev-parse", "second-out") == forged  # the stopped base's branch is as it was
    assert git(repo, "log", "--format=%s", "base..base-out").splitlines() == [STEP3, STEP1]  # the other is made


# --- the paths that must still work ---------------------------------------------------------


def test_a_branch_of_real_steps_with_a_step_that_made_no_commit_resumes(repo, run_cli):
    """Steps 1 and 3 committed, step 2 changed nothing (no commit): planned again, it still changes nothing."""
    assert run_cli(*swaps_args(repo)).exit_code == 0
    refs = git(repo, "for-each-ref")
    result = run_cli(*swaps_args(repo, "--resume"))
    assert result.exit_code == 0, result
    assert result.stdout.startswith("nothing to do: branch swapped already has every step of recipe swaps")
    assert git(repo, "for-each-ref") == refs


def test_a_kept_branch_resumes_at_the_next_step_on_its_base(repo, run_cli):
    hook(repo, "pre-commit", 'git diff --cached --name-only | grep -q c.nix && exit 1\nexit 0\n')
    assert run_cli(*swaps_args(repo, "--keep-partial")).exit_code == 1
    (repo / ".git/hooks/pre-commit").unlink()
    result = run_cli(*swaps_args(repo, "--resume", "--format", "json"))
    assert result.exit_code == 0, result
    short = git(repo, "rev-parse", "--short", "base").strip()
    assert f"resuming swapped after step 1, on base ({short})" in result.stdout  # the report's note
    assert f"\nresumed after step 1, on base ({short})\n" in result.stderr  # the summary's line
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == [STEP3, STEP1]


# --- item 7: the base moved ---------------------------------------------------------------


def keep_step_one(repo, run_cli) -> str:
    """A real run kept at step 1 (a hook refuses step 3); the base commit it was made on."""
    hook(repo, "pre-commit", 'git diff --cached --name-only | grep -q c.nix && exit 1\nexit 0\n')
    assert run_cli(*swaps_args(repo, "--keep-partial")).exit_code == 1
    (repo / ".git/hooks/pre-commit").unlink()
    return git(repo, "rev-parse", "base").strip()


def test_a_base_that_moved_on_stops_the_resume_with_both_ways(repo, run_cli):
    old = keep_step_one(repo, run_cli)
    (repo / "pkgs/d.nix").write_text('{ x = "alpha beta"; }\n')
    git(repo, "add", "pkgs/d.nix")
    git(repo, "commit", "-qm", "base gains a file")
    new = git(repo, "rev-parse", "base").strip()
    short_old, short_new = old[:7], new[:7]
    stderr = refused(repo, run_cli, f"branch 'swapped' is on base at {short_old}, but base moved on to {short_new}",
                     "--force")
    command = re.search(r"`(git rebase --onto [^`]+)`", stderr).group(1)
    assert command.split()[3:] == [git(repo, "rev-parse", "--short", new).strip(),
                                   git(repo, "rev-parse", "--short", old).strip(), "swapped"]
    # the printed command works as printed, and the resume then continues on the new base
    git(repo, *command.split()[1:])
    git(repo, "switch", "-q", "base")
    result = run_cli(*swaps_args(repo, "--resume"))
    assert result.exit_code == 0, result
    assert git(repo, "merge-base", "base", "swapped").strip() == new
    assert git(repo, "log", "--format=%s", "base..swapped").splitlines() == [STEP3, STEP1]


def test_after_a_base_moved_force_makes_the_branch_on_the_new_commit(repo, run_cli):
    keep_step_one(repo, run_cli)
    (repo / "pkgs/d.nix").write_text('{ x = "alpha beta"; }\n')
    git(repo, "add", "pkgs/d.nix")
    git(repo, "commit", "-qm", "base gains a file")
    result = run_cli(*swaps_args(repo, "--force"))
    assert result.exit_code == 0, result
    assert git(repo, "merge-base", "base", "swapped") == git(repo, "rev-parse", "base")
    assert git(repo, "show", "swapped:pkgs/d.nix") == '{ x = "gamma beta"; }\n'  # the new file migrated


def test_a_rewritten_base_stops_the_resume(repo, run_cli):
    old = keep_step_one(repo, run_cli)
    git(repo, "commit", "-q", "--amend", "--allow-empty", "-m", "initial, reworded")
    new = git(repo, "rev-parse", "base").strip()
    refused(repo, run_cli, f"is on base at {old[:7]}, but base was rewritten to {new[:7]}",
            f"git rebase --onto {new[:7]}")


def test_a_kept_branch_with_no_step_on_a_base_that_moved_stops(repo, run_cli):
    old = git(repo, "rev-parse", "base").strip()
    git(repo, "branch", "swapped", "base")  # what --keep-partial leaves when no step completed
    git(repo, "commit", "-q", "--allow-empty", "-m", "base moves on")
    new = git(repo, "rev-parse", "base").strip()
    refused(repo, run_cli, f"is on base at {old[:7]}, but base moved on to {new[:7]}",
            f"`git rebase --onto {new[:7]} {old[:7]} swapped`")
