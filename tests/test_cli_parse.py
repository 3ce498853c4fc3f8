"""`pinshift parse` through the real entry point: exit 0/1/2, path:line:col output, .gitignore-aware walks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import FIXTURES
from pinshift import __version__

SYNTAX = FIXTURES / "syntax"
BROKEN = b'{\n  pname = "broken"\n  version = "1";\n}\n'


def test_clean_files_exit_0_with_a_summary(run_cli, tmp_path):
    (tmp_path / "a.nix").write_bytes(b"{ a, b, }: a\n")
    (tmp_path / "b.nix").write_bytes(b"{ }\n")
    result = run_cli("parse", "a.nix", "b.nix", cwd=tmp_path)
    assert result.exit_code == 0, result
    assert result.stdout == ""
    assert result.stderr == "2 files parsed, 0 problems, 0 skipped\n"


def test_problems_print_path_line_col_and_exit_1(run_cli, tmp_path):
    (tmp_path / "pkgs").mkdir()
    (tmp_path / "pkgs" / "bad.nix").write_bytes(BROKEN)
    result = run_cli("parse", "pkgs/bad.nix", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stdout == "pkgs/bad.nix:3:11: syntax error: unexpected '='\n    version = \"1\";\n"
    assert result.stderr == "1 file parsed, 1 problem, 0 skipped\n"


def test_quiet_prints_only_problems(run_cli, tmp_path):
    (tmp_path / "bad.nix").write_bytes(BROKEN)
    result = run_cli("parse", "--quiet", "bad.nix", cwd=tmp_path)
    assert (result.exit_code, result.stderr) == (1, "")
    assert result.stdout.startswith("bad.nix:3:11: ")


def test_directory_walk_honours_gitignore(run_cli, make_repo):
    repo = make_repo({
        ".gitignore": "result/\nignored.nix\n",
        "good.nix": "{ }: 1\n",
        "pkgs/bad.nix": BROKEN,
        "README.md": "not nix {\n",
    })
    (repo / "result").mkdir()
    (repo / "result" / "generated.nix").write_bytes(b"{ broken\n")
    (repo / "ignored.nix").write_bytes(b"{ broken\n")
    (repo / "new.nix").write_bytes(b"{ also broken\n")  # untracked but not ignored: checked
    result = run_cli("parse", ".", cwd=repo)
    assert result.exit_code == 1
    reported = sorted({line.split(":")[0] for line in result.stdout.splitlines() if not line.startswith(" ")})
    assert reported == ["new.nix", "pkgs/bad.nix"]
    assert result.stderr == "3 files parsed, 2 problems, 0 skipped\n"


def test_directory_outside_git_is_walked(run_cli, tmp_path):
    (tmp_path / "d" / "deep").mkdir(parents=True)
    (tmp_path / "d" / "deep" / "x.nix").write_bytes(b"{ a = ; }\n")
    (tmp_path / "d" / "notes.txt").write_bytes(b"{ a = ; }\n")
    result = run_cli("parse", "-q", "d", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == "d/deep/x.nix:1:6: syntax error: missing 'identifier'"


def test_skipped_files_are_reported_and_do_not_fail(run_cli, tmp_path):
    (tmp_path / "big.nix").write_bytes(b"# " + b"x" * 200 + b"\n")
    result = run_cli("parse", "--max-bytes", "100", "big.nix", cwd=tmp_path)
    assert result.exit_code == 0
    assert "big.nix: larger than 100 bytes; skipped (raise --max-bytes to include it)\n" in result.stderr
    assert result.stderr.endswith("0 files parsed, 0 problems, 1 skipped\n")


def test_a_file_with_a_nul_byte_is_parsed_as_nix_reads_it_not_skipped(run_cli, tmp_path):
    """Issue 36: `{ \\0 }` was skipped as binary with exit 0 although Nix rejects it. Nix reads a NUL between
    tokens as the end of the file, and one inside a string or a comment as a character."""
    (tmp_path / "blob.nix").write_bytes(b"\0\0")
    (tmp_path / "cut.nix").write_bytes(b"{ \0 }\n")
    (tmp_path / "late.nix").write_bytes(b"#" + b"x" * 9000 + b"\n{ a = 1; }\n\0{{{ not nix\n")
    (tmp_path / "inside.nix").write_bytes(b'{ a = "x\0y"; } # \0\n')
    result = run_cli("parse", "blob.nix", "cut.nix", "late.nix", "inside.nix", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "blob.nix:1:1: syntax error: unexpected end of file (the file holds no expression)",
        "    \\x00\\x00",
        "cut.nix:1:1: syntax error: unexpected '{'",
        "    { \\x00 }",
        "cut.nix:1:3: syntax error: unexpected end of file at a NUL byte (Nix reads a NUL between tokens as the end)",
        "    { \\x00 }",
    ]
    assert result.stderr.splitlines() == [
        "late.nix:3:1: note: a NUL byte, where Nix stops reading (the 13 bytes from it on are not Nix)",
        "4 files parsed, 3 problems, 0 skipped",
    ]
    assert run_cli("parse", "late.nix", "inside.nix", cwd=tmp_path).exit_code == 0  # Nix accepts both


def test_fixture_directories(run_cli):
    assert run_cli("parse", "-q", str(SYNTAX / "valid")).exit_code == 0
    broken = run_cli("parse", "-q", str(SYNTAX / "invalid"))
    assert broken.exit_code == 1
    files = {line.split(":")[0] for line in broken.stdout.splitlines() if not line.startswith(" ")}
    assert len(files) == len(list((SYNTAX / "invalid").glob("*.nix")))


@pytest.mark.parametrize(
    "args, message",
    [
        (("parse", "missing.nix"), "pinshift: error: missing.nix: no such file or directory\n"),
        (("parse",), "pinshift parse: error: Missing argument 'PATHS...'; see 'pinshift parse --help'\n"),
        (("parse", "--bogus", "x.nix"),
         "pinshift parse: error: No such option '--bogus'. Did you mean '--verbose'?; see 'pinshift parse --help'\n"),
        (("no-such-command",), "pinshift: error: No such command 'no-such-command'; see 'pinshift --help'\n"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(run_cli, tmp_path, args, message):
    result = run_cli(*args, cwd=tmp_path)
    assert result.exit_code == 2
    assert (result.stdout, result.stderr) == ("", message)


def test_version_and_help(run_cli):
    assert run_cli("--version").stdout == f"pinshift, version {__version__}\n"
    help_text = run_cli("--help")
    assert help_text.exit_code == 0 and "parse" in help_text.stdout and "--debug" in help_text.stdout
    parse_help = run_cli("parse", "--help")
    assert "path:line:col" in parse_help.stdout and "--max-bytes" in parse_help.stdout


def test_installed_console_script_no_traceback(tmp_path):
    """The console script itself (a subprocess): odd bytes in paths and files never produce a traceback."""
    (tmp_path / "caf\xe9.nix").write_bytes(b"# caf\xe9\n{ a = \xff; }\n")
    script = [sys.executable, "-c", "from pinshift.cli import run; run()"]
    result = subprocess.run([*script, "parse", "."], cwd=tmp_path, capture_output=True)
    assert result.returncode == 1
    assert b"Traceback" not in result.stdout + result.stderr
    assert result.stdout.startswith("caf\xe9.nix:2:".encode())
    missing = subprocess.run([*script, "parse", "nope"], cwd=tmp_path, capture_output=True)
    assert (missing.returncode, missing.stderr) == (2, b"pinshift: error: nope: no such file or directory\n")


def test_problems_that_repeat_one_another_are_counted_and_verbose_lists_them(run_cli, tmp_path):
    (tmp_path / "x.nix").write_bytes(b"{ a = 1; a = 2; a = 3; b = 1; b = 2; }\n")
    result = run_cli("parse", "x.nix", cwd=tmp_path)
    assert result.exit_code == 1
    line = "    { a = 1; a = 2; a = 3; b = 1; b = 2; }\n"
    assert result.stdout == (
        "x.nix:1:10: syntax error: attribute 'a' already defined (first defined at 1:3)\n" + line
        + "    (and 1 more like this in x.nix; --verbose lists all)\n"
        + "x.nix:1:31: syntax error: attribute 'b' already defined (first defined at 1:24)\n" + line
    )
    assert result.stderr == "1 file parsed, 3 problems, 0 skipped\n"
    verbose = run_cli("parse", "--verbose", "x.nix", cwd=tmp_path)
    assert verbose.exit_code == 1
    assert [row for row in verbose.stdout.splitlines() if not row.startswith(" ")] == [
        "x.nix:1:10: syntax error: attribute 'a' already defined (first defined at 1:3)",
        "x.nix:1:17: syntax error: attribute 'a' already defined (first defined at 1:3)",
        "x.nix:1:31: syntax error: attribute 'b' already defined (first defined at 1:24)",
    ]


def test_a_problem_on_a_long_line_shows_a_screen_width_around_it(run_cli, tmp_path):
    """8,000 duplicates on one 56 KB line printed 449 MB (each problem printed the whole line)."""
    (tmp_path / "x.nix").write_bytes(b"{ " + b"a = 1; " * 8000 + b"}\n")
    result = run_cli("parse", "x.nix", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "x.nix:1:10: syntax error: attribute 'a' already defined (first defined at 1:3)",
        "    { " + "a = 1; " * 14 + "…",
        "    (and 7998 more like this in x.nix; --verbose lists all)",
    ]
    assert result.stderr == "1 file parsed, 7999 problems, 0 skipped\n"
    verbose = run_cli("parse", "--verbose", "x.nix", cwd=tmp_path).stdout.splitlines()
    assert len(verbose) == 2 * 7999 and max(len(row) for row in verbose) <= 4 + 102
    assert verbose[-1].startswith("    …") and verbose[-1].endswith("a = 1; }")
