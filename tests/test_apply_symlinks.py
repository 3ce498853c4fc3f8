"""`apply` never reads or writes through a symbolic link at any level below the tree it was given (issue 45 §1, §10).

Git's index may list `pkgs/a.nix` while `pkgs` is, on disk, a link to a folder elsewhere; a folder may be
swapped for a link between planning and writing. Every file is reached from a handle on its folder, each
folder opened without following a link: such a file is skipped when planned, refused when written, and the
file outside the tree keeps its bytes. A file with other hard links is replaced and the others named.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import git
from pinshift.errors import WriteRefused

OLD = b"pkgs: { p = pkgs.python3Packages.foo; }\n"
NEW = b"pkgs: { p = pkgs.python313Packages.foo; }\n"
ARGS = ("apply", "rename-attr", "--set", "from=python3Packages", "--set", "to=python313Packages", ".")

# where the file is and which folder on its path becomes a link: the file's folder, a folder above it
LEVELS = {"its folder": ("pkgs/a.nix", "pkgs"), "a folder above": ("top/mid/a.nix", "top")}


def _tree(tmp_path: Path, relative: str, in_git: bool) -> Path:
    root = tmp_path / "repo"
    (root / relative).parent.mkdir(parents=True)
    (root / relative).write_bytes(OLD)
    (root / "keep.nix").write_bytes(OLD)
    if in_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
    return root


def _link_folder(root: Path, folder: str, outside: Path) -> None:
    """Move `folder` out of the tree and leave a symbolic link to it in its place."""
    outside.parent.mkdir(parents=True, exist_ok=True)
    os.rename(root / folder, outside)
    os.symlink(outside, root / folder)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
@pytest.mark.parametrize("level", LEVELS)
def test_a_file_behind_a_linked_folder_is_skipped_and_the_outside_file_untouched(run_cli, tmp_path, level, in_git):
    relative, folder = LEVELS[level]
    root = _tree(tmp_path, relative, in_git)
    outside = tmp_path / "elsewhere" / folder
    _link_folder(root, folder, outside)
    outside_file = outside / relative.removeprefix(folder + "/")
    result = run_cli(*ARGS, cwd=root)
    if in_git:  # git's index still lists the file: it is seen, and skipped with the reason
        assert f"skipped  {relative}: {folder} is a symbolic link; pinshift does not follow a linked folder" \
            in result.stdout, result
    assert "changed  keep.nix" in result.stdout, result
    assert result.exit_code == 0, result
    assert outside_file.read_bytes() == OLD
    assert sorted(os.listdir(outside_file.parent)) == ["a.nix"]  # no temporary file left there either
    assert (root / "keep.nix").read_bytes() == NEW


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_the_file_itself_a_link_out_of_the_tree_is_skipped(run_cli, tmp_path, in_git):
    root = _tree(tmp_path, "pkgs/a.nix", in_git)
    outside = tmp_path / "elsewhere" / "a.nix"
    outside.parent.mkdir()
    os.rename(root / "pkgs/a.nix", outside)
    os.symlink(outside, root / "pkgs/a.nix")
    result = run_cli(*ARGS, cwd=root)
    assert result.exit_code == 0, result
    assert f"skipped  pkgs/a.nix: symlink to {outside}, outside the repository" in result.stdout, result
    assert outside.read_bytes() == OLD


def _planned(root: Path, monkeypatch):
    from pinshift.commands.apply import ApplyOptions, plan_apply
    from pinshift.files.tree import DEFAULT_MAX_BYTES

    monkeypatch.chdir(root)
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    options = ApplyOptions(kind="rename-attr", paths=(".",), settings=("from=python3Packages", "to=python313Packages"),
                           globs=("**/*.nix",), dry_run=False, strict=False, migrations=None,
                           max_bytes=DEFAULT_MAX_BYTES)
    plan, selected, _ = plan_apply(options)
    step = plan.steps[0]
    assert sorted(c.path for c in step.changed) == sorted([*(p for p in selected.entries)])
    return step, selected


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
@pytest.mark.parametrize("level", LEVELS)
def test_a_folder_swapped_for_a_link_after_planning_refuses_every_write(tmp_path, monkeypatch, level, in_git):
    """Planning and writing run as two calls; between them the folder becomes a link to a copy elsewhere."""
    from pinshift.commands.apply import write_changes

    relative, folder = LEVELS[level]
    root = _tree(tmp_path, relative, in_git)
    step, selected = _planned(root, monkeypatch)
    outside = tmp_path / "elsewhere" / folder
    _link_folder(root, folder, outside)
    outside_file = outside / relative.removeprefix(folder + "/")
    with pytest.raises(WriteRefused, match=rf"^{relative}: {folder} is a symbolic link; pinshift does not follow "
                                           r"a linked folder; left alone; no file was changed$"):
        write_changes(step, selected)
    assert outside_file.read_bytes() == OLD
    assert sorted(os.listdir(outside_file.parent)) == ["a.nix"]
    assert (root / "keep.nix").read_bytes() == OLD  # all or nothing


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_the_file_swapped_for_a_link_after_planning_refuses_every_write(tmp_path, monkeypatch, in_git):
    from pinshift.commands.apply import write_changes

    root = _tree(tmp_path, "pkgs/a.nix", in_git)
    step, selected = _planned(root, monkeypatch)
    outside = tmp_path / "elsewhere" / "a.nix"
    outside.parent.mkdir()
    outside.write_bytes(OLD)  # the same bytes pinshift planned from
    os.unlink(root / "pkgs/a.nix")
    os.symlink(outside, root / "pkgs/a.nix")
    with pytest.raises(WriteRefused, match="pkgs/a.nix: .*; no file was changed$"):
        write_changes(step, selected)
    assert outside.read_bytes() == OLD
    assert (root / "keep.nix").read_bytes() == OLD


def test_the_writer_refuses_a_linked_folder_below_its_root(tmp_path):
    """pinshift.files.replace itself: a Replacement's folders are opened from its root without following a link."""
    from pinshift.files.replace import Replacement, replace_all

    root, outside = tmp_path / "repo", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "a.nix").write_bytes(OLD)
    os.symlink(outside, root / "pkgs")
    with pytest.raises(WriteRefused, match=r"^pkgs/a.nix: pkgs is a symbolic link; pinshift does not follow a linked folder; left alone"):
        replace_all([Replacement("pkgs/a.nix", root / "pkgs/a.nix", OLD, NEW, root=root)])
    with pytest.raises(WriteRefused, match=r"^pkgs/b.nix: pkgs is a symbolic link; pinshift does not follow a linked folder; left alone"):
        replace_all([Replacement("pkgs/b.nix", root / "pkgs/b.nix", None, NEW, "100644", root=root)])
    assert os.listdir(outside) == ["a.nix"] and (outside / "a.nix").read_bytes() == OLD


