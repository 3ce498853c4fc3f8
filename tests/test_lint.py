"""`pinshift lint`: each naming rule proven on a hand-made fixture; the seed-shaped tree before and after."""

from __future__ import annotations

import json

from conftest import FIXTURES
from pinshift.demo.matrix import NEW_REV, render_recipe, variants

CHECKS = FIXTURES / "checks"


def test_lint_fixture_golden(run_cli):
    result = run_cli("lint", "recipes", cwd=CHECKS)
    assert result.exit_code == 1
    assert result.stdout == (CHECKS / "lint.txt").read_text()
    assert result.stderr == "10 files linted, 8 findings\n"


def test_lint_every_rule_has_one_finding_where_the_fact_is(run_cli):
    report = json.loads(run_cli("lint", "--format", "json", "recipes", cwd=CHECKS).stdout)
    assert report == json.loads((CHECKS / "lint.json").read_text())
    codes = {f["path"].rsplit("/", 1)[-1]: (f["code"], f["severity"]) for f in report["findings"]}
    assert codes == {
        "odd-name.nix": ("L000", "warning"),
        "pytorch-python313-cuda12_9-sm80-avx2.nix": ("L001", "warning"),  # names only: no wrong build
        "pytorch-python312-cpu-avx2.nix": ("L002", "error"),
        "pytorch-python313-darwin-mps.nix": ("L003", "warning"),
        "pytorch-python313-cuda12_8-sm90-avx512.nix": ("L004", "error"),
        "pytorch-python313-cuda12_9-sm89-avx512.nix": ("L005", "error"),
        "pytorch-python313-cpu-avx512.nix": ("L006", "error"),
        "pytorch-python313-cpu-armv9.nix": ("L007", "error"),
    }
    # each finding points at the fact that contradicts the name
    for finding in report["findings"]:
        line = (CHECKS / finding["path"]).read_bytes().split(b"\n")[finding["line"] - 1]
        at = line[finding["column"] - 1:]
        expected = {"L001": b'"pytorch-python313-cuda12_9-sm86', "L002": b"python313Packages",
                    "L003": b"python3Packages", "L004": b"cudaPackages_12_9", "L005": b'"90"',
                    "L006": b"[", "L007": b'[ "x86_64-linux" ]', "L000": b'"odd-name"'}[finding["code"]]
        assert at.startswith(expected), (finding, line)


def test_lint_clean_recipe_exits_zero(run_cli):
    result = run_cli("lint", "recipes/pytorch-python313-cuda12_9-sm90-avx512.nix", "recipes/helper.nix", cwd=CHECKS)
    assert (result.exit_code, result.stdout) == (0, "")


def test_lint_seed_tree_warns_python3_only_until_migrated(run_cli, tmp_path):
    for variant in variants():
        (tmp_path / variant.filename).write_text(render_recipe(variant))
    before = json.loads(run_cli("lint", "--format", "json", str(tmp_path)).stdout)["findings"]
    assert len(before) == 66 and {f["code"] for f in before} == {"L003"}
    for variant in variants():
        (tmp_path / variant.filename).write_text(render_recipe(variant, NEW_REV, "python313Packages"))
    after = run_cli("lint", str(tmp_path))
    assert (after.exit_code, after.stdout) == (0, "")


def test_lint_markdown_table(run_cli):
    result = run_cli("lint", "--format", "markdown", "recipes", cwd=CHECKS)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:4] == ["## pinshift lint", "", "| location | code | severity | message |", "|---|---|---|---|"]
    assert "| `recipes/pytorch-python313-cpu-armv9.nix:51:19` | L007 | error |" in result.stdout
    assert len(lines) == 4 + 8
