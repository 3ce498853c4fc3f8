"""A step the recipe needs that changes nothing on a base stops that base (issue 40, first bullet).

`pinshift migrate pin-0182a36 --from 'pytorch-2.9-*'` used to report `created` for a base whose recipes pin
46336d4: pin-swap found no 6a030d5 there, said so in a note, and the branch's other commits claimed a pin it
never got. Every step is needed unless it says `optional = true` (readme-branch-table and metadata-rev are
optional by default); a needed step that changes nothing while others change files: no branch for that
base, exit 1, one line naming the base, the step and why. `pinshift show` says the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import git
from fanout_repo import RECIPE, repo  # noqa: F401
from migrate_repo import FILES, MIGRATIONS, assert_one_line_error, scratch, snapshot  # noqa: F401

from pinshift.demo.matrix import OLD_REV

OTHER_REV = "46336d4b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f"


def other_pin(root, name: str = "pytorch-2.9-python311") -> str:
    """A base whose recipes pin another nixpkgs than the recipe's `old`."""
    git(root, "switch", "-q", "-c", name, "pytorch-2.9")
    for path in (root / ".flox" / "pkgs").glob("*.nix"):
        path.write_text(path.read_text().replace(OLD_REV, OTHER_REV))
    git(root, "commit", "-qam", "pin 46336d4")
    git(root, "switch", "-q", "pytorch-2.9")
    return git(root, "rev-parse", "--short", name).strip()


def recipe(root, text: str = RECIPE) -> str:
    path = root.parent / "essential.toml"
    path.write_text(text)
    return str(path)


def test_a_needed_pin_swap_that_finds_nothing_stops_the_base(repo, run_cli):
    short = other_pin(repo)
    before = snapshot(repo)
    result = run_cli("migrate", recipe(repo), "--repo", str(repo), "--from", "pytorch-2.9-python311")
    assert_one_line_error(result, 1, f"pytorch-2.9-python311 ({short}): step 1/2 pin-swap changes nothing (",
                          f"pins 46336d4, not '{OLD_REV[:7]}': nothing to swap here",
                          "the recipe needs it (not optional = true); no branch made")
    assert snapshot(repo) == before  # no branch, nothing else


def test_the_dry_run_says_so_and_keeps_the_reports_exit_code(repo, run_cli):
    """A dry run is a report (docs/ci.md posts it on every pull request): the stop is its note, and stderr's."""
    other_pin(repo)
    refs = git(repo, "for-each-ref")
    result = run_cli("migrate", recipe(repo), "--repo", str(repo), "--from", "pytorch-2.9-python311", "--dry-run",
                     "--format", "json")
    assert result.exit_code == 0, result
    notes = json.loads(result.stdout)["notes"]
    assert any("step 1/2 pin-swap changes nothing" in n and n.endswith("; a run would make no branch") for n in notes)
    assert "pinshift: note: pytorch-2.9-python311 (" in result.stderr and "a run would make no branch" in result.stderr
    assert git(repo, "for-each-ref") == refs
    checked = run_cli("migrate", recipe(repo), "--repo", str(repo), "--from", "pytorch-2.9-python311", "--dry-run",
                      "--check")
    assert checked.exit_code == 1, checked  # --check: step 2 would still change files


def test_an_optional_step_that_finds_nothing_lets_the_branch_be_made(repo, run_cli):
    other_pin(repo)
    text = RECIPE.replace('title = "Pin nixpkgs to 0182a36"\n', 'title = "Pin nixpkgs to 0182a36"\noptional = true\n')
    result = run_cli("migrate", recipe(repo, text), "--repo", str(repo), "--from", "pytorch-2.9-python311")
    assert result.exit_code == 0, result
    assert git(repo, "log", "--format=%s", "pytorch-2.9-python311..pytorch-2.9-python311-pin0182a36").splitlines() \
        == ["Use python313Packages"]


