"""A second identical migrate finds the build check's whole result remembered (pinshift.evaluation.summary_memo.CheckMemo).

Through the real CLI on real repositories, evaluated by the real nix-instantiate: a warm run (the same recipe on
the same commit, the cache filled by the first) evaluates no recipe in any tree (pinshift.evaluation.evaluation.EVALUATED,
this process's count) and prints byte-identical JSON, Markdown and text reports, the same warnings, refusals and
exit code, and makes no branch where the cold run refused; a dry run's remembered result is the real migrate's, whose
all-or-nothing write still refuses. What decides the result and changes between runs makes it checked afresh, giving
what a run without any cache gives: a recipe's step edited, a recipe file of the repository changed in a new commit,
the stand-in changed, --allow-broken. A damaged record is a miss, never an error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from build_repos import fixture_files
from conftest import git, require_nix
from pinshift.evaluation import build_check, evaluation, summary_memo
from test_build_check_bisect import LOST, REMOVE, RENAME, binding, recipe

FORMATS = ("json", "markdown", "text")


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    """The caches on, in a directory of this test's own."""
    require_nix()
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    evaluation.EVALUATED.clear()
    yield tmp_path / "cache" / "pinshift"
    evaluation.EVALUATED.clear()


def dry(run_cli, root: Path, path: str, form: str, *extra: str):
    return run_cli("migrate", path, "--repo", str(root), "--from", "main", "--branch", "next", "--dry-run",
                   "--format", form, "--no-color", *extra)


def runs(run_cli, root: Path, path: str, *extra: str) -> dict:
    """format -> (exit code, stdout, stderr) of a dry run in each format, how many recipe states it evaluated, and
    whether it found the check's result remembered."""
    found = {}
    for form in FORMATS:
        evaluation.EVALUATED.clear()
        build_check.RECALLED.clear()
        result = dry(run_cli, root, path, form, *extra)
        found[form] = (result.exit_code, result.stdout, result.stderr, sum(evaluation.EVALUATED.values()),
                       dict(build_check.RECALLED))
    return found


def reports(found: dict) -> dict:
    return {form: found[form][:3] for form in found}


def fresh(run_cli, monkeypatch, root: Path, path: str, *extra: str) -> dict:
    """What a run with every cache off reports."""
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    try:
        return reports(runs(run_cli, root, path, *extra))
    finally:
        monkeypatch.setenv("PINSHIFT_CACHE", "on")


def test_a_warm_run_evaluates_nothing_and_reports_the_same_bytes(make_repo, run_cli, tmp_path, cache):
    root = make_repo(fixture_files("overlay"))
    path = recipe(tmp_path, binding("doCheck", "false"), RENAME, binding("dontStrip", "true"))
    cold = runs(run_cli, root, path)
    assert cold["json"][3] > 0 and cold["json"][0] == 0 and cold["json"][4] == {"checked": 1}
    assert LOST in cold["json"][1] and LOST in cold["text"][2]  # a warning the check added to step 2
    assert [p.name for p in (cache / "checks").iterdir()] != []
    warm = runs(run_cli, root, path)
    assert reports(warm) == reports(cold)
    assert [warm[form][3] for form in FORMATS] == [0, 0, 0]  # no recipe evaluated in any tree
    assert [warm[form][4] for form in FORMATS] == [{"recalled": 1}] * 3  # nothing compared: the result remembered
    # and the same bytes as a run that remembers nothing
    assert fresh(run_cli, pytest.MonkeyPatch(), root, path) == reports(cold)


def test_a_remembered_refusal_still_refuses_and_writes_nothing(make_repo, run_cli, tmp_path, cache):
    root = make_repo(fixture_files("companions"))
    path = recipe(tmp_path, binding("doCheck", "false"), REMOVE, binding("dontStrip", "true"))
    cold = runs(run_cli, root, path)
    assert cold["json"][0] == 1 and "no longer evaluates after this step" in cold["json"][1]
    warm = runs(run_cli, root, path)
    assert reports(warm) == reports(cold) and warm["json"][4] == {"recalled": 1}
    build_check.RECALLED.clear()
    real = run_cli("migrate", path, "--repo", str(root), "--from", "main", "--branch", "next")
    assert real.exit_code == 1 and build_check.RECALLED == {"recalled": 1}  # the dry run's result, remembered
    assert real.stderr.startswith("pinshift: error: step 2/3 (remove-files) failed: ")
    assert "no longer evaluates after this step" in real.stderr
    assert git(root, "branch", "--list", "next") == ""
    allowed = runs(run_cli, root, path, "--allow-broken")  # another question: checked afresh (summaries remembered)
    assert allowed["json"][1] != cold["json"][1] and "--allow-broken" in allowed["json"][1]
    assert allowed["json"][4] == {"checked": 1}
    again = runs(run_cli, root, path, "--allow-broken")
    assert reports(again) == reports(allowed) and again["json"][4] == {"recalled": 1}


