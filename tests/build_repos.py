"""Helpers for the tests of what recipes build (pinshift diff, migrate's check): fixture trees and real repositories.

The fixtures (tests/fixtures/builds/) are small trees of the shapes the seeds show, each hand-written: `overlay`
(an overlay file overriding python3Packages with a torch 2.10.0 source, `config.cudaCapabilities`, a cudaPackages
overlay), `companions` (torchvision and torchaudio importing their PyTorch recipe), `flox` (Flox function
arguments, a companion through callPackage), `vllm` (`python313.override { packageOverrides … }`) and `nested`
(a torchvision recipe with its PyTorch built inline: the set-binding `where = "every"` trap).
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import FIXTURES, git

BUILDS = FIXTURES / "builds"
PKGS = ".flox/pkgs"


def fixture_files(*names: str) -> dict[str, bytes]:
    """Path -> bytes of the fixture trees `names`, merged (each keeps its own paths)."""
    files: dict[str, bytes] = {}
    for name in names:
        base = BUILDS / name
        for directory, _, filenames in os.walk(base):
            for filename in filenames:
                path = Path(directory) / filename
                files[path.relative_to(base).as_posix()] = path.read_bytes()
    return files


def commit(root: Path, files: dict[str, bytes | str | None], message: str, branch: str | None = None) -> str:
    """Write `files` (None: remove the path) into the checkout of `root`, commit them (on `branch`, created from the
    current commit when given), return the commit id."""
    if branch is not None:
        git(root, "checkout", "-q", "-B", branch)
    for path, data in files.items():
        target = root / path
        if data is None:
            git(root, "rm", "-q", path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode() if isinstance(data, str) else data)
        git(root, "add", path)
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()