def test_a_fan_out_makes_the_other_branches_and_names_the_stopped_base(repo, run_cli):
    other_pin(repo)
    result = run_cli("migrate", recipe(repo), "--repo", str(repo), "--from", "pytorch-2.9*")
    assert result.exit_code == 1, result
    made = sorted(b for b in git(repo, "branch", "--format=%(refname:short)").split() if b.endswith("-pin0182a36"))
    assert made == ["pytorch-2.9-b-pin0182a36", "pytorch-2.9-pin0182a36"]  # (pytorch-2.9-broken fails: refused)
    assert re.search(r"pytorch-2\.9-python311 → pytorch-2\.9-python311-pin0182a36 +skipped +1:- 2:66 ", result.stdout), \
        result.stdout
    assert re.search(r"^skipped: pytorch-2\.9-python311: pytorch-2\.9-python311 \([0-9a-f]+\): step 1/2 pin-swap "
                     r"changes nothing \(.*pins 46336d4, not '6a030d5'.*; no branch made$", result.stdout, re.M), \
        result.stdout
    assert "failed: pytorch-2.9-python311" not in result.stdout
    assert re.search(r"bases done: .*1 skipped", result.stdout), result.stdout


def test_a_fan_out_says_skipped_in_json_and_in_a_dry_run(repo, run_cli):
    """The JSON fan-out report (docs/fanout-schema.json) names the status and the reason; a dry run says the
    same as what a run would do, and keeps the report's exit code (0: nothing failed)."""
    other_pin(repo)
    refs = git(repo, "for-each-ref")
    bases = ["--from", "pytorch-2.9-python311", "--from", "pytorch-2.9"]
    dry = run_cli("migrate", recipe(repo), "--repo", str(repo), *bases, "--dry-run", "--format", "json")
    assert dry.exit_code == 0, dry
    assert git(repo, "for-each-ref") == refs
    rows = {row["base"]: row for row in json.loads(dry.stdout)["branches"]}
    assert rows["pytorch-2.9"]["status"] == "planned" and rows["pytorch-2.9"]["reason"] is None
    skipped = rows["pytorch-2.9-python311"]
    assert skipped["status"] == "skipped" and skipped["report"] is not None
    assert "step 1/2 pin-swap changes nothing" in skipped["reason"]
    assert skipped["reason"].endswith("; a run would make no branch")
    schema = json.loads((Path(__file__).parent.parent / "docs" / "fanout-schema.json").read_text())
    status = schema["properties"]["branches"]["items"]["properties"]["status"]["enum"]
    assert {row["status"] for row in rows.values()} <= set(status) and "skipped" in status
    done = run_cli("migrate", recipe(repo), "--repo", str(repo), *bases, "--format", "json")
    assert done.exit_code == 1, done
    rows = {row["base"]: row for row in json.loads(done.stdout)["branches"]}
    assert rows["pytorch-2.9"]["status"] == "created" and rows["pytorch-2.9-python311"]["status"] == "skipped"
    assert rows["pytorch-2.9-python311"]["reason"].endswith("; no branch made")
    assert rows["pytorch-2.9-python311"]["target_commit"] is None
    assert git(repo, "branch", "--list", "pytorch-2.9-python311-pin0182a36") == ""


def test_a_recipe_that_changes_nothing_at_all_is_still_nothing_to_change(repo, run_cli):
    result = run_cli("migrate", recipe(repo), "--repo", str(repo), "--from", "main", "--branch", "main-x")
    assert result.exit_code == 0, result
    assert result.stdout.startswith("nothing to change: recipe pin-0182a36 changes nothing on main")


# --- README and metadata steps are optional by default; optional = false makes them needed ------------------

README_STEP = '''
[[steps]]
kind = "readme-branch-table"
title = "README row"
files = ["README.md"]
{optional}[steps.params]
base = "base"
target = "swapped"
revision = "0182a361324364ae3f436a63005877674cf45efb"
[steps.params.columns]
"Nixpkgs Pin" = "0182a36"
'''
SWAP_STEP = '''
[[steps]]
kind = "word-swap"
title = "Swap alpha for gamma"
[steps.params]
old = "alpha"
new = "gamma"
'''


