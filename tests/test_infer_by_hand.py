"""infer on a hand-made conversion no single step explains (issue 41: build-pytorch b3fabaf, Flox arguments to a
pinned nixpkgs by hand): the steps that explain what they can are written, and the files a maintainer still
edits by hand are listed in the recipe's comment block and in the summary; exit 1.

The shape is tests/infer_shapes.flox_to_pinned with what a hand conversion of many files has and no step kind
says: the pinned nixpkgs' comment names each file (`# pytorch-python313-cuda12_8-sm61-avx: import nixpkgs …`),
so no pin-nixpkgs step writes TARGET's bytes in any file.
"""

from __future__ import annotations

import tomllib

import pytest
from click.testing import CliRunner

import infer_shapes as shapes
from pinshift.cli import main

PKGS = shapes.PKGS


def by_hand(path: str, text: str) -> str:
    name = path.rsplit("/", 1)[1].removesuffix(".nix")
    return shapes.pinned_by_hand(path, text).replace("  # Import nixpkgs at a specific revision",
                                                     f"  # {name}: import nixpkgs at a specific revision")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """infer on the 62 files, the recipe written with --output: (exit code, summary, recipe text, paths)."""
    parent = tmp_path_factory.mktemp("by-hand")
    base = {**shapes._text(shapes.flox_args_files()), **shapes.flox_companions()}
    base = {path: text for path, text in base.items() if path.endswith(".nix")}
    repo = shapes.make_repository(parent / "repo", base, {path: by_hand(path, text) for path, text in base.items()},
                                  "Pin nixpkgs fe5e41d in every recipe instead of Flox's arguments")
    written = parent / "recipe.toml"
    with CliRunner().isolation() as (out, err, _):
        code = main(["infer", "base", "target", "--repo", str(repo), "--output", str(written)])
        assert err.getvalue() == b""
        return code, out.getvalue().decode(), written.read_text(), sorted(base)


def test_the_steps_that_explain_some_files_are_written_and_the_rest_listed_to_edit_by_hand(run):
    code, summary, text, paths = run
    assert len(paths) == 62 and code == 1
    steps = tomllib.loads(text)["steps"]
    assert steps and {s["kind"] for s in steps} == {"set-binding"}  # what can be proved; no pin-nixpkgs fits any file
    header = "edit by hand: 62 files a maintainer still edits (after `pinshift migrate` with this recipe; the residue " \
             "below shows what):"
    comment = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    assert header in comment
    listed = {line.strip() for line in comment[comment.index(header):] if line.startswith("    ")}
    assert set(paths) <= listed  # every file to edit is named in the recipe itself
    assert header in summary.splitlines() and "not reproduced: " in summary and "(--verbose lists them)" in summary
    assert "no recipe written" not in summary and summary.splitlines()[-1].startswith("recipe written to ")
