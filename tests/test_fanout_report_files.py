"""What a fan-out writes and prints about its branches (issue 29 items 7 and 9).

`--output DIR/` writes one report per branch and an index: no two branches share a file (`rel/oneex` and
`rel_oneex` used to be one `rel_oneex.md`, a branch `index` overwrote `index.md`), also on a disk that
ignores case, and the count printed is the files written. A branch name with control characters (U+202E
reorders what a reviewer reads) reaches the terminal only as an escape.
"""

from __future__ import annotations

import re

from conftest import git
from fanout_repo import pinshift, repo  # noqa: F401

LINK = re.compile(r"\[`([^`]+)`\]\(([^)]+)\)")


def test_every_branch_gets_a_report_file_of_its_own(repo, tmp_path):
    for base in ("ind", "rel/one", "rel_one", "Rel_one"):
        git(repo, "branch", base, "pytorch-2.9")
    out = tmp_path / "reports"
    done = pinshift(repo, "migrate", "../recipe.toml", "--from", "ind", "--from", "rel/one", "--from", "rel_one",
                    "--from", "Rel_one", "--branch", "{base}ex", "--dry-run", "--format", "markdown",
                    "--output", f"{out}/")
    assert done.returncode == 0, done
    names = sorted(p.name for p in out.iterdir())
    assert len(names) == 5 and len({n.lower() for n in names}) == 5, names
    assert done.stderr.strip().splitlines()[-1] == f"pinshift: 4 branch reports and index.md written to {out}"
    index = (out / "index.md").read_text()
    assert index.startswith("## pinshift fan-out")
    links = dict(LINK.findall(index))
    assert sorted(links) == ["Rel_oneex", "index", "rel/oneex", "rel_oneex"]
    assert len(set(links.values())) == 4 and "index.md" not in links.values()
    for target, name in links.items():
        assert f"`{target}`" in (out / name).read_text(), (target, name)


def test_a_branch_name_with_control_characters_is_never_printed_raw(repo, tmp_path):
    odd = "pytorch-2.9-\u202egpj.exe"
    git(repo, "branch", odd, "pytorch-2.9")
    for extra in ((), ("--format", "text"), ("--format", "markdown", "--output", f"{tmp_path}/out/")):
        done = pinshift(repo, "migrate", "../recipe.toml", "--from", "pytorch-2.9-*", "--dry-run", *extra)
        assert done.returncode == 1, done  # pytorch-2.9-broken would fail
        assert "\u202e" not in done.stdout + done.stderr
        assert "pytorch-2.9-\\u202egpj.exe" in done.stderr.splitlines()[0]
        assert "pytorch-2.9-\\u202egpj.exe → pytorch-2.9-\\u202egpj.exe-pin0182a36" in done.stdout + done.stderr
    done = pinshift(repo, "migrate", "../recipe.toml", "--from", "pytorch-2.9-*", "--from", "no\nsuch", "--dry-run")
    assert "no\\nsuch" in done.stderr.splitlines()[0] and "no\\nsuch → " in done.stdout
