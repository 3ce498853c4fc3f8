"""Repository code runs only when needed and allowed (issue 21 §3), through the real CLI on real repositories.

The hostile script `evil.py` appends to a marker file and prints (print, `sys.__stdout__`, file
descriptor 1, a child process) whenever it is imported and whenever it plans. Each test says what
the marker, stdout, stderr, the exit code and the repository must look like afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, nix_parse
from migrate_repo import snapshot

from pinshift.steps.scripts import find_scripts

NIX = '{ x = "alpha";\n  postInstall = \'\'\n    echo 1 > $out/.metadata-rev\n  \'\';\n}\n'

EVIL = '''\
"""evil — a repository step kind that must not run unasked."""
import os
import subprocess
import sys
from dataclasses import dataclass

from pinshift.edits import Edit
from pinshift.steps.kind import StepOutput

with open(os.environ["EVIL_MARKER"], "a") as handle:
    handle.write("imported\\n")
with open(os.environ["EVIL_MARKER"] + ".pids", "a") as handle:
    handle.write(f"import {os.getpid()}\\n")
print("EVIL print at import")
sys.__stdout__.write("EVIL __stdout__ at import\\n")
os.write(1, b"EVIL fd1 at import\\n")
subprocess.run(["echo", "EVIL child at import"], check=True)
if os.environ.get("EVIL_AT_IMPORT") == "exit":
    sys.exit(0)
if os.environ.get("EVIL_AT_IMPORT") == "raise":
    raise RuntimeError("boom at import")
if os.environ.get("EVIL_AT_IMPORT") == "loop":
    open(os.environ["EVIL_MARKER"] + ".looping", "w").close()
    while True:
        pass

NAME = "evil"


@dataclass(frozen=True)
class Params:
    mode: str = "edit"


def needles(params):
    return (b"alpha",)


def plan(doc, params, context):
    with open(os.environ["EVIL_MARKER"], "a") as handle:
        handle.write(f"planned {context.path}\\n")
    with open(os.environ["EVIL_MARKER"] + ".pids", "a") as handle:
        handle.write(f"plan {os.getpid()}\\n")
    print("EVIL print in plan")
    os.write(1, b"EVIL fd1 in plan\\n")
    if params.mode == "exit":
        sys.exit(0)
    if params.mode == "raise":
        raise RuntimeError("boom in plan")
    if params.mode == "none":
        return None
    out = StepOutput()
    start = doc.data.find(b"alpha")
    out.edits.append(Edit(start, start + len(b"alpha"), b"omega", "evil: alpha -> omega"))
    return out
'''


def recipe(kind: str, params: str = "") -> str:
    table = f"[steps.params]\n{params}\n" if params else ""
    return (f'name = "{kind}-run"\ntarget = "{kind}-out"\nfiles = ["pkgs/*.nix"]\n'
            f'[[steps]]\nkind = "{kind}"\n{table}')


@pytest.fixture
def marker(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "evil-ran"
    monkeypatch.setenv("EVIL_MARKER", str(path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # this test's own pinshift config
    return path


@pytest.fixture
def repo(make_repo, marker) -> Path:
    return make_repo({
        ".pinshift/migrations/evil.py": EVIL,
        ".pinshift/recipes/bump.toml": recipe("metadata-rev"),
        ".pinshift/recipes/evil.toml": recipe("evil"),
        ".pinshift/recipes/evil-exit.toml": recipe("evil", 'mode = "exit"'),
        ".pinshift/recipes/evil-raise.toml": recipe("evil", 'mode = "raise"'),
        ".pinshift/recipes/evil-none.toml": recipe("evil", 'mode = "none"'),
        "pkgs/a.nix": NIX,
        "pkgs/b.nix": NIX,
    })


def branches(root: Path) -> list[str]:
    return git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def pinshift(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The real command in its own process: file descriptor 1 is a real pipe, as in a shell."""
    return subprocess.run([sys.executable, "-c", "from pinshift.cli import run; run()", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)


def planned_in_workers(marker: Path) -> bool:
    """Whether evil.py planned in other processes than the one that imported it (forked pool workers)."""
    pids = [line.split() for line in Path(str(marker) + ".pids").read_text().splitlines()]
    imported = {pid for what, pid in pids if what == "import"}
    planned = {pid for what, pid in pids if what == "plan"}
    assert len(imported) == 1 and planned
    return not planned & imported


def hint(root: Path) -> str:
    return ("pinshift: error: step kind 'evil' is repository code (.pinshift/migrations/evil.py), which pinshift "
            f"runs only with consent: rerun with --trust-repo, or trust this repository with `pinshift trust {root}`")


# --- never imported unless a step needs the kind ---------------------------------------------------

UNNEEDED = [
    ("recipes",),
    ("recipes", "--kinds"),
    ("show", "--steps"),
    ("show", "bump"),
    ("show", "bump", "--trust-repo"),
    ("show", "pytorch-2.10-cuda12_9", "--trust-repo"),
    ("show", "--step", "metadata-rev", "--trust-repo"),
    ("migrate", "bump", "--dry-run", "--trust-repo"),
    ("migrate", "bump", "--trust-repo"),
    ("apply", "metadata-rev", "--dry-run", "--trust-repo", "pkgs"),
    ("apply", "metadata-rev", "pkgs"),
]


@pytest.mark.parametrize("args", UNNEEDED, ids=" ".join)
def test_a_repository_kind_no_step_needs_is_never_imported(run_cli, repo, marker, args):
    result = run_cli(*args, cwd=repo)
    assert result.exit_code == 0, result
    assert not marker.exists(), marker.read_text()
    assert "EVIL" not in result.output and "loading step kind" not in result.stderr


def test_bundled_recipe_and_listing_run_no_repository_code_even_when_trusted(run_cli, repo, marker):
    assert run_cli("trust", cwd=repo).exit_code == 0
    kinds = run_cli("recipes", "--kinds", cwd=repo)
    assert kinds.exit_code == 0, kinds
    rows = {line.split()[0]: line for line in kinds.stdout.splitlines()}
    assert rows["evil"].split()[1:] == [".pinshift/migrations/evil.py", "a", "repository", "step", "kind", "that",
                                        "must", "not", "run", "unasked."]
    listed = run_cli("recipes", cwd=repo)
    assert f"note: step kind 'evil' in .pinshift/migrations/evil.py (trusted: listed in {config_file(repo)})" \
        in listed.stdout
    migrated = run_cli("migrate", "bump", cwd=repo)
    assert migrated.exit_code == 0, migrated
    assert not marker.exists()


def config_file(root: Path) -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "pinshift" / "config.toml"


# --- needed, without consent: one line, exit 2, nothing run, nothing changed --------------------------

NEEDED = [
    ("show", "evil"),
    ("show", "--step", "evil"),
    ("migrate", "evil", "--dry-run"),
    ("migrate", "evil"),
    ("apply", "evil", "--dry-run", "pkgs"),
    ("apply", "evil", "pkgs"),
]


@pytest.mark.parametrize("args", NEEDED, ids=" ".join)
def test_a_needed_repository_kind_without_consent_exits_2_with_the_hint(run_cli, repo, marker, args):
    before = snapshot(repo)
    result = run_cli(*args, cwd=repo)
    assert result.exit_code == 2, result
    assert result.stdout == "" and result.stderr.splitlines() == [hint(repo)]
    assert not marker.exists()
    assert snapshot(repo) == before


def test_migrations_dir_is_consent_for_that_directory_only(run_cli, repo, marker, tmp_path):
    """--migrations DIR lets DIR's kinds run; it does not let the repository's own kinds run too."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "evil_twin.py").write_text(EVIL.replace('NAME = "evil"', 'NAME = "evil-twin"'))
    both = repo / "both.toml"
    both.write_text(recipe("evil-twin") + '[[steps]]\nkind = "evil"\n')
    result = run_cli("migrate", str(both), "--dry-run", "--migrations", str(extra), cwd=repo)
    assert result.exit_code == 2 and result.stderr.splitlines() == [hint(repo)], result
    assert not marker.exists()  # consent is checked for every step before the first file is imported

    twin = repo / "twin.toml"
    twin.write_text(recipe("evil-twin"))
    result = run_cli("migrate", str(twin), "--dry-run", "--migrations", str(extra), cwd=repo)
    assert result.exit_code == 0, result
    assert result.stderr.splitlines()[0] == (f"pinshift: loading step kind 'evil-twin' from {extra / 'evil_twin.py'} "
                                             f"(trusted: --migrations {extra})")
    assert marker.read_text().startswith("imported\n")


# --- consented: announced, runs, its output kept off stdout ---------------------------------------------


def test_trust_repo_runs_the_kind_announced_and_its_prints_stay_off_stdout(run_cli, repo, marker):
    result = run_cli("migrate", "evil", "--trust-repo", cwd=repo)
    assert result.exit_code == 0, result
    assert result.stderr.splitlines()[0] == (f"pinshift: loading step kind 'evil' from "
                                             f"{repo / '.pinshift/migrations/evil.py'} (trusted: --trust-repo)")
    assert "EVIL print at import" in result.stderr and "EVIL print in plan" in result.stderr
    assert "EVIL" not in result.stdout
    assert result.stdout.startswith("branch  evil-out (")
    assert marker.read_text().splitlines() == ["imported", "planned pkgs/a.nix", "planned pkgs/b.nix"]
    migrated = git(repo, "show", "evil-out:pkgs/a.nix").encode()
    assert migrated == NIX.replace("alpha", "omega").encode()
    accepted, _ = nix_parse(migrated)
    assert accepted


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_stdout_holds_only_the_report_also_from_fd_1_child_processes_and_pool_workers(repo, marker, jobs):
    """A real process: print, sys.__stdout__, os.write(1) and a child's echo, at import and in forked workers."""
    result = pinshift("migrate", "evil", "--dry-run", "--trust-repo", "--format", "json", cwd=repo,
                      env={"PINSHIFT_JOBS": jobs})
    assert result.returncode == 0, result
    report = json.loads(result.stdout)  # nothing but pinshift's report
    assert report["steps"][0]["files_changed"] == ["pkgs/a.nix", "pkgs/b.nix"]
    for text in ("EVIL print at import", "EVIL __stdout__ at import", "EVIL fd1 at import", "EVIL child at import"):
        assert text in result.stderr
    assert result.stderr.count("EVIL fd1 in plan") == 2  # once per file, from whichever process planned it
    assert planned_in_workers(marker) == (jobs == "2")
    text = pinshift("migrate", "evil", "--dry-run", "--trust-repo", cwd=repo, env={"PINSHIFT_JOBS": jobs})
    assert text.returncode == 0 and "EVIL" not in text.stdout, text
    assert text.stdout.startswith("recipe evil-run: main (")


def test_trusted_by_the_config_file_runs_without_the_flag_until_removed(run_cli, repo, marker):
    config = config_file(repo)
    config.parent.mkdir(parents=True)
    config.write_text("# my pinshift settings\ntrusted = [\"/somewhere/else\"]  # old one\n")
    added = run_cli("trust", cwd=repo / "pkgs")
    assert added.exit_code == 0, added
    assert added.stdout == f"trusted: {repo} ({config}); its step kinds: evil (evil.py)\n"
    assert not marker.exists()  # trusting reads the scripts, it does not run them
    assert config.read_text().startswith("# my pinshift settings\ntrusted = [\"/somewhere/else\", ")
    assert run_cli("trust", "--list", cwd=repo).stdout == f"/somewhere/else\n{repo}\n"
    again = run_cli("trust", str(repo), cwd=repo)
    assert again.stdout.startswith(f"already trusted: {repo} (")

    result = run_cli("migrate", "evil", "--dry-run", cwd=repo)
    assert result.exit_code == 0, result
    assert result.stderr.splitlines()[0] == (f"pinshift: loading step kind 'evil' from "
                                             f"{repo / '.pinshift/migrations/evil.py'} (trusted: listed in {config})")
    assert "EVIL" not in result.stdout and marker.exists()

    removed = run_cli("trust", "--remove", cwd=repo)
    assert removed.stdout == f"no longer trusted: {repo} ({config})\n"
    assert "# my pinshift settings" in config.read_text() and "/somewhere/else" in config.read_text()
    marker.unlink()
    refused = run_cli("migrate", "evil", "--dry-run", cwd=repo)
    assert refused.exit_code == 2 and refused.stderr.splitlines() == [hint(repo)]
    assert not marker.exists()


def test_trust_follows_symlinks_to_the_same_repository(run_cli, repo, marker, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(repo)
    config = config_file(repo)
    config.parent.mkdir(parents=True)
    config.write_text(f'trusted = ["{link}"]\n')
    result = run_cli("show", "evil", cwd=repo)
    assert result.exit_code == 0, result
    assert f"(trusted: listed in {config})" in result.stderr


@pytest.mark.parametrize("text, message", [
    ("trusted = [", "invalid TOML in the pinshift config: "),
    ("trusted = \"/x\"\n", "'trusted' must be a list of absolute paths"),
    ("trusted = [\"relative/repo\"]\n", "'trusted' entry 'relative/repo' is not an absolute path"),
    ("trustd = []\n", "unknown key 'trustd' in the pinshift config (known: trusted)"),
])
def test_a_broken_config_is_one_line_when_it_is_needed_and_harmless_when_not(run_cli, repo, marker, text, message):
    config = config_file(repo)
    config.parent.mkdir(parents=True)
    config.write_text(text)
    result = run_cli("migrate", "evil", "--dry-run", cwd=repo)
    assert result.exit_code == 2 and result.stdout == "", result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"pinshift: error: {config}: {message}"), lines
    assert not marker.exists()
    assert run_cli("migrate", "bump", "--dry-run", cwd=repo).exit_code == 0  # bundled kinds never read it
    assert run_cli("trust", cwd=repo).exit_code == 2 and config.read_text() == text  # never rewritten blind


# --- a script that exits or fails: its own error, exit 2, nothing created --------------------------------


@pytest.mark.parametrize("where, env, recipe_name, expected", [
    ("import", {"EVIL_AT_IMPORT": "exit"}, "evil",
     ":19: step kind 'evil' called sys.exit(0) while loading; a step kind returns its result or raises an error, "
     "it never exits"),
    ("import", {"EVIL_AT_IMPORT": "raise"}, "evil",
     ":21: step kind 'evil' failed while loading: RuntimeError: boom at import"),
    ("plan", {}, "evil-exit",
     ":47: step kind 'evil' called sys.exit(0) while planning pkgs/a.nix; a step kind returns its result or "
     "raises an error, it never exits"),
    ("plan", {}, "evil-raise", ":49: step kind 'evil' failed while planning pkgs/a.nix: RuntimeError: boom in plan"),
    ("plan", {}, "evil-none", ": step kind 'evil': plan() returned NoneType, not a StepOutput"),
])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_script_that_exits_or_raises_is_its_own_error_and_creates_no_branch(repo, marker, where, env,
                                                                               recipe_name, expected, jobs):
    before = snapshot(repo)
    result = pinshift("migrate", recipe_name, "--trust-repo", cwd=repo, env={**env, "PINSHIFT_JOBS": jobs})
    assert result.returncode == 2, result
    errors = [line for line in result.stderr.splitlines() if line.startswith("pinshift: error: ")]
    assert errors == [f"pinshift: error: {repo / '.pinshift/migrations/evil.py'}{expected}"], result.stderr
    assert "Traceback" not in result.stderr and "EVIL" not in result.stdout
    assert snapshot(repo) == before and branches(repo) == ["main"]
    assert marker.read_text().startswith("imported\n")
    if where == "plan":
        assert planned_in_workers(marker) == (jobs == "2")


def test_debug_shows_the_scripts_traceback(run_cli, repo, marker):
    result = run_cli("--debug", "show", "evil", "--trust-repo", cwd=repo)
    assert result.exit_code == 0  # show does not plan: the script is imported, never asked to plan
    result = run_cli("--debug", "migrate", "evil-raise", "--dry-run", "--trust-repo", cwd=repo)
    assert result.exit_code == 2, result
    assert "Traceback (most recent call last):" in result.stderr
    assert 'raise RuntimeError("boom in plan")' in result.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_endless_script_stops_on_a_signal_and_leaves_nothing(repo, marker, signum):
    """Consented code may loop forever; Ctrl-C (SIGINT) or SIGTERM end pinshift (128 + signal), no branch."""
    before = snapshot(repo)
    process = subprocess.Popen([sys.executable, "-c", "from pinshift.cli import run; run()", "migrate", "evil",
                                "--trust-repo"], cwd=repo, env={**os.environ, "EVIL_AT_IMPORT": "loop"},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    looping = Path(str(marker) + ".looping")
    for _ in range(600):
        if looping.exists() or process.poll() is not None:
            break
        time.sleep(0.1)
    assert looping.exists(), process.communicate()
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, stderr
    assert stderr.splitlines()[-1].startswith("pinshift: interrupted") and "EVIL" not in stdout
    assert snapshot(repo) == before and branches(repo) == ["main"]


# --- which file defines which kind, without running it ------------------------------------------------


def test_kinds_are_found_by_their_name_literal_or_their_file_name(tmp_path):
    (tmp_path / "bump_cuda.py").write_text('NAME = "bump-" + "cuda"\n')  # computed: known by its file name
    (tmp_path / "odd_file.py").write_text('"""swap-it — swaps."""\nNAME: str = "swap-it"\n')
    (tmp_path / "escape.py").write_text('NAME = "\\x1b[2J"\n')  # not a plain name: the file name decides
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "_helpers.py").write_text('NAME = "helper"\n')
    found = {s.path.name: (s.kind, s.named_by, s.summary) for s in find_scripts(tmp_path)}
    assert found == {
        "bump_cuda.py": ("bump-cuda", "file name", ""),
        "odd_file.py": ("swap-it", "NAME", "swap-it — swaps."),
        "escape.py": ("escape", "file name", ""),
        "broken.py": ("broken", "file name", ""),
    }


def test_a_name_that_changes_on_import_is_refused(run_cli, make_repo, marker):
    script = EVIL.replace('NAME = "evil"', 'NAME = "evil"\nglobals()["NAME"] = "other"')
    root = make_repo({".pinshift/migrations/evil.py": script, ".pinshift/recipes/evil.toml": recipe("evil"),
                      "pkgs/a.nix": NIX})
    result = run_cli("migrate", "evil", "--dry-run", "--trust-repo", cwd=root)
    assert result.exit_code == 2, result
    assert result.stderr.splitlines()[-1] == (
        f"pinshift: error: {root / '.pinshift/migrations/evil.py'}: NAME is 'other' once imported, but 'evil' when "
        "read by its NAME; write NAME = \"...\" as a plain string")


def test_two_files_defining_one_kind_are_refused_naming_both(run_cli, repo, marker):
    (repo / ".pinshift/migrations/evil_copy.py").write_text(EVIL)
    result = run_cli("show", "evil", "--trust-repo", cwd=repo)
    assert result.exit_code == 2, result
    assert result.stderr.splitlines() == [
        f"pinshift: error: step kind 'evil' is defined by both evil.py and evil_copy.py in "
        f"{repo / '.pinshift/migrations'}; rename one of them (its NAME and its file)"]
    assert not marker.exists()


def test_a_script_claiming_a_bundled_name_is_never_loaded(run_cli, make_repo, marker):
    script = EVIL.replace('NAME = "evil"', 'NAME = "metadata-rev"')
    root = make_repo({".pinshift/migrations/sneaky.py": script, ".pinshift/recipes/bump.toml": recipe("metadata-rev"),
                      "pkgs/a.nix": NIX})
    result = run_cli("migrate", "bump", "--trust-repo", cwd=root)
    assert result.exit_code == 0, result
    assert not marker.exists()
    assert git(root, "show", "metadata-rev-out:pkgs/a.nix") == NIX.replace("echo 1", "echo 2")
    kinds = run_cli("recipes", "--kinds", cwd=root)
    assert kinds.stdout.splitlines()[-1] == ("note: .pinshift/migrations/sneaky.py defines 'metadata-rev', the name "
                                             "of a bundled step kind; it is never loaded (give it a name of its own)")


def test_naming_the_repositorys_own_directory_with_migrations_is_consent(run_cli, repo, marker):
    """docs/writing-steps.md's way of trying a kind: `--migrations .pinshift/migrations`."""
    result = run_cli("apply", "evil", "--dry-run", "--migrations", ".pinshift/migrations", "pkgs", cwd=repo)
    assert result.exit_code == 0, result
    assert result.stderr.splitlines()[0] == (f"pinshift: loading step kind 'evil' from {repo}/.pinshift/migrations/"
                                             "evil.py (trusted: --migrations .pinshift/migrations)")
    assert "EVIL" not in result.stdout and "+{ x = \"omega\";" in result.stdout
    assert (repo / "pkgs" / "a.nix").read_text() == NIX


@pytest.mark.parametrize("args, message", [
    (("trust", "nowhere"), "pinshift trust: error: Invalid value for '[DIRECTORY]': Directory 'nowhere' does not exist"),
    (("trust", "--list", "--remove"), "pinshift: error: --list and --remove exclude each other"),
])
def test_trust_usage_errors(run_cli, repo, marker, args, message):
    result = run_cli(*args, cwd=repo)
    assert result.exit_code == 2 and result.stdout == "", result
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(message)
    assert not config_file(repo).exists()
