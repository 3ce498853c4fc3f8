"""Hostile files and recipes (issue 21 §5): a clear line or a skipped file, never a hang, a crash or raw escapes.

Every command runs in a subprocess with a time limit, so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git

FIXTURES = Path(__file__).parent / "fixtures"
RECIPE = b'{ pname = "demo"; postInstall = "echo 1 > $out/.metadata-rev"; }\n'
BUMPED = RECIPE.replace(b"echo 1", b"echo 2")
ESC = "\x1b[2J\x1b[31m"  # clear the screen, turn red
SHOWN_ESC = "\\x1b[2J\\x1b[31m"


def pinshift(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The real console entry point in a subprocess; a hang becomes a test failure after 60 s."""
    return subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def assert_one_line(result: subprocess.CompletedProcess, code: int) -> str:
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a fifo"


def unix_socket(path: Path) -> str:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays
    return "a socket"


def char_device(path: Path) -> str:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    return "a character device"


def dir_link(path: Path) -> str:
    """A symlink to a directory: git lists it as a file (the walk outside git does not list it at all)."""
    git(path.parent, "init", "-q")
    (path.parent / "somedir").mkdir()
    path.symlink_to("somedir")
    return "a directory"


# --- anything but a regular file is skipped unopened -----------------------------------------------


@pytest.mark.parametrize("make", [fifo, unix_socket, char_device, dir_link], ids=lambda f: f.__name__)
@pytest.mark.parametrize("command", [("parse", "."), ("scan", "."), ("lint", "."), ("verify", "."),
                                     ("apply", "metadata-rev", "--dry-run"), ("apply", "metadata-rev")])
def test_a_special_file_named_nix_is_skipped_with_a_reason(tmp_path, make, command):
    """`mkfifo x.nix; pinshift parse .` hung forever: a fifo blocks on open."""
    (tmp_path / "a.nix").write_bytes(RECIPE)
    kind = make(tmp_path / "x.nix")
    result = pinshift(tmp_path, *command)
    assert "Traceback" not in result.stderr
    assert f"x.nix: {kind}, not a regular file; skipped" in result.stdout + result.stderr, result
    assert result.returncode in (0, 1), result  # 1 only where the command has findings of its own (lint, verify)
    if command == ("apply", "metadata-rev"):
        assert result.returncode == 0 and (tmp_path / "a.nix").read_bytes() == BUMPED


def test_a_fifo_named_on_the_command_line_is_skipped(tmp_path):
    fifo(tmp_path / "x.nix")
    result = pinshift(tmp_path, "parse", "x.nix")
    assert result.returncode == 0, result
    assert result.stderr.splitlines() == ["x.nix: a fifo, not a regular file; skipped",
                                          "0 files parsed, 0 problems, 1 skipped"]


def test_a_fifo_in_a_git_work_tree_is_skipped(tmp_path, make_repo):
    root = make_repo({"a.nix": RECIPE})
    fifo(root / "x.nix")
    git(root, "add", "-A")  # git does not track a fifo; pinshift must not open it either way
    result = pinshift(root, "apply", "metadata-rev")
    assert result.returncode == 0, result
    assert (root / "a.nix").read_bytes() == BUMPED


# --- symlink loops -------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [("parse", "."), ("scan", "."), ("lint", "."),
                                     ("apply", "metadata-rev", "--dry-run", "--verbose"),
                                     ("apply", "metadata-rev", "--verbose")])
def test_a_symlink_loop_is_a_skipped_file(tmp_path, command):
    """`ln -s loop.nix loop.nix` was an internal error (exit 3)."""
    (tmp_path / "a.nix").write_bytes(RECIPE)
    (tmp_path / "loop.nix").symlink_to("loop.nix")
    (tmp_path / "ping.nix").symlink_to("pong.nix")
    (tmp_path / "pong.nix").symlink_to("ping.nix")
    result = pinshift(tmp_path, *command)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result
    assert result.returncode in (0, 1), result
    for name in ("loop.nix", "ping.nix", "pong.nix"):
        assert f"{name}: symlink loop; skipped" in result.stdout + result.stderr, result
    assert os.readlink(tmp_path / "loop.nix") == "loop.nix"


