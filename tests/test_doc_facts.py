"""Doc steps write facts, not typed values (issue 40, second bullet).

The bundled recipe typed `PyTorch = "2.10.0"` into the README of a branch pinned to nixpkgs 0182a36, which
ships 2.9.1. A README cell may now say `{facts.version}` (pin, revision, python, cuda, gpus, variants,
package): what the branch's recipes say after the steps, read as `pinshift status` reads them, and with
`--nixpkgs DIR` the version at the pin in the clone. A typed value the facts contradict refuses the branch
(exit 1, one line: the value, the fact, where it came from; no branch, checkout untouched); one no fact can
check is named `unchecked` in the summary and in the text, JSON and Markdown reports.

Real demo repositories, the real CLI, the real nix-instantiate (build check), a real git clone of a small
nixpkgs-shaped repository (tests/fixtures/checks/stub-nixpkgs: torch 2.9.1, then 2.10.0).
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import git
from migrate_repo import assert_one_line_error, snapshot
from status_repos import stub_nixpkgs  # noqa: F401

from pinshift.demo.build import build_demo
from pinshift.demo.matrix import OLD_REV

NEW_REV = "0182a361324364ae3f436a63005877674cf45efb"


def recipe(tmp_path, columns: str, new: str = NEW_REV, revision: str = "{facts.revision}") -> str:
    """pin-swap onto `new`, python313Packages, and a README step with `columns` (TOML lines)."""
    path = tmp_path / "facts.toml"
    path.write_text(f'''
name = "facts"
base = "pytorch-2.9"
target = "pytorch-facts"

[[steps]]
kind = "pin-swap"
title = "Pin nixpkgs"
[steps.params]
old = "{OLD_REV[:7]}"
new = "{new}"

[[steps]]
kind = "rename-attr"
title = "Use python313Packages"
[steps.params]
from = "python3Packages"
to = "python313Packages"
base = "nixpkgs_pinned"

[[steps]]
kind = "readme-branch-table"
title = "README row"
message = "README: PyTorch {{facts.version}} on {{facts.pin}}"
files = ["README.md"]
[steps.params]
base = "{{base}}"
target = "{{target}}"
revision = "{revision}"
[steps.params.columns]
{columns}
''')
    return str(path)


@pytest.fixture
def demo(tmp_path):
    return build_demo(tmp_path / "demo")


def readme_row(root, branch: str, marker: str) -> list[str]:
    text = git(root, "show", f"{branch}:README.md")
    return [line for line in text.splitlines() if marker in line]


def test_the_bundled_recipe_writes_facts_and_claims_no_version(demo, run_cli):
    """Without a clone nothing states the PyTorch version: the cell says `?` and the summary says unchecked."""
    result = run_cli("migrate", "pytorch-2.10-cuda12_9", "--repo", str(demo))
    assert result.exit_code == 0, result
    rows = readme_row(demo, "pytorch-2.10-cuda12_9", "**`pytorch-2.10-cuda12_9`** ⬅️")
    assert rows == [
        "| **`pytorch-2.10-cuda12_9`** ⬅️ | ? | 12.9 | 3.13 | 66 | Full coverage + SM75/SM103 + AVX-only + Darwin MPS |",
        "| **`pytorch-2.10-cuda12_9`** ⬅️ | ? | 12.9 | 9.13.0 | 3.13 | 560+ | "
        f"[`0182a36`](https://github.com/NixOS/nixpkgs/tree/{NEW_REV}) |",
    ]
    assert "2.10.0" not in git(demo, "show", "pytorch-2.10-cuda12_9:README.md")
    assert "note: step 4: facts: {facts.revision} " + NEW_REV + ", {facts.cuda} 12.9, {facts.python} 3.13, " \
           "{facts.variants} 66, {facts.pin} 0182a36" in result.stdout
    assert 'note: step 4: unchecked: {facts.version} is not known, written "?" (66 recipes of pytorch state no ' \
           "version: --nixpkgs DIR reads it from each pin)" in result.stdout
    assert 'note: step 4: unchecked: columns.Min Driver = "560+" (no fact of the recipes states it)' in result.stdout
    message = git(demo, "log", "-1", "--format=%B", "pytorch-2.10-cuda12_9")
    assert "PyTorch ?, CUDA 12.9, Python 3.13, 66 variants" in message and "{facts." not in message


def test_the_demo_command_writes_facts(tmp_path, run_cli):
    result = run_cli("demo", "--dir", str(tmp_path / "d"))
    assert result.exit_code == 0, result
    assert 'unchecked: {facts.version} is not known, written "?"' in result.stdout
    assert "| **`pytorch-2.10-cuda12_9`** ⬅️ | ? | 12.9 | 3.13 | 66 |" in git(tmp_path / "d", "show",
                                                                              "pytorch-2.10-cuda12_9:README.md")


@pytest.mark.parametrize("column, fact, said", [
    ('Python = "3.12"', "python", "3.13"),
    ('"Nixpkgs Pin" = "6a030d5"', "revision", NEW_REV),
    ('Variants = "67"', "variants", "66"),
    ('CUDA = "13.0"', "cuda", "12.9"),
])
def test_a_typed_value_the_facts_contradict_makes_no_branch(demo, tmp_path, run_cli, column, fact, said):
    before = snapshot(demo)
    result = run_cli("migrate", recipe(tmp_path, column), "--repo", str(demo))
    key, _, value = column.partition(" = ")
    assert_one_line_error(result, 1, f"pytorch-2.9 (", f"step 3/3 readme-branch-table: columns.{key.strip(chr(34))} = "
                          f"{value}, but the branch's recipes say {fact} {said} (",
                          f'write "{{facts.{fact}}}" to take the fact, or correct the value; no branch made')
    assert snapshot(demo) == before  # no branch, no commit, checkout and refs untouched
    dry = run_cli("migrate", recipe(tmp_path, column), "--repo", str(demo), "--dry-run")
    assert dry.exit_code == 1 and snapshot(demo) == before


def test_a_typed_revision_the_facts_contradict_makes_no_branch(demo, tmp_path, run_cli):
    before = snapshot(demo)
    result = run_cli("migrate", recipe(tmp_path, 'Python = "{facts.python}"', revision=OLD_REV), "--repo", str(demo))
    assert_one_line_error(result, 1, f'revision = "{OLD_REV}", but the branch\'s recipes say revision {NEW_REV}',
                          "no branch made")
    assert snapshot(demo) == before


def test_typed_values_the_facts_confirm_are_written(demo, tmp_path, run_cli):
    columns = 'Python = "3.13"\nCUDA = "12.9"\nVariants = "66"\n"Nixpkgs Pin" = "0182a36"'
    result = run_cli("migrate", recipe(tmp_path, columns, revision=NEW_REV), "--repo", str(demo))
    assert result.exit_code == 0, result
    assert "unchecked: columns.Python" not in result.stdout and "unchecked: revision" not in result.stdout
    assert readme_row(demo, "pytorch-facts", "**`pytorch-facts`** ⬅️")[0].startswith(
        "| **`pytorch-facts`** ⬅️ | 2.9.1 | 12.9 | 3.13 | 66 |")  # PyTorch: not overridden, copied from the base row


def test_an_uncheckable_typed_value_is_reported_unchecked(demo, tmp_path, run_cli):
    """Without a clone nothing states torch's version: a typed 2.10.0 is written, and named in every report."""
    path = recipe(tmp_path, 'PyTorch = "2.10.0"')
    text = run_cli("migrate", path, "--repo", str(demo), "--dry-run")
    assert text.exit_code == 0, text
    assert 'unchecked: columns.PyTorch = "2.10.0" (66 recipes of pytorch state no version: --nixpkgs DIR reads it ' \
           "from each pin)" in text.stdout
    report = json.loads(run_cli("migrate", path, "--repo", str(demo), "--dry-run", "--format", "json").stdout)
    notes = report["steps"][2]["notes"]
    assert any(n.startswith('unchecked: columns.PyTorch = "2.10.0"') for n in notes), notes
    markdown = run_cli("migrate", path, "--repo", str(demo), "--dry-run", "--format", "markdown").stdout
    assert "unchecked: columns.PyTorch = " in markdown
    done = run_cli("migrate", path, "--repo", str(demo))
    assert done.exit_code == 0, done
    assert 'note: step 3: unchecked: columns.PyTorch = "2.10.0"' in done.stdout
    assert "| **`pytorch-facts`** ⬅️ | 2.10.0 |" in git(demo, "show", "pytorch-facts:README.md")


