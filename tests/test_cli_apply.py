"""`pinshift apply` through the real CLI on real files: goldens per kind, dry run, strict, refusals, usage errors."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import without_loading_notices

from pinshift.demo.matrix import NEW_REV, OLD_REV
from pinshift.planning.unified_diff import diff_text
from step_golden import STEPS, canonical_changes, expected

FIXTURES = Path(__file__).parent / "fixtures"
DOCS = FIXTURES / "docs"
RENAME_ATTR = Path(__file__).parents[1] / "migrations" / "rename_attr.py"
needs_rename_attr = pytest.mark.skipif(not RENAME_ATTR.exists(), reason=f"{RENAME_ATTR} is not written yet")

SWAP = ("--set", "old=6a030d5", "--set", f"new={NEW_REV}")
RENAME = ("--set", "from=python3Packages", "--set", "to=python313Packages", "--set", "base=nixpkgs_pinned")
HASH = "sha256-CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC="

# (kind, golden case under tests/fixtures/steps/<kind>/, the CLI's --set arguments)
GOLDEN = [
    ("pin-swap", "seed-gpu", SWAP),
    ("pin-swap", "fetchfromgithub-new-hash", SWAP + ("--set", f"new-hash={HASH}")),
    ("pin-swap", "include-strings-comments", SWAP + ("--set", "include-strings=true", "--set", "include-comments=true")),
    ("pin-swap", "crlf-no-final-newline", SWAP),
    ("metadata-rev", "bump", ()),
    ("metadata-rev", "value", ("--set", "value=7")),
    ("metadata-rev", "insert-append", ("--set", "missing=insert", "--set", "value=2")),
    ("metadata-rev", "insert-crlf", ("--set", "missing=insert")),
    ("replace-in-strings", "long-description",
     ("--set", 'paths=["meta.longDescription"]', "--set", "old=CUDA: 12.8", "--set", "new=CUDA: 12.9")),
    ("replace-in-strings", "regex", ("--set", "paths=meta.longDescription", "--set", r"old=CUDA: 12\.(\d)\b",
                                     "--set", r"new=CUDA: 12.9 (was 12.\1)", "--set", "regex=true")),
    ("set-binding", "seed-gpu-pname",
     ("--set", "path=pname", "--set", 'value="pytorch-python313-cuda12_9-sm61-avx-custom"')),
    ("set-binding", "one-line-attrset", ("--set", "path=gpuArch", "--set", 'value="sm_90"', "--set", "at=passthru")),
    ("rename-attr", "seed-gpu", RENAME),
    ("rename-attr", "flox-arguments", RENAME[:4]),
]
# a second run changes these again by definition: an increment, and a regex whose output it matches again
NOT_IDEMPOTENT = {("metadata-rev", "bump"), ("metadata-rev", "insert-crlf"), ("replace-in-strings", "regex")}


def cases(rows):
    return [pytest.param(*row, marks=needs_rename_attr if row[0] == "rename-attr" else (), id=f"{row[0]}-{row[1]}")
            for row in rows]


def case_tree(tmp_path: Path, kind: str, case: str) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    shutil.copyfile(STEPS / kind / f"{case}.nix", root / "recipe.nix")
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- every kind: golden bytes, dry run, second run ----------------------------------------------


@pytest.mark.parametrize("kind, case, sets", cases(GOLDEN))
def test_apply_writes_exactly_the_golden_bytes(run_cli, tmp_path, kind, case, sets):
    root = case_tree(tmp_path, kind, case)
    result = run_cli("apply", kind, *sets, cwd=root)
    assert result.exit_code == 0, result
    assert (root / "recipe.nix").read_bytes() == expected(kind, case)
    assert result.stdout.splitlines()[0].startswith("changed  recipe.nix (")
    assert result.stdout.splitlines()[-1].startswith(f"{kind}: 1 file changed, ")
    assert sorted(p.name for p in root.iterdir()) == ["recipe.nix"]  # no temp file left behind


@pytest.mark.parametrize("kind, case, sets", cases(GOLDEN))
def test_dry_run_leaves_bytes_identical_and_prints_the_diff(run_cli, tmp_path, kind, case, sets):
    root = case_tree(tmp_path, kind, case)
    before = (root / "recipe.nix").read_bytes()
    result = run_cli("apply", kind, *sets, "--dry-run", "--no-color", cwd=root)
    assert result.exit_code == 0, result
    assert (root / "recipe.nix").read_bytes() == before
    diff = diff_text("recipe.nix", before, expected(kind, case))
    assert diff and diff in result.stdout


@pytest.mark.parametrize("kind, case, sets", cases(g for g in GOLDEN if g[:2] not in NOT_IDEMPOTENT))
def test_second_apply_changes_nothing(run_cli, tmp_path, kind, case, sets):
    root = case_tree(tmp_path, kind, case)
    assert run_cli("apply", kind, *sets, cwd=root).exit_code == 0
    again = run_cli("apply", kind, *sets, cwd=root)
    assert again.exit_code == 0, again
    assert again.stdout.splitlines()[-1].startswith(f"{kind}: 0 files changed, 0 edits")
    assert (root / "recipe.nix").read_bytes() == expected(kind, case)


def test_check_implies_dry_run_and_exits_1_when_something_would_change(run_cli, tmp_path):
    root = case_tree(tmp_path, "metadata-rev", "bump")
    before = (root / "recipe.nix").read_bytes()
    result = run_cli("apply", "metadata-rev", "--check", cwd=root)
    assert result.exit_code == 1, result
    assert (root / "recipe.nix").read_bytes() == before


def test_output_parses_and_only_the_intended_tokens_change(run_cli, tmp_path, nix_oracle):
    root = case_tree(tmp_path, "pin-swap", "seed-gpu")
    before = (root / "recipe.nix").read_bytes()
    assert run_cli("apply", "pin-swap", *SWAP, cwd=root).exit_code == 0
    assert canonical_changes(nix_oracle, before, (root / "recipe.nix").read_bytes()) == [(OLD_REV, NEW_REV)]


def test_python_constant_and_readme_branch_table_on_named_files(run_cli, tmp_path):
    shutil.copyfile(DOCS / "torch_smoke.py", tmp_path / "torch_smoke.py")
    shutil.copyfile(DOCS / "README.md", tmp_path / "README.md")
    constant = run_cli("apply", "python-constant", "torch_smoke.py", "--set", "constants.EXPECTED_TORCH_VERSION=2.10.0",
                       "--set", "constants.EXPECTED_CUDA=12.9", "--set", "asserts.torch.__version__=2.10.0",
                       cwd=tmp_path)
    assert constant.exit_code == 0, constant
    assert (tmp_path / "torch_smoke.py").read_bytes() == (DOCS / "torch_smoke.expected.py").read_bytes()
    columns = ["PyTorch=2.10.0", "CUDA=12.9", "Python=3.13", "Min Driver=560+", "Nixpkgs Pin=0182a36"]
    table = run_cli("apply", "readme-branch-table", "README.md", "--set", "base=pytorch-2.9",
                    "--set", "target=pytorch-2.10-cuda12_9", "--set", f"revision={NEW_REV}",
                    *[a for c in columns for a in ("--set", f"columns.{c}")], cwd=tmp_path)
    assert table.exit_code == 0, table
    assert (tmp_path / "README.md").read_bytes() == (DOCS / "README.expected.md").read_bytes()


# --- files: which, mode, paths ------------------------------------------------------------------


def test_real_run_keeps_the_file_mode(run_cli, tmp_path):
    root = case_tree(tmp_path, "metadata-rev", "bump")
    os.chmod(root / "recipe.nix", 0o640)
    assert run_cli("apply", "metadata-rev", cwd=root).exit_code == 0
    assert stat.S_IMODE((root / "recipe.nix").stat().st_mode) == 0o640
    assert (root / "recipe.nix").read_bytes() == expected("metadata-rev", "bump")


def test_paths_and_globs_select_the_files(run_cli, tmp_path):
    bump = (STEPS / "metadata-rev" / "bump.nix").read_bytes()
    for name in ("a/one.nix", "a/deep/two.nix", "b/three.nix", "a/notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(bump)
    result = run_cli("apply", "metadata-rev", "a", "b/three.nix", "--dry-run", cwd=tmp_path)
    assert result.exit_code == 0, result
    # The three files get the same bump: one diff, the others listed with --verbose.
    assert [line for line in result.stdout.splitlines() if line.startswith("+++ ")] == ["+++ b/a/deep/two.nix"]
    verbose = run_cli("apply", "metadata-rev", "a", "b/three.nix", "--dry-run", "--verbose", cwd=tmp_path)
    assert "… and 2 more files with this change:\n  a/one.nix\n  b/three.nix\n" in verbose.stdout
    only_top = run_cli("apply", "metadata-rev", "a", "--files", "*.nix", cwd=tmp_path)
    assert only_top.stdout.splitlines()[0] == "changed  a/one.nix (1 edit)"
    assert (tmp_path / "a" / "deep" / "two.nix").read_bytes() == bump


def test_a_pin_spread_over_several_paths_resolves_once(run_cli, tmp_path):
    """pin-swap resolves `6a030d5` against every file of every PATH together, as migrate does."""
    for name in ("x/seed.nix", "y/seed.nix"):
        (tmp_path / name).parent.mkdir(parents=True)
        shutil.copyfile(STEPS / "pin-swap" / "seed-gpu.nix", tmp_path / name)
    result = run_cli("apply", "pin-swap", *SWAP, "x", "y", cwd=tmp_path)
    assert result.exit_code == 0, result
    assert (tmp_path / "x/seed.nix").read_bytes() == (tmp_path / "y/seed.nix").read_bytes() == \
        expected("pin-swap", "seed-gpu")


def test_gitignored_files_are_left_alone(run_cli, make_repo):
    bump = (STEPS / "metadata-rev" / "bump.nix").read_bytes()
    root = make_repo({".gitignore": "result/\n", "pkg.nix": bump})
    (root / "result").mkdir()
    (root / "result" / "pkg.nix").write_bytes(bump)
    assert run_cli("apply", "metadata-rev", cwd=root).exit_code == 0
    assert (root / "result" / "pkg.nix").read_bytes() == bump
    assert (root / "pkg.nix").read_bytes() == expected("metadata-rev", "bump")


# --- exit 1: strict warnings, refused files ------------------------------------------------------


def test_strict_hash_warning_exits_1_and_writes_nothing(run_cli, tmp_path):
    root = case_tree(tmp_path, "pin-swap", "fetchfromgithub-hash")
    before = (root / "recipe.nix").read_bytes()
    lenient = run_cli("apply", "pin-swap", *SWAP, "--dry-run", cwd=root)
    assert lenient.exit_code == 0 and "hash must be refreshed" in lenient.stderr
    result = run_cli("apply", "pin-swap", *SWAP, "--strict", cwd=root)
    assert result.exit_code == 1, result
    assert (root / "recipe.nix").read_bytes() == before
    assert result.stdout == ""
    last = result.stderr.splitlines()[-1]
    assert last.startswith("pinshift: pin-swap failed: warning under --strict: recipe.nix:")
    assert "hash must be refreshed" in last and last.endswith("; no file written")
    dry = run_cli("apply", "pin-swap", *SWAP, "--strict", "--dry-run", cwd=root)
    assert dry.exit_code == 1 and (root / "recipe.nix").read_bytes() == before


def test_refused_file_exits_1_and_no_file_is_touched(run_cli, tmp_path):
    good = (STEPS / "metadata-rev" / "bump.nix").read_bytes()
    broken = b'{ postInstall = "echo 1 > $out/.metadata-rev"; oops = ; }\n'
    (tmp_path / "good.nix").write_bytes(good)
    (tmp_path / "broken.nix").write_bytes(broken)
    result = run_cli("apply", "metadata-rev", cwd=tmp_path)
    assert result.exit_code == 1, result
    assert (tmp_path / "broken.nix").read_bytes() == broken
    assert (tmp_path / "good.nix").read_bytes() == good
    assert result.stderr.splitlines()[0].startswith("refused  broken.nix:1:")
    assert result.stderr.splitlines()[-1].endswith("; no file written")


def test_edits_that_would_break_the_file_are_refused(run_cli, tmp_path):
    data = b"{ a = 1; }\n"
    (tmp_path / "x.nix").write_bytes(data)
    result = run_cli("apply", "word-swap", "--set", "old=1", "--set", "new=[",
                     "--migrations", str(FIXTURES / "migrations"), cwd=tmp_path)
    assert result.exit_code == 1, result
    assert (tmp_path / "x.nix").read_bytes() == data
    assert without_loading_notices(result.stderr)[0].startswith("refused  x.nix:1:8: syntax error: missing ']': the change would "
                                                    "break the file's syntax; file left unchanged")


def test_a_value_that_is_not_nix_is_a_usage_error(run_cli, tmp_path):
    (tmp_path / "x.nix").write_bytes(b"{ a = 1; }\n")
    line = one_line_error(run_cli("apply", "set-binding", "--set", "path=b", "--set", "value=[", cwd=tmp_path))
    assert line.startswith("pinshift: error: set-binding: 'value' is not a Nix expression")
    assert (tmp_path / "x.nix").read_bytes() == b"{ a = 1; }\n"


# --- exit 2: usage errors, one line, no traceback --------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (("apply", "warp-drive"), "pinshift: error: unknown step kind 'warp-drive' (known: clone-files, metadata-rev, pin-nixpkgs, pin-swap, "),
    (("apply", "pin-swap", "--set", "old=6a030d5"),
     "pinshift: error: pin-swap: missing parameter 'new'; `pinshift show --step pin-swap` lists its parameters"),
    (("apply", "pin-swap", *SWAP, "--set", "olde=1"), "pinshift: error: pin-swap: unknown parameter 'olde' (known: "),
    (("apply", "pin-swap", "--set", "old=6a030d5", "--set", "new=abc"),
     "pinshift: error: pin-swap: 'new' must be a full 40-hex-digit revision, not 'abc'"),
    (("apply", "metadata-rev", "--set", "value"), "pinshift: error: --set value: expected KEY=VALUE"),
    (("apply", "metadata-rev", "--set", "value=1", "--set", "value=2"),
     "pinshift: error: --set value=2: 'value' is set twice"),
    (("apply", "metadata-rev", "--set", "missing=sometimes"),
     "pinshift: error: metadata-rev: 'missing' must be one of 'skip', 'insert', 'error', not 'sometimes'"),
    (("apply", "metadata-rev", "no-such-dir"), "pinshift: error: no-such-dir: no such file or directory"),
    (("apply", "metadata-rev", "--migrations", "nowhere"), "pinshift: error: --migrations nowhere: not a directory"),
    (("apply",), "pinshift apply: error: Missing argument 'KIND'"),
    (("apply", "metadata-rev", "--bogus"),
     "pinshift apply: error: No such option '--bogus'. Did you mean '--verbose'?; see 'pinshift apply --help'"),
])
def test_usage_errors_exit_2_with_one_line(run_cli, tmp_path, args, message):
    (tmp_path / "x.nix").write_bytes(b"{ }\n")
    line = one_line_error(run_cli(*args, cwd=tmp_path))
    assert line.startswith(message), line
    assert (tmp_path / "x.nix").read_bytes() == b"{ }\n"


def test_usage_error_through_the_installed_command(tmp_path):
    result = subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", "apply", "pin-swap"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.startswith("pinshift: error: pin-swap: missing parameter 'old'")
    assert "Traceback" not in result.stderr


# --- custom kinds ----------------------------------------------------------------------------------


def test_migrations_dir_loads_a_custom_kind_and_says_so(run_cli, tmp_path):
    (tmp_path / "x.nix").write_bytes(b"{ alpha = 1; }\n")
    result = run_cli("apply", "word-swap", "--set", "old=alpha", "--set", "new=beta",
                     "--migrations", str(FIXTURES / "migrations"), cwd=tmp_path)
    assert result.exit_code == 0, result
    assert result.stdout.splitlines()[0] == \
        f"note: step kind 'word-swap' loaded from {FIXTURES / 'migrations' / 'word_swap.py'}"
    assert result.stderr.splitlines() == [
        f"pinshift: loading step kind 'word-swap' from {FIXTURES / 'migrations' / 'word_swap.py'} "
        f"(trusted: --migrations {FIXTURES / 'migrations'})"]
    assert (tmp_path / "x.nix").read_bytes() == b"{ beta = 1; }\n"


def test_repository_migrations_are_found_from_the_working_tree(run_cli, make_repo):
    root = make_repo({".pinshift/migrations/word_swap.py": (FIXTURES / "migrations" / "word_swap.py").read_bytes(),
                      "pkgs/x.nix": "{ alpha = 1; }\n"})
    refused = one_line_error(run_cli("apply", "word-swap", "--set", "old=alpha", "--set", "new=beta", ".",
                                     cwd=root / "pkgs"))
    assert refused.startswith("pinshift: error: step kind 'word-swap' is repository code "
                              "(.pinshift/migrations/word_swap.py), which pinshift runs only with consent")
    assert (root / "pkgs" / "x.nix").read_bytes() == b"{ alpha = 1; }\n"
    result = run_cli("apply", "word-swap", "--set", "old=alpha", "--set", "new=beta", ".", "--trust-repo",
                     cwd=root / "pkgs")
    assert result.exit_code == 0, result
    assert "note: step kind 'word-swap' loaded from " in result.stdout
    assert (root / "pkgs" / "x.nix").read_bytes() == b"{ beta = 1; }\n"


def test_set_values_follow_the_parameter_type(run_cli, tmp_path):
    """Digits stay a string for a str parameter; `warn=` is the empty string; a table key may hold dots."""
    (tmp_path / "x.nix").write_bytes(b"{ a = 1234567; }\n")
    result = run_cli("apply", "word-swap", "--set", "old=1234567", "--set", "new=7654321", "--set", "warn=",
                     "--migrations", str(FIXTURES / "migrations"), cwd=tmp_path)
    assert result.exit_code == 0, result
    assert (tmp_path / "x.nix").read_bytes() == b"{ a = 7654321; }\n"


# --- DONE-CHECK: the seed migration, step by step, byte-exact -----------------------------------------


@needs_rename_attr
def test_apply_reproduces_the_seed_migration_on_the_fixture_tree(run_cli, tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "tree-2.9", root)
    swap = run_cli("apply", "pin-swap", *SWAP, cwd=root)
    assert swap.exit_code == 0, swap
    assert "warning: .flox/pkgs/trap-fetchfromgithub-sha256.nix:7:14: hash must be refreshed" in swap.stdout
    rename = run_cli("apply", "rename-attr", *RENAME, cwd=root)
    assert rename.exit_code == 0, rename
    bump = run_cli("apply", "metadata-rev", "--set", "missing=skip", cwd=root)
    assert bump.exit_code == 0, bump
    assert tree_bytes(root) == tree_bytes(FIXTURES / "tree-2.10")
