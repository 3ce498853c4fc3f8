"""`pinshift diff BASE TARGET`: the real CLI on real repositories, evaluated by the real nix-instantiate.

The seed-shaped migration (the bundled recipe on the demo) is exactly pin + package set, plus the marker bump
of its own step; every status (same, changed, broken, fixed, failing, added, removed, a rename followed) with
the exit code it gives; grouped output; the JSON schema; usage errors in one line; offline in a network
namespace; the summary cache (by blob id and the files read) and its safety rules.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from build_repos import PKGS, commit, fixture_files
from conftest import git, require_nix
from pinshift.commands.diff import NO_NIX
from pinshift.demo.matrix import NEW_REV, OLD_REV, Variant, render_recipe

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "diff-schema.json").read_text())
TARGET = "pytorch-2.10-cuda12_9"
UNCHECKED = "unchecked: the real pins' versions and rebuilds (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"


def validate(text: str) -> dict:
    data = json.loads(text)
    jsonschema.validate(data, SCHEMA)
    return data


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo repository after `pinshift demo`: pytorch-2.9 and the migrated pytorch-2.10-cuda12_9 (4 commits)."""
    require_nix()
    from pinshift.cli import main

    root = tmp_path_factory.mktemp("demo") / "demo"
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            assert main(["demo", "--dir", str(root)]) == 0
        finally:
            sys.stdout = stdout
    return root


# --- the seed-shaped migration ----------------------------------------------------------------------------------------


def test_the_seed_migration_is_exactly_pin_and_package_set(demo, run_cli):
    """After its pin-swap and rename-attr steps (TARGET~2) every recipe changes in exactly two attributes."""
    result = run_cli("diff", "pytorch-2.9", f"{TARGET}~2", "--repo", str(demo), "--format", "json")
    assert result.exit_code == 0, result
    data = validate(result.stdout)
    assert data["counts"] == {"broken": 0, "changed": 66, "changed_untold": 0, "cannot_tell": 0, "fixed": 0, "failing": 0,
                              "added": 0, "removed": 0, "same": 0}
    for recipe in data["recipes"]:
        assert recipe["changes"] == [
            {"attribute": "nixpkgs.rev", "before": OLD_REV, "after": NEW_REV},
            {"attribute": "package", "before": "python3Packages.torch", "after": "python313Packages.torch"},
        ], recipe["path"]
    assert [g["count"] for g in data["groups"]] == [66]


def test_the_whole_seed_recipe_is_pin_package_set_and_its_marker_in_one_line(demo, run_cli):
    result = run_cli("diff", "pytorch-2.9", TARGET, "--repo", str(demo))
    assert result.exit_code == 0, result
    base, target = git(demo, "rev-parse", "--short=7", "pytorch-2.9").strip(), git(demo, "rev-parse", "--short=7", TARGET).strip()
    assert result.stdout == (
        f"pinshift diff pytorch-2.9 ({base}) → {TARGET} ({target})\n"
        "changed: 66 recipes: nixpkgs 6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; "
        "postInstall: …echo 1 > $out/.metadata-rev → …echo 2 > $out/.metadata-rev; nothing else "
        "(first: .flox/pkgs/pytorch-python313-cpu-armv8_2.nix; --verbose lists all)\n"
        "66 recipes: 66 changed\n"
        f"{UNCHECKED}\n")
    assert result.stderr == ""


def test_verbose_lists_every_recipe_of_a_group(demo, run_cli):
    result = run_cli("diff", "pytorch-2.9", TARGET, "--repo", str(demo), "--verbose")
    lines = result.stdout.splitlines()
    assert lines[1].endswith("nothing else:") and len(lines) == 1 + 1 + 66 + 1 + 1 and lines[-1] == UNCHECKED
    assert lines[2] == "  .flox/pkgs/pytorch-python313-cpu-armv8_2.nix"


def test_paths_limit_the_recipes_compared(demo, run_cli):
    result = run_cli("diff", "pytorch-2.9", TARGET, ".flox/pkgs/*-sm90-*.nix", "--repo", str(demo), "--format", "json")
    data = validate(result.stdout)
    assert [r["path"] for r in data["recipes"]] == sorted(
        f".flox/pkgs/pytorch-python313-cuda12_9-sm90-{isa}.nix"
        for isa in ("avx", "avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9"))
    same = run_cli("diff", TARGET, TARGET, ".flox/pkgs/pytorch-python313-darwin-mps.nix", "--repo", str(demo))
    assert same.exit_code == 0
    assert same.stdout.splitlines()[1:] == ["same: .flox/pkgs/pytorch-python313-darwin-mps.nix: build the same",
                                            "1 recipe: 1 same", UNCHECKED]


