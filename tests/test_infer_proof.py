"""Issue 34: the proof is per file and whole. A recipe is written only if its replay from BASE leaves every place
TARGET changed as BASE had it or as TARGET has it; a file a step would leave half-changed is kept off that step
(residue), never corrupted. The reported corruption (`export CXXFLAGS="$CXXFLAGS ${…} $CXXFLAGS"`) is rebuilt
here from its description and must not be written again.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git

from pinshift.cli import main
from pinshift.demo.build import build_demo
from pinshift.infer.blocks import first_mixed_block
from pinshift.infer.group_globs import describe, group_globs

PKGS = ".flox/pkgs"
FLAGS = 'export CXXFLAGS="$CXXFLAGS ${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags}"'
FLAGS_FIRST = 'export CXXFLAGS="${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"'
CORRUPT = 'export CXXFLAGS="$CXXFLAGS ${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"'


# --- blocks: each place TARGET changed ends as BASE's or TARGET's ---------------------------------


BASE = b"a\nflags = \"$F ${f}\";\nb\nmarker = 1;\nc\n"
TARGET = b"a\nflags = \"${f} $F\";\nb\nmarker = 2;\nc\n"


@pytest.mark.parametrize("final, line", [
    (TARGET, None),  # all made
    (BASE, None),  # nothing made
    (b"a\nflags = \"${f} $F\";\nb\nmarker = 1;\nc\n", None),  # one made, one residue
    (b"a\nflags = \"$F ${f} $F\";\nb\nmarker = 2;\nc\n", 2),  # the flags line is neither
    (b"a\nflags = \"$F ${f}\";\nb\nmarker = 3;\nc\n", 4),  # the marker is neither
    (b"a\nflags = \"$F ${f}\";\nB\nmarker = 1;\nc\n", 3),  # a line TARGET left alone, changed
    (b"a\nflags = \"$F ${f}\";\nb\nmarker = 1;\nc\nextra\n", 5),  # a line added at the end
])
def test_a_replayed_file_holds_at_each_changed_place_one_of_base_or_target(final, line):
    assert first_mixed_block(BASE, TARGET, final) == line


def test_a_block_of_several_lines_is_all_or_nothing():
    base, target = b"x\n1\n2\ny\n", b"x\n3\ny\n"
    assert first_mixed_block(base, target, b"x\n3\ny\n") is None
    assert first_mixed_block(base, target, b"x\n1\n2\ny\n") is None
    assert first_mixed_block(base, target, b"x\n3\n2\ny\n") == 3  # half of it: seen at the line after the block


def test_groups_no_plain_part_says_get_a_character_class():
    gpu = [f"{PKGS}/p-cuda12_9-sm{sm}-avx2.nix" for sm in ("61", "75", "80", "86", "89", "100", "103", "120")]
    others = [f"{PKGS}/p-cuda12_9-sm90-avx2.nix", f"{PKGS}/p-cpu-avx2.nix"]
    assert group_globs(gpu, others) == (f"{PKGS}/*-sm1[02][03]-*.nix", f"{PKGS}/*-sm[678][01569]-*.nix")
    # a scattered group no few globs say is listed only when short
    scattered = [f"{PKGS}/{n}.nix" for n in ("a", "bb", "ccc")]
    assert describe(scattered, [f"{PKGS}/{n}.nix" for n in ("aa", "b", "cc")]) == tuple(sorted(scattered))
    many = [f"{PKGS}/p{n}.nix" for n in range(9)]
    assert describe(many, [f"{PKGS}/q{n}.nix" for n in range(9)]) is None


# --- the reported corruption ------------------------------------------------------------------------


def pinshift(*args: str) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _):
        code = main(list(args))
        return code, out.getvalue().decode(), err.getvalue().decode()


def commit_all(root: Path, branch: str, start: str, change, message: str) -> None:
    """A commit on a new branch `branch` from `start` in which `change(path, text)` rewrites each recipe by hand."""
    git(root, "switch", "-q", "-c", branch, start)
    for path in sorted((root / PKGS).glob("*.nix")):
        text = path.read_text()
        new = change(path.name, text)
        if new != text:
            path.write_text(new)
    git(root, "commit", "-q", "-am", message)


@pytest.fixture(scope="module")
def flags_first(tmp_path_factory):
    """The SM90 recipes export CXXFLAGS twice; the commit puts the CPU flags first in the first export of every
    GPU recipe. In the SM90 files no literal text says which export changed, and the other half of the change
    (` $CXXFLAGS` after the flags) can be made alone: the old proof wrote the half and kept it."""
    root = build_demo(tmp_path_factory.mktemp("flags") / "demo")
    commit_all(root, "base", "pytorch-2.9", lambda name, text: text.replace(
        "      export MAX_JOBS=32\n", f"      export MAX_JOBS=32\n      {FLAGS}\n") if "-sm90-" in name else text,
        "SM90: export the CPU flags again after MAX_JOBS")
    commit_all(root, "target", "base", lambda name, text: text.replace(FLAGS, FLAGS_FIRST, 1)
               if "-cuda12_9-" in name else text, "CPU flags first")
    output = root.parent / "flags.toml"
    code, out, err = pinshift("infer", "base", "target", "--repo", str(root), "--output", str(output))
    assert "Traceback" not in out + err
    git(root, "switch", "-q", "base")
    replay_code, replay_out, replay_err = pinshift("migrate", str(output), "--repo", str(root), "--from", "base",
                                                   "--branch", "replay")
    assert replay_code == 0, replay_out + replay_err
    return root, code, out, tomllib.loads(output.read_text())


def test_no_replayed_file_ends_as_neither_base_nor_target(flags_first):
    root, code, out, recipe = flags_first
    paths = git(root, "ls-tree", "-r", "--name-only", "replay", PKGS).split()
    corrupt = [p for p in paths if CORRUPT in git(root, "show", f"replay:{p}")]
    assert corrupt == []
    for path in paths:
        base, target, replay = (git(root, "show", f"{ref}:{path}").encode() for ref in ("base", "target", "replay"))
        assert first_mixed_block(base, target, replay) is None, path
    sm90 = [p for p in paths if "-cuda12_9-sm90-" in p]
    assert len(sm90) == 7
    for path in sm90:  # no step can make their change: left as BASE had them, listed as residue
        assert git(root, "show", f"replay:{path}") == git(root, "show", f"base:{path}")
    assert git(root, "diff", "--name-only", "target", "replay").split() == sm90
    assert "proof: 52 of 59 changed files reproduced byte for byte, 0 partly, 7 not at all" in out
    assert code == 1


def test_the_steps_say_their_files_with_a_few_globs(flags_first):
    _, _, _, recipe = flags_first
    assert recipe["steps"]
    for step in recipe["steps"]:
        assert len(step.get("files", [])) <= 4, step["files"]
