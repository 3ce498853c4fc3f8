"""`pinshift status` (issue 20 item 1 and 3) over two demo-built repositories (tests/status_repos.py).

The expected tables are written by hand from what the repositories hold (see status_repos.py's
docstring), not from running the command.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from conftest import git
from migrate_repo import assert_one_line_error, snapshot
from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe
from status_repos import THIRD_REV, build_pytorch, build_vllm, commit_branch, stub_nixpkgs  # noqa: F401

SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "status-schema.json").read_text())

HEADER = ("| Repo | Branch | Nixpkgs Pin | Package | CUDA | Python | GPU | Package Set | Recipe Pattern | Variants "
          "| Drift |",
          "|---|---|---|---|---|---|---|---|---|---|---|")
DEMO_GPUS = "sm61 / sm75 / sm80 / sm86 / sm89 / sm90 / sm100 / sm103 / sm120"  # pinshift.demo.matrix.GPUS
ROWS = (
    "| `build-pytorch` | `main` | caller's nixpkgs | pytorch ?[^1] | 12.8[^2] | 3.13[^3] "
    "| sm61 / sm75 / sm80 / sm86 / sm89 / sm90 / sm100 / sm120 | `python3Packages` | Flox function args | 58 | – |",
    f"| `build-pytorch` | `pytorch-2.9` | `6a030d5` | pytorch ?[^4] | 12.9 | 3.13[^3] | {DEMO_GPUS} "
    "| `python3Packages` | self-contained fetchTarball | 66 | – |",
    f"| `build-pytorch` | `pytorch-2.9-python312` | `6a030d5` | pytorch ?[^4] | 12.9 | 3.12 | {DEMO_GPUS} "
    "| `python312Packages` | self-contained fetchTarball | 67 | – |",
    "| `build-pytorch` | `pytorch-2.10` | `6a030d5` (6) / `2017d6d` (2) | pytorch 2.10.0 (override) "
    "| 13.0 (4) / 13.1 (2) | 3.13[^3] | sm90 / sm100 / sm120 | `python3Packages` "
    "| self-contained fetchTarball + source override | 8 | pin drift |",
    f"| `build-pytorch` | `pytorch-2.10-cuda12_9` | `0182a36` | pytorch ?[^4] | 12.9 | 3.13 | {DEMO_GPUS} "
    "| `python313Packages` | self-contained fetchTarball | 66 | – |",
    "| `build-vllm` | `main` | `0182a36` | vllm ?[^4] | 12.9 | 3.12 (2) / 3.13 (2) | sm90 / sm100 "
    "| `python312Packages` (2) / `python313Packages` (2) | self-contained fetchTarball | 4 | – |",
    "| `build-vllm` | `mixed` | `0182a36` (3) / `6a030d5` (2) | vllm ?[^4] | 12.9 | 3.13 (4) / 3.12 (1) "
    "| sm89 / sm90 / sm100 / sm120 | `python313Packages` (4) / `python312Packages` (1) | self-contained fetchTarball "
    "| 5 | pin drift |",
    "| `build-vllm` | `tie` | `0182a36` (2) / `6a030d5` (2) | vllm ?[^4] | 12.9 | 3.12 (2) / 3.13 (2) | sm90 / sm100 "
    "| `python312Packages` (2) / `python313Packages` (2) | self-contained fetchTarball | 4 | pin drift |",
)
# every unknown or weakly sourced value is explained once (issue 33)
FOOTNOTES = (
    "[^1]: version ?: not stated in the recipes; they use their caller's nixpkgs",
    "[^2]: CUDA 12.8: read from the file names (file name cuda12_8); the recipes name no cudaPackages set",
    "[^3]: Python 3.13: read from the file names; python3Packages is the pin's default",
    "[^4]: version ?: not stated in the recipes; --nixpkgs DIR reads it from each pin",
)
ALIGNED = ("no (caller's nixpkgs)", "no", "no", "no", "yes", "yes", "partly (3 of 5)", "partly (2 of 4)")


@pytest.fixture(autouse=True)
def no_columns(monkeypatch):
    """Text tables at the default width, whatever the terminal the tests run in says."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    """(build-pytorch, build-vllm) side by side; no test may change them (tests that do copy them)."""
    parent = tmp_path_factory.mktemp("status")
    return build_pytorch(parent / "build-pytorch"), build_vllm(parent / "build-vllm")


def both(repos) -> list[str]:
    return ["--repo", str(repos[0]), "--repo", str(repos[1])]


def test_markdown_table_is_the_hand_written_one(run_cli, repos):
    result = run_cli("status", *both(repos), "--format", "markdown")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "\n".join(HEADER + ROWS + ("",) + FOOTNOTES) + "\n"


def test_align_to_adds_a_column_and_names_the_target(run_cli, repos):
    pytorch, vllm = repos
    vllm_main = git(vllm, "rev-parse", "main").strip()
    result = run_cli("status", *both(repos), "--format", "markdown", "--align-to", f"{vllm}@main")
    assert result.exit_code == 0, result
    header = HEADER[0] + " Aligned to build-vllm@main (0182a36) |"
    rows = [f"{row} {aligned} |" for row, aligned in zip(ROWS, ALIGNED)]
    target = f"- target: `0182a36`, the pin of build-vllm@main ({vllm_main[:7]}, 4 recipes)"
    assert result.stdout == "\n".join([header, HEADER[1] + "---|", *rows, "", target, "", *FOOTNOTES]) + "\n"


def test_relative_align_to_and_branch_globs_from_inside_the_repository(run_cli, repos, monkeypatch):
    pytorch, _ = repos
    monkeypatch.setenv("COLUMNS", "60")  # --wide shows every column whatever the width (test_status_width.py)
    result = run_cli("status", "--branches", "pytorch-2.10*", "--align-to", "../build-vllm@main", "--wide", cwd=pytorch)
    assert result.exit_code == 0, result
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2 branches in 1 repository; target: 0182a36, the pin of build-vllm@main (")
    assert lines[2].split() == ["Branch", "Nixpkgs", "Pin", "Package", "CUDA", "Python", "GPU", "Package", "Set",
                                "Recipe", "Pattern", "Variants", "Drift", "Aligned"]
    assert lines[3] == "build-pytorch" and lines[6] == "" and lines[7].startswith("[1] ")  # footnotes follow
    assert lines[4].startswith("  pytorch-2.10  ") and lines[5].startswith("  pytorch-2.10-cuda12_9  ")
    assert lines[4].split()[-1] == "no" and lines[5].split()[-1] == "yes"
    assert "  6a030d5 (6) / 2017d6d (2)  " in lines[4] and "  fetchTarball + source override  " in lines[4]
    assert lines[2].index("Aligned") == len(lines[4]) - 2  # columns line up: "no" sits under "Aligned"


def test_json_validates_and_carries_every_count(run_cli, repos):
    result = run_cli("status", *both(repos), "--format", "json", "--align-to", f"{repos[1]}@main")
    assert result.exit_code == 0, result
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    rows = {(r["repository"], r["branch"]): r for r in report["branches"]}
    assert len(rows) == 8
    mixed = rows[("build-pytorch", "pytorch-2.10")]
    assert [(p["revision"], p["recipes"]) for p in mixed["pins"]] == [(OLD_REV, 6), (THIRD_REV, 2)]
    assert [(c["version"], c["recipes"]) for c in mixed["cuda"]] == [("13.0", 4), ("13.1", 2)]
    assert [s["source"] for c in mixed["cuda"] for s in c["sources"]] == ["cudaPackages_13_0 overlay",
                                                                          "cudaPackages_13_1 overlay"]
    assert mixed["packages"] == [{"package": "pytorch", "recipes": 8, "attribute": "torch", "versions": [
        {"version": "2.10.0", "origin": "override", "recipes": 8, "sources": [{"source": "version", "recipes": 8}]}]}]
    assert mixed["kinds"] == [{"kind": "gpu", "recipes": 6}, {"kind": "cpu", "recipes": 2}]
    assert [g["target"] for g in mixed["gpu"]] == ["sm90", "sm100", "sm120"]
    pattern = "self-contained fetchTarball + source override"
    assert mixed["patterns"] == [{"pattern": pattern, "recipes": 8, "sources": [{"source": pattern, "recipes": 8}]}]
    assert mixed["drift"] == ["pin drift"] and mixed["alignment"]["state"] == "not aligned"
    main = rows[("build-pytorch", "main")]
    assert (main["pins"], main["uses_caller_nixpkgs"], main["variants"]) == ([], 58, 58)
    assert main["cuda"] == [{"version": "12.8", "recipes": 51, "sources": [{"source": "file name cuda12_8",
                                                                             "recipes": 51}]}]
    assert rows[("build-pytorch", "pytorch-2.9-python312")]["python"] == [
        {"version": "3.12", "recipes": 67, "sources": [{"source": "python312Packages", "recipes": 67}]}]
    assert rows[("build-vllm", "tie")]["alignment"] == {"state": "partly", "aligned": False,
                                                         "recipes_on_target": 2, "recipes": 4}
    assert report["align_to"]["revision"] == NEW_REV and report["align_to"]["recipes"] == 4
    assert report["nixpkgs"] is None and all(p["pytorch"] is None for r in rows.values() for p in r["pins"])
    commits = {b: c for b, c in (line.split() for line in git(repos[0], "for-each-ref", "--format=%(refname:short) "
                                                                "%(objectname)", "refs/heads").splitlines())}
    assert rows[("build-pytorch", "pytorch-2.10")]["commit"] == commits["pytorch-2.10"]


def test_schema_rejects_a_report_missing_a_figure(run_cli, repos):
    report = json.loads(run_cli("status", "--repo", str(repos[1]), "--format", "json").stdout)
    del report["branches"][0]["cuda"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, SCHEMA)
    report = json.loads(run_cli("status", "--repo", str(repos[1]), "--format", "json").stdout)
    del report["branches"][0]["python"][0]["sources"]  # every counted value says where it came from
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, SCHEMA)
    report = json.loads(run_cli("status", "--repo", str(repos[1]), "--format", "json").stdout)
    report["branches"][0]["gpu"][0]["target"] = "9.0"  # one notation: sm<N>
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, SCHEMA)


def test_status_reads_commits_only_and_changes_nothing(run_cli, repos, tmp_path):
    pytorch = tmp_path / "copy"
    shutil.copytree(repos[0], pytorch)
    (pytorch / "untracked.nix").write_text("{ }\n")
    (pytorch / ".flox/pkgs/pytorch-python313-cpu-avx2.nix").write_text("{ edited = true; }\n")
    git(pytorch, "stash", "push", "-q", "-m", "wip")
    (pytorch / ".flox/pkgs/pytorch-python313-cpu-avx2.nix").write_text("{ edited = 2; }\n")
    before = snapshot(pytorch)
    result = run_cli("status", "--format", "json", cwd=pytorch)
    assert result.exit_code == 0
    assert snapshot(pytorch) == before
    rows = {r["branch"]: r for r in json.loads(result.stdout)["branches"]}
    assert rows["pytorch-2.9"]["variants"] == 66  # the commit's files, not the edited checkout


# --- --nixpkgs: the PyTorch version at each pin ------------------------------------------------------


def test_nixpkgs_clone_gives_the_pytorch_version_of_each_pin(run_cli, make_repo, stub_nixpkgs):
    clone, first, second = stub_nixpkgs
    cpu, gpu, gpu2 = Variant("cpu", "avx2"), Variant("90", "avx512"), Variant("90", "avx2")
    repo = make_repo({f".flox/pkgs/{cpu.filename}": render_recipe(cpu, first)}, branch="old")
    commit_branch(repo, "new", {f".flox/pkgs/{cpu.filename}": render_recipe(cpu, second)})
    commit_branch(repo, "both", {f".flox/pkgs/{cpu.filename}": render_recipe(cpu, first),
                                 f".flox/pkgs/{gpu.filename}": render_recipe(gpu, second),
                                 f".flox/pkgs/{gpu2.filename}": render_recipe(gpu2, second)})
    commit_branch(repo, "elsewhere", {f".flox/pkgs/{cpu.filename}": render_recipe(cpu, OLD_REV)})
    result = run_cli("status", "--repo", str(repo), "--nixpkgs", str(clone), "--format", "markdown")
    assert result.exit_code == 0, result
    package_column = [line.split(" | ")[3] for line in result.stdout.splitlines()[2:6]]
    # both, elsewhere, new, old: each recipe's torch at its pin, most recipes first (issue 33: no version stated);
    # evaluated there (issue 40), but for the GPU recipes of `both`, which fail at the second pin (it renamed
    # gpuTargets): they keep the static read of the pin, and a note counts them
    assert package_column == ["pytorch 2.10.0 (2) / 2.9.1 (1)", "pytorch ?[^2]", "pytorch 2.10.0", "pytorch 2.9.1"]
    assert result.stdout.splitlines()[2].split(" | ")[2] == f"`{second[:7]}` (2) / `{first[:7]}` (1)"
    assert result.stdout.endswith(f"- note: nixpkgs {OLD_REV[:12]} (repo@elsewhere) is not in {clone}; fetch it "
                                  f"there (git -C {clone} fetch origin {OLD_REV})\n"
                                  "- note: repo@both: 2 recipes fail at their real pins (pinshift diff --nixpkgs DIR "
                                  "says where)\n\n"
                                  "[^1]: Python 3.13: read from the file names; python3Packages is the pin's default\n"
                                  f"[^2]: version ?: not stated in the recipes; nixpkgs {OLD_REV[:7]} is not in the "
                                  "--nixpkgs clone\n")
    report = json.loads(run_cli("status", "--repo", str(repo), "--nixpkgs", str(clone), "--format", "json").stdout)
    jsonschema.validate(report, SCHEMA)
    assert {r["branch"]: [p["pytorch"] for p in r["pins"]] for r in report["branches"]} == {
        "both": ["2.10.0", "2.9.1"], "elsewhere": [None], "new": ["2.10.0"], "old": ["2.9.1"]}
    assert report["real"] == {"checked": True, "unchecked": []}
    versions = {r["branch"]: [(v["version"], v["origin"], v["recipes"]) for v in r["packages"][0]["versions"]]
                for r in report["branches"]}
    assert versions == {"both": [("2.10.0", "pin", 2), ("2.9.1", "real", 1)], "elsewhere": [("?", None, 1)],
                        "new": [("2.10.0", "real", 1)], "old": [("2.9.1", "real", 1)]}


def test_nixpkgs_that_is_not_a_clone_is_one_line(run_cli, repos, tmp_path):
    result = run_cli("status", "--repo", str(repos[1]), "--nixpkgs", str(tmp_path))
    assert_one_line_error(result, 2, "not a git repository; pass --nixpkgs DIR (a local nixpkgs git clone) or set "
                                     "PINSHIFT_NIXPKGS")


# --- a branch that does not parse, or cannot be read ---------------------------------------------------


def test_unparsable_branch_is_a_row_with_its_problem(run_cli, repos, tmp_path):
    repo = tmp_path / "build-vllm"
    shutil.copytree(repos[1], repo)
    good = render_recipe(Variant("90", "avx512"), NEW_REV)
    commit_branch(repo, "broken", {".flox/pkgs/a.nix": good, ".flox/pkgs/b.nix": "{ pname = \"x\" \n",
                                   ".flox/pkgs/c.nix": "let in in\n"})
    result = run_cli("status", "--repo", str(repo), "--branches", "broken", "--branches", "main",
                     "--format", "markdown")
    assert result.exit_code == 0, result
    lines = result.stdout.splitlines()
    assert lines[2] == ("| `build-vllm` | `broken` | `0182a36` | a ?[^1] | 12.9 | 3.13 | sm90 | `python3Packages` "
                        "| self-contained fetchTarball | 1 | 2 unparsable files |")  # a.nix: package `a`
    assert lines[3].startswith("| `build-vllm` | `main` |")
    assert lines[5].startswith("- `build-vllm@broken`: 2 recipe files with syntax problems, not counted: "
                               ".flox/pkgs/b.nix:") and lines[5].endswith("(and 1 more; --verbose lists them)")
    assert run_cli("status", "--repo", str(repo), "--check").exit_code == 1
    assert run_cli("status", "--repo", str(repo), "--branches", "main", "--check").exit_code == 0


def test_branch_git_cannot_read_is_a_row_with_its_error(run_cli, repos, tmp_path):
    repo = tmp_path / "build-vllm"
    shutil.copytree(repos[1], repo)
    blob = git(repo, "ls-tree", "-r", "tie").split()[2]
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    result = run_cli("status", "--repo", str(repo), "--format", "json")
    assert result.exit_code == 0, result
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    rows = {r["branch"]: r for r in report["branches"]}
    assert "is missing" in rows["tie"]["error"] and rows["tie"]["variants"] == 0
    assert rows["main"]["error"] is None and rows["main"]["variants"] == 4
    text = run_cli("status", "--repo", str(repo)).stdout
    assert "  tie  " in text and text.split("  tie  ")[1].split("\n")[0].split()[-1] == "unreadable"
    assert "\nbuild-vllm@tie: cannot be read: " in text


# --- bad input: one line, exit 2, nothing changed ---------------------------------------------------------


def test_missing_repo(run_cli, tmp_path):
    result = run_cli("status", "--repo", str(tmp_path / "nowhere"))
    assert_one_line_error(result, 2, f"--repo {tmp_path / 'nowhere'}: ", "is not a directory")


def test_not_a_repository(run_cli, tmp_path):
    result = run_cli("status", "--repo", str(tmp_path))
    assert_one_line_error(result, 2, f"{tmp_path} is not a git repository; give a local clone")


def test_branch_glob_matching_nothing(run_cli, repos):
    result = run_cli("status", "--repo", str(repos[1]), "--branches", "release-*")
    assert_one_line_error(result, 2, "no branch matches --branches release-*: build-vllm (main, mixed, tie)")


def test_align_to_bad_ref_lists_the_closest_branches(run_cli, repos):
    pytorch, vllm = repos
    before = snapshot(vllm)
    result = run_cli("status", "--repo", str(pytorch), "--align-to", f"{vllm}@mian")
    assert_one_line_error(result, 2, f"--align-to {vllm}@mian: 'mian' is not a branch or commit of {vllm}",
                          "closest branches: main")
    assert snapshot(vllm) == before


def test_align_to_not_a_repository(run_cli, repos, tmp_path):
    result = run_cli("status", "--repo", str(repos[0]), "--align-to", f"{tmp_path}@main")
    assert_one_line_error(result, 2, f"--align-to {tmp_path}@main: {tmp_path} is not a git repository")


def test_align_to_ambiguous_pin_lists_counts_and_majority_resolves_it(run_cli, repos):
    pytorch, vllm = repos
    result = run_cli("status", "--repo", str(pytorch), "--align-to", f"{vllm}@mixed")
    assert_one_line_error(result, 2, "build-vllm@mixed (", "uses 2 nixpkgs pins: 0182a36 (3 recipes), "
                          "6a030d5 (2 recipes); pass --pick majority to align to the most common")
    result = run_cli("status", "--repo", str(pytorch), "--align-to", f"{vllm}@mixed", "--pick", "majority",
                     "--branches", "pytorch-2.10-cuda12_9")
    assert result.exit_code == 0, result
    assert "target: 0182a36, the pin of build-vllm@mixed (" in result.stdout
    assert "3 of 5 pinned recipes, a majority (60 %)" in result.stdout.replace("\n    ", " ")
    result = run_cli("status", "--repo", str(pytorch), "--align-to", f"{vllm}@tie", "--pick", "majority")
    assert_one_line_error(result, 2, "build-vllm@tie (", "has no majority pin: 0182a36 (2 recipes), 6a030d5 (2 recipes)")


def test_align_to_a_branch_without_a_pin(run_cli, repos):
    pytorch, _ = repos
    result = run_cli("status", "--repo", str(pytorch), "--align-to", f"{pytorch}@main")
    assert_one_line_error(result, 2, "build-pytorch@main (", "pins no nixpkgs revision: its 58 recipes use the "
                          "caller's nixpkgs (Flox function arguments)")


def test_align_to_without_a_branch_name(run_cli, repos):
    result = run_cli("status", "--repo", str(repos[0]), "--align-to", "@main")
    assert_one_line_error(result, 2, "--align-to @main: expected DIR@BRANCH")


def test_recipe_and_pick_need_align_to(run_cli, repos):
    assert_one_line_error(run_cli("status", "--repo", str(repos[0]), "--recipe", "pytorch-2.9"), 2,
                          "--recipe BRANCH needs --align-to DIR@BRANCH")
    assert_one_line_error(run_cli("status", "--repo", str(repos[0]), "--pick", "majority"), 2,
                          "--pick needs --align-to")


def test_invalid_files_glob(run_cli, repos):
    assert_one_line_error(run_cli("status", "--repo", str(repos[0]), "--files", "[z-a].nix"), 2,
                          "--files [z-a].nix: invalid glob")


# --- --recipe: the recipe that aligns a branch ------------------------------------------------------------


def test_recipe_for_a_branch_migrates_it_onto_the_target_pin(run_cli, repos, tmp_path, nix_oracle):
    pytorch = tmp_path / "build-pytorch"
    shutil.copytree(repos[0], pytorch)
    shutil.copytree(repos[1], tmp_path / "build-vllm")
    result = run_cli("status", "--align-to", "../build-vllm@main", "--recipe", "pytorch-2.9", cwd=pytorch)
    assert result.exit_code == 0, result
    assert result.stdout == (
        "# Aligns build-pytorch@pytorch-2.9 to the nixpkgs pin of build-vllm@main (0182a36 when this was written).\n"
        "# Written by: pinshift status --align-to ../build-vllm@main --recipe pytorch-2.9\n"
        "# Save it as .pinshift/recipes/align-pytorch-2.9.toml in build-pytorch, then: pinshift migrate "
        "align-pytorch-2.9\n"
        'name = "align-pytorch-2.9"\n'
        'description = "pytorch-2.9 onto the nixpkgs pin of build-vllm@main"\n'
        'base = "pytorch-2.9"\n'
        'target = "pytorch-2.9-nixpkgs-0182a36"\n'
        'files = [".flox/pkgs/**/*.nix"]\n'
        "\n"
        "[[steps]]\n"
        'kind = "pin-swap"\n'
        'title = "Pin nixpkgs 6a030d5 to the pin of build-vllm@main"\n'
        "[steps.params]\n"
        f'old = "{OLD_REV}"\n'
        'new = { repo = "../build-vllm", ref = "main" }\n')
    assert result.stderr.startswith("pinshift: recipe align-pytorch-2.9: build-pytorch@pytorch-2.9 onto 0182a36")
    (pytorch / ".pinshift" / "recipes").mkdir(parents=True)
    (pytorch / ".pinshift" / "recipes" / "align-pytorch-2.9.toml").write_text(result.stdout)
    migrated = run_cli("migrate", "align-pytorch-2.9", cwd=pytorch)
    assert migrated.exit_code == 0, migrated
    status = run_cli("status", "--align-to", "../build-vllm@main", "--branches", "pytorch-2.9*", "--format", "json",
                     cwd=pytorch)
    rows = {r["branch"]: r for r in json.loads(status.stdout)["branches"]}
    assert rows["pytorch-2.9-nixpkgs-0182a36"]["alignment"]["state"] == "aligned"
    assert rows["pytorch-2.9-nixpkgs-0182a36"]["variants"] == 66
    assert rows["pytorch-2.9"]["alignment"]["state"] == "not aligned"
    text = git(pytorch, "show", "pytorch-2.9-nixpkgs-0182a36:.flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix")
    accepted, _ = nix_oracle(text.encode())
    assert accepted and NEW_REV in text and OLD_REV not in text


def test_recipe_for_a_mixed_branch_swaps_each_other_pin(run_cli, repos):
    pytorch, vllm = repos
    result = run_cli("status", "--repo", str(pytorch), "--align-to", f"{vllm}@main", "--recipe",
                     "build-pytorch@pytorch-2.10")
    assert result.exit_code == 0, result
    olds = [line for line in result.stdout.splitlines() if line.startswith("old = ")]
    assert olds == [f'old = "{OLD_REV}"', f'old = "{THIRD_REV}"']
    assert result.stdout.count(f'new = {{ repo = "{vllm}", ref = "main" }}') == 2  # absolute as given
    assert 'hash = "compute"' not in result.stdout  # the nixpkgs fetchers carry no hash (the source's does)


def test_recipe_refusals(run_cli, repos):
    pytorch, vllm = repos
    base = ["status", "--repo", str(pytorch), "--repo", str(vllm), "--align-to", f"{vllm}@main", "--recipe"]
    assert_one_line_error(run_cli(*base, "main"), 2, "several repositories have that branch (build-pytorch@main, "
                          "build-vllm@main); name one as REPO@BRANCH")
    assert_one_line_error(run_cli(*base, "build-pytorch@main"), 2, "58 recipes use the caller's nixpkgs",
                          "pinshift migrate flox-args-to-pinned --from main --branch main-pinned")
    assert_one_line_error(run_cli(*base, "pytorch-2.10-cuda12_9"), 2, "the branch is aligned already")
    assert_one_line_error(run_cli(*base, "nope"), 2, "--recipe nope: no such branch among the rows")


def test_readme_and_docs_show_the_hand_written_rows():
    """The tables README.md and docs/status.md show are rows of the hand-written tables: this file's (the
    demo pair, with alignment) and test_status_kinds.py's (the other kinds), their footnotes too."""
    from test_status_kinds import FOOTNOTES as KIND_FOOTNOTES
    from test_status_kinds import ROWS as KIND_ROWS

    root = Path(__file__).parents[1]
    expected = {f"{row} {aligned} |" for row, aligned in zip(ROWS, ALIGNED)} | set(KIND_ROWS)
    for doc in ("README.md", "docs/status.md"):
        text = (root / doc).read_text().splitlines()
        shown = [line for line in text if line.startswith("| `build-")]
        assert len(shown) >= 6 and set(shown) <= expected, doc
        notes = [line for line in text if line.startswith("[^")]
        assert notes and set(notes) <= set(FOOTNOTES) | set(KIND_FOOTNOTES), doc


