"""Issue 31: what clone-files, remove-files, rename-files and pin-nixpkgs do to references, and every refusal.

Real git repositories (the `make_repo` fixture), the real CLI; each refusal leaves the user's repository exactly
as it was (`snapshot`). Companion texts are tests/companion_repo.py's; expected files are hand-written
(tests/fixtures/graph/clone).
"""

from __future__ import annotations

import json

import pytest

from companion_repo import GRAPH, PKGS, flox_companion, pinned_companion, pinned_files, show, tree_of
from conftest import git
from migrate_repo import snapshot
from pinshift.demo.flox_args import FloxVariant, render_flox_recipe

SM75 = {path: text for path, text in pinned_files().items() if "-sm75-" in path and path.endswith(("-avx.nix",
                                                                                                   "-avx2.nix"))}
SM75.update(dict([pinned_companion("torchvision", "75"), pinned_companion("torchaudio", "75")]))
PYTORCH75 = f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx.nix"
VISION75 = f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx.nix"
AUDIO75 = f"{PKGS}/torchaudio-python313-cuda12_9-sm75-avx.nix"


def recipe(root, text: str, name: str = "r") -> str:
    path = root.parent / f"{name}.toml"
    path.write_text(f'name = "{name}"\n' + text)
    return str(path)


def step(kind: str, files: str | None = None, **params) -> str:
    lines = ["[[steps]]", f'kind = "{kind}"', f'title = "{kind}"']
    if files is not None:
        lines.append(f"files = {files}")
    lines.append("[steps.params]")
    lines.extend(f"{key} = {json.dumps(value)}" for key, value in params.items())
    return "\n".join(lines) + "\n"


def migrate(run_cli, root, text: str, *extra: str, base: str = "main", branch: str = "out"):
    return run_cli("migrate", recipe(root, text), "--repo", str(root), "--from", base, "--branch", branch, *extra)


# --- clone-files ----------------------------------------------------------------------------------


def test_a_clone_imports_the_clone_of_its_own_variant(make_repo, run_cli):
    root = make_repo(SM75)
    result = migrate(run_cli, root, step("clone-files", **{"from": "sm75", "to": "sm70",
                                                            "select": [f"{PKGS}/*-sm75-*.nix"]}))
    assert result.exit_code == 0, result
    name = "torchvision-python313-cuda12_9-sm70-avx.nix"
    assert show(root, "out", f"{PKGS}/{name}") == (GRAPH / "clone" / name).read_bytes()
    audio = show(root, "out", f"{PKGS}/torchaudio-python313-cuda12_9-sm70-avx.nix").decode()
    assert "nixpkgs_pinned.callPackage ./pytorch-python313-cuda12_9-sm70-avx.nix { };" in audio
    for path, text in SM75.items():  # the sources are never touched
        assert show(root, "out", path).decode() == text


def test_a_clone_of_the_companions_alone_keeps_importing_the_original(make_repo, run_cli):
    root = make_repo(SM75)
    text = step("clone-files", **{"from": "sm75", "to": "sm70", "select": [f"{PKGS}/torch*-sm75-*.nix"]})
    report = migrate(run_cli, root, text, "--dry-run")
    result = migrate(run_cli, root, text)
    assert result.exit_code == 0, result
    assert "note: 2 files: refers to a recipe this step does not clone: the clone refers to the original (first: " \
           ".flox/pkgs/torchaudio-python313-cuda12_9-sm70-avx.nix:19:46; --verbose lists all)" in report.stdout
    vision = show(root, "out", f"{PKGS}/torchvision-python313-cuda12_9-sm70-avx.nix").decode()
    assert "(import ./pytorch-python313-cuda12_9-sm75-avx.nix { });" in vision
    assert not any("pytorch-python313-cuda12_9-sm70" in p for p in tree_of(root, "out"))


# --- remove-files ---------------------------------------------------------------------------------


REMOVE_PYTORCH = {"select": [f"{PKGS}/pytorch-*-sm75-avx.nix"]}


def test_removing_a_file_another_imports_is_refused_naming_both(make_repo, run_cli):
    root = make_repo(SM75)
    before = snapshot(root)
    result = migrate(run_cli, root, step("remove-files", **REMOVE_PYTORCH))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"pinshift: error: step 1/1 (remove-files): cannot remove {PYTORCH75}: {AUDIO75}:19:46 calls it "
        "(./pytorch-python313-cuda12_9-sm75-avx.nix); remove that file too (set references = \"remove-too\"), or set "
        "references = \"allow-dangling\" to leave the reference naming no file (and 1 more); nothing was written\n")
    assert snapshot(root) == before


