"""The `console` examples of README.md and docs/*.md run, on the demo repository, as written.

Every ```` ```console ```` block is a transcript: `$ COMMAND` lines, each followed by what it prints (stdout
and stderr, as a terminal shows both). Each block runs in one bash in a fresh copy of the demo repository
(`pinshift.demo.build.build_demo`: branch `pytorch-2.9`, 66 recipes, nothing migrated yet), with `pinshift`
on PATH and `/tmp/demo` meaning a folder of the test's own. An HTML comment on the line before a block says
how it is checked, with any of these words, comma-separated:

- none: the output is compared word for word, after normalising what changes from run to run (commit ids and
  other hex digests, the temporary folder, seconds); spacing and line breaks are not compared (a column
  re-aligned, a line wrapped to the terminal still match); a line `...` or `…` in the document stands for
  any number of words; every command must succeed (or fail exactly as a following `$ echo $?` shows).
- `illustrative`: the output shown is another repository's (a 201-recipe branch, recipes without a
  `.metadata-rev` marker); the commands run on the demo and must not be a usage or internal error (exit 0
  or 1).
- `continues`: the block runs where the page's previous block left off (same shell, same repository).
- `not run (REASON)`: the block needs what a test cannot have (a nixpkgs clone from the network);
  NOT_RUN caps how many blocks may say so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import require_nix

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:^<!-- example: (?P<mode>[^>]*?) -->\n)?^```console\n(?P<body>.*?)^```$", re.S | re.M)
NOT_RUN = 7  # blocks that may be left unrun, each with its reason in the document
HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,64}(?![0-9A-Za-z])")
SECONDS = re.compile(r"\b\d+(?:\.\d+)? ?s\b")


@dataclass
class Example:
    page: Path
    line: int
    mode: str  # "output", "illustrative" or "not run (…)"
    commands: list[tuple[str, list[str]]]  # (command, the lines the document shows it printing)
    continues: bool = False  # runs in the previous block's shell


def examples(page: Path) -> list[Example]:
    text = page.read_text()
    found = []
    for match in BLOCK.finditer(text):
        commands: list[tuple[str, list[str]]] = []
        for line in match.group("body").splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
        words = [word.strip() for word in (match.group("mode") or "").split(",") if word.strip()]
        continues = "continues" in words
        mode = next((word for word in words if word != "continues"), "output")
        found.append(Example(page, text[:match.start("body")].count("\n"), mode, commands, continues))
    return found


ALL = [example for page in PAGES for example in examples(page)]


def normalised(lines: list[str], folder: Path) -> list[str]:
    out = []
    for line in lines:
        line = line.replace(str(folder), "<dir>").replace("/tmp/demo", "<dir>")
        line = SECONDS.sub("<T> s", HEX.sub("<hex>", line))
        out.append(line.rstrip())
    while out and out[-1] == "":
        out.pop()
    return out


ELIDED = ("...", "…")


def words(lines: list[str]) -> list[str | None]:
    """The words of `lines`, each elision line (`...`, `…`) one None: spacing and wrapping are not compared, so a
    column re-aligned or a long line wrapped to the terminal's width still matches."""
    found: list[str | None] = []
    for line in lines:
        found += [None] if line.strip() in ELIDED else line.split()
    return found


def matches(expected: list[str], actual: list[str]) -> bool:
    """Every word of `expected` in `actual`, in order and nothing between, but where an elision line stands for
    any run of words.

    Examples:
        >>> matches(["a b", "...", "d"], ["a", "b c", "d"]), matches(["a", "...", "d"], ["a", "b"])
        (True, False)
    """
    pieces: list[list[str]] = [[]]
    for word in words(expected):
        if word is None:
            pieces.append([])
        else:
            pieces[-1].append(word)
    got = [word for word in words(actual) if word is not None]
    first, *middle_last = pieces
    if not middle_last:
        return got == first
    *middle, last = middle_last
    if got[:len(first)] != first or (last and got[len(got) - len(last):] != last) or len(first) + len(last) > len(got):
        return False
    at, end = len(first), len(got) - len(last)
    for piece in middle:  # leftmost first: with literal pieces between wildcards that decides the match
        while at + len(piece) <= end and got[at:at + len(piece)] != piece:
            at += 1
        if at + len(piece) > end:
            return False
        at += len(piece)
    return True