def test_markdown_and_an_output_file(demo, run_cli, tmp_path):
    out = tmp_path / "diff.md"
    result = run_cli("diff", "pytorch-2.9", TARGET, "--repo", str(demo), "--format", "markdown", "--output", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == f"pinshift: 66 recipes: 66 changed; report written to {out}\n"
    text = out.read_text()
    assert text.startswith("## What the recipes build: `pytorch-2.9` → `pytorch-2.10-cuda12_9`\n\n66 recipes: 66 changed (")
    assert ("- **changed** — 66 recipes: `nixpkgs 6a030d5 → 0182a36; python3Packages.torch → python313Packages.torch; "
            "postInstall: …echo 1 > $out/.metadata-rev → …echo 2 > $out/.metadata-rev; nothing else`") in text
    assert text.count("  - `.flox/pkgs/") == 50 and "  - … and 16 more (`--format json` lists all)" in text


# --- every status ------------------------------------------------------------------------------------------------------


@pytest.fixture
def statuses(make_repo):
    """BASE: the companions, a recipe that fails (imports a missing file), one removed later, one renamed later,
    one fixed later. TARGET: the PyTorch recipe the companions import removed, a recipe added."""
    require_nix()
    files = fixture_files("companions")
    files[f"{PKGS}/failing.nix"] = "import ./not-there.nix\n"
    files[f"{PKGS}/fixed.nix"] = "{ x = undefined_name; }\n"
    files[f"{PKGS}/gone.nix"] = render_recipe(Variant("cpu", "avx2"))
    files[f"{PKGS}/old-name.nix"] = render_recipe(Variant("darwin", ""))
    root = make_repo(files)
    git(root, "mv", f"{PKGS}/old-name.nix", f"{PKGS}/new-name.nix")
    commit(root, {f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix": None, f"{PKGS}/gone.nix": None,
                  f"{PKGS}/fixed.nix": "{ x = 1; }\n",
                  f"{PKGS}/added.nix": fixture_files("vllm")[f"{PKGS}/vllm-python313-cuda12_9-sm90.nix"]},
           "target", branch="target")
    return root


def test_each_status_is_told_and_a_broken_recipe_exits_1(statuses, run_cli):
    result = run_cli("diff", "main", "target", "--repo", str(statuses), "--format", "json")
    assert result.exit_code == 1, result
    data = validate(result.stdout)
    got = {r["path"]: (r["status"], r.get("old_path"), r.get("error"), r.get("base_error")) for r in data["recipes"]}
    missing = f"getting status of '{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix': No such file or directory"
    assert got == {
        f"{PKGS}/added.nix": ("added", None, None, None),
        f"{PKGS}/failing.nix": ("failing", None, *[f"getting status of '{PKGS}/not-there.nix': No such file or "
                                                   f"directory (at {PKGS}/failing.nix:1:1)"] * 2),
        f"{PKGS}/fixed.nix": ("fixed", None, None, f"undefined variable 'undefined_name' (at {PKGS}/fixed.nix:1:7)"),
        f"{PKGS}/gone.nix": ("removed", None, None, None),
        f"{PKGS}/new-name.nix": ("same", f"{PKGS}/old-name.nix", None, None),
        f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix": ("removed", None, None, None),
        f"{PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix": (
            "broken", None, f"{missing} (at {PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix:10:13)", None),
        f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix": (
            "broken", None, f"{missing} (at {PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix:10:13)", None),
    }
    assert data["counts"] == {"broken": 2, "changed": 0, "changed_untold": 0, "cannot_tell": 0, "fixed": 1, "failing": 1,
                              "added": 1, "removed": 2, "same": 1}


def test_the_text_report_groups_by_status_broken_first(statuses, run_cli):
    result = run_cli("diff", "main", "target", "--repo", str(statuses))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()[1:]
    assert lines == [
        f"broken: {PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix: no longer evaluate: getting status of "
        f"'{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix': No such file or directory "
        f"(at {PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix:10:13)",
        f"broken: {PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix: no longer evaluate: getting status of "
        f"'{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix': No such file or directory "
        f"(at {PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix:10:13)",
        f"fixed: {PKGS}/fixed.nix: evaluate now (failed before: undefined variable 'undefined_name' "
        f"(at {PKGS}/fixed.nix:1:7))",
        f"failing: {PKGS}/failing.nix: fail on both sides (never evaluated, not a regression): getting status of "
        f"'{PKGS}/not-there.nix': No such file or directory (at {PKGS}/failing.nix:1:1)",
        f"added: {PKGS}/added.nix: added",
        f"removed: 2 recipes: removed (first: {PKGS}/gone.nix; --verbose lists all)",
        f"same: {PKGS}/old-name.nix → {PKGS}/new-name.nix: build the same",
        "8 recipes: 2 broken, 1 fixed, 1 failing, 1 added, 2 removed, 1 same",
        UNCHECKED,
    ]


