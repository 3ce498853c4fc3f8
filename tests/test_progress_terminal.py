"""Progress of long work on a real terminal (issue 42): the CLI runs as its own process with stderr on a
pseudo-terminal (`pty`), and each phase says what it does and how far it is; without a terminal (a pipe), with
`--format json` or under CI, nothing is drawn. Every drawn line fits the terminal's width.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from conftest import require_nix
from status_repos import build_pytorch

PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]
_DRAWN = re.compile(r"^(?P<what>.+?) (?:\[[#.]+\] )?(?P<done>\d+)/(?P<total>\d+)$")


def on_terminal(cwd: Path, *args: str, columns: int = 80, env: dict | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of pinshift with stderr on a pseudo-terminal `columns` wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    environment = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "CI")}
    environment.update(env or {})
    process = subprocess.Popen([*PINSHIFT, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=slave, env=environment)
    os.close(slave)
    received = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not data:
                break
            received.append(data)
        elif process.poll() is not None:
            break
    stdout = process.stdout.read().decode()
    process.wait()
    os.close(master)
    return process.returncode, stdout, b"".join(received).decode("utf-8", "replace")


def drawn(stderr: str) -> list[tuple[str, int, int, str]]:
    """(what, done, total, the line as drawn) for every progress line in `stderr`."""
    found = []
    for piece in stderr.split("\r"):
        line = piece.replace("\x1b[K", "").rstrip("\n")
        match = _DRAWN.match(line)
        if match:
            found.append((match["what"], int(match["done"]), int(match["total"]), line))
    return found


def finished(lines, what: str) -> list[int]:
    """The totals of the phases named `what` that were drawn to their end (done == total)."""
    return [total for name, done, total, _ in lines if name == what and done == total]


@pytest.fixture(scope="module")
def repository(tmp_path_factory, hermetic_git):
    return build_pytorch(tmp_path_factory.mktemp("progress") / "build-pytorch")


def test_migrate_shows_planning_then_nix_evaluating_each_recipe(repository):
    require_nix()
    code, stdout, stderr = on_terminal(repository, "migrate", "pytorch-2.10-cuda12_9", "--dry-run", "--branch", "p")
    assert code == 0
    lines = drawn(stderr)
    # the 66 recipes; the README step, whose cells take the facts the steps leave, is planned after them, undrawn
    assert finished(lines, "planning") == [66]
    evaluating = [line for line in lines if line[0] == "evaluating recipes"]
    assert evaluating[0][1] == 0 and evaluating[-1][1] == evaluating[-1][2] >= 66  # said from the start
    assert [name for name, *_ in lines].index("evaluating recipes") > [name for name, *_ in lines].index("planning")
    assert stderr.endswith("\r\x1b[K")  # erased: the report starts on a clean line
    assert "\r" not in stdout


def test_fan_out_says_which_base_and_how_many(repository):
    require_nix()
    code, _, stderr = on_terminal(repository, "migrate", "pytorch-2.10-cuda12_9", "--from", "pytorch-2.*",
                                  "--branch", "{base}-progress", "--dry-run")
    assert code == 1  # the bases already on the new pin are skipped: pin-swap has nothing to do there (issue 40)
    lines = drawn(stderr)
    bases = [line for line in lines if line[0].startswith("bases")]
    assert bases[0][1:3] == (0, 4) and bases[-1][1:3] == (4, 4)
    named = {re.sub(r"^bases \((.*?)(?: done)?\)$", r"\1", name) for name, *_ in bases if "(" in name}
    assert named == {"pytorch-2.9", "pytorch-2.9-python312", "pytorch-2.10", "pytorch-2.10-cuda12_9"}


@pytest.mark.parametrize("command", [["lint", ".flox/pkgs"], ["scan", ".flox/pkgs"]])
def test_lint_and_scan_count_the_files_they_read(repository, command):
    _, _, stderr = on_terminal(repository, *command)
    assert finished(drawn(stderr), "reading files") == [66]


def test_status_counts_branches_then_the_files_it_parses(repository):
    code, _, stderr = on_terminal(repository, "status")
    assert code == 0
    lines = drawn(stderr)
    branches = [line for line in lines if line[0].startswith("reading branches")]
    assert branches[0][1:3] == (0, 5) and finished(lines, "reading branches") == [5]
    assert "reading branches (pytorch-2.9-python312)" in {name for name, *_ in lines}
    assert finished(lines, "parsing recipes")


def test_diff_shows_the_evaluation(repository):
    require_nix()
    _, _, stderr = on_terminal(repository, "diff", "pytorch-2.9", "pytorch-2.10")
    assert finished(drawn(stderr), "evaluating recipes") == [74]  # 66 recipes, then 8


def test_progress_lines_fit_a_narrow_terminal(repository):
    _, _, stderr = on_terminal(repository, "status", columns=24)
    lines = drawn(stderr)
    assert lines and all(len(line) <= 23 for *_, line in lines)  # one cell short of the margin: no wrap
    assert any("…" in line for *_, line in lines)  # `reading branches (pytorch-2.9-python312)` cut in the middle


@pytest.mark.parametrize("command", [["status"], ["lint", ".flox/pkgs"], ["diff", "pytorch-2.9", "pytorch-2.10"]])
def test_nothing_is_drawn_without_a_terminal(repository, command):
    done = subprocess.run([*PINSHIFT, *command], cwd=repository, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert "\r" not in done.stderr and "\x1b" not in done.stderr and not drawn(done.stderr)


@pytest.mark.parametrize("extra, env", [(["--format", "json"], {}), ([], {"CI": "true"}), ([], {"TERM": "dumb"})])
def test_nothing_is_drawn_for_json_ci_or_a_dumb_terminal(repository, extra, env):
    _, _, stderr = on_terminal(repository, "status", *extra, env=env)
    assert "\r" not in stderr and not drawn(stderr)
