"""Shared test helpers: run the real CLI, build real git repositories, ask Nix as an oracle."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinshift.cli import cli, main

FIXTURES = Path(__file__).parent / "fixtures"
NIX = shutil.which("nix-instantiate")


@pytest.fixture(autouse=True, scope="session")
def hermetic_git(tmp_path_factory):
    """Every test sees the same git setup: a test identity, no system or user config of the machine's.

    A fresh CI machine has no user.name, a developer's may sign commits or set hooksPath;
    neither may change what a test proves. pip keeps the machine's cache (the wheel test installs).
    """
    home = tmp_path_factory.mktemp("home")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    patch = pytest.MonkeyPatch()
    patch.setenv("PIP_CACHE_DIR", os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")))
    patch.setenv("HOME", str(home))
    patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    patch.setenv("XDG_CACHE_HOME", str(home / ".cache"))  # pinshift's hash cache: never the machine's
    patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # the plan memo remembers plans across runs; tests that monkeypatch or count what planning does must
    # plan afresh, so it is off here, and tests/test_plan_memo.py turns it on to prove it changes nothing
    patch.setenv("PINSHIFT_CACHE", "off")
    # text output fits $COLUMNS, else 100 columns (pinshift.languages.fit); tests that read whole lines get a wide
    # screen, whatever the developer's shell exports; those about fitting set their own (tests/test_output_fits.py)
    patch.setenv("COLUMNS", "1000")
    yield home
    patch.undo()


LOADING = "pinshift: loading step kind "  # the notice each import of a step kind from a file outside pinshift prints


def without_loading_notices(stderr: str) -> list[str]:
    """stderr's lines without the `pinshift: loading step kind ...` notices (tests that load --migrations kinds)."""
    return [line for line in stderr.splitlines() if not line.startswith(LOADING)]


class CliResult:
    def __init__(self, code: int, stdout: str, stderr: str):
        self.exit_code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __repr__(self) -> str:
        return f"CliResult(exit_code={self.exit_code}, stdout={self.stdout!r}, stderr={self.stderr!r})"


@pytest.fixture
def run_cli(monkeypatch):
    """Run `pinshift ARGS...` in-process through the real entry point (`main`), optionally in `cwd`."""

    def run(*args: str, cwd: Path | None = None, input: str | None = None) -> CliResult:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        runner = CliRunner()
        holder = {}

        def entry():
            holder["code"] = main(list(args))

        with runner.isolation(input=input) as (out, err, _):
            entry()
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
        return CliResult(holder["code"], stdout, stderr)

    return run


def git(cwd: Path, *args: str) -> str:
    """Run real git in `cwd` with a fixed identity; return stdout (raises on failure)."""
    env = dict(os.environ, GIT_AUTHOR_NAME="Test", GIT_AUTHOR_EMAIL="test@example.com",
               GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="test@example.com")
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


@pytest.fixture
def make_repo(tmp_path):
    """Create a real git repository whose branch `branch` holds `files` (path -> bytes or str)."""

    def make(files: dict, branch: str = "main", name: str = "repo") -> Path:
        root = tmp_path / name
        root.mkdir()
        git(root, "init", "-q", "-b", branch)
        git(root, "config", "user.name", "Test")
        git(root, "config", "user.email", "test@example.com")
        git(root, "config", "commit.gpgsign", "false")
        for path, content in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        return root

    return make


def require_nix_tool(name: str) -> str:
    """The path of a Nix tool (nix-prefetch-url, nix-hash, nix-store): skipped without Nix, failing in CI."""
    require_nix()
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"nix-instantiate is on PATH but {name} is not: install all of Nix (Debian: nix-bin)")
    return path


def require_nix() -> str:
    """The nix-instantiate path; skips with a reason when absent, fails when CI=true."""
    if NIX:
        return NIX
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("nix-instantiate is not on PATH but CI=true: the oracle tests must run in CI")
    pytest.skip("nix-instantiate not on PATH (install Debian package nix-bin to run the Nix oracle tests)")


def nix_parse(data: bytes) -> tuple[bool, str]:
    """(accepted, canonical parse or error) from `nix-instantiate --parse -`."""
    nix = require_nix()
    result = subprocess.run([nix, "--parse", "-"], input=data, capture_output=True)
    if result.returncode == 0:
        return True, result.stdout.decode("utf-8", "replace")
    return False, result.stderr.decode("utf-8", "replace")


@pytest.fixture
def nix_oracle():
    """`nix_parse` as a fixture, so a test states that it needs Nix."""
    require_nix()
    return nix_parse