def test_a_recipe_that_never_evaluated_is_not_a_regression(make_repo, run_cli):
    require_nix()
    root = make_repo({"a.nix": "import ./missing.nix\n", "b.nix": render_recipe(Variant("cpu", "avx2"))})
    commit(root, {"a.nix": "import ./missing.nix # still\n"}, "touch", branch="next")
    result = run_cli("diff", "main", "next", "--repo", str(root))
    assert result.exit_code == 0, result
    assert "failing: a.nix: fail on both sides (never evaluated, not a regression)" in result.stdout
    assert result.stdout.endswith(f"2 recipes: 1 failing, 1 same\n{UNCHECKED}\n")


def test_a_change_is_named_by_attribute_with_before_and_after(make_repo, run_cli):
    require_nix()
    before = render_recipe(Variant("90", "avx512"))
    after = before.replace('ninjaFlags = [ "-j32" ];', 'ninjaFlags = [ "-j64" ];').replace('[ "x86_64-linux" ]', '[ "aarch64-linux" ]')
    root = make_repo({"r.nix": before})
    commit(root, {"r.nix": after}, "flags", branch="next")
    data = validate(run_cli("diff", "main", "next", "--repo", str(root), "--format", "json").stdout)
    assert data["recipes"][0]["changes"] == [
        {"attribute": "meta.platforms", "before": ["x86_64-linux"], "after": ["aarch64-linux"]},
        {"attribute": "ninjaFlags", "before": ["-j32"], "after": ["-j64"]},
    ]
    text = run_cli("diff", "main", "next", "--repo", str(root)).stdout
    assert 'r.nix: meta.platforms [ "x86_64-linux" ] → [ "aarch64-linux" ]; ninjaFlags [ "-j32" ] → [ "-j64" ]; ' \
           "nothing else" in text


# --- usage errors: one line, exit 2, before any evaluation --------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (("nope", "main"), "pinshift: error: BASE 'nope' is not a branch or commit of {root}"),
    (("--repo", "{root}", "main", "--", "-x"), "pinshift: error: TARGET '-x' is not a branch or commit of {root}"),
    (("main", "main", "docs/*.nix"), "pinshift: error: PATHS docs/*.nix select no .nix file of main or main; give "
                                     "repository-relative paths, directories or globs ('.flox/pkgs/**/*.nix')"),
])
def test_bad_input_is_one_line_and_exit_2(make_repo, run_cli, args, message):
    require_nix()
    root = make_repo({"a.nix": "{ }\n"})
    args = [arg.format(root=root) for arg in args]
    result = run_cli("diff", *args, *(() if "--repo" in args else ("--repo", str(root))))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(message.format(root=root)) and result.stderr.count("\n") == 1, result.stderr


def test_an_output_directory_is_refused_before_anything_is_evaluated(make_repo, run_cli, tmp_path):
    root = make_repo({"a.nix": "{ }\n"})
    result = run_cli("diff", "main", "main", "--repo", str(root), "--output", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"pinshift diff: error: Invalid value for '--output': File '{tmp_path}' is a directory; "
                             "see 'pinshift diff --help'\n")


def test_not_a_repository(run_cli, tmp_path):
    result = run_cli("diff", "a", "b", "--repo", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == f"pinshift: error: --repo {tmp_path}: {tmp_path} is not a git repository; give a local clone of the repository\n"


def test_without_nix_instantiate_it_says_so_in_one_line(make_repo, run_cli, monkeypatch, tmp_path):
    root = make_repo({"a.nix": "{ }\n"})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(bin_dir))
    result = run_cli("diff", "main", "main", "--repo", str(root))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"pinshift: error: {NO_NIX}\n"


def test_file_names_with_control_characters_are_shown_escaped(make_repo, run_cli):
    require_nix()
    root = make_repo({"a\x1b[2J.nix": "{ x = 1; }\n"})
    commit(root, {"a\x1b[2J.nix": "{ x = 2; }\n"}, "x", branch="next")
    result = run_cli("diff", "main", "next", "--repo", str(root))
    assert "\x1b" not in result.stdout
    assert "a\\x1b[2J.nix: value.x 1 → 2; nothing else" in result.stdout


# --- offline, temporary files, the cache -------------------------------------------------------------------------------


def test_offline_in_a_network_namespace_it_gives_the_same_answer(demo, tmp_path):
    """No network at all (an unshared network namespace, or else proxies pointing nowhere): the same report."""
    pinshift = str(Path(sys.executable).parent / "pinshift")
    args = [pinshift, "diff", "pytorch-2.9", TARGET, "--repo", str(demo), "--format", "json"]
    env = dict(os.environ, http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9", ALL_PROXY="http://127.0.0.1:9")
    online = subprocess.run(args, capture_output=True, text=True, env=env)
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0:
        offline = subprocess.run(["unshare", "-rn", *args], capture_output=True, text=True, env=env)
    else:  # pragma: no cover - a kernel without user namespaces: the proxies alone
        offline = online
    assert online.returncode == offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout)["recipes"] == json.loads(online.stdout)["recipes"]
    assert json.loads(offline.stdout)["counts"]["changed"] == 66


