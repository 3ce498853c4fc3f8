"""lint L003 and a package set the recipe defines itself (issue 23 §1): the advice must not bypass the definition."""

from __future__ import annotations

import json
import shutil

import pytest

from step_golden import STEPS

RENAME_ATTR = STEPS / "rename-attr"
CASES = {  # fixture -> (recipe file name, where L003 points, its advice)
    "overlay-torch": ("pytorch-python313-cuda12_9-sm90-avx512.nix", (32, 19),
                      "this file defines python3Packages itself (in an overlay, at 15:9): rename that definition "
                      "with its uses to python313Packages (rename-attr with definitions = \"rename\"), not only the uses"),
    # L003 points at the set the build is reached through (issue 33), not at the first mention of its name
    "package-overrides": ("pytorch-python313-cpu-avx2.nix", (14, 18),
                          "this file defines python3Packages itself (in packageOverrides, at 8:7): rename that "
                          "definition with its uses to python313Packages (rename-attr with definitions = \"rename\"), "
                          "not only the uses"),
    "let-alias": ("pytorch-python313-cuda12_9-sm86-avx2.nix", (11, 23),
                  "this file defines python3Packages itself (in an overlay, at 4:5): rename that definition with its "
                  "uses to python313Packages (rename-attr with definitions = \"rename\"), not only the uses"),
    "plain-let-alias": ("pytorch-python313-cpu-avx512.nix", (7, 23), "use python313Packages"),
}


def _l003(run_cli, directory) -> list[dict]:
    report = json.loads(run_cli("lint", "--format", "json", str(directory)).stdout)
    return [f for f in report["findings"] if f["code"] == "L003"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_l003_advice_names_the_definition_when_the_file_defines_the_set(case, run_cli, tmp_path):
    name, (line, column), advice = CASES[case]
    shutil.copyfile(RENAME_ATTR / f"{case}.nix", tmp_path / name)
    [finding] = _l003(run_cli, tmp_path)
    assert (finding["line"], finding["column"], finding["severity"]) == (line, column, "warning")
    assert finding["message"] == f"python3Packages is ambiguous: the name says python313; {advice}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_l003_is_gone_once_renamed_as_advised(case, run_cli, tmp_path):
    name = CASES[case][0]
    shutil.copyfile(RENAME_ATTR / f"{case}.expected.nix", tmp_path / name)
    assert _l003(run_cli, tmp_path) == []


def test_l003_text_line_for_an_overlay_recipe(run_cli, tmp_path):
    shutil.copyfile(RENAME_ATTR / "overlay-torch.nix", tmp_path / "pytorch-python313-cuda12_9-sm90-avx512.nix")
    result = run_cli("lint", ".", cwd=tmp_path)
    assert result.exit_code == 1
    assert ("pytorch-python313-cuda12_9-sm90-avx512.nix:32:19: L003 python3Packages is ambiguous: the name says "
            "python313; this file defines python3Packages itself (in an overlay, at 15:9)") in result.stdout
