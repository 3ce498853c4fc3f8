"""scan and lint on branches shaped like the second trial's (tests/trial_trees.py describes them).

Expected outputs are written from the branch tables in trial_trees' docstring: goldens in
tests/fixtures/checks/trial-*.txt, counts in the assertions below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES
from trial_trees import NEW_REV, OLD_REV, REV_2017, write_flox_branch, write_mixed_branch

CHECKS = FIXTURES / "checks"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    write_mixed_branch(root / "pkgs")
    return root


@pytest.fixture(scope="module")
def flox(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("flox")
    write_flox_branch(root / "pkgs")
    return root


def one_line_error(result) -> str:
    assert result.exit_code == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- scan --------------------------------------------------------------------------------------------


def test_mixed_branch_summary_golden_fits_on_a_screen(run_cli, mixed):
    result = run_cli("scan", "pkgs", cwd=mixed)
    assert result.exit_code == 0, result
    assert result.stdout == (CHECKS / "trial-mixed-scan.txt").read_text()
    assert len(result.stdout.splitlines()) < 60  # 201 recipes; the trial's scan printed 2,282 lines


def test_gpu_notations_are_one_target_and_cuda_is_a_dimension(run_cli, mixed):
    report = json.loads(run_cli("scan", "--format", "json", "pkgs", cwd=mixed).stdout)
    pytorch = report["matrices"][0]
    gpus = {row["gpu"] for row in pytorch["rows"]}
    assert gpus == {"sm61", "sm75", "sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121",
                    "cpu", "darwin"}
    # sm_86 (12.8), 8.6 (12.9), 86 (13.0), sm86 (13.1): one GPU row per CUDA version; cudaPackages_13 (the
    # alias) reads 13.0 from the cuda13_0 file names, never a bare 13 (issue 33)
    assert [row["cuda"] for row in pytorch["rows"] if row["gpu"] == "sm86"] == ["12.8", "12.9", "13.0", "13.1"]
    assert all(pytorch["cells"][f"sm86/{cuda}/avx2"] == 1 for cuda in ("12.8", "12.9", "13.0", "13.1"))
    assert "sm86/13.0/avx" not in pytorch["cells"]


def test_companion_packages_get_their_own_matrix(run_cli, mixed):
    report = json.loads(run_cli("scan", "--format", "json", "pkgs", cwd=mixed).stdout)
    assert [(m["package"], m["count"]) for m in report["matrices"]] == [
        ("pytorch", 197), ("torchaudio", 2), ("torchvision", 2)]
    assert report["matrices"][2]["cells"] == {"sm61/12.8/avx": 1, "sm75/12.8/avx": 1}


def test_mixed_branch_pin_drift_groups(run_cli, mixed):
    report = json.loads(run_cli("scan", "--format", "json", "pkgs", cwd=mixed).stdout)
    assert report["pin_drift"]["groups"] == {NEW_REV: 123, OLD_REV: 54, REV_2017: 24}
    assert report["uses_caller_nixpkgs"] == [] and report["no_pin"] == []


def test_verbose_lists_every_recipe_and_revision_expressions(run_cli, mixed):
    result = run_cli("scan", "--verbose", "pkgs", cwd=mixed)
    assert result.stdout.count("\n  pins         ") == 201
    assert ("pkgs/pytorch-python313-cuda13_1-sm90-avx2.nix\n  pins         builtins.fetchTarball 2017d6d (no hash); "
            'nixpkgs_pinned.fetchFromGitHub "v${version}" (hash)\n') in result.stdout
    assert "(no revision)" not in result.stdout
    assert "      pkgs/pytorch-python313-cuda13_0-sm75-avx2.nix\n" in result.stdout  # each group lists its files


def test_flox_branch_unpinned_recipes_are_their_own_category(run_cli, flox):
    result = run_cli("scan", "pkgs", cwd=flox)
    assert result.stdout == (CHECKS / "trial-flox-scan.txt").read_text()
    report = json.loads(run_cli("scan", "--format", "json", "pkgs", cwd=flox).stdout)
    # one pinned recipe beside 50 that use the caller's nixpkgs: drift, as status says (matrix.drift_markers)
    assert report["pin_drift"] == {"majority": NEW_REV, "count": 1, "groups": {NEW_REV: 1}, "others": {},
                                   "drift": True}
    assert len(report["uses_caller_nixpkgs"]) == 50
    assert "pkgs/pytorch-python313-cuda12_8-sm61-avx2.nix" not in report["uses_caller_nixpkgs"]


# --- lint: notations, CUDA aliases, Flox arguments --------------------------------------------------


def lint_json(run_cli, cwd, *args):
    result = run_cli("lint", "--format", "json", *args, "pkgs", cwd=cwd)
    return result, json.loads(result.stdout)


def test_mixed_branch_has_no_false_sm_or_cuda_findings(run_cli, mixed):
    result, report = lint_json(run_cli, mixed)
    assert result.exit_code == 1
    codes = {f["code"] for f in report["findings"]}
    assert codes == {"L003"} and len(report["findings"]) == 60  # 12.8 recipes and companions say python3Packages
    assert {n["code"] for n in report["notes"]} == {"L004"} and len(report["notes"]) == 54
    first = report["notes"][0]
    assert first["severity"] == "note"
    assert first["message"] == ("name says cuda13_0 and the overlay uses cudaPackages_13 (the newest CUDA 13.x at the "
                                "pin): not a contradiction; cudaPackages_13_0 would say it exactly")


def test_notes_are_grouped_on_one_line_and_listed_with_verbose(run_cli, mixed):
    result = run_cli("lint", "pkgs", cwd=mixed)
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: L004 54 files: name says cuda13_0 and the overlay uses cudaPackages_13 (the newest CUDA 13.x at the "
        "pin): not a contradiction; cudaPackages_13_0 would say it exactly (first: "
        "pkgs/pytorch-python313-cuda13_0-sm100-armv8_2.nix:8:55; --verbose lists all)"]
    assert result.stderr.endswith("201 files linted, 60 findings, 54 notes\n")
    verbose = run_cli("lint", "--verbose", "pkgs", cwd=mixed)
    assert len([line for line in verbose.stderr.splitlines() if line.startswith("note: ")]) == 54


def test_flox_branch_skips_l004_where_the_caller_supplies_cuda(run_cli, flox):
    _, report = lint_json(run_cli, flox)
    assert {f["code"] for f in report["findings"]} == {"L003"} and report["notes"] == []
    result = run_cli("lint", "--select", "L004,L005", "pkgs", cwd=flox)
    assert (result.exit_code, result.stdout) == (0, "")


def test_statistics_count_per_code(run_cli, mixed):
    result = run_cli("lint", "--statistics", "pkgs", cwd=mixed)
    assert result.exit_code == 1
    assert result.stdout == "60  L003  warning  python3Packages is ambiguous\n"
    report = json.loads(run_cli("lint", "--statistics", "--format", "json", "pkgs", cwd=mixed).stdout)
    assert report == {"statistics": [{"code": "L003", "count": 60, "severity": "warning",
                                      "rule": "python3Packages is ambiguous"}]}


def test_statistics_on_the_rule_fixture(run_cli):
    result = run_cli("lint", "--statistics", "recipes", cwd=CHECKS)
    assert result.stdout.splitlines() == [
        "1  L000  warning  the name does not follow <project>-python<XY>-cuda<X>_<Y>-sm<N>-<isa>",
        "1  L001  warning  the file name differs from pname",
        "1  L002  error    the Python version in the name differs from the package set",
        "1  L003  warning  python3Packages is ambiguous",
        "1  L004  error    the CUDA version in the name differs from the overlay",
        "1  L005  error    the SM in the name differs from the GPU target",
        "1  L006  error    the ISA in the name differs from the CPU flags",
        "1  L007  error    the ISA does not fit the platform",
    ]


# --- lint: findings point at the fact -------------------------------------------------------------------


def write(root: Path, name: str, text: str) -> Path:
    path = root / "pkgs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def gpu_text(sm_lines: str, name: str, overlay: bool = True) -> str:
    from trial_trees import gpu_recipe

    text = gpu_recipe(name.removesuffix(".nix"), sm_lines, "avx2", "cudaPackages_12_9", NEW_REV, "python313Packages",
                      src_override=False)
    if not overlay:
        text = text.replace("    overlays = [ (final: prev: { cudaPackages = final.cudaPackages_12_9; }) ];\n", "")
    return text


@pytest.mark.parametrize("sm_lines, expected, at", [
    ('gpuArchSM = "8.9";', 'L005 name says sm86 but gpuArchSM = "8.9" targets sm89', '"8.9"'),
    ('gpuArchNum = "86";\n  gpuArchSM = "sm_89";', 'L005 name says sm86 but gpuArchSM = "sm_89" targets sm89', '"sm_89"'),
    ('gpuArchNum = "89";\n  gpuArchSM = "8.6";', 'L005 name says sm86 but gpuArchNum = "89" targets sm89', '"89"'),
])
def test_a_real_sm_contradiction_in_any_notation_points_at_the_binding(run_cli, tmp_path, sm_lines, expected, at):
    name = "pytorch-python313-cuda12_9-sm86-avx2.nix"
    path = write(tmp_path, name, gpu_text(sm_lines, name))
    result = run_cli("lint", "pkgs", cwd=tmp_path)
    assert result.exit_code == 1
    (line,) = result.stdout.splitlines()
    location, message = line.split(": ", 1)
    assert message == expected
    row, column = map(int, location.rsplit(":", 2)[1:])
    assert path.read_text().splitlines()[row - 1][column - 1:].startswith(at)


@pytest.mark.parametrize("sm_lines", ['gpuArchSM = "8.6";', 'gpuArchSM = "sm_86";', 'gpuArchSM = "86";',
                                      'gpuArchSM = "sm86";', 'gpuArchNum = "86";\n  gpuArchSM = "8.6";'])
def test_every_notation_of_the_named_sm_is_clean(run_cli, tmp_path, sm_lines):
    name = "pytorch-python313-cuda12_9-sm86-avx2.nix"
    write(tmp_path, name, gpu_text(sm_lines, name))
    result = run_cli("lint", "pkgs", cwd=tmp_path)
    assert (result.exit_code, result.stdout) == (0, "")


def test_missing_overlay_on_a_pinned_recipe_points_at_the_pin(run_cli, tmp_path):
    name = "pytorch-python313-cuda12_9-sm86-avx2.nix"
    path = write(tmp_path, name, gpu_text('gpuArchSM = "8.6";', name, overlay=False))
    result = run_cli("lint", "pkgs", cwd=tmp_path)
    (line,) = result.stdout.splitlines()
    assert line.endswith("L004 name says cuda12_9 but no cudaPackages overlay was found")
    row, column = map(int, line.split(": ", 1)[0].rsplit(":", 2)[1:])
    assert path.read_text().splitlines()[row - 1][column - 1:].startswith("builtins.fetchTarball {")


def test_a_contradicting_cuda_major_is_still_a_finding(run_cli, tmp_path):
    name = "pytorch-python313-cuda13_0-sm86-avx2.nix"
    write(tmp_path, name, gpu_text('gpuArchSM = "8.6";', name).replace("cudaPackages_12_9", "cudaPackages_12"))
    result = run_cli("lint", "pkgs", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stdout.endswith("L004 name says cuda13_0 but the overlay uses cudaPackages_12\n")


# --- lint: noqa, --select/--ignore, .pinshift/config.toml ------------------------------------------------


def python3_recipe(tmp_path: Path, name: str, comment: str = "") -> Path:
    """A recipe with exactly one finding, L003 on the line `nixpkgs_pinned.python3Packages.torch...`."""
    text = gpu_text('gpuArchSM = "8.6";', name).replace("python313Packages", "python3Packages")
    text = text.replace("(nixpkgs_pinned.python3Packages.torch.override {",
                        "(nixpkgs_pinned.python3Packages.torch.override {" + comment)
    return write(tmp_path, name, text)


NAME = "pytorch-python313-cuda12_9-sm86-avx2.nix"


@pytest.mark.parametrize("comment, suppressed", [
    (" # pinshift: noqa: L003", True),
    (" # pinshift: noqa", True),
    (" # PINSHIFT: NOQA: L001, L003", True),
    (" # pinshift: noqa: L001", False),
    (" # pinshift: noqa: everything", False),  # names no code: suppresses nothing
    (' # not a directive: "pinshift: noqa" must open the comment', False),
])
def test_noqa_comment_on_the_finding_line(run_cli, tmp_path, comment, suppressed):
    python3_recipe(tmp_path, NAME, comment)
    result = run_cli("lint", "pkgs", cwd=tmp_path)
    if suppressed:
        assert (result.exit_code, result.stdout) == (0, "")
        assert result.stderr.endswith("1 files linted, 0 findings, 1 suppressed by noqa\n")
    else:
        assert result.exit_code == 1 and " L003 " in result.stdout


def test_noqa_on_another_line_or_inside_a_string_does_not_count(run_cli, tmp_path):
    path = python3_recipe(tmp_path, NAME)
    text = path.read_text().replace("  cpuFlags = [", "  # pinshift: noqa\n  cpuFlags = [")
    text = text.replace("cudaSupport = true;", "cudaSupport = true;\n    note = ''\n      # pinshift: noqa\n    '';")
    path.write_text(text)
    result = run_cli("lint", "pkgs", cwd=tmp_path)
    assert result.exit_code == 1 and " L003 " in result.stdout


def test_select_and_ignore(run_cli, mixed):
    assert run_cli("lint", "--ignore", "L003", "pkgs", cwd=mixed).exit_code == 0
    assert run_cli("lint", "--select", "L00", "--ignore", "L003", "pkgs", cwd=mixed).exit_code == 0
    assert run_cli("lint", "--select", "L001,L002", "--select", "L004", "pkgs", cwd=mixed).exit_code == 0
    selected = run_cli("lint", "--select", "l003", "pkgs", cwd=mixed)  # codes are case-insensitive
    assert selected.exit_code == 1 and len(selected.stdout.splitlines()) == 60


def test_config_select_ignore_and_per_file_ignores(run_cli, make_repo):
    root = make_repo({".pinshift/config.toml": '[lint]\nignore = ["L000"]\n[lint.per-file-ignores]\n'
                                               '"torch*-*.nix" = ["L003"]\n'
                                               '"pkgs/pytorch-python313-cuda12_8-sm6*.nix" = ["ALL"]\n'})
    write_mixed_branch(root / "pkgs")
    report = json.loads(run_cli("lint", "--format", "json", "pkgs", cwd=root).stdout)
    paths = {f["path"] for f in report["findings"]}
    assert len(paths) == 56 - 7  # the 12.8 recipes, but not the seven sm61 ones; companions ignored by file name
    assert not any(p.split("/")[-1].startswith(("torchvision", "torchaudio")) for p in paths)
    assert "pkgs/pytorch-python313-cuda12_8-sm75-avx.nix" in paths
    # the command line adds to the configured ignores and replaces the configured select
    assert run_cli("lint", "--ignore", "L003", "pkgs", cwd=root).exit_code == 0
    inside = json.loads(run_cli("lint", "--format", "json", ".", cwd=root / "pkgs").stdout)  # config found from below
    assert len(inside["findings"]) == 56 - 7


def test_config_select_is_replaced_by_the_command_line(run_cli, make_repo):
    root = make_repo({".pinshift/config.toml": '[lint]\nselect = ["L001"]\n'})
    python3_recipe(root, NAME)
    assert run_cli("lint", "pkgs", cwd=root).exit_code == 0
    assert run_cli("lint", "--select", "L003", "pkgs", cwd=root).exit_code == 1


@pytest.mark.parametrize("config, message", [
    ('[lint]\nignore = ["L099"]\n',
     ".pinshift/config.toml: [lint] ignore: unknown rule code 'L099' (known: L000, L001, L002, L003, L004, L005, "
     "L006, L007, R001, R002, R003, ALL)"),
    ('[lint]\nselect = "L0\n', ".pinshift/config.toml: invalid TOML: "),
    ('[lint]\nselekt = ["L001"]\n', ".pinshift/config.toml: [lint] unknown key 'selekt' (known: ignore, "
                                    "per-file-ignores, select)"),
    ('[lint]\nignore = [1]\n', ".pinshift/config.toml: [lint] ignore must be a list of rule codes"),
    ('[lint.per-file-ignores]\n"*.nix" = ["X1"]\n',
     ".pinshift/config.toml: [lint] per-file-ignores.\"*.nix\": unknown rule code 'X1'"),
    ("lint = 3\n", ".pinshift/config.toml: [lint] must be a table"),
])
def test_bad_config_is_a_one_line_usage_error(run_cli, make_repo, config, message):
    root = make_repo({".pinshift/config.toml": config})
    python3_recipe(root, NAME)
    line = one_line_error(run_cli("lint", "pkgs", cwd=root))
    assert line.startswith(f"pinshift: error: {message}"), line


@pytest.mark.parametrize("args, message", [
    (("--select", "L099"), "pinshift: error: --select: unknown rule code 'L099' (known: L000, "),
    (("--ignore", "L1"), "pinshift: error: --ignore: unknown rule code 'L1' (known: L000, "),
])
def test_bad_codes_on_the_command_line_are_usage_errors(run_cli, tmp_path, args, message):
    python3_recipe(tmp_path, NAME)
    line = one_line_error(run_cli("lint", *args, "pkgs", cwd=tmp_path))
    assert line.startswith(message), line


def test_markdown_has_the_notes_section(run_cli, mixed):
    result = run_cli("lint", "--format", "markdown", "--select", "L004", "pkgs", cwd=mixed)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:5] == ["## pinshift lint", "", "No findings.", "", "### Notes"]
    assert lines[6].startswith("- L004 54 files: name says cuda13_0")
    verbose = run_cli("lint", "--format", "markdown", "--select", "L004", "--verbose", "pkgs", cwd=mixed)
    assert len([line for line in verbose.stdout.splitlines() if line.startswith("- pkgs/")]) == 54
