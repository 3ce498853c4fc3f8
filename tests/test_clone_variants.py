"""Issue 13, done-when 2: SM70 (Volta) variants cloned from the SM75 ones, with their own GPU values.

Every byte of a clone outside its name, pname, header comment and the two GPU values is the
source's; the expectation is built here line by line from the source's bytes, not by pinshift.
"""

from __future__ import annotations

import subprocess

import pytest
from conftest import git

from pinshift.demo.build import BASE, build_demo

PKGS = ".flox/pkgs"
ISAS = ("avx", "avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9")
RECIPE = """name = "sm70"
base = "pytorch-2.9"
target = "with-sm70"
files = [".flox/pkgs/**/*.nix"]

[[steps]]
kind = "clone-files"
title = "Add SM70 (Volta) variants"
[steps.params]
from = "sm75"
to = "sm70"
select = [".flox/pkgs/*-sm75-*.nix"]
values = { gpuArchNum = '"70"', gpuArchSM = '"7.0"' }
"""


def blob(root, ref: str, path: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f"{ref}:{path}"], cwd=root, capture_output=True,
                          check=True).stdout


def expected_clone(source: bytes, isa: str) -> bytes:
    """The source with exactly its header, pname and two GPU value lines rewritten for SM70."""
    old_name, new_name = f"pytorch-python313-cuda12_9-sm75-{isa}", f"pytorch-python313-cuda12_9-sm70-{isa}"
    lines = source.decode().split("\n")
    swaps = {
        f"# Package name: {old_name}": f"# Package name: {new_name}",
        '  gpuArchNum = "75";        # For CMAKE_CUDA_ARCHITECTURES': '  gpuArchNum = "70";        # For CMAKE_CUDA_ARCHITECTURES',
        '  gpuArchSM = "7.5";        # For gpuTargets (dot notation)': '  gpuArchSM = "7.0";        # For gpuTargets (dot notation)',
        f'    pname = "{old_name}";': f'    pname = "{new_name}";',
    }
    assert sum(line in swaps for line in lines) == 4
    return "\n".join(swaps.get(line, line) for line in lines).encode()


@pytest.fixture
def repo(tmp_path):
    root = build_demo(tmp_path / "demo")
    (root / PKGS / "pytorch-python313-cuda12_9-sm75-avx2.nix").chmod(0o755)
    git(root, "commit", "-q", "-am", "an executable recipe")
    (tmp_path / "sm70.toml").write_text(RECIPE)
    return root


def test_clones_differ_from_their_source_only_in_name_pname_header_and_gpu_values(repo, run_cli, tmp_path):
    result = run_cli("migrate", str(tmp_path / "sm70.toml"), "--repo", str(repo))
    assert result.exit_code == 0, result
    assert "  1/1 " in result.stdout and "7 files (7 cloned), 28 edits" in result.stdout
    added = git(repo, "diff", "--name-status", "--no-renames", BASE, "with-sm70").splitlines()
    assert sorted(added) == sorted(f"A\t{PKGS}/pytorch-python313-cuda12_9-sm70-{isa}.nix" for isa in ISAS)
    for isa in ISAS:
        source = blob(repo, BASE, f"{PKGS}/pytorch-python313-cuda12_9-sm75-{isa}.nix")
        clone = blob(repo, "with-sm70", f"{PKGS}/pytorch-python313-cuda12_9-sm70-{isa}.nix")
        assert clone == expected_clone(source, isa), isa
        assert blob(repo, "with-sm70", f"{PKGS}/pytorch-python313-cuda12_9-sm75-{isa}.nix") == source
    modes = git(repo, "ls-tree", "with-sm70", f"{PKGS}/pytorch-python313-cuda12_9-sm70-avx2.nix",
                f"{PKGS}/pytorch-python313-cuda12_9-sm70-avx.nix")
    assert [line.split()[0] for line in modes.splitlines()] == ["100644", "100755"]  # avx, avx2: the sources' modes


@pytest.mark.nix
def test_nix_accepts_the_clones_and_sees_only_the_new_values(repo, run_cli, tmp_path, nix_oracle):
    assert run_cli("migrate", str(tmp_path / "sm70.toml"), "--repo", str(repo)).exit_code == 0
    for isa in ISAS:
        source = blob(repo, BASE, f"{PKGS}/pytorch-python313-cuda12_9-sm75-{isa}.nix")
        clone = blob(repo, "with-sm70", f"{PKGS}/pytorch-python313-cuda12_9-sm70-{isa}.nix")
        ok, canonical_clone = nix_oracle(clone)
        assert ok, canonical_clone
        _, canonical_source = nix_oracle(source)
        assert canonical_clone == (canonical_source.replace('gpuArchNum = "75"', 'gpuArchNum = "70"')
                                   .replace('gpuArchSM = "7.5"', 'gpuArchSM = "7.0"')
                                   .replace(f"cuda12_9-sm75-{isa}\"", f"cuda12_9-sm70-{isa}\""))


