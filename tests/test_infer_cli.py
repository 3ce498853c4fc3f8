"""Issue 17: `pinshift infer` on small real repositories: what each step kind is inferred from, where the
recipe and the summary go, and every bad input (one line on stderr, exit 2, nothing written, the user's
checkout, index, stash and branches exactly as they were).
"""

from __future__ import annotations

import os
import tomllib

import pytest
from conftest import FIXTURES, git
from migrate_repo import snapshot

PIN = """# pinned to 6a030d5 (nixpkgs)
let
  pinned = import (builtins.fetchTarball {{
    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";
    sha256 = "0000000000000000000000000000000000000000000000000000";
  }}) {{ }};
in pinned.hello.overrideAttrs (old: {{
  pname = "hello-{name}";
  postInstall = ''
    echo 1 > $out/.metadata-rev
  '';
  meta = old.meta // {{ description = "Hello {name}"; }};
}})
"""
SMOKE = 'EXPECTED_TORCH_VERSION = "2.9.1"\n\n\ndef test_version(torch):\n    assert torch.__version__ == "2.9.1"\n'


@pytest.fixture
def repo(make_repo):
    files = {f"pkgs/{name}.nix": PIN.format(name=name) for name in ("a", "b", "c")}
    files["tests/smoke.py"] = SMOKE
    return make_repo(files, branch="base")


def commit_on(root, branch: str, changes: dict, start: str = "base") -> None:
    """A branch `branch` from `start` with `changes` (path -> text, or None to delete) committed by hand."""
    git(root, "switch", "-q", "-c", branch, start)
    for path, text in changes.items():
        target = root / path
        if text is None:
            git(root, "rm", "-q", path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text if isinstance(text, bytes) else text.encode())
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"by hand: {branch}")
    git(root, "switch", "-q", start)


def by_hand(root, name: str, swap=True, hash_line=True, comment=True, pname=None, marker=None) -> str:
    text = (root / f"pkgs/{name}.nix").read_text()
    if swap:
        text = text.replace("6a030d535719c5190187c4cec156f335e95e3211", "0182a361324364ae3f436a63005877674cf45efb")
    if not hash_line:
        text = text.replace('    sha256 = "0000000000000000000000000000000000000000000000000000";\n', "")
    if comment:
        text = text.replace("# pinned to 6a030d5", "# pinned to 0182a36")
    if pname:
        text = text.replace(f'"hello-{name}"', f'"{pname}"')
    if marker is not None:
        text = text.replace("echo 1 >", f"echo {marker} >")
    return text


def infer_ok(run_cli, root, *args):
    result = run_cli("infer", "base", "target", "--repo", str(root), *args)
    assert "Traceback" not in result.output
    return result


# --- what each kind is inferred from --------------------------------------------------------------


def test_pin_swap_with_its_hash_removed_and_comments_python_constants_and_a_bump(repo, run_cli, tmp_path):
    changes = {f"pkgs/{n}.nix": by_hand(repo, n, hash_line=False, marker=2) for n in ("a", "b", "c")}
    changes["tests/smoke.py"] = SMOKE.replace("2.9.1", "2.10.0")
    commit_on(repo, "target", changes)
    output = tmp_path / "inferred.toml"
    result = infer_ok(run_cli, repo, "--output", str(output))
    assert result.exit_code == 0, result
    steps = tomllib.loads(output.read_text())["steps"]
    assert [(s["kind"], s["params"]) for s in steps] == [
        ("pin-swap", {"old": "6a030d5", "new": "0182a361324364ae3f436a63005877674cf45efb", "hash": "remove",
                      "include-comments": True}),
        ("metadata-rev", {"missing": "skip"}),
        ("python-constant", {"constants": {"EXPECTED_TORCH_VERSION": "2.10.0"},
                             "asserts": {"torch.__version__": "2.10.0"}}),
    ]
    assert steps[2]["files"] == ["tests/smoke.py"]
    assert "proof: 4 of 4 changed files reproduced byte for byte" in result.stdout