def test_remove_too_removes_every_file_that_refers_to_a_removed_one(make_repo, run_cli):
    files = dict(SM75)
    files[f"{PKGS}/bundle.nix"] = "{ }:\n{ vision = import ./torchvision-python313-cuda12_9-sm75-avx.nix { }; }\n"
    root = make_repo(files)
    result = migrate(run_cli, root, step("remove-files", **REMOVE_PYTORCH, references="remove-too"))
    assert result.exit_code == 0, result
    assert sorted(tree_of(root, "out")) == [f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix"]
    report = run_cli("migrate", recipe(root, step("remove-files", **REMOVE_PYTORCH, references="remove-too")),
                     "--repo", str(root), "--from", "main", "--branch", "x", "--dry-run", "--verbose")
    assert f"{AUDIO75}: removed with the file it calls (references = \"remove-too\")" in report.stdout
    assert f"{PKGS}/bundle.nix: removed with the file it imports (references = \"remove-too\")" in report.stdout


def test_remove_too_refuses_a_referring_file_outside_the_recipes_files(make_repo, run_cli):
    files = dict(SM75)
    files["nix/overlay.nix"] = "final: prev: { t = import ../.flox/pkgs/pytorch-python313-cuda12_9-sm75-avx.nix { }; }\n"
    root = make_repo(files)
    before = snapshot(root)
    result = migrate(run_cli, root, 'files = [".flox/pkgs/**/*.nix"]\n' + step("remove-files", **REMOVE_PYTORCH,
                                                                                 references="remove-too"))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"pinshift: error: step 1/1 (remove-files): cannot remove {PYTORCH75}: "
                                    "nix/overlay.nix:1:27 imports it (../.flox/pkgs/pytorch-python313-cuda12_9-sm75-avx.nix), "
                                    "and nix/overlay.nix is not one of the recipe's files, which remove-too removes")
    assert snapshot(root) == before


def test_allow_dangling_removes_and_warns_and_strict_refuses(make_repo, run_cli):
    root = make_repo(SM75)
    text = step("remove-files", **REMOVE_PYTORCH, references="allow-dangling")
    # the reference graph lets the dangling imports through; evaluation still refuses them unless told
    broken = migrate(run_cli, root, text, branch="broken")
    assert broken.exit_code == 1 and f"{AUDIO75}: no longer evaluates" in broken.stderr, broken
    strict = migrate(run_cli, root, text, "--strict", "--allow-broken", branch="strict")
    assert strict.exit_code == 1 and "warning under --strict" in strict.stderr, strict
    result = migrate(run_cli, root, text, "--allow-broken")
    assert result.exit_code == 0, result
    assert PYTORCH75 not in tree_of(root, "out") and AUDIO75 in tree_of(root, "out")
    assert (f"warning: {AUDIO75}:19:46: calls ./pytorch-python313-cuda12_9-sm75-avx.nix, which this step removes: left "
            "naming no file (references = \"allow-dangling\")") in result.stdout.splitlines()
    assert result.stdout.count("left naming no file") == 2
    git(root, "checkout", "-q", "out")
    lint = run_cli("lint", "--select", "R001", str(root / PKGS))
    assert lint.exit_code == 1 and lint.stdout.count("R001") == 2


# --- rename-files ---------------------------------------------------------------------------------


def test_a_referring_file_outside_the_recipes_files_stops_a_rename(make_repo, run_cli):
    files = dict(SM75)
    files["nix/overlay.nix"] = "final: prev: { t = import ../.flox/pkgs/pytorch-python313-cuda12_9-sm75-avx.nix { }; }\n"
    root = make_repo(files)
    before = snapshot(root)
    result = migrate(run_cli, root, step("rename-files", **{"from": "python313", "to": "python312"}))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "pinshift: error: step 1/1 (rename-files): nix/overlay.nix:1:27 imports "
        "../.flox/pkgs/pytorch-python313-cuda12_9-sm75-avx.nix, which this step renames to "
        ".flox/pkgs/pytorch-python312-cuda12_9-sm75-avx.nix, but nix/overlay.nix is not one of the recipe's files: add "
        "it to the recipe's files (or the step's), or rename that file too; nothing was written\n")
    assert snapshot(root) == before
    wider = migrate(run_cli, root, 'files = ["**/*.nix"]\n' + step("rename-files", **{"from": "python313",
                                                                                     "to": "python312"}))
    assert wider.exit_code == 0, wider
    assert show(root, "out", "nix/overlay.nix") == \
        b"final: prev: { t = import ../.flox/pkgs/pytorch-python312-cuda12_9-sm75-avx.nix { }; }\n"