def test_no_temporary_directory_is_left(demo, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert run_cli("diff", "pytorch-2.9", TARGET, "--repo", str(demo)).exit_code == 0
    assert [p.name for p in tmp_path.iterdir()] == []


def test_summaries_are_remembered_by_blob_and_the_files_read(statuses, run_cli, monkeypatch):
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    first = validate(run_cli("diff", "main", "target", "--repo", str(statuses), "--format", "json").stdout)
    again = validate(run_cli("diff", "main", "target", "--repo", str(statuses), "--format", "json").stdout)
    assert first["recipes"] == again["recipes"]
    # in one run: only failing.nix, the same bytes on both sides and still reading a missing file (new-name.nix has
    # old-name.nix's bytes under another path, the companions' import is gone)
    assert first["evaluation"]["remembered"] == 1
    assert (again["evaluation"]["evaluated"], again["evaluation"]["remembered"], again["evaluation"]["calls"]) == (0, 13, 0)


@pytest.mark.parametrize("spoil", ["link", "fifo"])
def test_a_cache_that_is_a_link_or_a_fifo_is_not_used_and_nothing_hangs(statuses, run_cli, monkeypatch, tmp_path, spoil):
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "pinshift"
    cache.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(cache / "summaries", ignore_errors=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if spoil == "link":
        (cache / "summaries").symlink_to(elsewhere)
    else:
        from pinshift.evaluation.summary_memo import store_name

        (cache / "summaries").mkdir()
        os.mkfifo(cache / "summaries" / store_name(require_nix()))
    try:
        result = run_cli("diff", "main", "target", "--repo", str(statuses))
        assert result.exit_code == 1
        assert "broken: " in result.stdout
        if spoil == "link":
            assert result.stderr == (f"pinshift: note: the summary cache is not used: {cache / 'summaries'} is a symbolic "
                                     "link, and pinshift follows no link and uses no shared directory in its cache (fix "
                                     "it, or set PINSHIFT_CACHE=off)\n")
            assert list(elsewhere.iterdir()) == []
    finally:
        if spoil == "link":
            (cache / "summaries").unlink()
        else:
            shutil.rmtree(cache / "summaries")


def test_the_nested_self_reference_set_binding_writes_is_broken_with_infinite_recursion(make_repo, run_cli):
    """set-binding with `where = "every"` (run by `pinshift apply`, committed) on a torchvision recipe that builds its
    PyTorch inline: the nested overrideAttrs now refers to itself."""
    require_nix()
    root = make_repo(fixture_files("nested"))
    git(root, "checkout", "-q", "-b", "every")
    applied = run_cli("apply", "set-binding", "--set", "path=propagatedBuildInputs", "--set",
                      "value=(oldAttrs.propagatedBuildInputs or [ ]) ++ [ customPytorch.out ]", "--set", "where=every",
                      str(root / PKGS))
    assert applied.exit_code == 0, applied
    git(root, "commit", "-qam", "propagate")
    result = run_cli("diff", "main", "every", "--repo", str(root), "--format", "json")
    assert result.exit_code == 1
    [recipe] = validate(result.stdout)["recipes"]
    assert (recipe["status"], recipe["error"]) == (
        "broken", "infinite recursion encountered (while evaluating propagatedBuildInputs)")


def test_the_schema_is_a_valid_json_schema_and_holds_the_report_to_it():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    valid = {"schema": "pinshift.diff/2", "base": {"ref": "a", "commit": "1" * 40}, "target": {"ref": "b", "commit": "2" * 40},
             "counts": {s: 0 for s in ("broken", "changed", "changed_untold", "cannot_tell", "fixed", "failing", "added",
                                       "removed", "same")},
             "recipes": [{"path": "x.nix", "status": "same", "changes": []}], "groups": [],
             "evaluation": {"evaluated": 0, "remembered": 0, "calls": 0},
             "real": {"checked": False, "unchecked": ["the real pins: …"]}}
    jsonschema.validate(valid, SCHEMA)
    for broken in ({**valid, "schema": "pinshift.diff/1"},
                   {**valid, "real": {"checked": False}},
                   {**valid, "counts": {s: 0 for s in ("broken", "changed", "fixed", "failing", "added", "removed", "same")}},
                   {**valid, "recipes": [{"path": "x.nix", "status": "gone", "changes": []}]},
                   {**valid, "recipes": [{"path": "x.nix", "status": "same"}]},
                   {**valid, "extra": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)