def test_small_files_renamed_and_changed_are_paired_by_name_and_a_prefix_becomes_an_anchored_rename(make_repo, run_cli):
    names = ("hello-a", "hello-b", "hello-c")
    root = make_repo({f"pkgs/{n}.nix": PIN.format(name=n[-1]).replace(f'"hello-{n[-1]}"', f'"{n}"') for n in names},
                     branch="base")
    changes = {}
    for name in names:
        text = (root / f"pkgs/{name}.nix").read_text()
        changes[f"pkgs/{name}.nix"] = None
        changes[f"pkgs/pkg-{name}.nix"] = text.replace(f'"{name}"', f'"pkg-{name}"').replace(
            "6a030d535719c5190187c4cec156f335e95e3211", "0182a361324364ae3f436a63005877674cf45efb").replace(
            "echo 1", "echo 2").replace('    sha256 = "0000000000000000000000000000000000000000000000000000";\n', "")
    commit_on(root, "target", changes)
    statuses = [line.split()[0] for line in git(root, "diff", "--name-status", "-M", "base", "target").splitlines()]
    assert "D" in statuses and "A" in statuses  # too small for git's 50% similarity: not seen as renames
    result = infer_ok(run_cli, root)
    assert result.exit_code == 0, result
    steps = tomllib.loads(result.stdout)["steps"]
    assert steps[0]["kind"] == "rename-files"
    assert steps[0]["params"] == {"from": r"^(?!pkg\-)", "to": "pkg-", "regex": True}
    assert steps[0]["title"] == "Prefix 3 file names with pkg-"  # in words (issue 34)
    assert [s["kind"] for s in steps[1:]] == ["pin-swap", "metadata-rev"]
    assert steps[1]["params"]["hash"] == "remove"
    assert "proof: 3 of 3 changed files reproduced byte for byte" in result.stderr


LONG = """{ pkgs }: pkgs.hello.overrideAttrs (old: {
  meta.longDescription = ''
    Python: 3.13
    Built for {name}.
  '';
})
"""


def test_a_replacement_is_literal_when_more_context_can_say_it(make_repo, run_cli):
    """`3.13` -> `3.13 (CUDA build)`: `new` contains `old`, yet the line's end says it literally (issue 34)."""
    root = make_repo({f"pkgs/{n}.nix": LONG.replace("{name}", n) for n in "abc"}, branch="base")
    commit_on(root, "target", {f"pkgs/{n}.nix": LONG.replace("{name}", n).replace("3.13\n", "3.13 (CUDA build)\n")
                               for n in "abc"})
    result = infer_ok(run_cli, root)
    assert result.exit_code == 0, result
    [step] = tomllib.loads(result.stdout)["steps"]
    assert step["params"] == {"paths": ["meta.longDescription"], "old": "3.13\n", "new": "3.13 (CUDA build)\n"}
    assert step["title"] == "Say '3.13 (CUDA build)' instead of '3.13' in meta.longDescription"


def test_metadata_rev_set_per_group_of_files_is_restricted_to_each_group(repo, run_cli):
    commit_on(repo, "target", {"pkgs/a.nix": by_hand(repo, "a", swap=False, comment=False, marker=5),
                               "pkgs/b.nix": by_hand(repo, "b", swap=False, comment=False, marker=5),
                               "pkgs/c.nix": by_hand(repo, "c", swap=False, comment=False, marker=7)})
    result = infer_ok(run_cli, repo)
    assert result.exit_code == 0, result
    steps = tomllib.loads(result.stdout)["steps"]
    assert sorted((s["params"]["value"], tuple(s["files"])) for s in steps) == [
        (5, ("pkgs/a.nix", "pkgs/b.nix")), (7, ("pkgs/c.nix",))]


def test_a_change_no_kind_expresses_is_residue_and_only_the_rest_is_inferred(repo, run_cli):
    text = by_hand(repo, "a", comment=False).replace("in pinned.hello", "in pinned.hello-unfree")
    commit_on(repo, "target", {"pkgs/a.nix": text})
    result = infer_ok(run_cli, repo)
    assert result.exit_code == 1, result
    recipe = tomllib.loads(result.stdout)
    assert [s["kind"] for s in recipe["steps"]] == ["pin-swap"]
    assert "pkgs/a.nix:7: a line differs" in result.stderr
    assert "    +in pinned.hello-unfree.overrideAttrs (old: {" in result.stderr
    assert "#     +in pinned.hello-unfree.overrideAttrs (old: {" in result.stdout
    assert "proof: 0 of 1 changed file reproduced byte for byte, 1 partly, 0 not at all" in result.stderr