@pytest.mark.parametrize("files, renamed, expected", [
    # a file importing itself, and two files importing each other, renamed together
    ({"pkgs/a-old.nix": "let self = import ./a-old.nix; in { b = import ./b-old.nix; }\n",
      "pkgs/b-old.nix": "{ a = import ./a-old.nix; }\n"},
     "pkgs/a-new.nix", "let self = import ./a-new.nix; in { b = import ./b-new.nix; }\n"),
    # a directory's default.nix, named by the directory
    ({"pkgs/tool/default-old.nix": "{ }: 1\n", "pkgs/top.nix": "{ t = callPackage ./tool/default-old.nix { }; }\n"},
     "pkgs/top.nix", "{ t = callPackage ./tool/default-new.nix { }; }\n"),
    # a path from another directory, and a bare path
    ({"pkgs/x-old.nix": "{ }: 1\n", "lib/use.nix": "{ a = import ../pkgs/x-old.nix { }; b = ../pkgs/x-old.nix; }\n"},
     "lib/use.nix", "{ a = import ../pkgs/x-new.nix { }; b = ../pkgs/x-new.nix; }\n"),
    # callPackage inside a let, `builtins.import`, parentheses
    ({"pkgs/x-old.nix": "{ }: 1\n",
      "pkgs/y.nix": "let a = callPackage ./x-old.nix { }; b = (builtins.import ./x-old.nix) { }; in a\n"},
     "pkgs/y.nix", "let a = callPackage ./x-new.nix { }; b = (builtins.import ./x-new.nix) { }; in a\n"),
])
def test_references_follow_a_rename_in_every_shape(make_repo, run_cli, files, renamed, expected):
    root = make_repo(files)
    result = migrate(run_cli, root, 'files = ["**/*.nix"]\n' + step("rename-files", **{"from": "-old", "to": "-new"}))
    assert result.exit_code == 0, result
    assert show(root, "out", renamed).decode() == expected


def test_a_computed_import_is_noted_never_guessed(make_repo, run_cli):
    # Flox recipes (.flox/pkgs/), which the build check evaluates
    root = make_repo({".flox/pkgs/x-old.nix": "{ }: 1\n", ".flox/pkgs/y.nix": '{ a = import (./. + "/x-old.nix") { }; }\n'})
    text = 'files = ["**/*.nix"]\n' + step("rename-files", **{"from": "-old", "to": "-new"})
    result = migrate(run_cli, root, text, "--dry-run")
    # the graph does not guess where the computed path leads; evaluating y.nix finds that it broke
    assert result.exit_code == 1, result
    assert ".flox/pkgs/y.nix: no longer evaluates" in result.stderr + result.stdout, result
    assert migrate(run_cli, root, text, "--allow-broken").exit_code == 0
    assert show(root, "out", ".flox/pkgs/y.nix") == b'{ a = import (./. + "/x-old.nix") { }; }\n'
    assert "note: .flox/pkgs/y.nix:1:14: import of a computed path: not followed; check by hand that it names no file this " \
           "step renames" in result.stdout


def test_apply_renames_and_the_files_it_was_given_follow(tmp_path, run_cli):
    for path, text in SM75.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = run_cli("apply", "rename-files", "--set", "from=python313", "--set", "to=python312", PKGS, cwd=tmp_path)
    assert result.exit_code == 0, result
    audio = (tmp_path / PKGS / "torchaudio-python312-cuda12_9-sm75-avx.nix").read_text()
    assert "nixpkgs_pinned.callPackage ./pytorch-python312-cuda12_9-sm75-avx.nix { };" in audio
    assert not (tmp_path / PYTORCH75).exists()


# --- after every step: a step that breaks a call is refused, naming both files ----------------------


