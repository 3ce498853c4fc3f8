"""The plan memo (issue 15): a file planned before is looked up, never planned again, and nothing differs.

Every test compares what pinshift produces with the memo against what it produces with the memo
off (`PINSHIFT_CACHE=off`, as the rest of the suite runs): whole JSON reports byte for byte, and
the trees of the commits a real migrate makes. That a warm run really plans nothing is shown by
making planning itself fail (`file_edits.process_file` raises) and running again: the run still
succeeds, with the same report, because no file reached it.
"""

from __future__ import annotations

import json
import os
import pickle
import re
from pathlib import Path

import pytest
from conftest import git

from pinshift.planning import memo as plan_memo
from pinshift.planning import file_edits
from pinshift.demo.build import build_demo
from pinshift.demo.python_branch import RECIPE_FILE, build_python312_demo

RECIPE = "pytorch-2.10-cuda12_9"


@pytest.fixture
def memo_on(monkeypatch, tmp_path):
    """The memo on, in a cache directory of this test's own; returns that directory's plans folder."""
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "pinshift" / "plans"


@pytest.fixture
def demo(tmp_path):
    return build_demo(tmp_path / "demo")


def _report(run_cli, repo: Path, *args: str, out: Path) -> bytes:
    result = run_cli("migrate", *args, "--repo", str(repo), "--dry-run", "--format", "json", "--output", str(out))
    assert result.exit_code == 0, result
    return out.read_bytes()


def _planning_forbidden(monkeypatch) -> list[str]:
    """Make planning a file fail; returns the list of paths anything tried to plan."""
    tried: list[str] = []

    def refuse(path, data, jobs):
        tried.append(path)
        raise AssertionError(f"{path} was planned although the memo holds it")

    monkeypatch.setattr(file_edits, "process_file", refuse)
    return tried


def _counting(monkeypatch) -> list[str]:
    planned: list[str] = []
    real = file_edits.process_file

    def count(path, data, jobs):
        planned.append(path)
        return real(path, data, jobs)

    monkeypatch.setattr(file_edits, "process_file", count)
    return planned


def test_a_warm_dry_run_plans_no_file_and_writes_the_same_report(run_cli, demo, memo_on, monkeypatch, tmp_path):
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    fresh = _report(run_cli, demo, RECIPE, out=tmp_path / "off.json")
    assert not memo_on.exists()  # off means off: nothing is written
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    cold = _report(run_cli, demo, RECIPE, out=tmp_path / "cold.json")
    assert len(list(memo_on.glob("*/*.memo"))) >= 1
    tried = _planning_forbidden(monkeypatch)
    warm = _report(run_cli, demo, RECIPE, out=tmp_path / "warm.json")
    assert tried == []
    assert fresh == cold == warm
    verbose = run_cli("migrate", RECIPE, "--repo", str(demo), "--dry-run", "--verbose")
    assert "pinshift: 67 of 67 file plans remembered from an earlier run" in verbose.stderr
    assert json.loads(warm)["would_change"] is True


def test_a_changed_file_is_planned_again_and_only_that_one(run_cli, demo, memo_on, monkeypatch, tmp_path):
    _report(run_cli, demo, RECIPE, out=tmp_path / "first.json")
    target = demo / ".flox" / "pkgs" / "pytorch-python313-cuda12_9-sm86-avx2.nix"
    target.write_bytes(target.read_bytes().replace(b"gpuArchSM = \"8.6\";", b"gpuArchSM = \"8.6\";  # edited", 1))
    assert b"# edited" in target.read_bytes()
    git(demo, "commit", "-qam", "one recipe edited")
    planned = _counting(monkeypatch)
    warm = _report(run_cli, demo, RECIPE, out=tmp_path / "warm.json")
    assert planned == [".flox/pkgs/pytorch-python313-cuda12_9-sm86-avx2.nix"]
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert warm == _report(run_cli, demo, RECIPE, out=tmp_path / "off.json")


def test_commits_made_from_remembered_plans_equal_commits_made_without(run_cli, demo, memo_on, monkeypatch):
    """--branch changes the README step's parameters ({target}): the README is planned again, the recipes are not."""
    assert run_cli("migrate", RECIPE, "--repo", str(demo), "--dry-run").exit_code == 0  # fills the memo
    planned = _counting(monkeypatch)
    assert run_cli("migrate", RECIPE, "--repo", str(demo), "--branch", "warm").exit_code == 0
    assert planned == ["README.md"]
    monkeypatch.undo()
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert run_cli("migrate", RECIPE, "--repo", str(demo), "--branch", "off").exit_code == 0
    warm = git(demo, "log", "--format=%T %s", "pytorch-2.9..warm").splitlines()
    off = git(demo, "log", "--format=%T %s", "pytorch-2.9..off").splitlines()
    assert len(warm) == 4 and warm[1:] == off[1:]  # the README commit names its own branch
    readme = git(demo, "show", "warm:README.md")
    assert "warm" in readme and readme.replace("warm", "off") == git(demo, "show", "off:README.md")