def test_a_candidate_that_would_change_what_target_keeps_is_dropped_and_reported(repo, run_cli):
    # the same description change in a and b; c keeps "Hello c" but has the text too: a step on all files
    # would touch c, so the step is restricted to a and b rather than dropped
    commit_on(repo, "target", {f"pkgs/{n}.nix": (repo / f"pkgs/{n}.nix").read_text().replace("Hello", "Hi")
                               for n in ("a", "b")})
    result = infer_ok(run_cli, repo)
    assert result.exit_code == 0, result
    [step] = tomllib.loads(result.stdout)["steps"]
    assert step["params"] == {"paths": ["meta.description"], "old": "Hello", "new": "Hi"}
    assert step["files"] == ["pkgs/a.nix", "pkgs/b.nix"]


def test_control_characters_from_files_are_shown_as_escapes(repo, run_cli):
    text = by_hand(repo, "a", comment=False).replace("in pinned.hello", "in pinned.hello # \x1b[2J")
    commit_on(repo, "target", {"pkgs/a.nix": text})
    result = infer_ok(run_cli, repo)
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\\x1b[2J" in result.stderr
    assert "\x1b" not in result.stdout.split("\nname = ")[0]


def test_text_that_is_not_utf8_is_never_put_in_a_recipe(repo, run_cli):
    commit_on(repo, "target", {"pkgs/a.nix": (repo / "pkgs/a.nix").read_bytes().replace(b"Hello a", b"Hello \xff")})
    result = infer_ok(run_cli, repo)
    assert result.exit_code == 1, result
    assert "no recipe written; every changed file is to edit by hand" in result.stderr
    assert result.stdout == ""
    assert "pkgs/a.nix:12: a line differs" in result.stderr


# --- where things go --------------------------------------------------------------------------------


def test_without_output_the_recipe_goes_to_stdout_and_the_summary_to_stderr(repo, run_cli, tmp_path):
    commit_on(repo, "target", {f"pkgs/{n}.nix": by_hand(repo, n, comment=False) for n in ("a", "b", "c")})
    result = infer_ok(run_cli, repo)
    assert result.exit_code == 0
    assert tomllib.loads(result.stdout)["steps"][0]["kind"] == "pin-swap"
    assert result.stderr.startswith("inferred 1 step from base (")
    (tmp_path / "r.toml").write_text(result.stdout)
    dry = run_cli("migrate", str(tmp_path / "r.toml"), "--repo", str(repo), "--dry-run", "--branch", "again")
    assert dry.exit_code == 0, dry


def test_files_limits_what_is_compared_and_counts_the_rest(repo, run_cli):
    changes = {f"pkgs/{n}.nix": by_hand(repo, n, comment=False) for n in ("a", "b", "c")}
    changes["tests/smoke.py"] = SMOKE.replace("2.9.1", "2.10.0")
    commit_on(repo, "target", changes)
    result = infer_ok(run_cli, repo, "--files", "tests/**", "--files", "docs/*.md")
    assert result.exit_code == 0, result
    recipe = tomllib.loads(result.stdout)
    assert recipe["files"] == ["tests/**", "docs/*.md"]
    assert [s["kind"] for s in recipe["steps"]] == ["python-constant"]
    assert "(3 changed files outside --files not compared)" in result.stderr


def test_the_users_checkout_index_stash_and_branches_are_left_as_they_were(repo, run_cli, tmp_path):
    commit_on(repo, "target", {f"pkgs/{n}.nix": by_hand(repo, n) for n in ("a", "b", "c")})
    (repo / "pkgs/c.nix").write_text("stashed\n")
    git(repo, "stash", "push", "-q")
    (repo / "pkgs/a.nix").write_text("local edit\n")
    (repo / "pkgs/b.nix").write_text("staged edit\n")
    git(repo, "add", "pkgs/b.nix")
    (repo / "untracked.nix").write_text("{ }\n")
    before = snapshot(repo)
    result = infer_ok(run_cli, repo, "--output", str(tmp_path / "r.toml"))
    assert result.exit_code == 0, result
    assert snapshot(repo) == before


# --- bad input: attack -> outcome -------------------------------------------------------------------


@pytest.mark.parametrize("args, fragment", [
    (("nope", "target"), "BASE 'nope' is not a branch or commit of"),
    (("base", "targe"), "TARGET 'targe' is not a branch or commit of"),
    (("base", "base"), "base and base have the same files: nothing to infer"),
    (("base", "target", "--files", "[z-a]*.nix"), "--files '[z-a]*.nix': not a usable glob (bad character range z-a)"),
    (("base", "target", "--files", "nothing/**"), "have the same files within --files (3 changed files outside"),
    (("--", "-x", "target"), "BASE '-x' is not a branch or commit"),
    (("base", "HEAD:pkgs/a.nix"), "TARGET 'HEAD:pkgs/a.nix' is not a branch or commit"),
])
def test_bad_refs_and_globs_are_one_line_errors_that_change_nothing(repo, run_cli, tmp_path, args, fragment):
    commit_on(repo, "target", {f"pkgs/{n}.nix": by_hand(repo, n) for n in ("a", "b", "c")})
    before = snapshot(repo)
    output = tmp_path / "r.toml"
    result = run_cli("infer", "--repo", str(repo), "--output", str(output), *args)
    assert result.exit_code == 2, result
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("pinshift: error: ") and fragment in line, line
    assert not output.exists() and snapshot(repo) == before


def test_not_a_repository(run_cli, tmp_path):
    result = run_cli("infer", "a", "b", "--repo", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"pinshift: error: {tmp_path}: not a git repository; run pinshift inside your " \
                                    "recipe repository or pass --repo DIR"


@pytest.mark.parametrize("where, fragment", [
    ("dir", "is a directory"),
    ("missing/r.toml", "does not exist; create it first"),
    ("readonly.toml", "the file is read-only"),
])
def test_an_unwritable_output_is_refused_before_any_work(repo, run_cli, tmp_path, where, fragment):
    commit_on(repo, "target", {f"pkgs/{n}.nix": by_hand(repo, n) for n in ("a", "b", "c")})
    (tmp_path / "dir").mkdir()
    readonly = tmp_path / "readonly.toml"
    readonly.write_text("mine\n")
    readonly.chmod(0o444)
    result = run_cli("infer", "base", "target", "--repo", str(repo), "--output", str(tmp_path / where))
    assert result.exit_code == 2, result
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert readonly.read_text() == "mine\n"
    assert not (tmp_path / "missing").exists() and os.listdir(tmp_path / "dir") == []


def test_an_existing_output_is_replaced_only_when_there_is_a_recipe(repo, run_cli, tmp_path):
    output = tmp_path / "r.toml"
    output.write_text("old recipe\n")
    commit_on(repo, "target", {"pkgs/a.nix": (repo / "pkgs/a.nix").read_bytes().replace(b"Hello a", b"\xff")})
    result = run_cli("infer", "base", "target", "--repo", str(repo), "--output", str(output))
    assert result.exit_code == 1 and output.read_text() == "old recipe\n"
    commit_on(repo, "target2", {f"pkgs/{n}.nix": by_hand(repo, n) for n in ("a", "b", "c")})
    result = run_cli("infer", "base", "target2", "--repo", str(repo), "--output", str(output))
    assert result.exit_code == 0 and tomllib.loads(output.read_text())["steps"]


# --- the last guard: the whole recipe's proof ------------------------------------------------------


def test_the_recipe_proof_drops_a_step_whose_plan_changes_what_target_keeps(repo):
    """Even a step that reached the recipe some other way is dropped when the recipe's own plan shows it
    changing a byte TARGET did not change: infer never writes such a recipe."""
    from pinshift.infer.candidates import Candidate
    from pinshift.infer.engine import InferOptions, Inference, open_comparison, prove
    from pinshift.infer.prove import Accepted
    from pinshift.steps.registry import available_kinds

    commit_on(repo, "target", {f"pkgs/{n}.nix": by_hand(repo, n, comment=False) for n in ("a", "b")})
    comparison, setting = open_comparison(InferOptions("base", "target", repo=repo))
    good = Candidate("pin-swap", {"old": "6a030d5", "new": "0182a361324364ae3f436a63005877674cf45efb"},
                     "swap", ("pkgs/a.nix", "pkgs/b.nix"))
    inference = Inference(comparison, setting, steps=[Accepted(good, ("pkgs/a.nix", "pkgs/b.nix"), None),
                                                      Accepted(good, None, None)])  # the second reaches c.nix
    prove(inference, available_kinds())
    assert [a.files for a in inference.steps] == [("pkgs/a.nix", "pkgs/b.nix")]
    [dropped] = inference.dropped
    assert dropped.reason == "the whole recipe's plan changes pkgs/c.nix, which TARGET leaves as it is (dropped at the proof)"
    assert inference.coverage.summary() == "2 of 2 changed files reproduced byte for byte, 0 partly, 0 not at all"


def test_verbose_lists_every_reproduced_file(repo, run_cli):
    commit_on(repo, "target", {f"pkgs/{n}.nix": by_hand(repo, n, comment=False) for n in ("a", "b", "c")})
    quiet, loud = infer_ok(run_cli, repo), infer_ok(run_cli, repo, "--verbose")
    assert "reproduced byte for byte: pkgs/a.nix, pkgs/b.nix, pkgs/c.nix" in loud.stderr
    assert "reproduced byte for byte: pkgs/a.nix" not in quiet.stderr


def test_crlf_text_is_replaced_as_it_is_and_a_binary_file_is_residue_not_compared(make_repo, run_cli):
    text = ('let\r\n  pinned = import (builtins.fetchTarball {\r\n    url = "https://github.com/NixOS/nixpkgs/archive/'
            '6a030d535719c5190187c4cec156f335e95e3211.tar.gz";\r\n  }) { };\r\nin pinned.hello.overrideAttrs (old: {\r\n'
            "  meta = old.meta // {\r\n    longDescription = ''\r\n      First line.\r\n      Python: 3.12\r\n"
            "      Drop me.\r\n    '';\r\n  };\r\n})")
    root = make_repo({"pkgs/x.nix": text, "pkgs/blob.bin": b"\x00\x01binary"}, branch="base")
    changed = text.replace("6a030d535719c5190187c4cec156f335e95e3211", "0182a361324364ae3f436a63005877674cf45efb")
    commit_on(root, "target", {"pkgs/x.nix": changed.replace("3.12", "3.11").replace("      Drop me.\r\n", ""),
                               "pkgs/blob.bin": b"\x00\x02binary"})
    result = infer_ok(run_cli, root)
    assert result.exit_code == 1, result
    steps = tomllib.loads(result.stdout)["steps"]
    assert [s["params"].get("old") for s in steps] == ["6a030d5", "3.12", "      Drop me.\r\n"]
    assert "pkgs/blob.bin: not compared: binary file (NUL byte); skipped" in result.stderr
    assert "proof: 1 of 2 changed files reproduced byte for byte, 0 partly, 1 not at all" in result.stderr


def test_the_same_residue_in_many_files_is_shown_once_and_counted(repo, run_cli):
    # spacing: no step kind changes it (`pinned.hello-unfree` in every file is a rewrite's now, issue 46)
    commit_on(repo, "target", {f"pkgs/{n}.nix": (repo / f"pkgs/{n}.nix").read_text().replace(
        "in pinned.hello", "in  pinned.hello") for n in ("a", "b", "c")})
    result = infer_ok(run_cli, repo)
    assert result.exit_code == 1
    assert "  pkgs/a.nix:7: a line differs (and 2 more files with the same difference)" in result.stderr
    assert "pkgs/b.nix:7" not in result.stderr
    assert "no recipe written; every changed file is to edit by hand" in result.stderr
    output = infer_ok(run_cli, repo, "--verbose")
    assert "    also at:\n      pkgs/b.nix:7\n      pkgs/c.nix:7" in output.stderr


# --- readme-branch-table on the step's own golden files ---------------------------------------------

README_COLUMNS = {"pytorch": "2.10.0", "cuda": "12.9", "python": "3.13", "min driver": "560+", "nixpkgs pin": "0182a36"}


@pytest.mark.parametrize("source, golden", [
    ("README.md", "README.expected.md"),  # a new row below the base row; the marker and banner move
    ("README-crlf.md", "README-crlf.expected.md"),
    ("README-target-present.md", "README-target-present.expected.md"),  # the target's row is there: updated
])
def test_readme_branch_tables_are_inferred_from_the_steps_golden_files(make_repo, run_cli, source, golden):
    docs = FIXTURES / "docs"  # written by hand for readme-branch-table's own tests (test_step_readme_branch_table)
    root = make_repo({"README.md": (docs / source).read_bytes()}, branch="pytorch-2.9")
    commit_on(root, "pytorch-2.10-cuda12_9", {"README.md": (docs / golden).read_bytes()}, start="pytorch-2.9")
    result = run_cli("infer", "pytorch-2.9", "pytorch-2.10-cuda12_9", "--repo", str(root))
    assert result.exit_code == 0, result
    [step] = tomllib.loads(result.stdout)["steps"]
    params = step["params"]
    assert (step["kind"], step["files"], params["base"], params["target"]) == \
        ("readme-branch-table", ["README.md"], "{base}", "{target}")
    assert {k.lower(): v for k, v in params["columns"].items()}.items() <= README_COLUMNS.items()
    assert params.get("revision", "0182a361324364ae3f436a63005877674cf45efb") == "0182a361324364ae3f436a63005877674cf45efb"


def test_a_function_argument_renamed_everywhere_is_rename_attr_without_base(make_repo, run_cli):
    text = ('{{ python3Packages, lib }}:\npython3Packages.torch.overrideAttrs (old: {{\n  pname = "t-{n}";\n'
            '  buildInputs = [ python3Packages.numpy lib.x ];\n}})\n')
    root = make_repo({f"pkgs/{n}.nix": text.format(n=n) for n in ("a", "b")}, branch="base")
    commit_on(root, "target", {f"pkgs/{n}.nix": text.format(n=n).replace("python3Packages", "python313Packages")
                               for n in ("a", "b")})
    result = infer_ok(run_cli, root)
    assert result.exit_code == 0, result
    [step] = tomllib.loads(result.stdout)["steps"]
    assert (step["kind"], step["params"]) == ("rename-attr", {"from": "python3Packages", "to": "python313Packages"})


# --- modes and names (issue 29 §8, §9) ---------------------------------------------------------------------


def test_a_mode_change_in_target_is_residue_not_reproduced(repo, run_cli):
    """TARGET swaps the pin in every recipe, also makes pkgs/c.nix executable, and makes tests/smoke.py executable
    without changing its bytes. No step changes a mode: c.nix is partly reproduced (its bytes are), smoke.py not at
    all (was: "4 of 4 changed files reproduced byte for byte", exit 0)."""
    git(repo, "switch", "-q", "-c", "target", "base")
    for name in ("a", "b", "c"):
        (repo / f"pkgs/{name}.nix").write_text(by_hand(repo, name, comment=False))
    for path in ("pkgs/c.nix", "tests/smoke.py"):
        (repo / path).chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "by hand: pin and two modes")
    git(repo, "switch", "-q", "base")
    assert git(repo, "diff", "--raw", "base", "target", "--", "tests/smoke.py").split()[:2] == [":100644", "100755"]

    result = infer_ok(run_cli, repo)
    assert result.exit_code == 1, result
    assert [s["kind"] for s in tomllib.loads(result.stdout)["steps"]] == ["pin-swap"]
    assert "proof: 2 of 4 changed files reproduced byte for byte, 1 partly, 1 not at all" in result.stderr
    lines = result.stderr.splitlines()
    assert "  partly reproduced: pkgs/c.nix" in lines and "  not reproduced: tests/smoke.py" in lines
    assert ("  pkgs/c.nix: TARGET makes it executable (mode 100644 → 100755); no step changes a file's mode (and 1 "
            "more file with the same difference)") in lines
    verbose = infer_ok(run_cli, repo, "--verbose").stderr.splitlines()
    assert "reproduced byte for byte: pkgs/a.nix, pkgs/b.nix" in verbose
    assert verbose[verbose.index("    also at:") + 1] == "      tests/smoke.py"


def test_a_file_name_with_control_characters_stays_on_its_line(repo, run_cli, tmp_path):
    """TARGET adds a file whose name holds a newline, a carriage return and an escape: every line infer prints
    about it shows them escaped (was: the newline split the `not reproduced:` line in two)."""
    name = "docs/one\ntwo\rthree\x1b[2J.md"
    changes = {f"pkgs/{n}.nix": by_hand(repo, n, comment=False) for n in ("a", "b", "c")}
    changes[name] = "added by hand\n"
    commit_on(repo, "target", changes)
    shown = "docs/one\\ntwo\\rthree\\x1b[2J.md"
    for args in ((), ("--verbose",), ("--output", str(tmp_path / "r.toml"))):
        result = infer_ok(run_cli, repo, *args)
        assert result.exit_code == 1, result
        out = result.stderr if not args or args[0] == "--verbose" else result.stdout
        assert not any(c in out for c in "\r\x1b") and "two" not in out.replace(shown, "")
        assert f"not reproduced: {shown}" in out or f"    {shown}" in out  # --verbose lists it on its own line
        assert f"  {shown}: TARGET adds this file; no step creates it" in out.splitlines()
    recipe = (tmp_path / "r.toml").read_text()
    assert "two" not in recipe.replace(shown, "") and tomllib.loads(recipe)["steps"][0]["kind"] == "pin-swap"