FLOX_TORCH = f"{PKGS}/pytorch-python313-cuda12_8-sm61-avx.nix"
FLOX_VISION, FLOX_VISION_TEXT = flox_companion("torchvision", "61")
FLOX = {FLOX_TORCH: render_flox_recipe(FloxVariant("61", "avx")), FLOX_VISION: FLOX_VISION_TEXT}


def test_a_step_renaming_a_callees_argument_has_the_caller_refused(make_repo, run_cli):
    root = make_repo(FLOX)
    before = snapshot(root)
    result = migrate(run_cli, root, step("rename-attr", **{"from": "python3Packages", "to": "python313Packages"}))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(
        f"pinshift: error: step 1/1 (rename-attr) failed: {FLOX_VISION}:7:13: imports {FLOX_TORCH} with argument "
        "'python3Packages', which "
        f"{FLOX_TORCH}:3:1 ({{ python313Packages, lib, config, cudaPackages, addDriverRunpath }}:) does not take")
    assert snapshot(root) == before


PIN = {"rev": "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3", "map": {"config": "nixpkgs_pinned.config"}}


def _pin(files: str | None = None, **extra) -> str:
    text = step("pin-nixpkgs", files, **PIN | extra)
    return text.replace('map = {"config": "nixpkgs_pinned.config"}', 'map = { config = "nixpkgs_pinned.config" }')


def test_a_caller_outside_the_steps_files_is_refused_when_its_callee_is_converted(make_repo, run_cli):
    root = make_repo(FLOX)
    before = snapshot(root)
    result = migrate(run_cli, root, _pin(f'["{PKGS}/pytorch-*.nix"]'))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(
        f"pinshift: error: step 1/1 (pin-nixpkgs) failed: {FLOX_VISION}:7:13: imports {FLOX_TORCH} with arguments "
        "'python3Packages', 'lib', 'config' "
        f"and 2 more, which {FLOX_TORCH}:3:1 ({{ pkgs ? import <nixpkgs> {{}} }}:) does not take")
    assert snapshot(root) == before


def test_a_companion_the_step_cannot_convert_is_refused_with_the_reason(make_repo, run_cli):
    files = dict(FLOX)
    files[FLOX_VISION] = FLOX_VISION_TEXT.replace("      platforms = [", "      inherit lib;\n      platforms = [")
    line = files[FLOX_VISION].splitlines().index("      inherit lib;") + 1
    root = make_repo(files)
    result = migrate(run_cli, root, _pin(), "--dry-run")
    assert result.exit_code == 1
    assert (f"refused: {FLOX_VISION}:{line}:15: inherit lib; takes argument lib, which nixpkgs_pinned replaces, and `lib = "
            "nixpkgs_pinned.lib;` is not always the same: rewrite it by hand; file not converted, yet it imports "
            f"{FLOX_TORCH} (at 6:26) with python3Packages, lib, config, cudaPackages, addDriverRunpath, which this step "
            "converts to take { pkgs }: a file this step cannot convert is never left calling a converted one; fix it "
            "by hand, or leave the called file out of the step") in result.stdout


def test_a_call_passing_some_names_the_callee_still_takes_is_left_for_a_person(make_repo, run_cli):
    files = {f"{PKGS}/t.nix": "{ pkgs, lib }:\nlib.id pkgs\n",
             f"{PKGS}/c.nix": "{ pkgs, lib }:\nimport ./t.nix { inherit pkgs lib; }\n"}
    root = make_repo(files)
    result = migrate(run_cli, root, _pin(), "--dry-run")
    assert result.exit_code == 1
    assert (f"refused: {PKGS}/c.nix:2:16: the call passes pkgs, which {PKGS}/t.nix takes, and lib, which it does not "
            "take after this step: rewrite the call by hand; file not converted, yet it imports") in result.stdout


def test_keep_leaves_the_companion_as_code_and_the_step_is_refused(make_repo, run_cli):
    root = make_repo(FLOX)
    result = migrate(run_cli, root, _pin(companions="keep"), "--dry-run")
    assert result.exit_code == 1
    assert f"refused: {FLOX_VISION}:7:13: imports {FLOX_TORCH} with arguments 'python3Packages'" in result.stdout


