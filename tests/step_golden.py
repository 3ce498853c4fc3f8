"""Helpers for the step-kind tests: run a bundled step through the real runner, compare with goldens, ask Nix.

Golden files live in tests/fixtures/steps/<kind>/: `<case>.nix` is the input and
`<case>.expected.nix` the exact bytes the step must produce.
"""

from __future__ import annotations

import difflib
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from pinshift.files.tree import DirectoryTree
from pinshift.planning.plan import StepPlan
from pinshift.planning.runner import plan_step
from pinshift.planning.working_set import WorkingSet
from pinshift.steps.registry import bundled_kinds

STEPS = Path(__file__).parent / "fixtures" / "steps"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def run_step(kind: str, params: Mapping, root: Path, globs: Sequence[str] = ("**/*.nix",)) -> tuple[StepPlan, dict[str, bytes]]:
    """Plan one bundled step over the files under `root`; (plan, changed path -> new bytes). Writes nothing."""
    step_kind = bundled_kinds()[kind]
    files = WorkingSet(DirectoryTree(root))
    plan = plan_step(files, step_kind, step_kind.parse_params(params), globs, raw_params=params)
    return plan, {path: files.read(path) for path in files.changed}


def run_case(kind: str, case: str, params: Mapping, tmp_path: Path) -> tuple[StepPlan, bytes, bytes]:
    """Run `kind` on fixture `<case>.nix` alone; (plan, input bytes, output bytes)."""
    source = STEPS / kind / f"{case}.nix"
    root = tmp_path / case
    root.mkdir()
    shutil.copyfile(source, root / "recipe.nix")
    plan, changed = run_step(kind, params, root)
    data = source.read_bytes()
    return plan, data, changed.get("recipe.nix", data)


def expected(kind: str, case: str) -> bytes:
    return (STEPS / kind / f"{case}.expected.nix").read_bytes()


def canonical_changes(nix_oracle, before: bytes, after: bytes) -> list[tuple[str, str]]:
    """Token changes between the canonical Nix parses of `before` and `after` (both must parse)."""
    ok_before, canon_before = nix_oracle(before)
    ok_after, canon_after = nix_oracle(after)
    assert ok_before, canon_before
    assert ok_after, canon_after
    old, new = _TOKEN.findall(canon_before), _TOKEN.findall(canon_after)
    changes = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op != "equal":
            changes.append((" ".join(old[i1:i2]), " ".join(new[j1:j2])))
    return changes