def test_an_edited_recipe_step_is_checked_afresh(make_repo, run_cli, tmp_path, cache, monkeypatch):
    root = make_repo(fixture_files("overlay"))
    path = recipe(tmp_path, binding("doCheck", "false"), RENAME)
    first = runs(run_cli, root, path)
    path = recipe(tmp_path, binding("doCheck", "true"), RENAME)  # the recipe file edited between runs
    second = runs(run_cli, root, path)
    assert reports(second) != reports(first) and second["json"][3] > 0 and second["json"][4] == {"checked": 1}
    assert reports(second) == fresh(run_cli, monkeypatch, root, path)


def test_a_changed_recipe_file_in_the_repository_is_checked_afresh(make_repo, run_cli, tmp_path, cache, monkeypatch):
    root = make_repo(fixture_files("overlay"))
    path = recipe(tmp_path, binding("doCheck", "false"), RENAME)
    first = runs(run_cli, root, path)
    recipes = sorted((root / ".flox" / "pkgs").glob("*.nix"))
    text = recipes[0].read_text()
    recipes[0].write_text(text.replace("pname = ", "doInstallCheck = false;\n  pname = ", 1))
    git(root, "commit", "-qam", "a recipe changes")
    second = runs(run_cli, root, path)
    assert second["json"][3] > 0 and reports(second) != reports(first) and second["json"][4] == {"checked": 1}
    assert reports(second) == fresh(run_cli, monkeypatch, root, path)


def test_a_changed_stand_in_is_checked_afresh(make_repo, run_cli, tmp_path, cache, monkeypatch):
    root = make_repo(fixture_files("overlay"))
    path = recipe(tmp_path, binding("doCheck", "false"), RENAME)
    first = runs(run_cli, root, path)
    standin = tmp_path / "standin"
    shutil.copytree(evaluation.STANDIN, standin)
    with open(standin / "lib.nix", "a") as lib:
        lib.write("# a new version of the stand-in\n")
    monkeypatch.setattr(evaluation, "STANDIN", standin)  # what evaluates
    monkeypatch.setattr(summary_memo, "STANDIN", standin)  # what the stores' names are made of
    second = runs(run_cli, root, path)
    assert second["json"][3] > 0 and second["json"][4] == {"checked": 1}  # nothing of the old stand-in was used
    assert reports(second) == reports(first)  # (this change evaluates alike)


def test_a_damaged_result_is_a_miss(make_repo, run_cli, tmp_path, cache):
    root = make_repo(fixture_files("overlay"))
    path = recipe(tmp_path, binding("doCheck", "false"), RENAME)
    cold = runs(run_cli, root, path)
    (store,) = (cache / "checks").glob("*.store")
    data = bytearray(store.read_bytes())
    start = len(summary_memo.CHECK_FORMAT) + 26  # past the first record's header: its payload
    data[start:start + 8] = b"\xff" * 8
    store.write_bytes(bytes(data))
    build_check.RECALLED.clear()
    again = dry(run_cli, root, path, "json")
    assert (again.exit_code, again.stdout, again.stderr) == cold["json"][:3]
    assert build_check.RECALLED == {"checked": 1}


@pytest.mark.parametrize("variant", ["pickle", "bare-pickle", "jsonpickle", "json-os.system", "json-Popen",
                                     "json-system", "wrong-shape"])
def test_a_poisoned_result_runs_nothing_and_is_checked_afresh(make_repo, run_cli, tmp_path, cache, monkeypatch,
                                                              variant):
    from test_security_caches import _codec_framing, poison_record_store, poisons

    root = make_repo(fixture_files("overlay"))
    path = recipe(tmp_path, binding("doCheck", "false"), RENAME)
    off = fresh(run_cli, monkeypatch, root, path)
    runs(run_cli, root, path)
    marker = tmp_path / "ran"
    found = poisons(marker, "checks")
    # data the codec reads, but not a result of this shape (a tuple of two empty lists): a miss, not a crash
    found["wrong-shape"] = _codec_framing({"t": [[], []]})
    assert poison_record_store(cache / "checks", summary_memo.CHECK_FORMAT, b"PC", found[variant]) == 1
    poisoned = runs(run_cli, root, path)
    assert not marker.exists()
    assert poisoned["json"][4] == {"checked": 1} and reports(poisoned) == off


@pytest.mark.parametrize("mode", [0o770, 0o777, None], ids=["0770", "0777", "link"])
def test_a_check_cache_folder_others_can_write_is_not_used(make_repo, run_cli, tmp_path, cache, monkeypatch, mode):
    import json

    from test_security_cache_folders import FOLLOWS, _shared, _why

    root = make_repo(fixture_files("overlay"))
    path = recipe(tmp_path, binding("doCheck", "false"), RENAME)
    off = json.loads(fresh(run_cli, monkeypatch, root, path)["json"][1])
    folder = _shared(cache, "checks", mode, tmp_path)
    for _ in range(2):  # never stored, so never recalled
        found = runs(run_cli, root, path)
        assert found["json"][4] == {"checked": 1}
        data = json.loads(found["json"][1])
        why = f"{folder} is a symbolic link" if mode is None else _why(folder, mode)
        assert data["builds"]["notes"] == [*off["builds"]["notes"], f"the check cache is not used: {why}{FOLLOWS}"]
        data["builds"]["notes"] = off["builds"]["notes"]
        assert data == off
        assert list(folder.iterdir()) == []