def test_files_convert_together_or_not_at_all(make_repo, run_cli):
    """A chain a -> b -> c passing Flox arguments on: c cannot convert (`inherit lib;`), so neither can b nor a;
    in a cycle d <-> e both convert together."""
    chain = {
        f"{PKGS}/a.nix": "{ lib }:\nimport ./b.nix { inherit lib; }\n",
        f"{PKGS}/b.nix": "{ lib }:\nimport ./c.nix { inherit lib; }\n",
        f"{PKGS}/c.nix": "{ lib }:\nlet inherit lib; in lib.id\n",
        f"{PKGS}/d.nix": "{ lib }:\n{ e = import ./e.nix { inherit lib; }; x = lib.id; }\n",
        f"{PKGS}/e.nix": "{ lib }:\n{ d = import ./d.nix { inherit lib; }; y = lib.id; }\n",
    }
    root = make_repo(chain)
    result = migrate(run_cli, root, _pin())
    assert result.exit_code == 0, result
    assert sorted(git(root, "diff", "--name-only", "main..out").split()) == [f"{PKGS}/d.nix", f"{PKGS}/e.nix"]
    assert show(root, "out", f"{PKGS}/d.nix").decode().endswith(
        "{ e = import ./e.nix {}; x = nixpkgs_pinned.lib.id; }\n")
    assert "warning: step 1: 3 files: inherit lib; takes argument lib, which nixpkgs_pinned replaces" in result.stdout


def test_an_already_pinned_callee_gets_the_arguments_it_takes(make_repo, run_cli):
    files = {f"{PKGS}/t.nix": "{ pkgs ? import <nixpkgs> {} }:\nlet nixpkgs_pinned = 1; in nixpkgs_pinned\n",
             f"{PKGS}/c.nix": "{ lib }:\nimport ./t.nix { inherit lib; }\n"}
    root = make_repo(files)
    result = migrate(run_cli, root, _pin())
    assert result.exit_code == 0, result
    assert show(root, "out", f"{PKGS}/c.nix").decode().endswith("in\nimport ./t.nix {}\n")


def test_a_referring_file_with_syntax_problems_is_warned_about(make_repo, run_cli):
    root = make_repo({"pkgs/x-old.nix": "{ }: 1\n", "pkgs/broken.nix": "{ a = import ./x-old.nix { }; b = ; }\n"})
    result = migrate(run_cli, root, 'files = ["**/*.nix"]\n' + step("rename-files", **{"from": "-old", "to": "-new"}),
                     "--dry-run", "--strict")
    assert result.exit_code == 1
    assert ("warning: pkgs/broken.nix: names a file this step renames, but has syntax problems: its references cannot "
            "be read or followed; fix the file") in result.stdout


def test_a_referring_file_the_steps_own_files_select_follows_the_rename(make_repo, run_cli):
    files = dict(SM75)
    files["nix/overlay.nix"] = "final: prev: { t = import ../.flox/pkgs/pytorch-python313-cuda12_9-sm75-avx.nix { }; }\n"
    root = make_repo(files)
    result = migrate(run_cli, root, step("rename-files", '[".flox/pkgs/*.nix", "nix/*.nix"]',
                                         **{"from": "python313", "to": "python312"}))
    assert result.exit_code == 0, result
    assert show(root, "out", "nix/overlay.nix") == \
        b"final: prev: { t = import ../.flox/pkgs/pytorch-python312-cuda12_9-sm75-avx.nix { }; }\n"


def test_text_naming_a_renamed_recipe_is_noted_never_changed(make_repo, run_cli):
    manifest = '[install]\ntorch.pkg-path = "pytorch-python313-cuda12_9-sm75-avx"\n'
    readme = "Build `pytorch-python313-cuda12_9-sm75-avx` (not `pytorch-python313-cuda12_9-sm75-avx2x`).\n"
    root = make_repo(SM75 | {".flox/env/manifest.toml": manifest, "README.md": readme})
    text = step("rename-files", **{"from": "python313", "to": "python312"})
    result = migrate(run_cli, root, text, "--dry-run", "--verbose")
    assert result.exit_code == 0, result
    notes = [line for line in result.stdout.splitlines() if "mentions a renamed recipe" in line]
    assert notes == ["note: .flox/env/manifest.toml:2:19: mentions a renamed recipe by name (text, not a Nix "
                     "reference): left as it is",
                     "note: README.md:1:8: mentions a renamed recipe by name (text, not a Nix reference): left as it is"]
    assert migrate(run_cli, root, text).exit_code == 0
    assert show(root, "out", ".flox/env/manifest.toml").decode() == manifest
    assert show(root, "out", "README.md").decode() == readme
