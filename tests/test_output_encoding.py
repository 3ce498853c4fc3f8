"""Outputs that cannot crash (issue 39 item 9), through the real CLI in a real process.

- A tree file whose name is not UTF-8 (`bad\\xff.nix`): every format of `diff` and `migrate`, on stdout and with
  `--output`, is valid UTF-8 and shows the byte as `\\xff` (JSON: the string `bad\\xff.nix`).
- `--output` past `ulimit -f` (RLIMIT_FSIZE, SIGXFSZ ignored), in a directory that does not exist or cannot be
  written: one line, exit 2, the previous report unchanged and no temporary file left.
- `commit.gpgsign` with a key that does not exist: one line holding git's own message, no branch.
- `diff` takes every commit-ish git's rev-parse takes (`:/message`, `HEAD~1`, `tag^{commit}`, `@{-1}`), never one
  that starts with `-`.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, require_nix

PINSHIFT = [sys.executable, "-c", "from pinshift.cli import run; run()"]
BAD = b"bad\xff.nix"
SHOWN = "bad\\xff.nix"  # the one rule: a byte that is not UTF-8 is shown as \xff
RECIPE = """name = "r"
files = ["*.nix"]
[[steps]]
kind = "replace-in-strings"
title = "fine to good"
[steps.params]
paths = ["msg"]
old = "fine"
new = "good"
"""


def pinshift(root: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess:
    """The real CLI in its own process, output as bytes; `limit`: RLIMIT_FSIZE in bytes, SIGXFSZ ignored."""

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, PINSHIFT_CACHE="off", PYTHONIOENCODING="utf-8")
    return subprocess.run([*PINSHIFT, *args], cwd=root, capture_output=True, env=env,
                          preexec_fn=limited if limit is not None else None)


def one_line(done: subprocess.CompletedProcess, code: int = 2) -> str:
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == code, (done.returncode, stderr)
    assert "Traceback" not in stderr and len(stderr.splitlines()) == 1, stderr
    return stderr.strip()


@pytest.fixture
def bad_names(make_repo):
    """main: `bad\\xff.nix` (msg = "fine") and `ok.nix`; `next`: the bad file's msg is "good"; a recipe that
    makes the same change."""
    require_nix()
    root = make_repo({".pinshift/recipes/r.toml": RECIPE, "ok.nix": "{ x = 1; }\n"})
    (root / os.fsdecode(BAD)).write_bytes(b'rec { msg = "fine"; }\n')
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bad name")
    (root / os.fsdecode(BAD)).write_bytes(b'rec { msg = "good"; }\n')
    git(root, "commit", "-q", "-am", "next")
    git(root, "branch", "next")
    git(root, "reset", "-q", "--hard", "HEAD~1")
    return root


def _check(fmt: str, data: bytes) -> None:
    text = data.decode("utf-8")  # strict: the test fails on any byte that is not UTF-8
    assert "\udcff" not in text
    if fmt == "json":
        json.loads(text)
        assert json.dumps(SHOWN) in text  # the string "bad\\xff.nix"
    else:
        assert SHOWN in text


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_a_name_that_is_not_utf8_is_shown_as_an_escape_in_every_output(bad_names, tmp_path, fmt):
    runs = {
        "diff": ("diff", "main", "next", "--format", fmt),
        "migrate": ("migrate", "r", "--from", "main", "--branch", "out", "--dry-run", "--format", fmt),
    }
    for name, args in runs.items():
        done = pinshift(bad_names, *args)
        assert done.returncode == 0, (name, done.stderr)
        _check(fmt, done.stdout)
        report = tmp_path / f"{name}.{fmt}"
        done = pinshift(bad_names, *args, "--output", str(report))
        assert done.returncode == 0, (name, done.stderr)
        _check(fmt, report.read_bytes())


@pytest.mark.parametrize("command", [
    ("diff", "main", "next", "--format", "json"),
    ("migrate", "r", "--from", "main", "--branch", "out", "--dry-run", "--format", "markdown"),
])
def test_output_past_the_file_size_limit_is_one_line_and_keeps_the_previous_report(bad_names, tmp_path, command):
    (tmp_path / "out").mkdir()
    report = tmp_path / "out" / "report.md"
    report.write_bytes(b"previous report\n")
    done = pinshift(bad_names, *command, "--output", str(report), limit=240)  # every file the run writes is smaller
    line = one_line(done)
    assert line == f"pinshift: error: --output {report}: cannot write (File too large); the previous file is unchanged"
    assert report.read_bytes() == b"previous report\n"
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.md"]  # no temporary file left


@pytest.mark.parametrize("where, message", [
    ("{tmp}/missing/report.md", "directory {tmp}/missing does not exist; create it first"),
    ("{tmp}/locked/report.md", "cannot write in {tmp}/locked (Permission denied)"),  # not as root: see the next
    ("/proc/1/report.md", "cannot write in /proc/1 (No such file or directory)"),  # a place even root cannot write
])
def test_output_where_nothing_can_be_written_is_one_line_before_any_work(bad_names, tmp_path, where, message):
    (tmp_path / "locked").mkdir(mode=0o555)
    if os.geteuid() == 0 and "locked" in where:
        pytest.skip("root writes in a read-only directory")
    done = pinshift(bad_names, "diff", "main", "next", "--output", where.format(tmp=tmp_path))
    assert one_line(done) == f"pinshift: error: --output {where.format(tmp=tmp_path)}: {message.format(tmp=tmp_path)}"


def test_a_commit_git_cannot_sign_is_one_line_with_gits_message(bad_names):
    git(bad_names, "config", "commit.gpgsign", "true")
    git(bad_names, "config", "user.signingkey", "0000000000000000DEADBEEF")
    done = pinshift(bad_names, "migrate", "r", "--from", "main", "--branch", "signed")
    objects = sorted(p.name for p in (bad_names / ".git" / "objects").iterdir())
    line = one_line(done)  # before anything is made, like a missing user.name
    assert line.startswith("pinshift: error: git cannot sign commits here (commit.gpgSign is set): ") and \
        "gpg" in line and line.endswith("; fix the signing key (user.signingKey) or turn commit.gpgSign off for "
                                        "this repository"), line
    assert "signed" not in git(bad_names, "branch", "--list")
    assert sorted(p.name for p in (bad_names / ".git" / "objects").iterdir()) == objects  # the probe left nothing


def test_a_commit_git_cannot_sign_later_fails_its_step_in_one_line_with_gits_message(bad_names, tmp_path):
    """A signing program that signs the probe and fails after: the step fails (exit 1) with git's message (it was
    lost in a TypeError: git's output as bytes)."""
    program = tmp_path / "gpg-once"
    program.write_text(f"""#!/bin/sh
cat > /dev/null
if [ -e {tmp_path}/signed ]; then echo 'gpg: signing failed: No secret key' >&2; exit 2; fi
touch {tmp_path}/signed
printf '\\n[GNUPG:] SIG_CREATED D 1 8 00 0 X\\n' >&2
printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nAAAA\\n-----END PGP SIGNATURE-----\\n'
""")
    program.chmod(0o755)
    git(bad_names, "config", "commit.gpgsign", "true")
    git(bad_names, "config", "gpg.program", str(program))
    done = pinshift(bad_names, "migrate", "r", "--from", "main", "--branch", "signed")
    line = one_line(done, code=1)  # a commit git refuses fails its step, as a hook's refusal does
    assert line.startswith("pinshift: error: step 1/1 (replace-in-strings) failed: git commit-tree failed: ") and \
        "gpg" in line and line.endswith("; no branch was created"), line
    assert (tmp_path / "signed").exists()  # the probe was signed: the failure is the step's own
    assert "signed" not in git(bad_names, "branch", "--list")


