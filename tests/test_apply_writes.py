"""`pinshift apply` writes all files or none (issue 21 §2), through the real CLI on real files.

Writes are made to fail for real, also as root: `chattr +i`, mode 444 (checked by pinshift
itself, as root could write it), a full tmpfs, a read-only bind mount, a file that is a
mount point (rename over it fails, as over a file Docker bind-mounts), and another program
deleting, editing or replacing a file while pinshift plans (the meddle fixture). After
each: every file byte for byte and inode for inode as before, no temporary file left.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import without_loading_notices

from mounts import bind_file, fill, immutable, read_only_bind, small_tmpfs

FIXTURES = Path(__file__).parent / "fixtures"
MEDDLING = FIXTURES / "meddling"
RECIPE = (FIXTURES / "steps" / "metadata-rev" / "bump.nix").read_bytes()
BUMP = (b"echo 4 > $out/.metadata-rev", b"echo 5 > $out/.metadata-rev")
BUMPED = RECIPE.replace(*BUMP)
assert BUMPED != RECIPE


def make_tree(root: Path, names=("a.nix", "b.nix", "c.nix")) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / name).write_bytes(RECIPE)
    return root


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` (hidden ones too): bytes, mode, owner, group and inode."""
    out = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        out[path.relative_to(root).as_posix()] = (data, info.st_mode, info.st_uid, info.st_gid, info.st_ino)
    return out


def one_line_error(result, code: int) -> str:
    assert result.exit_code == code, result
    assert "Traceback" not in result.output
    lines = without_loading_notices(result.stderr)
    assert len(lines) == 1, result.stderr
    return lines[0]


def apply(run_cli, root: Path, *extra: str):
    return run_cli("apply", "metadata-rev", *extra, cwd=root)


def meddle(run_cli, root: Path, action: str, victim: str = "b.nix"):
    """Apply a step that bumps the marker; while it plans c.nix, `action` happens to `victim` (another program)."""
    return run_cli("apply", "meddle", "--set", f"old={BUMP[0].decode()}", "--set", f"new={BUMP[1].decode()}",
                   "--set", "trigger=c.nix", "--set", f"victim={victim}", "--set", f"action={action}",
                   "--migrations", str(MEDDLING), cwd=root)


# --- files pinshift must not change: nothing is written --------------------------------------------------


def test_an_immutable_file_stops_every_write_and_a_retry_is_right(run_cli, tmp_path):
    """The issue's case: a.nix was written, b refused, c not; a retry then bumped a twice."""
    root = make_tree(tmp_path / "w")
    before = snapshot(root)
    with immutable(root / "b.nix"):
        line = one_line_error(apply(run_cli, root), 1)
        assert line == ("pinshift: error: b.nix: immutable (chattr +i); remove the flag (chattr -i) to let pinshift "
                        "change it; no file was changed")
        assert snapshot(root) == before
    retry = apply(run_cli, root)
    assert retry.exit_code == 0, retry
    assert {p.name: p.read_bytes() for p in root.iterdir()} == {n: BUMPED for n in ("a.nix", "b.nix", "c.nix")}


def test_a_read_only_file_is_refused_even_for_root(run_cli, tmp_path):
    """Mode 444: root's open() would succeed, so pinshift reads the mode bits itself."""
    root = make_tree(tmp_path / "w")
    (root / "b.nix").chmod(0o444)
    before = snapshot(root)
    line = one_line_error(apply(run_cli, root), 1)
    assert line == ("pinshift: error: b.nix: read-only (mode 0444); make it writable (chmod u+w) to let pinshift "
                    "change it; no file was changed")
    assert snapshot(root) == before


def test_several_refused_files_are_listed_then_summed_up(run_cli, tmp_path):
    root = make_tree(tmp_path / "w")
    (root / "a.nix").chmod(0o400)
    (root / "c.nix").chmod(0o444)
    before = snapshot(root)
    result = apply(run_cli, root)
    assert result.exit_code == 1, result
    assert result.stderr.splitlines() == [
        "refused  a.nix: read-only (mode 0400); make it writable (chmod u+w) to let pinshift change it",
        "refused  c.nix: read-only (mode 0444); make it writable (chmod u+w) to let pinshift change it",
        "pinshift: error: 2 files cannot be changed safely (listed above); no file was changed",
    ]
    assert result.stdout == ""
    assert snapshot(root) == before


