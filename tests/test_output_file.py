"""`--output FILE`: checked before any work (issue 21 §5), created like any file the user writes (issue 23 §3)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import pytest

from mounts import immutable, read_only_bind
from pinshift.errors import UsageError
from pinshift.report import check_output_path

MEDDLING = Path(__file__).parent / "fixtures" / "meddling"
RECIPE = b'{ postInstall = "echo 1 > $out/.metadata-rev"; }\n'
BUMPED = RECIPE.replace(b"echo 1", b"echo 2")


def one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def work(tmp_path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.nix").write_bytes(RECIPE)
    return root


@contextlib.contextmanager
def umask(mask: int):
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- checked before any work ---------------------------------------------------------------------------


def test_output_in_a_read_only_directory_fails_before_any_file_is_written(run_cli, work, tmp_path):
    """Exit 2 promises that nothing changed: the report's directory is checked before apply writes a file."""
    reports = tmp_path / "reports"
    reports.mkdir()
    with read_only_bind(reports):
        result = run_cli("apply", "metadata-rev", "--output", str(reports / "r.json"), "--format", "json", cwd=work)
        line = one_line_error(result)
    assert line == f"pinshift: error: --output {reports / 'r.json'}: cannot write in {reports} (Read-only file system)"
    assert (work / "a.nix").read_bytes() == RECIPE
    assert list(reports.iterdir()) == []


def test_output_in_an_immutable_directory_fails_before_any_work(run_cli, work, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    with immutable(reports):
        line = one_line_error(run_cli("apply", "metadata-rev", "--output", str(reports / "r.md"), cwd=work))
    assert line == f"pinshift: error: --output {reports / 'r.md'}: cannot write in {reports} (Operation not permitted)"
    assert (work / "a.nix").read_bytes() == RECIPE


def test_output_in_a_missing_directory_fails_before_any_work(run_cli, work):
    target = str(work / "missing" / "r.md")
    line = one_line_error(run_cli("apply", "metadata-rev", "--output", target, cwd=work))
    assert line == f"pinshift: error: --output {target}: directory {work / 'missing'} does not exist; create it first"
    assert (work / "a.nix").read_bytes() == RECIPE


def test_output_that_is_a_fifo_fails_before_any_work(run_cli, work):
    os.mkfifo(work / "r.md")
    line = one_line_error(run_cli("apply", "metadata-rev", "--output", str(work / "r.md"), cwd=work))
    assert line == f"pinshift: error: --output {work / 'r.md'}: exists and is not a regular file; give another name"
    assert (work / "a.nix").read_bytes() == RECIPE


def test_a_read_only_existing_report_is_not_replaced(run_cli, work):
    report = work / "r.md"
    report.write_text("keep me\n")
    report.chmod(0o444)
    line = one_line_error(run_cli("apply", "metadata-rev", "--dry-run", "--output", str(report), cwd=work))
    assert line == f"pinshift: error: --output {report}: the file is read-only; make it writable or give another name"
    assert report.read_text() == "keep me\n"


def test_check_output_path_is_a_plain_function_for_other_commands(tmp_path):
    """migrate calls it too; it leaves nothing behind (its probe file is removed)."""
    assert check_output_path(tmp_path / "r.md") == tmp_path / "r.md"
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(UsageError, match="does not exist"):
        check_output_path(tmp_path / "no" / "r.md")


def test_migrate_dry_run_checks_the_output_first(run_cli, make_repo, tmp_path):
    root = make_repo({"a.nix": RECIPE})
    line = one_line_error(run_cli("migrate", "pytorch-2.10-cuda12_9", "--dry-run", "--output",
                                  str(tmp_path / "none" / "r.md"), cwd=root))
    assert line == f"pinshift: error: --output {tmp_path / 'none' / 'r.md'}: directory {tmp_path / 'none'} does not " \
                   "exist; create it first"


# --- created like any other file the user writes ---------------------------------------------------------


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_report_gets_the_mode_the_umask_gives(run_cli, work, mask, expected):
    """Reports were created 0600 (mkstemp's mode) whatever the umask."""
    with umask(mask):
        result = run_cli("apply", "metadata-rev", "--dry-run", "--output", str(work / "r.md"), cwd=work)
    assert result.exit_code == 0, result
    assert mode(work / "r.md") == expected
    assert sorted(p.name for p in work.iterdir()) == ["a.nix", "r.md"]  # no temp or probe file left


def test_an_existing_report_keeps_its_mode_and_owner(run_cli, work):
    report = work / "r.json"
    report.write_text("old\n")
    report.chmod(0o664)
    if os.geteuid() == 0:
        os.chown(report, 1234, 5678)
    with umask(0o077):
        result = run_cli("apply", "metadata-rev", "--dry-run", "--format", "json", "--output", str(report), cwd=work)
    assert result.exit_code == 0, result
    assert report.read_text().startswith("{")
    assert mode(report) == 0o664
    if os.geteuid() == 0:
        assert (report.stat().st_uid, report.stat().st_gid) == (1234, 5678)


def test_a_failing_report_after_the_files_were_written_says_so_and_exits_1(run_cli, work, tmp_path):
    """The report is written after the files: when it fails then, exit 2 ("nothing changed") would be a lie.

    The early check passes; the report's directory is removed while the step plans (the meddle fixture
    plays another program), so the files are written and the report cannot be.
    """
    reports = tmp_path / "reports"
    reports.mkdir()
    target = reports / "r.md"
    result = run_cli("apply", "meddle", "--set", "old=echo 1", "--set", "new=echo 2", "--set", "trigger=a.nix",
                     "--set", f"victim={reports}", "--set", "action=remove-dir", "--migrations", str(MEDDLING),
                     "--output", str(target), cwd=work)
    assert result.exit_code == 1, result
    assert result.stderr.splitlines()[-1] == (f"pinshift: error: --output {target}: directory {reports} does not "
                                              "exist; create it first; the file above was changed all the same")
    assert (work / "a.nix").read_bytes() == BUMPED
