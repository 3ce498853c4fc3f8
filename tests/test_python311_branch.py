"""Issue 13, done-when 1: `pytorch-2.9-python311` made from a python312 branch by a four-step recipe.

The fixture is the demo generator's `pytorch-2.9-python312` branch (67 recipes: the 66 seed
variants and an AVX-only CPU variant full of look-alike names). The recipe renames every file
python312 -> python311 (rename-files), switches the package set (rename-attr), says Python 3.11
(replace-in-strings) and drops the Python-3.12-only paragraph (replace-in-strings, regex).

The expected files are written independently of the code under test: four by hand
(tests/fixtures/file-steps/python311/), and the 66 regular variants by `expected_python311` below,
which fills the demo's template text with Python 3.11 values using its own string handling (it
never calls pinshift). The two sources are cross-checked where they overlap.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, git
from migrate_repo import snapshot

from pinshift.cli import main
from pinshift.demo import matrix
from pinshift.demo.python_branch import BRANCH, RECIPE_FILE, build_python312_demo

TARGET = "pytorch-2.9-python311"
HAND_MADE = FIXTURES / "file-steps" / "python311"
PKGS = ".flox/pkgs"


def cli(*args: str) -> tuple[int, str, str]:
    """`pinshift ARGS` in-process through the real entry point: (exit code, stdout, stderr)."""
    holder = {}
    with CliRunner().isolation() as (out, err, _):
        holder["code"] = main(list(args))
        return holder["code"], out.getvalue().decode(), err.getvalue().decode()


def expected_python311() -> dict[str, bytes]:
    """File name -> bytes of the 66 regular variants on the python311 branch, straight from the template text.

    Independent of pinshift's code: the demo's template strings and variant tables are read as data
    and filled here with Python 3.11 names; the python312 paragraph is simply never there.
    """
    pin = {cuda: matrix._PIN.format(rev=matrix.OLD_REV, cuda=cuda) for cuda in ("true", "false")}
    common = {"pkgset": "python311Packages", "metadata_rev": 1}

    def flag_lines(isa: str) -> str:
        return "\n".join('    "' + flag + '"' for flag in matrix.ISAS[isa][0])

    files = {}
    for sm, (cap, family, hardware, driver) in matrix.GPUS.items():
        for isa in matrix.SM61_ISAS if sm == "61" else matrix.FULL_ISAS:
            _, platform, isa_desc = matrix.ISAS[isa]
            pname = "pytorch-python311-cuda12_9-sm" + sm + "-" + isa
            files[pname + ".nix"] = matrix._GPU.format(
                sm=sm, cap=cap, family=family, hardware=hardware, driver=driver, flags=flag_lines(isa),
                platform=platform, isa_desc=isa_desc, pname=pname, pin=pin["true"], **common)
    for isa in matrix.CPU_ISAS:
        _, platform, isa_desc = matrix.ISAS[isa]
        pname = "pytorch-python311-cpu-" + isa
        files[pname + ".nix"] = matrix._CPU.format(flags=flag_lines(isa), platform=platform, isa_desc=isa_desc,
                                                   pname=pname, pin=pin["false"], **common)
    files["pytorch-python311-darwin-mps.nix"] = matrix._DARWIN.format(
        pname="pytorch-python311-darwin-mps", pin=pin["false"], **common)
    return {name: text.replace("        - Python: 3.13\n", "        - Python: 3.11\n").encode()
            for name, text in files.items()}


def hand_made() -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(HAND_MADE.glob("*.nix"))}


def branch_files(root: Path, ref: str, under: str = PKGS) -> dict[str, bytes]:
    names = git(root, "ls-tree", "-r", "--name-only", ref, "--", under).split()
    return {name.rsplit("/", 1)[-1]: blob(root, ref, name) for name in names}


def blob(root: Path, ref: str, path: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f"{ref}:{path}"], cwd=root, capture_output=True,
                          check=True).stdout


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    """The python312 demo repository, migrated once: (root, dry-run JSON report, migrate stdout)."""
    root = build_python312_demo(tmp_path_factory.mktemp("python312") / "repo")
    code, report, err = cli("migrate", str(RECIPE_FILE), "--repo", str(root), "--dry-run", "--format", "json")
    assert code == 0, err
    code, out, err = cli("migrate", str(RECIPE_FILE), "--repo", str(root))
    assert code == 0, err
    return root, json.loads(report), out


def test_the_independent_expectations_agree_where_they_overlap():
    generated, by_hand = expected_python311(), hand_made()
    assert len(generated) == 66 and len(by_hand) == 4
    overlap = set(generated) & set(by_hand)
    assert overlap == {"pytorch-python311-cpu-avx2.nix", "pytorch-python311-cuda12_9-sm90-avx512.nix",
                       "pytorch-python311-darwin-mps.nix"}
    for name in overlap:
        assert generated[name] == by_hand[name], name


def test_every_output_file_equals_its_expected_file_byte_for_byte(migrated):
    root, _, _ = migrated
    expected = {**expected_python311(), **hand_made()}
    produced = branch_files(root, TARGET)
    assert sorted(produced) == sorted(expected)  # 67 files, every one renamed, none lost or added
    assert len(produced) == 67
    for name in expected:
        assert produced[name] == expected[name], name
    # nothing outside the recipe's files changed
    assert git(root, "diff", "--name-only", BRANCH, TARGET, "--", ".", f":!{PKGS}") == ""


def test_the_fixture_is_what_the_recipe_is_meant_for(migrated):
    """The input really has what the steps remove: python312 names, the package set, the paragraph, traps."""
    root, _, _ = migrated
    before = branch_files(root, BRANCH)
    assert len(before) == 67 and all(name.startswith("pytorch-python312-") for name in before)
    sm90 = before["pytorch-python312-cuda12_9-sm90-avx512.nix"].decode()
    assert "# Package name: pytorch-python312-cuda12_9-sm90-avx512\n" in sm90
    assert 'pname = "pytorch-python312-cuda12_9-sm90-avx512";' in sm90
    assert "nixpkgs_pinned.python312Packages.torch" in sm90
    assert "- Python: 3.12\n\n        Python 3.12 builds share the nixpkgs pin of vLLM 0.14.0" in sm90
    assert "pytorch-python312-cpu-avx2 (not this file)" in before["pytorch-python312-cpu-avx.nix"].decode()


def test_one_commit_per_step_and_git_sees_renames(migrated):
    root, _, out = migrated
    subjects = git(root, "log", "--reverse", "--format=%s", f"{BRANCH}..{TARGET}").splitlines()
    assert subjects == ["Rename the recipes from python312 to python311",
                        "Use python311Packages instead of python312Packages",
                        "Say Python 3.11 in the long description",
                        "Drop the vLLM 0.14.0 paragraph (Python 3.12 only)"]
    status = git(root, "diff", "-M", "--name-status", BRANCH, f"{TARGET}~3").splitlines()
    assert len(status) == 67 and all(line.startswith("R") for line in status)
    stat = git(root, "diff", "-M", "--stat=200", BRANCH, f"{TARGET}~3")
    assert f"{PKGS}/{{pytorch-python312-darwin-mps.nix => pytorch-python311-darwin-mps.nix}}" in stat
    assert stat.rstrip().endswith("67 files changed, 136 insertions(+), 136 deletions(-)")
    body = git(root, "log", "-1", "--format=%B", f"{TARGET}~3")
    assert "67 files changed (67 renamed), 136 edits\n" in body
    assert "  1/4 " in out and "67 files (67 renamed), 136 edits" in out
    # later steps edited the new paths
    assert git(root, "diff", "--name-only", f"{TARGET}~3", f"{TARGET}~2").split()[0] == \
        f"{PKGS}/pytorch-python311-cpu-armv8_2.nix"


def test_report_lists_each_rename_and_validates_against_the_schema(migrated):
    jsonschema = pytest.importorskip("jsonschema")
    root, report, _ = migrated
    schema = json.loads((Path(__file__).parent.parent / "docs" / "report-schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(report)
    first = report["steps"][0]
    assert first["kind"] == "rename-files" and len(first["renamed"]) == 67
    assert {"from": f"{PKGS}/pytorch-python312-cpu-avx.nix", "to": f"{PKGS}/pytorch-python311-cpu-avx.nix"} \
        in first["renamed"]
    assert "cloned" not in first and "removed" not in first
    avx = [e for e in first["edits"] if e["path"] == f"{PKGS}/pytorch-python311-cpu-avx.nix"]
    assert [(e["line"], e["before"], e["after"]) for e in avx] == [
        (2, "pytorch-python312-cpu-avx", "pytorch-python311-cpu-avx"),  # the header comment
        (5, "pytorch-python312-cpu-avx", "pytorch-python311-cpu-avx"),  # `…-cpu-avx.nix` in a comment
        (28, "pytorch-python312-cpu-avx", "pytorch-python311-cpu-avx"),  # variantName's string
        (32, "pytorch-python312-cpu-avx", "pytorch-python311-cpu-avx"),  # pname
    ]
    assert all("renamed" not in step for step in report["steps"][1:])
    # The 66 regular renames make the same two self-reference edits, each with its own name: one group;
    # the AVX-only recipe (four edits, look-alike names) is a group of its own.
    regular, odd = first["groups"]["changes"]
    assert (regular["operation"], len(regular["files"]), regular["edits"]) == ("renamed", 66, 132)
    assert (odd["operation"], odd["files"], odd["edits"]) == ("renamed", [f"{PKGS}/pytorch-python311-cpu-avx.nix"], 4)
    assert sorted(regular["files"] + odd["files"]) == sorted(first["files_changed"])


@pytest.mark.nix
def test_nix_parses_every_output_and_only_the_intended_tokens_change(migrated, nix_oracle):
    root, _, _ = migrated
    before, after = branch_files(root, BRANCH), branch_files(root, TARGET)
    for name, data in after.items():
        ok, canonical = nix_oracle(data)
        assert ok, f"{name}: {canonical}"
    ok, canonical_before = nix_oracle(before["pytorch-python312-cpu-avx2.nix"])
    ok_after, canonical_after = nix_oracle(after["pytorch-python311-cpu-avx2.nix"])
    # Nix prints an indented string without its indentation, newlines as \n
    paragraph = "\\n\\nPython 3.12 builds share the nixpkgs pin of vLLM 0.14.0, so\\nvLLM can load this torch as its own."
    assert paragraph in canonical_before
    assert canonical_after == (canonical_before.replace("pytorch-python312-cpu-avx2", "pytorch-python311-cpu-avx2")
                               .replace("python312Packages", "python311Packages")
                               .replace("Python: 3.12", "Python: 3.11").replace(paragraph, ""))


def test_a_second_run_on_its_own_output_changes_nothing(migrated):
    root, _, _ = migrated
    code, out, err = cli("migrate", str(RECIPE_FILE), "--repo", str(root), "--from", TARGET, "--branch", "again",
                         "--dry-run", "--check")
    assert code == 0, err
    assert out.rstrip().endswith("— nothing to change")
    code, out, err = cli("migrate", str(RECIPE_FILE), "--repo", str(root), "--from", TARGET, "--branch", "again")
    assert code == 0, err
    assert out.startswith(f"nothing to change: recipe pytorch-2.9-python311 changes nothing on {TARGET}")
    assert out.rstrip().endswith("no branch created")  # issue 16: no branch identical to its base
    assert git(root, "branch", "--list", "again") == ""


def test_dry_run_touches_nothing(tmp_path, run_cli):
    root = build_python312_demo(tmp_path / "repo")
    before = snapshot(root)
    result = run_cli("migrate", str(RECIPE_FILE), "--repo", str(root), "--dry-run")
    assert result.exit_code == 0, result
    assert snapshot(root) == before
    assert "renamed: .flox/pkgs/pytorch-python312-cpu-avx.nix → .flox/pkgs/pytorch-python311-cpu-avx.nix" in result.stdout
    assert "--- a/.flox/pkgs/pytorch-python312-cpu-avx.nix\n+++ b/.flox/pkgs/pytorch-python311-cpu-avx.nix" in result.stdout


def test_text_report_shows_the_66_same_renames_once(tmp_path, run_cli):
    root = build_python312_demo(tmp_path / "repo")
    text = run_cli("migrate", str(RECIPE_FILE), "--repo", str(root), "--dry-run").stdout
    step = text[text.index("step 1/4"): text.index("step 2/4")]
    assert step.count("\nrenamed: ") == 2 and step.count("\n--- a/") == 2
    assert (f"renamed: {PKGS}/pytorch-python312-cpu-armv8_2.nix → {PKGS}/pytorch-python311-cpu-armv8_2.nix\n"
            f"--- a/{PKGS}/pytorch-python312-cpu-armv8_2.nix\n") in step
    assert "… and 65 more files with this change (--verbose lists them)\n" in step
    verbose = run_cli("migrate", str(RECIPE_FILE), "--repo", str(root), "--dry-run", "--verbose").stdout
    assert f"\n  {PKGS}/pytorch-python312-darwin-mps.nix → {PKGS}/pytorch-python311-darwin-mps.nix\n" in verbose


def test_markdown_report_shows_renames_with_their_diffs(tmp_path, run_cli):
    root = build_python312_demo(tmp_path / "repo")
    result = run_cli("migrate", str(RECIPE_FILE), "--repo", str(root), "--dry-run", "--format", "markdown",
                     "--markdown-limit", "400000")
    assert result.exit_code == 0, result
    # 66 renames make the same two self-reference edits (header comment, pname): one diff, every rename listed;
    # the AVX-only recipe also renames its variantName and a comment naming its own file: a diff of its own.
    pkgs = ".flox/pkgs/pytorch-python31"
    assert (f"#### Step 1: 66 files with this change — 132 edits; shown: `{pkgs}2-cpu-armv8_2.nix` → "
            f"`{pkgs}1-cpu-armv8_2.nix`\n") in result.stdout
    assert "- `pytorch-python312-darwin-mps.nix` → `pytorch-python311-darwin-mps.nix`\n" in result.stdout
    assert (f"#### Step 1: `{pkgs}2-cpu-avx.nix` → `{pkgs}1-cpu-avx.nix` — 4 edits\n"
            in result.stdout)
    assert "- each file's own name → its new name — 136 edits in 67 files\n" in result.stdout
    assert "| 1 | Rename the recipes from python312 to python311 | `rename-files` | 67 (67 renamed) | 136 | 0 |" \
        in result.stdout


def test_parallel_workers_plan_exactly_what_one_process_plans(migrated):
    """Forked workers read renamed files through the WorkingSet overlay (git objects, batched), like the parent."""
    from pinshift.git.repo import Repository
    from pinshift.recipes.recipe import load_recipe_file, validate_recipe
    from pinshift.planning.jobs import RunOptions
    from pinshift.planning.runner import plan_recipe
    from pinshift.steps.registry import available_kinds

    root, _, _ = migrated
    repository = Repository.open(root)
    recipe = load_recipe_file(RECIPE_FILE)
    steps = validate_recipe(recipe, available_kinds(root))
    commit = git(root, "rev-parse", BRANCH).strip()
    serial = plan_recipe(repository.tree(commit), recipe, steps, RunOptions(jobs=1))
    parallel = plan_recipe(repository.tree(commit), recipe, steps, RunOptions(jobs=2))
    assert parallel == serial
    assert [len(step.changed) for step in serial.steps] == [67, 67, 66, 66]
