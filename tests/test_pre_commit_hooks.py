"""The hooks of `.pre-commit-hooks.yaml`, run by the real `pre-commit try-repo` from a local clone of this
checkout (pre-commit installs pinshift from it with pip, dependencies from PyPI), on a git repository with a
good and a bad `.nix` file: the good passes, the bad fails with `path:line:col`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import git

ROOT = Path(__file__).resolve().parent.parent
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")

GOOD = b"{ pkgs ? import <nixpkgs> { } }:\n{\n  a = 1;\n}\n"
UNPARSEABLE = b"{ pkgs }:\n{\n  a = ;\n}\n"
MISNAMED = (b'{ pkgs }:\nlet\n  cpuFlags = [ "-mavx2" "-mfma" ];\nin\n'
            b"pkgs.python313Packages.torch.overrideAttrs (old: {\n"
            b'  pname = "pytorch-python313-cuda12_9-sm90-avx2";\n'
            b'  gpuTargets = [ "8.6" ];\n  NIX_CFLAGS_COMPILE = toString cpuFlags;\n})\n')


def test_the_manifest_names_both_hooks_on_nix_files():
    by_id = {hook["id"]: hook for hook in HOOKS}
    assert sorted(by_id) == ["pinshift-lint", "pinshift-parse"]
    for hook in HOOKS:
        assert hook["language"] == "python" and hook["files"] == r"\.nix$" and hook["entry"].startswith("pinshift ")
    assert by_id["pinshift-parse"]["entry"] == "pinshift parse" and "--nix" in by_id["pinshift-parse"]["args"]


@pytest.fixture(scope="module")
def hooks_clone(tmp_path_factory) -> Path:
    """A local clone of this checkout as it is (committed or not), one commit: pre-commit installs from it once."""
    if not PRE_COMMIT.exists():
        pytest.fail(f"pre-commit is a test dependency (pip install -e '.[test]'); not found at {PRE_COMMIT}")
    clone = tmp_path_factory.mktemp("pinshift-clone")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            target = clone / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git(clone, "init", "-q")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "pinshift as tested")
    return clone


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(clone: Path, home: Path, project: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), NO_COLOR="1", GIT_AUTHOR_NAME="Test",
               GIT_AUTHOR_EMAIL="test@example.com", GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="test@example.com")
    return subprocess.run([str(PRE_COMMIT), "try-repo", str(clone), *args, "--color", "never"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=900)


def project_with(tmp_path: Path, files: dict[str, bytes]) -> Path:
    project = tmp_path / "recipes"
    project.mkdir()
    git(project, "init", "-q")
    for name, data in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(data)
    git(project, "add", "-A")
    return project


@pytest.mark.nix
def test_good_files_pass_both_hooks(hooks_clone, pre_commit_home, tmp_path):
    assert shutil.which("nix-instantiate"), "pinshift-parse asks nix-instantiate (--nix): Nix must be installed"
    project = project_with(tmp_path, {"good.nix": GOOD, "pkgs/pytorch-python313-cuda12_9-sm90-avx2.nix":
                                      MISNAMED.replace(b'"8.6"', b'"9.0"'), "notes.md": b"{ not nix\n"})
    done = try_repo(hooks_clone, pre_commit_home, project, "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pinshift parse" in done.stdout and "pinshift lint" in done.stdout
    assert done.stdout.count("Passed") == 2


@pytest.mark.nix
def test_a_bad_staged_file_fails_with_its_place(hooks_clone, pre_commit_home, tmp_path):
    """Only the staged files are checked (a committed file is not), as `git commit` would have them checked."""
    project = project_with(tmp_path, {"good.nix": UNPARSEABLE.replace(b"= ;", b"= 1;")})
    git(project, "commit", "-qm", "a file already committed")
    for name, data in {"bad.nix": UNPARSEABLE, "pkgs/pytorch-python313-cuda12_9-sm90-avx2.nix": MISNAMED}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(data)
    git(project, "add", "-A")
    done = try_repo(hooks_clone, pre_commit_home, project)  # each invocation installs pinshift afresh (~40 s)
    assert done.returncode == 1, done.stdout + done.stderr
    lint_part, parse_part = done.stdout.split("pinshift parse....", 1)  # the hooks run in the manifest's order
    assert lint_part.count("Failed") == 1 and parse_part.count("Failed") == 1, done.stdout
    assert "bad.nix:3:6: syntax error: missing 'identifier'\n    a = ;\n" in parse_part
    assert "pkgs/pytorch-python313-cuda12_9-sm90-avx2.nix:7:18: L005 name says sm90 but gpuTargets " in lint_part
    assert "good.nix" not in done.stdout