@pytest.mark.parametrize("base, target", [(":/bad name", "next"), ("next~1", "next"), ("v1^{commit}", "next"),
                                          ("main", "@{-1}"), ("main^0", "refs/heads/next")])
def test_diff_takes_every_commit_ish(bad_names, base, target):
    git(bad_names, "tag", "v1", "main")
    git(bad_names, "checkout", "-q", "next")
    git(bad_names, "checkout", "-q", "main")  # @{-1}: the branch checked out before, next
    done = pinshift(bad_names, "diff", base, target, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["base"]["commit"] == git(bad_names, "rev-parse", "main").strip()
    assert data["target"]["commit"] == git(bad_names, "rev-parse", "next").strip()
    assert data["counts"]["changed"] == 1


@pytest.mark.parametrize("name", ["-x", "--output=/tmp/x", "-", "--help"])
def test_a_commit_ish_that_starts_with_a_dash_is_refused(bad_names, name):
    done = pinshift(bad_names, "diff", "main", "--", name)
    assert one_line(done) == f"pinshift: error: TARGET '{name}' is not a branch or commit of {bad_names} " \
                             "(give a branch, tag or commit of the repository)"


def test_a_migration_commits_a_file_whose_name_is_not_utf8(bad_names):
    done = pinshift(bad_names, "migrate", "r", "--from", "main", "--branch", "moved")
    assert done.returncode == 0, done.stderr
    assert git(bad_names, "show", "moved:" + os.fsdecode(BAD)) == 'rec { msg = "good"; }\n'
    message = subprocess.run(["git", "log", "-1", "--format=%B", "moved"], cwd=bad_names, capture_output=True).stdout
    message.decode("utf-8")  # git's message stays UTF-8 (a name in it would read bad\xff.nix)


@pytest.mark.parametrize("args", [("scan", ".", "--format", "json"), ("verify", ".", "--format", "json"),
                                  ("status", "--format", "json"), ("lint", ".", "--format", "json"),
                                  ("scan", ".", "--verbose"), ("verify", "."), ("status",),
                                  ("scan", ".", "--format", "markdown", "--verbose")])
def test_the_other_commands_show_a_name_that_is_not_utf8_as_an_escape(make_repo, args):
    root = make_repo({"ok.nix": "{ x = 1; }\n"})
    (root / os.fsdecode(BAD)).write_bytes(b"{ x = ;\n")  # a syntax error: every command names the file
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bad name")
    done = pinshift(root, *args)
    assert done.returncode in (0, 1), done.stderr
    out = done.stdout.decode("utf-8") + done.stderr.decode("utf-8")  # strict: fails on a byte that is not UTF-8
    if "json" in args:
        json.loads(done.stdout)
    if args[0] in ("scan", "verify"):  # the ones that name the broken file
        shown = json.dumps(json.loads(done.stdout)) if "json" in args else out
        assert "bad\\xff" in shown.replace("\\\\", "\\"), out