def test_symlinked_and_binary_recipes_are_skipped_with_their_reason(run_cli, make_repo):
    recipe = render_recipe(Variant("cpu", "avx2"), OLD_REV)
    repo = make_repo({".flox/pkgs/a.nix": recipe, ".flox/pkgs/blob.nix": b"\0\1binary",
                      "elsewhere.nix": recipe}, branch="main")
    (repo / ".flox/pkgs/link.nix").symlink_to("../../elsewhere.nix")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    result = run_cli("status", "--repo", str(repo), "--format", "markdown", "--verbose")
    assert result.exit_code == 0, result
    lines = result.stdout.splitlines()
    assert lines[2].endswith("| 1 | 2 skipped |")
    assert lines[4] == ("- `repo@main`: 2 files skipped: .flox/pkgs/blob.nix: binary file (NUL byte); skipped; "
                        ".flox/pkgs/link.nix: symlink; skipped")


def test_control_characters_in_names_are_escaped_in_every_format(run_cli, make_repo):
    repo = make_repo({".flox/pkgs/a.nix": render_recipe(Variant("cpu", "avx2"), OLD_REV)}, branch="main")
    git(repo, "branch", "evil\u202eb")
    for fmt in ("text", "markdown", "json"):
        result = run_cli("status", "--repo", str(repo), "--format", fmt)
        assert result.exit_code == 0 and "\u202e" not in result.stdout
    assert "evil\\u202eb" in result.stdout and json.loads(result.stdout)["branches"][0]["branch"] == "evil\u202eb"


def test_two_repositories_of_one_name_are_shown_by_path(run_cli, repos, tmp_path):
    other = tmp_path / "elsewhere" / "build-vllm"
    shutil.copytree(repos[1], other)
    result = run_cli("status", "--repo", str(repos[1]), "--repo", str(other), "--branches", "main",
                     "--format", "markdown")
    assert result.exit_code == 0, result
    assert [line.split(" | ")[0] for line in result.stdout.splitlines()[2:4]] == [f"| `{repos[1]}`", f"| `{other}`"]
