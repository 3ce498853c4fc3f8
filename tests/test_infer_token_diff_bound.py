"""`pinshift infer`'s token diff is linear in the size of a block of changed lines (200 consecutive changed
lines took 27 s: difflib on every token of the block, the LCS of the whole block in the proof). Work is
counted (`token_hunks.WORK`, the cells each quadratic comparison may touch), not timed.
"""

from __future__ import annotations

import tomllib

import pytest
from conftest import git

from pinshift.infer import token_hunks
from pinshift.infer.token_hunks import hunks, overreach

LINE = ('  pkg{i} = pinned.callPackage ./pkgs/p{i}.nix '
        '{{ version = "1.{i}"; src = "https://example.org/v1/p{i}.tar.gz"; }};\n')


def block(n: int, version: str = "1", site: str = "v1") -> bytes:
    lines = "".join(LINE.format(i=i).replace('"1.', f'"{version}.').replace("/v1/", f"/{site}/") for i in range(n))
    return ("let\n  pinned = import <nixpkgs> { };\nin {\n" + lines + "}\n").encode()


def work(run) -> int:
    token_hunks.WORK.clear()
    run()
    return sum(token_hunks.WORK.values())


def grows_linearly(counts: list[int]) -> bool:
    return all(0 < small and large <= 2.5 * small for small, large in zip(counts, counts[1:]))


@pytest.mark.parametrize("shape", [
    "same lines",      # every line changed, as many lines on both sides
    "a line more",     # and TARGET has one line more in the block: the line diff must still be bounded
    "one long line",   # the whole block on one line
])
def test_the_diff_of_a_block_of_changed_lines_is_linear(shape):
    def pair(n):
        old, new = block(n), block(n, version="2", site="v2")
        if shape == "a line more":
            new = new.replace(b"in {\n", b"in {\n  extra = 1;\n")
        if shape == "one long line":
            old, new = old.replace(b";\n  pkg", b"; pkg"), new.replace(b";\n  pkg", b"; pkg")
        return old, new

    counts = [work(lambda: hunks(*pair(n))) for n in (200, 400, 800)]
    assert grows_linearly(counts), counts
    old, new = pair(200)
    found = hunks(old, new)
    assert found, "a changed block has hunks"
    rebuilt, at = [], 0
    for h in found:  # the hunks still say exactly how to turn old into new
        rebuilt.append(old[at:h.start] + h.new)
        at = h.end
    assert b"".join(rebuilt) + old[at:] == new


def test_the_proof_of_a_step_over_a_block_of_changed_lines_is_linear():
    counts = []
    for n in (200, 400, 800):
        before, target = block(n), block(n, version="2", site="v2")
        counts.append(work(lambda: overreach(before, block(n, site="v2"), target)))
        assert overreach(before, block(n, site="v2"), target) == []  # half of TARGET's change: on the way
        assert overreach(before, block(n, site="v3"), target)  # not TARGET's change: refused
    assert grows_linearly(counts), counts


def test_a_small_block_is_diffed_token_by_token_as_before():
    """Below the caps nothing changes: the tokens of the whole block, not line against line."""
    old = b"a = 1;\nb = 2;\n"
    new = b"a = 3;\nb = 2;\nc = 4;\n"
    assert [(h.old, h.new) for h in hunks(old, new)] == [(b"1", b"3"), (b"", b"c = 4;\n")]
    assert [(h.old, h.new) for h in hunks(b"x y z w\n", b"x z y w\n")] == [(b"", b" z"), (b"z ", b"")]


def test_infer_on_a_file_of_800_changed_lines_finds_the_step(make_repo, run_cli):
    root = make_repo({"default.nix": block(800)}, branch="base")
    git(root, "switch", "-q", "-c", "target")
    (root / "default.nix").write_bytes(block(800, site="v2"))
    git(root, "commit", "-q", "-am", "by hand: v2")
    git(root, "switch", "-q", "base")
    token_hunks.WORK.clear()
    result = run_cli("infer", "base", "target", "--repo", str(root))
    assert result.exit_code == 0, result
    [step] = tomllib.loads(result.stdout)["steps"]
    assert (step["kind"], step["params"]) == ("replace-in-strings", {"paths": ["src"], "old": "v1", "new": "v2"})
    assert "proof: 1 of 1 changed file reproduced byte for byte" in result.stderr
    assert 0 < sum(token_hunks.WORK.values()) < 200 * 800 * 1000  # bounded, far below one whole-block LCS


def test_a_block_too_big_to_check_is_checked_line_by_line_or_refused():
    """Above the LCS cap the proof compares line against line; when TARGET's block has another number of
    lines it cannot, and the step is refused (an overreach), never checked for minutes."""
    before, half, target = block(200), block(200, site="v2"), block(200, version="2", site="v2")
    assert token_hunks.LCS_CELLS < (len(before) // 2) ** 2  # the whole block's tokens are over the cap
    token_hunks.WORK.clear()
    longer = target.replace(b"in {\n", b"in {\n  extra = 1;\n")
    [refused] = overreach(before, half, longer)
    assert (refused.start, refused.end) == (before.index(b"  pkg0"), before.rindex(b"}\n"))  # the whole block
    assert token_hunks.WORK["lcs"] == 0
    assert overreach(before, half, target) == []  # as many lines: line against line, on the way