@pytest.mark.parametrize("action, reason", [
    ("delete", "b.nix: deleted since pinshift read it; not recreated"),
    ("directory", "b.nix: replaced by a directory since pinshift read it; left alone"),
    ("edit", "b.nix: changed since pinshift read it; run pinshift again"),
])
def test_a_file_changed_by_another_program_after_planning_stops_every_write(run_cli, tmp_path, action, reason):
    root = make_tree(tmp_path / "w")
    originals = snapshot(root)
    line = one_line_error(meddle(run_cli, root, action), 1)
    assert line == f"pinshift: error: {reason}; no file was changed"
    after = snapshot(root)
    assert after["a.nix"] == originals["a.nix"] and after["c.nix"] == originals["c.nix"]
    if action == "delete":
        assert not (root / "b.nix").exists()  # not recreated
    elif action == "directory":
        assert (root / "b.nix").is_dir() and list((root / "b.nix").iterdir()) == []
    else:
        assert (root / "b.nix").read_bytes() == RECIPE + b"# edited by someone else\n"  # the other edit survives
    assert sorted(p.name for p in root.iterdir()) == sorted(n for n in ("a.nix", "b.nix", "c.nix")
                                                            if action != "delete" or n != "b.nix")  # no temp file


# --- the system refuses a write: nothing is changed either ---------------------------------------------


def test_a_full_disk_changes_no_file(run_cli, tmp_path):
    with small_tmpfs(tmp_path / "disk", "64k") as disk:
        root = make_tree(disk / "w")
        fill(disk, leave=4096)  # room for one temporary file (a tmpfs page), not for three
        before = snapshot(root)
        line = one_line_error(apply(run_cli, root), 2)
        assert line == "pinshift: error: b.nix: cannot write beside it (No space left on device); no file was changed"
        assert snapshot(root) == before


def test_a_read_only_mount_changes_no_file(run_cli, tmp_path):
    root = make_tree(tmp_path / "w", names=("a.nix",))
    before = snapshot(root)
    with read_only_bind(root):
        line = one_line_error(apply(run_cli, root), 2)
    assert line == "pinshift: error: a.nix: on a read-only file system; no file was changed"
    assert snapshot(root) == before


def test_an_immutable_directory_changes_no_file(run_cli, tmp_path):
    """Root ignores a directory's permission bits; an immutable directory refuses new files even to root."""
    root = make_tree(tmp_path / "w")
    (root / "sub").mkdir()
    (root / "sub" / "d.nix").write_bytes(RECIPE)
    before = snapshot(root)
    with immutable(root / "sub"):
        result = apply(run_cli, root)
    assert result.exit_code == 2, result
    assert result.stderr.splitlines()[-1] == \
        f"pinshift: error: sub/d.nix: its directory {root / 'sub'} is immutable (chattr +i); no file was changed"
    assert snapshot(root) == before


def test_a_failed_replacement_puts_back_what_was_replaced(run_cli, tmp_path):
    """b.nix is a mount point: every check passes, renaming over it fails (EBUSY) after a.nix was replaced.

    a.nix comes back as the very same file (same inode: the original was kept as a hard link).
    """
    root = make_tree(tmp_path / "w")
    source = tmp_path / "mounted.nix"
    source.write_bytes(RECIPE)
    with bind_file(source, root / "b.nix"):
        before = snapshot(root)
        line = one_line_error(apply(run_cli, root), 2)
        assert line == ("pinshift: error: b.nix: cannot replace it (Device or resource busy); put back a.nix, "
                        "already replaced; no file was changed")
        assert snapshot(root) == before
    assert source.read_bytes() == RECIPE


# --- what a successful write keeps -------------------------------------------------------------------


