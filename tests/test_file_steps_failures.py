"""Issue 13, done-when 3: file-level steps refuse what would lose or clobber a file, in one line, writing nothing.

Each attack runs through the real CLI on a real repository (or directory, for `apply`) and checks
the exit code, the single stderr line (naming both paths), and that the checkout, refs, worktrees
and temporary directory are exactly as they were: no branch, no file.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from conftest import git
from migrate_repo import files_of, snapshot, worktree_dirs

FILES = {
    "pkgs/pytorch-sm75-avx.nix": '# Package name: pytorch-sm75-avx\n{ pname = "pytorch-sm75-avx"; gpuArchNum = "75"; }\n',
    "pkgs/pytorch-sm75-avx2.nix": '# Package name: pytorch-sm75-avx2\n{ pname = "pytorch-sm75-avx2"; gpuArchNum = "75"; }\n',
    "pkgs/pytorch-sm80-avx.nix": '# Package name: pytorch-sm80-avx\n{ pname = "pytorch-sm80-avx"; gpuArchNum = "80"; }\n',
    "pkgs/keep.nix": "{ }\n",
    "README.md": "# recipes\n",
}


@pytest.fixture(autouse=True)
def scratch(tmp_path, monkeypatch):
    """Temporary worktrees go here, so a test sees only its own leftovers."""
    directory = tmp_path / "scratch"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    monkeypatch.setenv("TMPDIR", str(directory))
    return directory


@pytest.fixture
def repo(make_repo):
    return make_repo(FILES, branch="base")


def recipe(tmp_path, steps: str, name: str = "files") -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nbase = "base"\ntarget = "out"\nfiles = ["pkgs/*.nix"]\n{steps}')
    return str(path)


def one_line(result, code: int, *fragments: str) -> str:
    assert result.exit_code == code, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pinshift: error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def nothing_left(root, before) -> None:
    assert snapshot(root) == before
    assert git(root, "branch", "--list", "out") == ""
    assert worktree_dirs(root) == []
    assert [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("pinshift-")] == []


def migrate_refused(run_cli, repo, path: str, code: int, *fragments: str) -> None:
    """The same refusal from a dry run and from a real run; nothing created either way."""
    before = snapshot(repo)
    for extra in (("--dry-run",), ()):
        one_line(run_cli("migrate", path, "--repo", str(repo), *extra), code, *fragments)
        nothing_left(repo, before)


RENAME = '[[steps]]\nkind = "rename-files"\n[steps.params]\n'
CLONE = '[[steps]]\nkind = "clone-files"\n[steps.params]\n'


def test_two_files_onto_one_name_are_refused_naming_both(repo, run_cli, tmp_path):
    path = recipe(tmp_path, RENAME + "from = '-sm(75|80)-avx.nix'\nto = '-smXX-avx.nix'\nregex = true\n")
    migrate_refused(run_cli, repo, path, 1, "step 1/1 (rename-files): pkgs/pytorch-sm75-avx.nix and "
                    "pkgs/pytorch-sm80-avx.nix would both become pkgs/pytorch-smXX-avx.nix; nothing was written")


def test_a_rename_onto_an_existing_file_is_refused(repo, run_cli, tmp_path):
    path = recipe(tmp_path, RENAME + 'from = "sm75"\nto = "sm80"\n')
    migrate_refused(run_cli, repo, path, 1, "cannot rename pkgs/pytorch-sm75-avx.nix to pkgs/pytorch-sm80-avx.nix, "
                    "which already exists; nothing was written")


def test_a_rename_onto_a_file_the_same_step_moves_away_is_fine(repo, run_cli, tmp_path):
    # sm75-avx.nix -> sm75-avx2.nix while sm75-avx2.nix -> sm75-avx22.nix: a chain, not a collision
    path = recipe(tmp_path, RENAME + "from = 'avx(2?)[.]nix$'\nto = 'avx2\\1.nix'\nregex = true\n")
    result = run_cli("migrate", path, "--repo", str(repo))
    assert result.exit_code == 0, result
    assert git(repo, "ls-tree", "-r", "--name-only", "out").split() == [
        "README.md", "pkgs/keep.nix", "pkgs/pytorch-sm75-avx2.nix", "pkgs/pytorch-sm75-avx22.nix",
        "pkgs/pytorch-sm80-avx2.nix"]
    assert git(repo, "show", "out:pkgs/pytorch-sm75-avx2.nix") == \
        '# Package name: pytorch-sm75-avx2\n{ pname = "pytorch-sm75-avx2"; gpuArchNum = "75"; }\n'
    assert git(repo, "show", "out:pkgs/pytorch-sm75-avx22.nix") == \
        '# Package name: pytorch-sm75-avx22\n{ pname = "pytorch-sm75-avx22"; gpuArchNum = "75"; }\n'


def test_a_clone_onto_a_different_existing_file_is_refused(repo, run_cli, tmp_path):
    path = recipe(tmp_path, CLONE + 'from = "sm75"\nto = "sm80"\n')
    migrate_refused(run_cli, repo, path, 1, "step 1/1 (clone-files): cannot clone pkgs/pytorch-sm75-avx.nix to "
                    "pkgs/pytorch-sm80-avx.nix, which already exists with other contents; nothing was written")


def test_a_clone_onto_a_byte_identical_file_is_a_no_op(repo, run_cli, tmp_path):
    (repo / "pkgs/pytorch-sm70-avx.nix").write_text(
        '# Package name: pytorch-sm70-avx\n{ pname = "pytorch-sm70-avx"; gpuArchNum = "70"; }\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "an SM70 variant made by hand")
    path = recipe(tmp_path, CLONE + 'from = "sm75"\nto = "sm70"\nvalues = { gpuArchNum = \'"70"\' }\n')
    result = run_cli("migrate", path, "--repo", str(repo))
    assert result.exit_code == 0, result
    assert "1 file (1 cloned), 3 edits" in result.stdout  # only sm75-avx2 -> sm70-avx2 is new
    assert git(repo, "diff", "--name-status", "base", "out") == "A\tpkgs/pytorch-sm70-avx2.nix\n"


def test_a_rename_to_a_name_outside_the_files_globs_is_refused(repo, run_cli, tmp_path):
    path = recipe(tmp_path, RENAME + 'from = "avx2.nix"\nto = "avx2.txt"\n')
    migrate_refused(run_cli, repo, path, 1, "cannot rename pkgs/pytorch-sm75-avx2.nix to pkgs/pytorch-sm75-avx2.txt,"
                    " a name outside the step's files (pkgs/*.nix); nothing was written")


def test_a_name_that_is_not_plain_is_refused(repo, run_cli, tmp_path):
    path = recipe(tmp_path, RENAME + "from = 'avx2'\nto = 'av\"x'\n")
    migrate_refused(run_cli, repo, path, 1, "cannot rename pkgs/pytorch-sm75-avx2.nix to pkgs/pytorch-sm75-av\"x.nix: "
                    "'pytorch-sm75-av\"x.nix' is not a plain file name")


def test_a_later_step_that_names_a_removed_file_is_a_recipe_error(repo, run_cli, tmp_path):
    path = recipe(tmp_path, '[[steps]]\nkind = "remove-files"\n[steps.params]\nselect = ["pkgs/pytorch-sm80-avx.nix"]\n'
                            '[[steps]]\nkind = "set-binding"\nfiles = ["pkgs/pytorch-sm80-avx.nix"]\n[steps.params]\n'
                            'path = "x"\nvalue = "1"\nat = "meta"\n')
    migrate_refused(run_cli, repo, path, 2, "step 2/2 (set-binding): files 'pkgs/pytorch-sm80-avx.nix' names "
                    "pkgs/pytorch-sm80-avx.nix, which was removed by step 1 (remove-files)")


def test_a_later_step_that_names_a_renamed_file_by_its_old_name_is_a_recipe_error(repo, run_cli, tmp_path):
    path = recipe(tmp_path, RENAME + 'from = "sm75"\nto = "sm70"\n'
                  '[[steps]]\nkind = "clone-files"\n[steps.params]\nfrom = "avx2"\nto = "avx512"\n'
                  'select = ["pkgs/*-sm75-avx2.nix"]\n')
    migrate_refused(run_cli, repo, path, 2, "step 2/2 (clone-files): select 'pkgs/*-sm75-avx2.nix' names "
                    "pkgs/pytorch-sm75-avx2.nix, which was renamed to pkgs/pytorch-sm70-avx2.nix by step 1 (rename-files)")


def test_a_glob_that_still_matches_files_is_not_an_error(repo, run_cli, tmp_path):
    path = recipe(tmp_path, '[[steps]]\nkind = "remove-files"\n[steps.params]\nselect = ["pkgs/pytorch-sm80-avx.nix"]\n'
                            + RENAME + 'from = "sm75"\nto = "sm70"\n')
    result = run_cli("migrate", path, "--repo", str(repo))
    assert result.exit_code == 0, result
    tree = git(repo, "ls-tree", "-r", "--name-only", "out").split()
    assert tree == ["README.md", "pkgs/keep.nix", "pkgs/pytorch-sm70-avx.nix", "pkgs/pytorch-sm70-avx2.nix"]
    assert "1 file changed (1 removed), 0 edits:\n  pkgs/pytorch-sm80-avx.nix (removed)\n" in \
        git(repo, "log", "-1", "--format=%B", "out~1")
    assert "2 files changed (2 renamed), 4 edits:\n  pkgs/pytorch-sm75-avx.nix → pkgs/pytorch-sm70-avx.nix\n" \
           "  pkgs/pytorch-sm75-avx2.nix → pkgs/pytorch-sm70-avx2.nix\n" in git(repo, "log", "-1", "--format=%B", "out")


@pytest.mark.parametrize("params, message", [
    ('from = ""\nto = "x"\n', "'from' must not be empty"),
    ('from = "sm75"\nto = "sm75x"\n', "'to' contains 'from' ('sm75'): a second run would rename again"),
    ('from = "sm75"\nto = "x/sm70"\n', "no '/' in them"),
    ("from = 'sm(75'\nto = 'x'\nregex = true\n", "'from' is not a valid regular expression"),
    ("from = 'sm75'\nto = '\\2'\nregex = true\n", "invalid group reference 2"),
])
def test_bad_naming_parameters_are_recipe_errors(repo, run_cli, tmp_path, params, message):
    before = snapshot(repo)
    one_line(run_cli("migrate", recipe(tmp_path, RENAME + params), "--repo", str(repo)), 2, "step 1 (rename-files)",
             message)
    nothing_left(repo, before)


@pytest.mark.parametrize("values, message", [
    ("{ gpuArchNum = '\"70' }", "'values.gpuArchNum': 'value' is not a Nix expression"),
    ("{ 'gpu arch' = '1' }", "'values.gpu arch': 'path' must be a dotted path of plain names"),
    ("{ gpuArchNum = 70 }", "'values.gpuArchNum' must be Nix source as a string"),
])
def test_bad_clone_values_are_recipe_errors(repo, run_cli, tmp_path, values, message):
    path = recipe(tmp_path, CLONE + f'from = "sm75"\nto = "sm70"\nvalues = {values}\n')
    one_line(run_cli("migrate", path, "--repo", str(repo)), 2, "step 1 (clone-files)", message)


def test_remove_files_needs_select(repo, run_cli, tmp_path):
    path = recipe(tmp_path, '[[steps]]\nkind = "remove-files"\n')
    one_line(run_cli("migrate", path, "--repo", str(repo)), 2, "step 1 (remove-files): missing parameter 'select'")


# --- apply: the same refusals on a directory, and the directory untouched ----------------------


@pytest.fixture
def directory(tmp_path):
    root = tmp_path / "tree"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


@pytest.mark.parametrize("args, code, message", [
    (("rename-files", "--set", "from=sm75", "--set", "to=sm80"), 1,
     "rename-files: cannot rename pkgs/pytorch-sm75-avx.nix to pkgs/pytorch-sm80-avx.nix, which already exists"),
    (("rename-files", "--set", "from=-sm(75|80)-avx.nix", "--set", "to=-smXX-avx.nix", "--set", "regex=true"), 1,
     "pkgs/pytorch-sm75-avx.nix and pkgs/pytorch-sm80-avx.nix would both become pkgs/pytorch-smXX-avx.nix"),
    (("clone-files", "--set", "from=sm75", "--set", "to=sm80"), 1,
     "cannot clone pkgs/pytorch-sm75-avx.nix to pkgs/pytorch-sm80-avx.nix, which already exists with other contents"),
    (("rename-files", "--set", "from=avx2.nix", "--set", "to=avx2.txt"), 1,
     "cannot rename pkgs/pytorch-sm75-avx2.nix to pkgs/pytorch-sm75-avx2.txt, a name outside the step's files "
     "(pkgs/**/*.nix)"),
])
def test_apply_refuses_in_one_line_and_writes_nothing(run_cli, directory, args, code, message):
    before = files_of(directory)
    for extra in (("--dry-run",), ()):
        one_line(run_cli("apply", *args, *extra, "pkgs", cwd=directory), code, message)
        assert files_of(directory) == before


def test_apply_refuses_a_new_path_onto_a_file_it_was_not_given(run_cli, directory):
    before = files_of(directory)
    result = run_cli("apply", "rename-files", "--set", "from=sm75-avx2", "--set", "to=sm80-avx",
                     "pkgs/pytorch-sm75-avx2.nix", cwd=directory)
    # a file-level step reads every Nix file of the repository (it follows their references), so the plan
    # itself sees the file in the way (issue 46); check_new_paths guards the files no step reads
    one_line(result, 1, "to pkgs/pytorch-sm80-avx.nix, which already exists; nothing was written")
    assert files_of(directory) == before


def test_apply_renames_clones_and_removes_on_disk(run_cli, directory):
    result = run_cli("apply", "rename-files", "--set", "from=sm75", "--set", "to=sm70", "pkgs", cwd=directory)
    assert result.exit_code == 0, result
    # Both renames make the same self-reference edits (each file's own name): one line, each with --verbose.
    assert result.stdout.splitlines()[0] == ("renamed  2 files with the same change, 4 edits (first: "
                                             "pkgs/pytorch-sm75-avx.nix → pkgs/pytorch-sm70-avx.nix; --verbose lists all)")
    assert (directory / "pkgs/pytorch-sm70-avx.nix").read_text() == \
        '# Package name: pytorch-sm70-avx\n{ pname = "pytorch-sm70-avx"; gpuArchNum = "75"; }\n'
    assert not (directory / "pkgs/pytorch-sm75-avx.nix").exists()
    result = run_cli("apply", "remove-files", "--set", "select=**/*-sm80-*.nix", "pkgs", cwd=directory)
    assert result.exit_code == 0, result
    assert result.stdout.splitlines() == ["removed  pkgs/pytorch-sm80-avx.nix",
                                          "remove-files: 1 file changed (1 removed), 0 edits, 0 warnings, 0 skipped, "
                                          "0 refused"]
    assert sorted(files_of(directory)) == ["README.md", "pkgs/keep.nix", "pkgs/pytorch-sm70-avx.nix",
                                           "pkgs/pytorch-sm70-avx2.nix"]
    assert [p for p in os.listdir(directory / "pkgs") if p.endswith(".pinshift")] == []


def test_a_symlinked_recipe_is_skipped_not_renamed(make_repo, run_cli, tmp_path):
    repo = make_repo(FILES, branch="base", name="links")
    os.symlink("pytorch-sm75-avx.nix", repo / "pkgs/pytorch-sm75-link.nix")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a link")
    result = run_cli("migrate", recipe(tmp_path, RENAME + 'from = "sm75"\nto = "sm70"\n'), "--repo", str(repo))
    assert result.exit_code == 0, result
    assert "2 files (2 renamed), 4 edits, 1 skipped" in result.stdout
    assert "skipped: pkgs/pytorch-sm75-link.nix: symlink; not renamed or cloned" in result.stdout
    assert git(repo, "ls-tree", "out", "pkgs/pytorch-sm75-link.nix").startswith("120000 ")