def test_a_clone_gives_the_real_version_and_refuses_a_typed_one(demo, tmp_path, run_cli, stub_nixpkgs):
    """The branch pins the clone's first commit, where torch is 2.9.1: `{facts.version}` writes it, a typed
    2.10.0 is refused naming the clone; the second commit (torch 2.10.0) confirms a typed 2.10.0."""
    clone, first, second = stub_nixpkgs
    before = snapshot(demo)
    typed = recipe(tmp_path, 'PyTorch = "2.10.0"', new=first)
    refused = run_cli("migrate", typed, "--repo", str(demo), "--nixpkgs", str(clone))
    assert_one_line_error(refused, 1, 'columns.PyTorch = "2.10.0", but the branch\'s recipes say version 2.9.1 (2.9.1: '
                          f"torch at nixpkgs {first[:7]} in the --nixpkgs clone {clone})", "no branch made")
    assert snapshot(demo) == before
    facts = recipe(tmp_path, 'PyTorch = "{facts.version}"', new=first)
    made = run_cli("migrate", facts, "--repo", str(demo), "--nixpkgs", str(clone))
    assert made.exit_code == 0, made
    assert "| **`pytorch-facts`** ⬅️ | 2.9.1 |" in git(demo, "show", "pytorch-facts:README.md")
    assert git(demo, "log", "-1", "--format=%s", "pytorch-facts").strip() == f"README: PyTorch 2.9.1 on {first[:7]}"
    confirmed = run_cli("migrate", recipe(tmp_path, 'PyTorch = "2.10.0"', new=second), "--repo", str(demo),
                        "--nixpkgs", str(clone), "--branch", "pytorch-second")
    assert confirmed.exit_code == 0, confirmed
    assert "unchecked: columns.PyTorch" not in confirmed.stdout