def test_a_symlink_loop_named_on_the_command_line_is_skipped(tmp_path):
    (tmp_path / "loop.nix").symlink_to("loop.nix")
    result = pinshift(tmp_path, "parse", "loop.nix")
    assert result.returncode == 0, result
    assert result.stderr.splitlines()[0] == "loop.nix: symlink loop; skipped"


# --- invalid globs --------------------------------------------------------------------------------------


def test_an_invalid_files_glob_is_a_usage_error(tmp_path):
    """`--files '[z-a]*.nix'` was an internal error (exit 3)."""
    (tmp_path / "a.nix").write_bytes(RECIPE)
    line = assert_one_line(pinshift(tmp_path, "apply", "metadata-rev", "--files", "[z-a]*.nix"), 2)
    assert line == "pinshift: error: --files [z-a]*.nix: invalid glob (bad character range z-a)"
    assert (tmp_path / "a.nix").read_bytes() == RECIPE


def test_an_invalid_recipe_glob_stops_migrate_before_anything(tmp_path, make_repo):
    root = make_repo({"pkgs/a.nix": RECIPE}, branch="base")
    recipe = tmp_path / "bad.toml"
    recipe.write_text('name = "bad"\nbase = "base"\n[[steps]]\nkind = "metadata-rev"\nfiles = ["pkgs/[z-a]*.nix"]\n')
    branches = git(root, "branch", "--list")
    line = assert_one_line(pinshift(root, "migrate", str(recipe)), 2)
    assert line == (f"pinshift: error: {recipe}: step 1 (metadata-rev): 'files': invalid glob 'pkgs/[z-a]*.nix' "
                    "(bad character range z-a)")
    assert git(root, "branch", "--list") == branches
    assert git(root, "status", "--porcelain") == ""


def test_a_message_of_the_wrong_type_stops_migrate_before_anything(tmp_path, make_repo):
    """`message = ["a"]` was accepted and committed as the text "['a']"."""
    root = make_repo({"pkgs/a.nix": RECIPE}, branch="base")
    recipe = tmp_path / "bad.toml"
    recipe.write_text('name = "bad"\nbase = "base"\nfiles = ["pkgs/*.nix"]\n'
                      '[[steps]]\nkind = "metadata-rev"\nmessage = ["a"]\n')
    line = assert_one_line(pinshift(root, "migrate", str(recipe)), 2)
    assert line == f"pinshift: error: {recipe}: step 1 (metadata-rev): 'message' must be a string, not an array"
    assert git(root, "branch", "--list").split() == ["*", "base"]


# --- terminal escapes from file contents are shown, not obeyed --------------------------------------------


