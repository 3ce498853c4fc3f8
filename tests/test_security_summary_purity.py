"""Only what the tree's bytes decide is remembered in the summary store (issue 39 §6), with the real nix-instantiate.

A recipe that lists a directory, looks outside the tree, runs out of time, or fails with an error about the
machine rather than the tree (access forbidden by restricted evaluation, out of memory) is evaluated again by
the next run: the store holds no record of it. A pure recipe beside them is remembered.
"""

from __future__ import annotations

import json

from conftest import git, require_nix
from pinshift.evaluation import summary_memo
from pinshift.evaluation.evaluation import Evaluation
from pinshift.files.record_store import RecordStore
from pinshift.planning.memo import blob_id

SLOW = ('let spin = n: builtins.foldl\' (a: _: builtins.hashString "sha256" a) "x" (builtins.genList (x: x) n); '
        "in { x = builtins.foldl' (a: _: spin 3000) \"\" (builtins.genList (x: x) 3000); }\n")
RECIPES = {
    "pure.nix": '{ x = "pure"; }\n',
    "lists.nix": "{ x = builtins.attrNames (builtins.readDir ./.); }\n",
    "outside.nix": "{ x = builtins.pathExists /etc/hostname; }\n",
    "outside-read.nix": "{ x = builtins.readFile /etc/hostname; }\n",
    "forbidden.nix": "{ x = throw \"access to absolute path '/etc/passwd' is forbidden in restricted mode\"; }\n",
    "memory.nix": '{ x = throw "out of memory"; }\n',
    "slow.nix": SLOW,
}


def _stored_paths(cache, repo) -> set[str]:
    """The recipes of `repo` whose key the summary store holds a record of."""
    [store] = (cache / "summaries").glob("*.store")
    records = RecordStore("summaries", store.name, summary_memo.FORMAT, b"PS")
    keys = set(records.index)
    return {name for name in RECIPES
            if summary_memo._key(f".flox/pkgs/{name}", blob_id((repo / ".flox/pkgs" / name).read_bytes())) in keys}


def test_only_evaluations_of_the_tree_alone_are_stored(run_cli, make_repo, monkeypatch, tmp_path):
    require_nix()
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PINSHIFT_EVAL_TIMEOUT", "1")
    repo = make_repo({f".flox/pkgs/{name}": text for name, text in RECIPES.items()})
    git(repo, "switch", "-q", "-c", "target")
    (repo / "README.md").write_text("a change that is no recipe\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "target")
    diff = ("diff", "main", "target", "--repo", str(repo), "--format", "json")
    first = run_cli(*diff)
    assert first.exit_code in (0, 1), first
    assert _stored_paths(tmp_path / "cache" / "pinshift", repo) == {"pure.nix"}
    again = json.loads(run_cli(*diff).stdout)
    # every recipe but pure.nix evaluated afresh: the unreadable ones in both trees, the others once (reused in a run)
    assert again["evaluation"]["evaluated"] == json.loads(first.stdout)["evaluation"]["evaluated"] - 1 == 9
    assert json.loads(first.stdout)["recipes"] == again["recipes"]


def test_the_rule_for_what_is_stored():
    """Errors about the machine or the run are never stored, whatever their case; errors of the recipe are."""
    stored = summary_memo.of_the_tree
    assert stored(Evaluation({"pname": "x"}))
    assert stored(Evaluation(None, "undefined variable 'foo' (at a.nix:1:3)"))
    assert not stored(Evaluation({"pname": "x"}, cacheable=False))
    for error in ("access to absolute path '/etc/passwd' is forbidden in restricted mode",
                  "access to URI 'http://127.0.0.1/' is forbidden in restricted mode",
                  "access to absolute path '/x' is forbidden in pure eval mode (use '--impure' to override)",
                  "evaluation did not finish in 120 s", "Out Of Memory (the limit is 2048 MiB)",
                  "stack overflow (possible infinite recursion)",
                  "unable to download 'http://x': Couldn't resolve host"):
        assert not stored(Evaluation(None, error)), error


def test_a_file_of_the_other_tree_is_no_key_of_this_one(run_cli, make_repo, monkeypatch, tmp_path):
    """TARGET's recipe reads BASE's data.txt by climbing out of its snapshot (`../../../1/data.txt`): what it gives
    depends on BASE, which no key holds, so it is not remembered; the diff against another BASE shows that BASE's
    value (was: the first BASE's, remembered under TARGET's own data.txt)."""
    require_nix()
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = make_repo({"data.txt": "A", ".flox/pkgs/x.nix": '{ x = "base"; }\n'})
    git(repo, "switch", "-q", "-c", "other")
    (repo / "data.txt").write_text("B")
    git(repo, "commit", "-q", "-am", "B")
    git(repo, "switch", "-q", "-c", "target", "main")
    (repo / "data.txt").write_text("T")
    (repo / ".flox/pkgs/x.nix").write_text("{ x = builtins.readFile ../../../1/data.txt; }\n")
    git(repo, "commit", "-q", "-am", "target")

    def value(base: str) -> str:
        result = run_cli("diff", base, "target", "--repo", str(repo), "--format", "json")
        assert result.exit_code in (0, 1), result
        [recipe] = json.loads(result.stdout)["recipes"]
        return json.dumps(recipe)

    assert '"A"' in value("main")
    assert '"B"' in value("other") and '"A"' not in value("other")