def test_a_version_the_recipes_state_is_the_fact(demo, tmp_path, run_cli):
    """Recipes that override torch's version state it (`version = "2.10.0";` beside their pname, as the
    pytorch-2.10 branch's source override does): no clone needed, and a typed 2.9.1 is refused."""
    git(demo, "switch", "-q", "pytorch-2.9")
    for path in (demo / ".flox" / "pkgs").glob("*.nix"):
        path.write_text(re.sub(r'(\n([ \t]*)pname = "[^"]*";)', r'\1\n\2version = "2.10.0";', path.read_text(), count=1))
    git(demo, "commit", "-qam", "override torch 2.10.0")
    result = run_cli("migrate", recipe(tmp_path, 'PyTorch = "{facts.version}"'), "--repo", str(demo))
    assert result.exit_code == 0, result
    assert re.search(r"facts: .*\{facts\.version\} 2\.10\.0", result.stdout), result.stdout
    assert "| **`pytorch-facts`** ⬅️ | 2.10.0 |" in git(demo, "show", "pytorch-facts:README.md")
    refused = run_cli("migrate", recipe(tmp_path, 'PyTorch = "2.9.1"'), "--repo", str(demo), "--branch", "other")
    assert_one_line_error(refused, 1, 'columns.PyTorch = "2.9.1", but the branch\'s recipes say version 2.10.0 '
                          "(2.10.0: stated by 66 recipes (", "no branch made")


@pytest.mark.parametrize("text, message", [
    ('PyTorch = "{facts.pytorch}"', "unknown placeholder {facts.pytorch} (known facts: {facts.pin}, "),
    ('PyTorch = "{facts.}"', None),
])
def test_an_unknown_fact_is_a_recipe_error(demo, tmp_path, run_cli, text, message):
    before = snapshot(demo)
    result = run_cli("migrate", recipe(tmp_path, text), "--repo", str(demo))
    if message is None:  # not a placeholder: text, written as it is
        assert result.exit_code == 0, result
        return
    assert_one_line_error(result, 2, "step 3 (readme-branch-table): 'columns': " + message)
    assert snapshot(demo) == before


