"""Nix is the oracle: `pinshift parse` accepts a fixture exactly when `nix-instantiate --parse` does.

Every file under tests/fixtures/syntax/ is checked twice: against Nix (the directory it
sits in must match Nix's verdict, so a fixture cannot silently drift) and against
`pinshift parse` through the real CLI. Skipped with a reason when Nix is absent;
failing under CI=true (conftest.require_nix).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES

SYNTAX = FIXTURES / "syntax"
VALID = sorted((SYNTAX / "valid").glob("*.nix"))
INVALID = sorted((SYNTAX / "invalid").glob("*.nix"))
ALL = VALID + INVALID


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_fixture_set_is_large_enough():
    assert len(ALL) >= 40
    assert len(INVALID) >= 10


@pytest.mark.nix
@pytest.mark.parametrize("path", ALL, ids=_id)
def test_pinshift_agrees_with_nix(path, nix_oracle, run_cli):
    nix_accepts, nix_says = nix_oracle(path.read_bytes())
    assert nix_accepts == (path.parent.name == "valid"), f"fixture in the wrong directory; Nix says: {nix_says}"
    result = run_cli("parse", "--quiet", str(path))
    assert result.exit_code == (0 if nix_accepts else 1), result
    if not nix_accepts:
        assert f"{path}:" in result.stdout or f"{path.name}:" in result.stdout
    assert "Traceback" not in result.output


@pytest.mark.nix
def test_comma_after_ellipsis_follows_nix_not_the_issue_text(nix_oracle, run_cli, tmp_path):
    """The issue lists `args@{ a, ..., }:` as valid; Nix 2.8 rejects it, and the oracle wins."""
    source = b"args@{ a, ..., }:\nargs\n"
    accepted, message = nix_oracle(source)
    assert not accepted and "','" in message
    target = tmp_path / "ellipsis.nix"
    target.write_bytes(source)
    result = run_cli("parse", "--quiet", str(target))
    assert result.exit_code == 1
    assert ":1:14: syntax error" in result.stdout


@pytest.mark.nix
@pytest.mark.parametrize(
    "source",
    [b"{ a, b, }: a", b"args@{ a, b, }: a", b"{ a ? 1, }: a", b"{ a, b, }@args: a", b"{ a, /* c */ }: a"],
)
def test_trailing_comma_forms_nix_accepts_are_accepted(source, nix_oracle, run_cli, tmp_path):
    assert nix_oracle(source)[0]
    target = tmp_path / "f.nix"
    target.write_bytes(source)
    assert run_cli("parse", "--quiet", str(target)).exit_code == 0