def run_page(page_examples: list[Example], folder: Path) -> list[tuple[Example, str, list[str], int, list[str]]]:
    """Run the page's examples, each in a fresh copy of the demo repository unless it continues the one before;
    (example, command, expected, exit code, output) for each command."""
    import shutil

    from pinshift.demo.build import build_demo

    template = build_demo(folder / "template")
    sessions: list[list[Example]] = []
    for example in page_examples:
        if example.mode.startswith("not run"):
            continue
        if example.continues and sessions:
            sessions[-1].append(example)
        else:
            sessions.append([example])
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", PYTHONUNBUFFERED="1",
               COLUMNS="100", NO_COLOR="1", HOME=str(folder), XDG_CACHE_HOME=str(folder / "cache"),
               GIT_AUTHOR_NAME="Demo", GIT_AUTHOR_EMAIL="demo@example.com", GIT_COMMITTER_NAME="Demo",
               GIT_COMMITTER_EMAIL="demo@example.com", GIT_CONFIG_GLOBAL="/dev/null")
    env.pop("PINSHIFT_NIXPKGS", None)
    results = []
    for number, session in enumerate(sessions):
        repo = folder / f"session-{number}"
        shutil.copytree(template, repo, symlinks=True)
        made = folder / f"made-{number}"  # what the page calls /tmp/demo
        script, plan = [f"cd {repo}"], []
        for example in session:
            for command, expected in example.commands:
                script.append(f"__rc=$?; printf '\\n@@@ {len(plan)}\\n'; {{ (exit $__rc); "  # `echo $?` sees the last
                              f"{command.replace('/tmp/demo', str(made))}\n}} 2>&1; "
                              f"__rc=$?; printf '\\n@@@ rc %s\\n' $__rc; (exit $__rc)")
                plan.append((example, command, expected))
        done = subprocess.run(["bash", "--noprofile", "--norc", "-c", "\n".join(script)], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=600)
        for index, (example, command, expected) in enumerate(plan):
            part = done.stdout.split(f"\n@@@ {index}\n", 1)[1].split("\n@@@ rc ", 1)
            code = int(part[1].split("\n", 1)[0])
            output = [line.replace(str(made), "/tmp/demo").replace(str(repo), "<dir>") for line in part[0].split("\n")]
            results.append((example, command, expected, code, output))
    return results


@pytest.mark.parametrize("page", [page for page in PAGES if any(e.page == page for e in ALL)],
                         ids=lambda page: page.relative_to(ROOT).as_posix())
def test_console_examples_run_as_written(page, tmp_path):
    require_nix()
    failures = []
    for example, command, expected, code, output in run_page([e for e in ALL if e.page == page], tmp_path):
        where = f"{page.relative_to(ROOT)}:{example.line}: $ {command}"
        if code not in (0, 1) or (code == 1 and example.mode == "output" and not _shows_failure(example, command)):
            failures.append(f"{where}: exit {code}\n" + "\n".join(output[-15:]))
            continue
        if example.mode == "output" and not matches(normalised(expected, tmp_path), normalised(output, tmp_path)):
            failures.append(f"{where}: printed\n" + "\n".join(normalised(output, tmp_path)) +
                            "\n--- the document shows\n" + "\n".join(normalised(expected, tmp_path)))
    assert not failures, "\n\n".join(failures)


def _shows_failure(example: Example, command: str) -> bool:
    """The document shows the command failing: the next command is `echo $?` printing 1."""
    commands = [c for c, _ in example.commands]
    at = commands.index(command) if command in commands else -1
    return 0 <= at < len(commands) - 1 and commands[at + 1] == "echo $?" and example.commands[at + 1][1] == ["1"]


def test_every_block_says_how_it_is_checked_and_few_are_left_unrun():
    assert len(ALL) >= 10
    modes = {e.mode for e in ALL}
    assert all(mode in ("output", "illustrative") or re.fullmatch(r"not run \(.+\)", mode) for mode in modes), modes
    unrun = [f"{e.page.relative_to(ROOT)}:{e.line}" for e in ALL if e.mode.startswith("not run")]
    assert len(unrun) <= NOT_RUN, unrun
    assert all(e.commands for e in ALL), "a console block without a `$ ` command"


def test_the_matcher_can_fail(tmp_path):
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and not matches(["a", "...", "d"], ["a", "b"])
    assert normalised(["commit 3ab8b5a in 0.4 s", f"{tmp_path}/x"], tmp_path) == ["commit <hex> in <T> s", "<dir>/x"]
    assert not matches(normalised(["66 files"], tmp_path), normalised(["67 files"], tmp_path))