# --- hard links (§10): replaced, and the other names said per file -----------------------------------------


@pytest.mark.parametrize("others", [1, 2])
def test_a_hard_linked_file_is_replaced_with_a_warning_naming_its_other_links(run_cli, tmp_path, others):
    root = _tree(tmp_path, "pkgs/a.nix", in_git=True)
    names = [tmp_path / f"copy{i}.nix" for i in range(others)]
    for name in names:
        os.link(root / "pkgs/a.nix", name)
    result = run_cli(*ARGS, cwd=root)
    assert result.exit_code == 0, result
    links = "its other hard link keeps" if others == 1 else f"its {others} other hard links keep"
    assert f"pinshift: warning: pkgs/a.nix: {links} the old content" in result.stderr, result
    assert "keep.nix" not in result.stderr  # only the linked file is named
    assert (root / "pkgs/a.nix").read_bytes() == NEW
    assert all(name.read_bytes() == OLD for name in names)


# --- the swap while pinshift runs: during planning (the real CLI), and between the check and the renames ----


MEDDLING = Path(__file__).parent / "fixtures" / "meddling"


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_a_folder_swapped_for_a_link_while_planning_changes_nothing_anywhere(run_cli, tmp_path, in_git):
    """The step plays another program: while it plans zz/c.nix, `pkgs` (already read) is moved out of the tree
    and a link to it left in its place (`meddle`'s link-folder)."""
    root = tmp_path / "repo"
    for relative in ("pkgs/a.nix", "pkgs/b.nix", "zz/c.nix"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(OLD)
    if in_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
    result = run_cli("apply", "meddle", "--set", "old=python3Packages", "--set", "new=python313Packages",
                     "--set", "trigger=zz/c.nix", "--set", "victim=pkgs", "--set", "action=link-folder",
                     "--migrations", str(MEDDLING), cwd=root)
    assert result.exit_code == 1, result
    assert "refused  pkgs/a.nix: pkgs is a symbolic link; pinshift does not follow a linked folder; left alone" \
        in result.stderr, result
    assert result.stderr.splitlines()[-1] == ("pinshift: error: 2 files cannot be changed safely (listed above); "
                                              "no file was changed"), result
    outside = tmp_path / "elsewhere" / "pkgs"
    assert (root / "pkgs").is_symlink()
    assert sorted(os.listdir(outside)) == ["a.nix", "b.nix"]
    assert all((outside / name).read_bytes() == OLD for name in ("a.nix", "b.nix"))
    assert (root / "zz/c.nix").read_bytes() == OLD


def test_a_folder_swapped_for_a_link_while_pinshift_writes_gets_no_new_content(tmp_path):
    """A real process stopped at its first temporary file (the writes have begun: every file checked), `pkgs`
    moved out of the tree and replaced by a link, then resumed: no file anywhere holds new content, and
    pinshift's own temporary files are removed from the folder it moved away."""
    import signal
    import subprocess
    import sys
    import time

    root = tmp_path / "repo"
    (root / "pkgs").mkdir(parents=True)
    for i in range(600):
        (root / "pkgs" / f"f{i:04}.nix").write_bytes(OLD)
    process = subprocess.Popen([sys.executable, "-c", "from pinshift.cli import run; run()", *ARGS[:-1], "pkgs"],
                               cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    try:
        while not any(name.endswith(".pinshift-new") for name in os.listdir(root / "pkgs")):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"apply ended or stalled before writing: {process.communicate()}")
        process.send_signal(signal.SIGSTOP)
        outside = tmp_path / "elsewhere" / "pkgs"
        _link_folder(root, "pkgs", outside)
        process.send_signal(signal.SIGCONT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, (out, err)
    [line] = err.splitlines()
    assert line.startswith("pinshift: error: pkgs/f") and "no file was changed" in line, err
    assert f"{root / 'pkgs'} is a symbolic link" in line or "its folder was replaced" in line, err
    assert sorted(os.listdir(outside)) == [f"f{i:04}.nix" for i in range(600)]  # no temporary file left either
    assert all((outside / f"f{i:04}.nix").read_bytes() == OLD for i in range(600))