def test_a_fact_that_does_not_fit_a_parameter_stops_the_run(demo, tmp_path, run_cli):
    """`revision` must be a revision: with the recipes on two pins (pin-swap on the CPU recipes only) no one
    revision is the fact, and its `?` is refused."""
    path = recipe(tmp_path, 'Python = "{facts.python}"')
    text = open(path).read().replace('title = "Pin nixpkgs"\n', 'title = "Pin nixpkgs"\nfiles = [".flox/pkgs/*-cpu-*.nix"]\n')
    open(path, "w").write(text)
    before = snapshot(demo)
    result = run_cli("migrate", path, "--repo", str(demo))
    assert_one_line_error(result, 1, "step 3/3 readme-branch-table: the facts do not fit its parameters",
                          "{facts.revision} is not known: the recipes pin 2 revisions: ", "no branch made")
    assert snapshot(demo) == before


def test_a_doc_step_with_no_file_needs_no_fact(demo, tmp_path, run_cli):
    """The same unknown revision and a contradicted typed value, but the branch has no README: the step would
    write nowhere, so the branch is made with the other steps, and the report says what went unchecked."""
    path = recipe(tmp_path, 'CUDA = "13.0"')
    text = open(path).read().replace('title = "Pin nixpkgs"\n', 'title = "Pin nixpkgs"\nfiles = [".flox/pkgs/*-cpu-*.nix"]\n')
    open(path, "w").write(text)
    git(demo, "rm", "-q", "README.md")
    git(demo, "commit", "-qm", "no README")
    result = run_cli("migrate", path, "--repo", str(demo))
    assert result.exit_code == 0, result.output
    assert "no file matches the step" in result.output
    assert "{facts.revision} is not known: the recipes pin 2 revisions" in result.output
    assert "columns.CUDA = \"13.0\", but the branch's recipes say cuda 12.9" in result.output
    log = git(demo, "log", "--format=%s", "pytorch-facts").splitlines()
    assert log[:2] == ["Use python313Packages", "Pin nixpkgs"]  # two commits, none for the README step
    assert "README.md" not in git(demo, "ls-tree", "--name-only", "pytorch-facts")


def test_show_prints_facts_as_written(run_cli):
    shown = run_cli("show", "pytorch-2.10-cuda12_9")
    assert shown.exit_code == 0, shown
    assert re.search(r'^  revision +=  ?"\{facts\.revision\}"$', shown.stdout, re.M), shown.stdout
    assert 'PyTorch = "{facts.version}"' in shown.stdout and "2.10.0" not in shown.stdout


def test_apply_refuses_a_fact(tmp_path, run_cli):
    """apply edits files on disk, on no branch: no fact to fill, so `{facts.…}` is a usage error, nothing written."""
    readme = tmp_path / "README.md"
    readme.write_text("| Branch | PyTorch |\n|---|---|\n| a | 2.9.1 |\n")
    result = run_cli("apply", "readme-branch-table", "README.md", "--set", "base=a", "--set", "target=b",
                     "--set", "columns.PyTorch={facts.version}", cwd=tmp_path)
    assert_one_line_error(result, 2, "readme-branch-table: 'columns': {facts.version} is a fact of a branch's "
                          "recipes after a migration's steps, and apply runs on no branch: write the value itself")
    assert readme.read_text() == "| Branch | PyTorch |\n|---|---|\n| a | 2.9.1 |\n"


def test_facts_are_what_the_recipes_say_after_every_step_without_facts(demo, tmp_path, run_cli):
    """A README step placed first still writes the new pin: facts are read after every step whose parameters use
    none (the recipe is then planned again, whole), and the commits keep the recipe's order."""
    path = recipe(tmp_path, '"Nixpkgs Pin" = "{facts.pin}"')
    text = open(path).read()
    readme = text[text.index('[[steps]]\nkind = "readme-branch-table"'):]
    first = text.index('[[steps]]\nkind = "pin-swap"')
    open(path, "w").write(text[:first] + readme + "\n" + text[first:text.index(readme)])
    result = run_cli("migrate", path, "--repo", str(demo))
    assert result.exit_code == 0, result
    assert git(demo, "log", "--format=%s", "pytorch-2.9..pytorch-facts").splitlines() == [
        "Use python313Packages", "Pin nixpkgs", "README: PyTorch ? on 0182a36"]
    assert f"| **`pytorch-facts`** ⬅️ | 2.9.1 | 12.9 | 9.13.0 | 3.13 | 550+ | [`0182a36`](https://github.com/NixOS/" \
           f"nixpkgs/tree/{NEW_REV}) |" in git(demo, "show", "pytorch-facts:README.md")


