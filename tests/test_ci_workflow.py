"""docs/ci.md's workflows keep the rules of its Security section, and their pinshift commands run.

docs/examples/pinshift-pr.yml evaluates the pull request: `pull_request` only (never `pull_request_target`),
a read-only token, no secrets, checkouts without credentials. docs/examples/pinshift-comment.yml posts the
report: `workflow_run` only, no checkout, no install, no pinshift, and a pull request number checked before use.
docs/ci.md shows both files byte for byte. The report job's commands run on the demo repository as written.
"""

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
EXAMPLES = ROOT / "docs" / "examples"
EVALUATE = EXAMPLES / "pinshift-pr.yml"
COMMENT = EXAMPLES / "pinshift-comment.yml"


def workflow(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def steps(data: dict) -> list[dict]:
    return [step for job in data["jobs"].values() for step in job["steps"]]


def test_the_evaluating_workflow_runs_on_pull_request_with_a_read_only_token():
    data = workflow(EVALUATE)
    assert set(data["on"]) == {"pull_request"}
    assert data["permissions"] == {"contents": "read"}
    for name, job in data["jobs"].items():
        assert "permissions" not in job, name  # the workflow's read-only token, no job widens it
    text = EVALUATE.read_text()
    assert "pull_request_target" not in text.replace("never `pull_request_target`", "")
    assert "secrets." not in text
    checkouts = [step for step in steps(data) if step.get("uses", "").startswith("actions/checkout")]
    assert checkouts and all(step["with"]["persist-credentials"] is False for step in checkouts)
    assert not any("--trust-repo" in step.get("run", "") for step in steps(data))
    assert not any("gh pr comment" in step.get("run", "") for step in steps(data))


def test_the_commenting_workflow_runs_no_code_from_the_pull_request():
    data = workflow(COMMENT)
    assert set(data["on"]) == {"workflow_run"}
    assert data["on"]["workflow_run"]["workflows"] == [workflow(EVALUATE)["name"]]
    assert data["permissions"] == {"actions": "read", "pull-requests": "write"}
    uses = [step["uses"] for step in steps(data) if "uses" in step]
    assert uses == ["actions/download-artifact@v4"]
    runs = " ".join(step.get("run", "") for step in steps(data))
    for forbidden in ("checkout", "pip", "pinshift migrate", "pinshift diff", "python", "nix", "bash ", "sh "):
        assert forbidden not in runs, forbidden
    assert "*[!0-9]*" in runs  # the pull request number from the artifact is a number or nothing happens


def test_ci_md_shows_both_workflows_byte_for_byte():
    ci = (ROOT / "docs" / "ci.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```$", ci, re.S | re.M)
    assert EVALUATE.read_text() in blocks and COMMENT.read_text() in blocks
    security = ci[ci.index("## Security"):ci.index("## The Markdown report")]
    for words in ("`pull_request`, never\n  `pull_request_target`", "`permissions: contents: read`", "workflow_run",
                  "restrict-eval", "$PINSHIFT_EVAL_MEMORY", "Markdown** escapes every value"):
        assert words in security, words


def _run_lines(job: dict) -> str:
    return "\n".join(step["run"] for step in job["steps"] if "run" in step and "pip install" not in step["run"])


def test_the_report_job_runs_as_written_on_the_demo_repository(tmp_path):
    require_nix()
    demo = tmp_path / "demo"
    subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", "demo", "--dir", str(demo)],
                   check=True, capture_output=True)
    head = git(demo, "rev-parse", "pytorch-2.9").strip()
    git(demo, "checkout", "-q", "--detach", head)  # as actions/checkout leaves it: the head, detached,
    git(demo, "branch", "-D", "pytorch-2.10-cuda12_9")  # and no local branch of the target
    bin_dir = str(Path(sys.executable).parent)
    script = _run_lines(workflow(EVALUATE)["jobs"]["report"])
    env = dict(os.environ, HEAD_SHA=head, PR_NUMBER="7", PATH=f"{bin_dir}:{os.environ['PATH']}")
    done = subprocess.run(["bash", "-e", "-c", script], cwd=demo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = (demo / "pinshift-report" / "report.md").read_text()
    assert report.startswith("## pinshift: `pytorch-2.10-cuda12_9`")
    assert (demo / "pinshift-report" / "pr-number").read_text() == "7\n"