def readme_recipe(tmp_path, optional: str = "") -> str:
    path = tmp_path / "readme.toml"
    path.write_text('name = "readme"\nbase = "base"\ntarget = "swapped"\nfiles = ["pkgs/*.nix"]\n' + SWAP_STEP
                    + README_STEP.format(optional=optional))
    return str(path)


def test_a_readme_step_with_no_readme_is_optional_by_default(make_repo, tmp_path, run_cli):
    root = make_repo(FILES, branch="base")
    result = run_cli("migrate", readme_recipe(tmp_path), "--repo", str(root), "--migrations", str(MIGRATIONS))
    assert result.exit_code == 0, result
    assert "2/2 ------- README row — no change, no commit" in result.stdout
    assert git(root, "log", "--format=%s", "base..swapped").splitlines() == ["Swap alpha for gamma"]


def test_optional_false_makes_a_readme_step_needed(make_repo, tmp_path, run_cli):
    root = make_repo(FILES, branch="base")
    before = snapshot(root)
    result = run_cli("migrate", readme_recipe(tmp_path, "optional = false\n"), "--repo", str(root),
                     "--migrations", str(MIGRATIONS))
    assert_one_line_error(result, 1, "step 2/2 readme-branch-table changes nothing", "no branch made")
    assert snapshot(root) == before


def test_optional_must_be_a_boolean(make_repo, tmp_path, run_cli):
    root = make_repo(FILES, branch="base")
    for value in ('"yes"', "1", "[true]"):
        result = run_cli("migrate", readme_recipe(tmp_path, f"optional = {value}\n"), "--repo", str(root),
                         "--migrations", str(MIGRATIONS))
        assert_one_line_error(result, 2, "step 2 (readme-branch-table): 'optional' must be true or false")


def test_resume_holds_the_steps_still_to_run_to_the_rule(make_repo, tmp_path, run_cli):
    """A branch with step 1 (made as pinshift makes it); step 2 still changes files, step 3 finds nothing."""
    root = make_repo(FILES, branch="base")
    path = tmp_path / "three.toml"
    path.write_text('name = "three"\nbase = "base"\ntarget = "swapped"\nfiles = ["pkgs/*.nix"]\n' + SWAP_STEP
                    + SWAP_STEP.replace("Swap alpha for gamma", "Swap beta for delta").replace('"alpha"', '"beta"')
                    .replace('"gamma"', '"delta"')
                    + SWAP_STEP.replace("Swap alpha for gamma", "Swap zzz").replace('"alpha"', '"zzz"'))
    git(root, "switch", "-q", "-c", "swapped")
    (root / "pkgs/a.nix").write_text('{ x = "gamma"; y = "beta"; }\n')
    git(root, "commit", "-qam", "Swap alpha for gamma\n\nPinshift-Recipe: three\nPinshift-Step: 1/3 word-swap\n")
    git(root, "switch", "-q", "base")
    before = snapshot(root)
    result = run_cli("migrate", str(path), "--repo", str(root), "--migrations", str(MIGRATIONS), "--resume")
    assert_one_line_error(result, 1, "step 3/3 word-swap changes nothing", "branch swapped unchanged")
    assert snapshot(root) == before


def test_show_says_which_steps_are_needed(run_cli):
    shown = run_cli("show", "pytorch-2.10-cuda12_9")
    assert shown.exit_code == 0, shown
    assert re.findall(r"^  optional: .*$", shown.stdout, re.M) == [
        "  optional: no: if it changes nothing on a base, no branch is made",
        "  optional: no: if it changes nothing on a base, no branch is made",
        "  optional: yes (metadata-rev's default)",
        "  optional: yes (readme-branch-table's default)",
    ]
    pin_swap = run_cli("show", "--step", "pin-swap").stdout
    assert "a pin-swap that changes nothing on a base while\nother steps change files stops that base" in pin_swap
    assert "a step of this kind that changes nothing on a base stops that base" in pin_swap
    assert "stops the run\nwith a message listing what was found" not in pin_swap  # the old, untrue sentence
    readme = run_cli("show", "--step", "readme-branch-table").stdout
    assert "may change nothing on a base (optional by default)" in readme
