"""action.yml, the composite GitHub Action that runs `pinshift diff` on a pull request, and the two workflows
docs/ci.md shows with it: its inputs, what it installs (pinned), no `${{ … }}` inside a script (no script
injection), the posting job apart from the evaluating one; and its `pinshift diff` script, run as written on
the demo repository, hostile inputs included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import git, require_nix

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXAMPLES = ROOT / "docs" / "examples"
EVALUATE = EXAMPLES / "pinshift-diff.yml"
COMMENT = EXAMPLES / "pinshift-diff-comment.yml"
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def workflow(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def action_step(name: str) -> dict:
    [step] = [step for step in ACTION["runs"]["steps"] if step["name"] == name]
    return step


def test_the_action_is_composite_with_its_inputs_and_outputs():
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) == {"base", "head", "paths", "folder", "markdown-limit", "fail-on-broken"}
    assert ACTION["inputs"]["base"]["default"] == "${{ github.event.pull_request.base.sha }}"
    assert ACTION["inputs"]["head"]["default"] == "${{ github.event.pull_request.head.sha }}"
    assert not any(spec.get("required") for spec in ACTION["inputs"].values())
    assert set(ACTION["outputs"]) == {"report", "broken"}
    assert all(step["shell"] == "bash" for step in ACTION["runs"]["steps"] if "run" in step)


def test_no_script_interpolates_an_expression():
    """Every `${{ … }}` reaches a script through `env:`; in `run:` it would be pasted into the shell's source, so
    a branch name or title like `"; curl … | sh; "` would run. Also the workflows' scripts."""
    scripts = [step["run"] for step in ACTION["runs"]["steps"] if "run" in step]
    for path in (EVALUATE, COMMENT):
        scripts += [step["run"] for job in workflow(path)["jobs"].values() for step in job["steps"] if "run" in step]
    assert scripts and [script for script in scripts if "${{" in script] == []
    for step in ACTION["runs"]["steps"]:
        for value in step.get("env", {}).values():
            assert EXPRESSION.fullmatch(value.strip()), value  # whole values, no shell around them
    # the untrusted fields of the event never appear anywhere but the defaults and env
    text = (ROOT / "action.yml").read_text()
    untrusted = re.findall(r"github\.event\.pull_request\.(?:title|body|head\.ref|head\.label)|github\.head_ref", text)
    assert untrusted == []


def test_what_the_action_installs_is_pinned():
    assert not [step for step in ACTION["runs"]["steps"] if "uses" in step]  # no other action, pinned or not
    install = action_step("Install pinshift from this action's files")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$VENV/bin/pip" install -q "$ACTION_PATH"' in install["run"]  # the commit `uses:` names
    assert "pip install pinshift" not in (ROOT / "action.yml").read_text()  # never "whatever PyPI has today"
    nix = action_step("Install Nix (nix-instantiate) unless present")
    assert "apt-get install -y -qq nix-bin" in nix["run"]


def test_the_example_workflows_keep_the_security_rules():
    evaluate, comment = workflow(EVALUATE), workflow(COMMENT)
    assert set(evaluate["on"]) == {"pull_request"} and evaluate["permissions"] == {"contents": "read"}
    assert "pull_request_target" not in EVALUATE.read_text().replace("never `pull_request_target`", "")
    [job] = evaluate["jobs"].values()
    assert "permissions" not in job and "secrets." not in EVALUATE.read_text()
    checkout = job["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["persist-credentials"] is False
    assert checkout["with"]["fetch-depth"] == 0
    assert any(step.get("uses", "").startswith("OWNER/pinshift@") for step in job["steps"])
    assert set(comment["on"]) == {"workflow_run"} and comment["on"]["workflow_run"]["workflows"] == [evaluate["name"]]
    assert comment["permissions"] == {"actions": "read", "pull-requests": "write"}
    [poster] = comment["jobs"].values()
    assert [step["uses"] for step in poster["steps"] if "uses" in step] == ["actions/download-artifact@v4"]
    runs = " ".join(step.get("run", "") for step in poster["steps"])
    for forbidden in ("checkout", "pip", "pinshift ", "python", "nix", "bash ", "sh "):
        assert forbidden not in runs, forbidden
    assert "*[!0-9]*" in runs


def test_ci_md_shows_both_workflows_byte_for_byte():
    ci = (ROOT / "docs" / "ci.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```$", ci, re.S | re.M)
    assert EVALUATE.read_text() in blocks and COMMENT.read_text() in blocks


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    require_nix()
    folder = tmp_path_factory.mktemp("action") / "demo"
    subprocess.run([sys.executable, "-m", "pinshift", "demo", "--dir", str(folder)], check=True, capture_output=True)
    return folder


def run_diff_step(demo: Path, tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict]:
    step = action_step("pinshift diff")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               GITHUB_OUTPUT=str(tmp_path / "output"))
    defaults = {"BASE": "pytorch-2.9", "HEAD": "pytorch-2.10-cuda12_9", "PATHS": "", "FOLDER": "pinshift-diff",
                "LIMIT": "65000", "PR_NUMBER": "7"}
    env.update(defaults | inputs)
    (tmp_path / "output").write_text("")
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=demo, env=env,
                          capture_output=True, text=True)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
    return done, outputs


def test_the_diff_script_runs_as_written_on_the_demo_repository(demo, tmp_path):
    done, outputs = run_diff_step(demo, tmp_path, PATHS=".flox/pkgs\nREADME.md")
    assert done.returncode == 0, done.stderr
    assert outputs == {"report": "pinshift-diff/diff.md", "broken": "false"}
    report = (demo / "pinshift-diff" / "diff.md").read_text()
    assert report.startswith("## What the recipes build: `pytorch-2.9` → `pytorch-2.10-cuda12_9`")
    assert "66 recipes" in report and "python313Packages" in report
    assert (demo / "pinshift-diff" / "pr-number").read_text() == "7\n"


def test_hostile_inputs_stay_values(demo, tmp_path):
    """A base that looks like an option, or a shell command, is a commit name that does not exist: exit 2, no
    report, nothing run, nothing written where the option would have said."""
    target = tmp_path / "written-by-an-option.md"
    for base in (f"--output={target}", "$(touch pwned)", "; touch pwned"):
        done, outputs = run_diff_step(demo, tmp_path, BASE=base, FOLDER=f"out-{abs(hash(base))}")
        assert done.returncode == 2, done.stderr
        assert outputs == {} and not target.exists() and not (demo / "pwned").exists()
        assert not (demo / f"out-{abs(hash(base))}" / "diff.md").exists()
    done, _ = run_diff_step(demo, tmp_path, BASE="")
    assert done.returncode == 2 and "no base or head commit" in done.stderr
