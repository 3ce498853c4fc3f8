"""`python -m pinshift` is the `pinshift` command: the same help, version, output and exit codes."""

from __future__ import annotations

import subprocess
import sys


def run_module(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pinshift", *args], cwd=cwd, capture_output=True, text=True)


def test_python_m_pinshift_names_itself_pinshift(tmp_path):
    done = run_module("--version", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"pinshift, version {__import__('pinshift').__version__}\n")
    helped = run_module("--help", cwd=tmp_path)
    assert helped.returncode == 0 and helped.stdout.startswith("Usage: pinshift [OPTIONS] COMMAND [ARGS]...")
    assert "  parse " in helped.stdout and "  completion " in helped.stdout


def test_python_m_pinshift_runs_a_command_with_its_exit_codes(tmp_path):
    (tmp_path / "bad.nix").write_text("{ a = ; }\n")
    (tmp_path / "good.nix").write_text("{ a = 1; }\n")
    bad = run_module("parse", "bad.nix", cwd=tmp_path)
    assert bad.returncode == 1
    assert bad.stdout == "bad.nix:1:6: syntax error: missing 'identifier'\n    { a = ; }\n"
    assert bad.stderr == "1 file parsed, 1 problem, 0 skipped\n"
    assert run_module("parse", "good.nix", cwd=tmp_path).returncode == 0
    wrong = run_module("parse", "--no-such-flag", "good.nix", cwd=tmp_path)
    assert wrong.returncode == 2 and wrong.stderr == "pinshift parse: error: No such option '--no-such-flag'; see 'pinshift parse --help'\n"
