"""Speculative surveys: pin-swap guesses its resolution from a few files and checks it against all.

The reference is the full survey (forced by sampling no files at all): whatever
the later files reveal, the speculative run must give the same plan or the same error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pinshift.planning import survey
from pinshift.demo.matrix import NEW_REV, OLD_REV
from pinshift.errors import ParamError
from pinshift.files.tree import DirectoryTree
from pinshift.planning.jobs import RunOptions
from pinshift.planning.runner import plan_step
from pinshift.planning.working_set import WorkingSet
from pinshift.steps.registry import bundled_kinds

SWAP = {"old": "6a030d5", "new": NEW_REV}
MANY = survey.SAMPLE_FILES + 8  # the sample sees only the first files


def _fetch(rev: str) -> str:
    return f'import (builtins.fetchTarball {{\n  url = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz";\n}}) {{ }}\n'


def _bare(rev: str) -> str:
    return f'import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz") {{ }}\n'


def _tree(root: Path, texts: list[str]) -> Path:
    for number, text in enumerate(texts):
        (root / f"r{number:03}.nix").write_text(text)
    return root


def _plan(root: Path, params=SWAP, jobs: int = 1):
    """(plan, changed bytes, passes over the files) for one pin-swap step."""
    kind = bundled_kinds()["pin-swap"]
    passes: list[int] = []

    def progress(done: int, total: int) -> None:
        if done == total:
            passes.append(total)

    files = WorkingSet(DirectoryTree(root))
    plan = plan_step(files, kind, kind.parse_params(params), ["**/*.nix"], raw_params=params,
                     options=RunOptions(progress=progress, jobs=jobs))
    return plan, {path: files.read(path) for path in files.changed}, len(passes)


def _reference(root: Path, monkeypatch, params=SWAP):
    with monkeypatch.context() as patch:
        patch.setattr(survey, "SAMPLE_FILES", 0)  # no sample, no guess: the full survey runs first
        return _plan(root, params)


def test_a_right_guess_plans_in_one_pass_and_matches_the_full_survey(tmp_path, monkeypatch):
    root = _tree(tmp_path, [_fetch(OLD_REV)] * MANY)
    plan, changed, passes = _plan(root)
    reference, reference_changed, _ = _reference(root, monkeypatch)
    assert passes == 1
    assert changed == reference_changed and len(changed) == MANY
    assert plan == reference


def test_a_fuller_revision_after_the_sample_reruns_with_it(tmp_path, monkeypatch):
    params = dict(SWAP, **{"include-strings": True})
    texts = [_bare("6a030d5") + f'# note\n"see {OLD_REV}"\n'] * MANY + [_fetch(OLD_REV)]
    root = _tree(tmp_path, texts)
    plan, changed, passes = _plan(root, params)
    reference, reference_changed, _ = _reference(root, monkeypatch, params)
    assert passes == 2
    assert changed == reference_changed
    assert plan == reference
    assert f"see {NEW_REV}" in changed["r000.nix"].decode()  # resolved to the full revision, found only late


def test_an_ambiguity_after_the_sample_is_the_full_surveys_error(tmp_path, monkeypatch):
    other = "6a030d5" + "b" * 33
    root = _tree(tmp_path, [_fetch(OLD_REV)] * MANY + [_fetch(other)])
    with pytest.raises(ParamError) as speculative:
        _plan(root)
    with pytest.raises(ParamError) as reference:
        _reference(root, monkeypatch)
    assert str(speculative.value) == str(reference.value)
    assert "ambiguous" in str(speculative.value) and other in str(speculative.value)


def test_files_already_swapped_in_the_sample_do_not_hide_later_old_pins(tmp_path, monkeypatch):
    root = _tree(tmp_path, [_fetch(NEW_REV)] * MANY + [_fetch(OLD_REV)] * 3)
    plan, changed, passes = _plan(root)
    reference, reference_changed, _ = _reference(root, monkeypatch)
    assert sorted(changed) == [f"r{n:03}.nix" for n in range(MANY, MANY + 3)]
    assert changed == reference_changed and plan == reference


def test_parallel_speculation_matches_serial(tmp_path):
    texts = [_bare("6a030d5")] * MANY + [_fetch(OLD_REV)] * 3
    root = _tree(tmp_path, texts)
    serial = _plan(root, jobs=1)
    parallel = _plan(root, jobs=2)
    assert serial[0] == parallel[0] and serial[1] == parallel[1]