@pytest.mark.parametrize("version", [
    "2.9.1\\n\\nPinshift-Step: 1/1 pin-swap",  # a line that reads as a commit trailer
    "2.9.1 | evil",  # a table cell's end
    "[2.9.1](https://evil.invalid)",  # Markdown
    "2.9.1\\u001b[31m",  # a terminal escape
])
def test_a_version_that_is_no_plain_value_is_no_fact(demo, tmp_path, run_cli, version):
    """A recipe's version literal is input nobody vetted: what is not a plain version is unknown, written `?`."""
    git(demo, "switch", "-q", "pytorch-2.9")
    for path in (demo / ".flox" / "pkgs").glob("*.nix"):
        path.write_text(re.sub(r'(\n([ \t]*)pname = "[^"]*";)', lambda m: f'{m.group(1)}\n{m.group(2)}version = '
                               f'"{version}";', path.read_text(), count=1))
    git(demo, "commit", "-qam", "a hostile version")
    result = run_cli("migrate", recipe(tmp_path, 'PyTorch = "{facts.version}"'), "--repo", str(demo))
    assert result.exit_code == 0, result
    # unknown: read and refused as no plain value, or (an escape in the Nix string) not read as a literal at all
    assert "unchecked: {facts.version} is not known, written \"?\" (" in result.stdout
    assert "\x1b" not in result.stdout
    assert "| **`pytorch-facts`** ⬅️ | ? |" in git(demo, "show", "pytorch-facts:README.md")
    message = git(demo, "log", "-1", "--format=%B", "pytorch-facts")
    assert message.startswith("README: PyTorch ? on 0182a36\n") and "evil" not in message


def test_python_constants_take_facts_and_typed_versions_are_checked(demo, tmp_path, run_cli, stub_nixpkgs):
    """python-constant: `{facts.version}` is written into a smoke test; a typed `torch.__version__` the clone
    contradicts makes no branch; a typed constant is named unchecked."""
    clone, first, _ = stub_nixpkgs
    git(demo, "switch", "-q", "pytorch-2.9")
    (demo / "tests").mkdir()
    (demo / "tests" / "smoke.py").write_text('EXPECTED = "2.9.0"\nassert torch.__version__ == "2.9.0"\n')
    git(demo, "add", "-A")
    git(demo, "commit", "-qm", "smoke test")

    def with_constants(constants: str, asserted: str) -> str:
        path = recipe(tmp_path, 'Python = "{facts.python}"', new=first)
        with open(path, "a") as out:
            out.write(f'\n[[steps]]\nkind = "python-constant"\ntitle = "Smoke test"\nfiles = ["tests/*.py"]\n'
                      f'[steps.params.constants]\nEXPECTED = "{constants}"\n'
                      f'[steps.params.asserts]\n"torch.__version__" = "{asserted}"\n')
        return path

    before = snapshot(demo)
    refused = run_cli("migrate", with_constants("2.10.0", "2.10.0"), "--repo", str(demo), "--nixpkgs", str(clone))
    assert_one_line_error(refused, 1, 'step 4/4 python-constant: asserts.torch.__version__ = "2.10.0", but the '
                          "branch's recipes say version 2.9.1", "no branch made")
    assert snapshot(demo) == before
    made = run_cli("migrate", with_constants("2.10.0", "{facts.version}"), "--repo", str(demo), "--nixpkgs", str(clone))
    assert made.exit_code == 0, made
    assert 'note: step 4: unchecked: constants.EXPECTED = "2.10.0" (no fact of the recipes states it)' in made.stdout
    assert git(demo, "show", "pytorch-facts:tests/smoke.py") == \
        'EXPECTED = "2.10.0"\nassert torch.__version__ == "2.9.1"\n'