def test_file_steps_renames_are_remembered_with_the_operation_that_made_each_path(run_cli, memo_on, monkeypatch,
                                                                                 tmp_path):
    """rename-files then content steps: the renamed paths' plans depend on the rename; the reports agree."""
    repo = build_python312_demo(tmp_path / "python312")
    cold = _report(run_cli, repo, str(RECIPE_FILE), out=tmp_path / "cold.json")
    tried = _planning_forbidden(monkeypatch)
    warm = _report(run_cli, repo, str(RECIPE_FILE), out=tmp_path / "warm.json")
    assert tried == []
    monkeypatch.undo()
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert cold == warm == _report(run_cli, repo, str(RECIPE_FILE), out=tmp_path / "off.json")
    assert len(json.loads(warm)["steps"][0]["renamed"]) == 67


def test_apply_with_a_warm_memo_writes_the_same_files(run_cli, demo, memo_on, monkeypatch, tmp_path):
    args = ("apply", "rename-attr", "--set", "from=python3Packages", "--set", "to=python313Packages",
            "--set", "base=nixpkgs_pinned", ".flox/pkgs")
    copies = {}
    for name in ("cold", "warm", "off"):
        copy = tmp_path / name
        git(tmp_path, "clone", "-q", "--branch", "pytorch-2.9", str(demo), str(copy))
        copies[name] = copy
    assert run_cli(*args, cwd=copies["cold"]).exit_code == 0
    tried = _planning_forbidden(monkeypatch)
    warm = run_cli(*args, "--verbose", cwd=copies["warm"])
    assert warm.exit_code == 0
    assert tried == []
    assert re.search(r"^pinshift: (\d+) of \1 file plans remembered from an earlier run", warm.stderr, re.M)
    monkeypatch.undo()
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert run_cli(*args, cwd=copies["off"]).exit_code == 0
    changed = {name: git(copy, "diff") for name, copy in copies.items()}
    assert changed["cold"] and changed["cold"] == changed["warm"] == changed["off"]