def test_a_second_run_finds_every_clone_identical_and_changes_nothing(repo, run_cli, tmp_path):
    recipe = str(tmp_path / "sm70.toml")
    assert run_cli("migrate", recipe, "--repo", str(repo)).exit_code == 0
    result = run_cli("migrate", recipe, "--repo", str(repo), "--from", "with-sm70", "--branch", "again",
                     "--dry-run", "--check")
    assert result.exit_code == 0, result
    assert "step 1/1 clone-files: Add SM70 (Volta) variants — 0 files changed, 0 edits" in result.stdout


def test_apply_clones_the_same_bytes_on_a_directory(repo, run_cli, tmp_path):
    assert run_cli("migrate", str(tmp_path / "sm70.toml"), "--repo", str(repo)).exit_code == 0
    result = run_cli("apply", "clone-files", "--set", "from=sm75", "--set", "to=sm70",
                     "--set", "select=**/*-sm75-*.nix", "--set", 'values.gpuArchNum="70"',
                     "--set", 'values.gpuArchSM="7.0"', PKGS, cwd=repo)
    assert result.exit_code == 0, result
    assert result.stdout.splitlines()[-1] == ("clone-files: 7 files changed (7 cloned), 28 edits, 0 warnings, "
                                              "0 skipped, 0 refused")
    for isa in ISAS:
        path = f"{PKGS}/pytorch-python313-cuda12_9-sm70-{isa}.nix"
        assert (repo / path).read_bytes() == blob(repo, "with-sm70", path)
    assert oct((repo / PKGS / "pytorch-python313-cuda12_9-sm70-avx2.nix").stat().st_mode & 0o777) == "0o755"
    again = run_cli("apply", "clone-files", "--set", "from=sm75", "--set", "to=sm70",
                    "--set", "select=**/*-sm75-*.nix", "--set", 'values.gpuArchNum="70"',
                    "--set", 'values.gpuArchSM="7.0"', PKGS, cwd=repo)
    assert again.exit_code == 0 and "0 files changed" in again.stdout


def test_reports_show_clones_as_source_to_new_with_their_diffs(repo, run_cli, tmp_path):
    before = git(repo, "for-each-ref")
    args = ("migrate", str(tmp_path / "sm70.toml"), "--repo", str(repo), "--dry-run")
    # The seven clones make the same edits (their own names, the two GPU values): one diff, the others listed.
    text = run_cli(*args).stdout
    assert (f"cloned: {PKGS}/pytorch-python313-cuda12_9-sm75-armv8_2.nix ⇒ {PKGS}/pytorch-python313-cuda12_9-sm70-armv8_2.nix\n"
            f"--- a/{PKGS}/pytorch-python313-cuda12_9-sm75-armv8_2.nix\n+++ b/{PKGS}/pytorch-python313-cuda12_9-sm70-armv8_2.nix\n"
            ) in text
    assert text.count("\n--- a/") == 1 and "… and 6 more files with this change (--verbose lists them)\n" in text
    verbose = run_cli(*args, "--verbose").stdout
    assert (f"  {PKGS}/pytorch-python313-cuda12_9-sm75-avx.nix ⇒ {PKGS}/pytorch-python313-cuda12_9-sm70-avx.nix\n"
            in verbose)
    markdown = run_cli(*args, "--format", "markdown").stdout
    assert (f"#### Step 1: 7 files with this change — 28 edits; shown: `{PKGS}/pytorch-python313-cuda12_9-sm75-armv8_2.nix"
            f"` ⇒ `{PKGS}/pytorch-python313-cuda12_9-sm70-armv8_2.nix`\n") in markdown
    assert "- `pytorch-python313-cuda12_9-sm75-avx.nix` ⇒ `pytorch-python313-cuda12_9-sm70-avx.nix`\n" in markdown
    assert "- added 7 copies: e.g. `pytorch-python313-cuda12_9-sm75-armv8_2.nix` ⇒ " in markdown
    import json

    cloned = json.loads(run_cli(*args, "--format", "json").stdout)["steps"][0]["cloned"]
    assert cloned[0] == {"source": f"{PKGS}/pytorch-python313-cuda12_9-sm75-armv8_2.nix",
                         "path": f"{PKGS}/pytorch-python313-cuda12_9-sm70-armv8_2.nix"}
    assert len(cloned) == 7
    assert git(repo, "for-each-ref") == before