def test_owner_group_and_mode_of_a_rewritten_file_are_kept(run_cli, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    root = make_tree(tmp_path / "w")
    os.chown(root / "a.nix", 1234, 5678)
    (root / "a.nix").chmod(0o640)
    (root / "b.nix").chmod(0o2755)  # set-gid survives: chown (which clears it) comes before chmod
    inode = (root / "a.nix").stat().st_ino
    result = apply(run_cli, root)
    assert result.exit_code == 0, result
    info = (root / "a.nix").stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (1234, 5678, 0o640)
    assert stat.S_IMODE((root / "b.nix").stat().st_mode) == 0o2755
    assert info.st_ino != inode  # replaced by a rename, never rewritten in place
    assert (root / "a.nix").read_bytes() == BUMPED
    assert sorted(p.name for p in root.iterdir()) == ["a.nix", "b.nix", "c.nix"]


def test_a_symlink_inside_the_tree_stays_a_link_and_its_file_is_written_once(run_cli, tmp_path):
    root = make_tree(tmp_path / "w", names=("real.nix",))
    (root / "link.nix").symlink_to("real.nix")
    result = apply(run_cli, root)
    assert result.exit_code == 0, result
    assert os.readlink(root / "link.nix") == "real.nix"
    assert (root / "real.nix").read_bytes() == BUMPED  # bumped once, not twice


# --- signals: Ctrl-C, SIGTERM and SIGHUP while files are written ---------------------------------------------


def _interrupt_while_writing(tmp_path: Path, signum: int) -> tuple[subprocess.CompletedProcess, Path]:
    """Start apply on many files, stop it as soon as its first temporary file appears, send `signum`, resume it."""
    root = make_tree(tmp_path / "w", names=[f"f{i:04}.nix" for i in range(600)])
    process = subprocess.Popen([sys.executable, "-c", "from pinshift.cli import run; run()", "apply", "metadata-rev"],
                               cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    try:
        while not any(name.endswith((".pinshift-new", ".pinshift-orig")) for name in os.listdir(root)):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"apply ended or stalled before writing: {process.communicate()}")
        process.send_signal(signal.SIGSTOP)
        process.send_signal(signum)
        process.send_signal(signal.SIGCONT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), root


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_while_writing_changes_no_file_and_leaves_nothing_behind(tmp_path, signum):
    result, root = _interrupt_while_writing(tmp_path, signum)
    assert result.returncode == 128 + signum, result
    assert result.stderr.splitlines()[-1].startswith(f"pinshift: error: interrupted ({signum.name}) while writing "
                                                     "files; "), result.stderr
    assert result.stderr.splitlines()[-1].endswith("no file was changed")
    names = sorted(os.listdir(root))
    assert names == [f"f{i:04}.nix" for i in range(600)]  # no temporary file, no kept original
    assert {(root / n).read_bytes() for n in names} == {RECIPE}


def test_ctrl_c_during_the_renames_puts_every_replaced_file_back(tmp_path):
    """The renames of 2000 files take milliseconds: watch the first file's inode change, stop, signal, resume.

    A run can finish its renames before the stop lands (then every file is written, which
    is all, not some); each attempt must be all or nothing, and one of three must roll back.
    """
    rolled_back = 0
    for attempt in range(3):
        root = make_tree(tmp_path / f"w{attempt}", names=[f"f{i:04}.nix" for i in range(2000)])
        first = root / "f0000.nix"
        inode = first.stat().st_ino
        process = subprocess.Popen([sys.executable, "-c", "from pinshift.cli import run; run()", "apply",
                                    "metadata-rev"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        try:
            while first.stat().st_ino == inode and process.poll() is None and time.monotonic() < deadline:
                pass
            process.send_signal(signal.SIGSTOP)
            process.send_signal(signal.SIGINT)
            process.send_signal(signal.SIGCONT)
            out, err = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        names = sorted(os.listdir(root))
        assert names == [f"f{i:04}.nix" for i in range(2000)], err  # nothing left behind
        contents = {(root / n).read_bytes() for n in names}
        if process.returncode == 0:
            assert contents == {BUMPED}
            continue
        assert process.returncode == 130, err
        assert contents == {RECIPE}
        last = err.splitlines()[-1]
        assert last.startswith("pinshift: error: interrupted (SIGINT) while writing files; put back "), last
        assert last.endswith("already replaced; no file was changed"), last
        assert first.stat().st_ino == inode  # the original file itself, not a copy of it
        rolled_back += 1
        break
    assert rolled_back, "no attempt was interrupted during its renames"


def test_a_file_rewritten_in_place_while_pinshift_writes_is_never_overwritten(tmp_path):
    """Issue 28 §3: another program rewrites the last file in place after pinshift checked it, keeping its size and
    restoring its mtime (stat identity unchanged). The process is stopped at its first temporary file, the edit is
    made, and it resumes: the bytes are compared right before each replacement, so every file is put back."""
    names = [f"f{i:04}.nix" for i in range(600)]
    root = make_tree(tmp_path / "w", names=names)
    victim = root / names[-1]
    theirs = RECIPE.replace(b"echo 4 >", b"echo 7 >")
    assert len(theirs) == len(RECIPE) and theirs != RECIPE
    process = subprocess.Popen([sys.executable, "-c", "from pinshift.cli import run; run()", "apply", "metadata-rev"],
                               cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    try:
        while not any(name.endswith((".pinshift-new", ".pinshift-orig")) for name in os.listdir(root)):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"apply ended or stalled before writing: {process.communicate()}")
        process.send_signal(signal.SIGSTOP)
        before = victim.stat()
        assert victim.read_bytes() == RECIPE, "the run replaced the last file before it could be stopped"
        with open(victim, "r+b") as handle:  # in place: same inode, same size
            handle.write(theirs)
        os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = victim.stat()
        assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
        process.send_signal(signal.SIGCONT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, err
    assert "Traceback" not in err and out == ""
    assert err.splitlines() == [f"pinshift: error: {names[-1]}: changed while pinshift was writing; left alone; "
                                f"put back the {len(names) - 1} files already replaced; no file was changed"]
    assert victim.read_bytes() == theirs  # their edit survives
    assert sorted(os.listdir(root)) == names  # no temporary file, no kept original
    assert {(root / n).read_bytes() for n in names[:-1]} == {RECIPE}