def test_a_damaged_memo_is_a_miss_and_is_rewritten(run_cli, demo, memo_on, monkeypatch, tmp_path):
    """Cut in half (a full disk, a killed save): the records before the cut are used, the rest planned again,
    and the next save rewrites the file whole; the report is the same throughout."""
    cold = _report(run_cli, demo, RECIPE, out=tmp_path / "cold.json")
    [stored] = [p for p in memo_on.glob("*/*.memo") if p.stat().st_size > 10_000]
    stored.write_bytes(stored.read_bytes()[: stored.stat().st_size // 2])
    planned = _counting(monkeypatch)
    assert _report(run_cli, demo, RECIPE, out=tmp_path / "again.json") == cold
    assert 20 <= len(planned) <= 50
    planned.clear()
    assert _report(run_cli, demo, RECIPE, out=tmp_path / "third.json") == cold
    assert planned == []


def test_garbage_in_the_memo_is_a_miss(run_cli, demo, memo_on, monkeypatch, tmp_path):
    """Another format's header; a record whose payload is not zlib; one that decodes to something else than a plan."""
    import struct
    import zlib

    cold = _report(run_cli, demo, RECIPE, out=tmp_path / "cold.json")
    [stored] = [p for p in memo_on.glob("*/*.memo") if p.stat().st_size > 10_000]
    data = stored.read_bytes()
    stored.write_bytes(b"pinshift-plan-memo/0\n" + data[len(plan_memo.FORMAT):])
    planned = _counting(monkeypatch)
    assert _report(run_cli, demo, RECIPE, out=tmp_path / "header.json") == cold
    # the recipes' 66 plans: the README step writes facts, so it is planned after them, in a memo file of its own
    # (pinshift.branches.doc_facts), which this test leaves alone
    assert len(planned) == 66
    records, offset = [], len(plan_memo.FORMAT)
    data = stored.read_bytes()
    while offset < len(data):
        key, length = struct.unpack_from(">20sI", data, offset)
        records.append((key, data[offset + 24 : offset + 24 + length]))
        offset += 24 + length
    assert len(records) == 66
    bad = {records[0][0]: b"not compressed at all", records[1][0]: zlib.compress(pickle.dumps(["not", "a", "plan"]))}
    stored.write_bytes(plan_memo.FORMAT + b"".join(struct.pack(">20sI", k, len(bad.get(k, v))) + bad.get(k, v)
                                                   for k, v in records))
    planned.clear()
    assert _report(run_cli, demo, RECIPE, out=tmp_path / "records.json") == cold
    assert len(planned) == 2


def test_an_unwritable_cache_costs_only_time(run_cli, demo, monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory would be")
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    first = _report(run_cli, demo, RECIPE, out=tmp_path / "first.json")
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert first == _report(run_cli, demo, RECIPE, out=tmp_path / "off.json")
    assert blocker.read_text().startswith("a file")


def test_step_kinds_from_outside_pinshift_are_never_remembered(run_cli, make_repo, memo_on, monkeypatch, tmp_path):
    """A --migrations kind may read anything (the clock, other files): its segment is planned every time."""
    kinds = tmp_path / "kinds"
    kinds.mkdir()
    (kinds / "shout.py").write_text(
        '"""Upper-case every string fragment."""\n'
        "from dataclasses import dataclass\n"
        "from pinshift.edits import Edit\n"
        "from pinshift.steps.kind import StepOutput\n"
        "NAME = 'shout'\n"
        "@dataclass(frozen=True)\n"
        "class Params:\n"
        "    pass\n"
        "def plan(doc, params, context):\n"
        "    out = StepOutput()\n"
        "    data = doc.data\n"
        "    start = data.find(b'hello')\n"
        "    if start >= 0:\n"
        "        out.edits.append(Edit(start, start + 5, b'HELLO', 'shout'))\n"
        "    return out\n"
    )
    repo = make_repo({"a.nix": '{ x = "hello"; }\n'})
    planned = _counting(monkeypatch)
    for _ in range(2):
        result = run_cli("apply", "shout", "--migrations", str(kinds), "--dry-run", "a.nix", cwd=repo)
        assert result.exit_code == 0, result
    assert planned == ["a.nix", "a.nix"]
    assert not list(memo_on.glob("*/*.memo"))


def test_the_fingerprint_changes_with_the_code_params_and_globs_and_refuses_what_it_cannot_spell(monkeypatch):
    from pinshift.steps.registry import available_kinds, get_kind
    from pinshift.planning.jobs import StepJob

    kind = get_kind(available_kinds(None, None), "rename-attr")
    params = kind.params_type(from_="python3Packages", to="python313Packages")
    job = StepJob(index=1, total=1, kind=kind, params=params, globs=("*.nix",))
    base = plan_memo.segment_fingerprint([job])
    assert base is not None and base == plan_memo.segment_fingerprint([job])
    other = kind.params_type(from_="python3Packages", to="python312Packages")
    assert plan_memo.segment_fingerprint([StepJob(1, 1, kind, other, ("*.nix",))]).steps != base.steps
    assert plan_memo.segment_fingerprint([StepJob(1, 1, kind, other, ("*.nix",))]).shape == base.shape
    assert plan_memo.segment_fingerprint([StepJob(1, 1, kind, params, ("other/*.nix",))]).shape != base.shape
    assert plan_memo.segment_fingerprint([StepJob(2, 2, kind, params, ("*.nix",))]).steps != base.steps
    monkeypatch.setattr(plan_memo, "_CODE", "0" * 32)  # another pinshift
    changed = plan_memo.segment_fingerprint([job])
    assert changed.shape != base.shape and changed.steps != base.steps
    assert plan_memo.segment_fingerprint([StepJob(1, 1, kind, object(), ("*.nix",))]) is None
    assert plan_memo.canonical({"b": {3, 1, 2}, "a": (1, b"x")}) == plan_memo.canonical({"a": (1, b"x"), "b": {2, 3, 1}})
    assert plan_memo.canonical([1]) != plan_memo.canonical((1,))


def test_blob_ids_are_gits(tmp_path):
    import subprocess

    path = tmp_path / "f"
    path.write_bytes(b"{ x = 1; }\n\xff\x00")

    printed = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout
    assert plan_memo.blob_id(path.read_bytes()) == printed.strip()


def test_another_pinshift_version_removes_the_old_memo_when_it_saves(run_cli, demo, memo_on, monkeypatch, tmp_path):
    """The same install with other code (upgraded or edited in place): its old memo goes. (Another install's stays:
    tests/test_security_cache_folders.py.)"""
    _report(run_cli, demo, RECIPE, out=tmp_path / "first.json")
    [old] = [p for p in memo_on.iterdir() if p.is_dir()]
    monkeypatch.setattr(plan_memo, "_CODE", "f" * 32)
    _report(run_cli, demo, RECIPE, out=tmp_path / "second.json")
    new = f"{plan_memo.install_id()}-{'f' * 32}"
    assert not old.exists() and (memo_on / new).is_dir()
    assert os.listdir(memo_on) == [new]


def test_a_fan_out_over_branches_sharing_files_plans_the_shared_files_once(run_cli, demo, memo_on, monkeypatch,
                                                                            tmp_path):
    """Two bases with the same recipes (a branch and its copy with one file fewer): the second base's run, and
    a later fan-out over both, find every recipe remembered; the JSON report equals the memo-less one."""
    git(demo, "branch", "pytorch-2.9-b", "pytorch-2.9")
    git(demo, "switch", "-q", "pytorch-2.9-b")
    (demo / ".flox" / "pkgs" / "pytorch-python313-cpu-avx2.nix").unlink()
    git(demo, "commit", "-qam", "b: one recipe fewer")
    git(demo, "switch", "-q", "pytorch-2.9")
    args = (RECIPE, "--from", "pytorch-2.9", "--from", "pytorch-2.9-b", "--branch", "{base}-new")
    monkeypatch.setenv("PINSHIFT_JOBS", "1")  # bases in this process: the counting below sees every plan
    planned = _counting(monkeypatch)
    first = _report(run_cli, demo, *args, out=tmp_path / "first.json")
    recipes = [p for p in planned if p.endswith(".nix")]
    assert len(recipes) == 66 and len(set(recipes)) == 66  # the second base found all of its 65 remembered
    assert planned.count("README.md") == 2  # its README step names each base's own target
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert _report(run_cli, demo, *args, out=tmp_path / "off.json") == first
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    planned.clear()
    assert _report(run_cli, demo, *args, out=tmp_path / "warm.json") == first
    assert planned == []


def test_workers_read_and_look_up_files_themselves(run_cli, make_repo, memo_on, monkeypatch, tmp_path):
    """500 files on disk (apply shares them out to forked workers): the workers key each file by its bytes;
    the warm run plans none of them (process_file raises in the workers too: they are forked after the patch)."""
    files = {f"pkgs/p{n:03d}.nix": f'{{ pkgs }}: pkgs.python3Packages.buildPythonPackage {{ pname = "p{n}"; }}\n'
             for n in range(500)}
    args = ("apply", "rename-attr", "--set", "from=python3Packages", "--set", "to=python313Packages",
            "--dry-run", "--format", "json", "pkgs")
    repo = make_repo(files)
    monkeypatch.setenv("PINSHIFT_JOBS", "2")
    cold = run_cli(*args, cwd=repo)
    assert cold.exit_code == 0, cold
    (repo / "pkgs" / "p007.nix").write_text('{ pkgs }: pkgs.python3Packages.torch\n')
    planned_in_parent = _planning_forbidden(monkeypatch)
    warm_refused = run_cli(*args, cwd=repo)
    assert warm_refused.exit_code == 3 and "p007.nix was planned" in warm_refused.stderr  # the one changed file
    (repo / "pkgs" / "p007.nix").write_text(files["pkgs/p007.nix"])
    warm = run_cli(*args, cwd=repo)
    assert warm.exit_code == 0, warm
    assert planned_in_parent == [] and warm.stdout == cold.stdout
    assert json.loads(warm.stdout)["steps"][0]["files_changed"][:2] == ["pkgs/p000.nix", "pkgs/p001.nix"]


def test_the_store_indexes_records_of_any_size_and_stops_at_a_cut(tmp_path):
    """Records larger than the 1 MB blocks the index is read in, tiny ones, and a file cut mid-record."""
    path = tmp_path / "s.memo"
    sizes = [10, 700_000, 3_000_000, 1, 1_048_576, 5]
    payloads = {bytes([n]) * 20: os.urandom(size) for n, size in enumerate(sizes)}
    segment = plan_memo.Segment(path)
    for key, payload in payloads.items():
        segment.record(key, payload)
    segment.save()
    segment.close()
    again = plan_memo.Segment(path)
    assert again.intact and {k: again.lookup(k) for k in payloads} == payloads
    more = {b"\xee" * 20: b"appended"}
    again.new.update(more)
    again.save()
    again.close()
    third = plan_memo.Segment(path)
    assert {k: third.lookup(k) for k in {**payloads, **more}} == {**payloads, **more}
    third.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 4])  # the last record cut short
    cut = plan_memo.Segment(path)
    assert not cut.intact and cut.lookup(b"\xee" * 20) is None and cut.lookup(bytes([2]) * 20) == payloads[bytes([2]) * 20]
    cut.record(b"\xdd" * 20, b"new")
    cut.save()  # rewritten whole: what was used and what is new
    cut.close()
    rewritten = plan_memo.Segment(path)
    assert rewritten.intact and set(rewritten.index) == {bytes([2]) * 20, b"\xdd" * 20}
    rewritten.close()


def test_a_file_above_another_size_limit_is_skipped_not_looked_up(run_cli, demo, memo_on, monkeypatch):
    """The memo's key holds the size limit: recipes remembered under the default --max-bytes are skipped under a
    lower one, exactly as without the memo."""
    args = ("apply", "metadata-rev", "--dry-run", "--format", "json", ".flox/pkgs")
    assert run_cli(*args, cwd=demo).exit_code == 0
    limited = run_cli(*args, "--max-bytes", "1000", cwd=demo)
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    assert limited.stdout == run_cli(*args, "--max-bytes", "1000", cwd=demo).stdout
    skipped = json.loads(limited.stdout)["steps"][0]["skipped"]
    assert len(skipped) >= 60 and "larger than 1000 bytes" in skipped[0]["reason"]


def test_git_trees_learn_sizes_only_for_files_they_read(make_repo):
    """CommitTree no longer asks git for every size up front; a read still skips a blob above the limit without
    fetching it, and a prefetch leaves such a blob out."""
    from pinshift.git.repo import Repository

    root = make_repo({"small.nix": "{ }\n", "big.nix": "{ x = \"" + "a" * 5000 + "\"; }\n"})
    tree = Repository.open(root).tree("HEAD", 1000)
    assert all(entry[1] is None for entry in tree._entries.values())
    assert tree.memo_id("big.nix") is not None  # the memo key holds the limit instead
    tree.prefetch(["small.nix", "big.nix"])
    assert set(tree._blobs) == {"small.nix"} and tree._entries["big.nix"][1] > 1000
    with pytest.raises(Exception, match="larger than 1000 bytes"):
        tree.read("big.nix")
    fresh = Repository.open(root).tree("HEAD", 1000)
    with pytest.raises(Exception, match="larger than 1000 bytes"):
        fresh.read("big.nix")  # not prefetched: every size learnt in one batch, then the limit applied
    assert fresh.read("small.nix") == b"{ }\n" and "big.nix" not in fresh._blobs


def test_new_plans_beyond_the_spill_limit_wait_on_disk_and_save_the_same_store(tmp_path, monkeypatch):
    """A cold run's new plans past SPILL_BYTES leave memory for an unlinked temporary file (a 40,000-file run held
    some 75 MB of them); looked up, replaced, forgotten and saved, they are what an all-in-memory run saves."""
    payloads = {bytes([n]) * 20: os.urandom(300 + 37 * n) for n in range(40)}

    def run(spill: int, name: str) -> plan_memo.Segment:
        monkeypatch.setattr(plan_memo, "SPILL_BYTES", spill)
        segment = plan_memo.Segment(tmp_path / name)
        for key, payload in payloads.items():
            segment.record(key, payload)
        segment.record(b"\x05" * 20, b"replaced")  # a spilled key set again
        segment.forget(b"\x07" * 20)
        assert segment.lookup(b"\x01" * 20) == payloads[b"\x01" * 20] and segment.lookup(b"\x07" * 20) is None
        return segment

    spilled, kept = run(1000, "spilled"), run(1 << 30, "kept")
    assert spilled.new._spilled and not kept.new._spilled and len(spilled.new._memory) < 4
    assert spilled.new.bytes == kept.new.bytes and len(spilled.new) == len(kept.new) == 39
    for segment in (spilled, kept):
        segment.save()
        segment.close()
    assert (tmp_path / "spilled").read_bytes() == (tmp_path / "kept").read_bytes()
    again = plan_memo.Segment(tmp_path / "spilled")
    assert again.lookup(b"\x05" * 20) == b"replaced" and again.lookup(b"\x09" * 20) == payloads[b"\x09" * 20]
    again.close()