def hostile_tree(tmp_path: Path) -> Path:
    """A recipe whose text holds escapes (in a broken line, a string, a comment) and a file name that does too."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "broken.nix").write_bytes(f'{{ a = "{ESC}" ; b = ; }}\n'.encode())
    (root / "pkg.nix").write_bytes(
        f'{{ pname = "pytorch-{ESC}"; # {ESC}\n  postInstall = "echo 1 > $out/.metadata-rev"; }}\n'.encode())
    (root / f"name{ESC}.nix").write_bytes(b"{ b = ; }\n")
    return root


def assert_no_raw_control_characters(text: str) -> None:
    assert not [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f], repr(text)


@pytest.mark.parametrize("command", [("parse", "."), ("scan", ".", "--verbose"), ("lint", "."),
                                     ("scan", ".", "--format", "markdown", "--verbose"),
                                     ("lint", ".", "--format", "markdown"),
                                     ("apply", "metadata-rev", "--dry-run"),
                                     ("apply", "metadata-rev", "--dry-run", "--format", "markdown"),
                                     ("apply", "word-swap", "--set", "old=pytorch", "--set", "new=torch",
                                      "--migrations", str(FIXTURES / "migrations"), "--dry-run")])
def test_escape_sequences_from_files_are_printed_escaped(tmp_path, command):
    root = hostile_tree(tmp_path)
    result = pinshift(root, *command)
    assert "Traceback" not in result.stderr, result
    assert_no_raw_control_characters(result.stdout)
    assert_no_raw_control_characters(result.stderr)
    shown = result.stdout
    if "markdown" in command:  # Markdown escapes the escape's `\` and `[`: what a reader sees is the escape
        import html

        from markdown_it import MarkdownIt

        shown = html.unescape(MarkdownIt("commonmark").enable("table").render(result.stdout))
    assert SHOWN_ESC in shown + result.stderr, result


def test_parse_shows_the_escaped_line_and_path(tmp_path):
    root = hostile_tree(tmp_path)
    result = pinshift(root, "parse", ".")
    assert result.returncode == 1
    assert f'    {{ a = "{SHOWN_ESC}" ; b = ; }}' in result.stdout.splitlines()
    assert any(line.startswith(f"name{SHOWN_ESC}.nix:1:") for line in result.stdout.splitlines()), result.stdout


def test_apply_summary_and_error_lines_escape_file_names(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    (root / f"x{ESC}.nix").write_bytes(RECIPE)
    result = pinshift(root, "apply", "metadata-rev")
    assert result.returncode == 0, result
    assert f"changed  x{SHOWN_ESC}.nix (1 edit)" in result.stdout.splitlines()
    assert_no_raw_control_characters(result.stdout)
    (root / f"x{ESC}.nix").chmod(0o444)
    refused = pinshift(root, "apply", "metadata-rev")
    assert refused.returncode == 1
    assert_no_raw_control_characters(refused.stderr)
    assert f"x{SHOWN_ESC}.nix: read-only" in refused.stderr


def test_the_coloured_text_report_keeps_its_own_colours_and_escapes_the_files(tmp_path):
    """With colour on, pinshift's own SGR codes stay; the file's escape sequences are shown as text."""
    from pinshift.planning.plan import FileChange, Outcome, Plan, StepPlan, Warning
    from pinshift.report.text import render_text

    before = f'{{ a = "{ESC}"; }}\r\n'.encode()
    change = FileChange("x.nix", Outcome.CHANGED, before=before, after=before.replace(b"a =", b"b ="),
                        warnings=[Warning("x.nix", 1, 3, f"look at {ESC}here\rhidden")])
    step = StepPlan(1, 1, "word-swap", "t", {}, files=[change])
    text = render_text(Plan(recipe="r", steps=[step]), color=True)
    assert "\x1b[2J" not in text and "\x1b[31m" not in text.replace("\x1b[31m-", "")  # red only as our '-' lines
    assert f'-{{ a = "{SHOWN_ESC}"; }}\r' in text  # the escaped line keeps the CRLF file's final \r
    assert f"look at {SHOWN_ESC}here\\rhidden" in text
    assert "\x1b[32m+" in text  # our own colour for added lines is still there


def test_recipes_and_show_escape_what_a_repository_recipe_says(tmp_path, make_repo):
    """A repository's own recipe files are file contents too: `pinshift recipes` and `show` print them escaped."""
    toml_esc = "\\u001b[2J\\u001b[31m"  # TOML forbids raw control characters; its escapes decode to them
    root = make_repo({".pinshift/recipes/evil.toml":
                      f'name = "evil"\ndescription = "looks {toml_esc}fine"\n[[steps]]\nkind = "metadata-rev"\n'
                      f'title = "bump {toml_esc}"\n'})
    for command in (("recipes",), ("show", "evil")):
        result = pinshift(root, *command)
        assert result.returncode == 0, result
        assert_no_raw_control_characters(result.stdout + result.stderr)
        assert SHOWN_ESC in result.stdout, result
