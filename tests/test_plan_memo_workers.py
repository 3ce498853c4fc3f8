"""Forked workers write their new plans to the memo themselves (issue 44): the parent receives the results, never a
payload to decode, and the memo it saves holds every plan; a memo file that cannot be appended to (damaged) has the
workers send their plans to the parent, which rewrites it, as before. Reports are byte-identical to runs without the
memo, and a warm run plans nothing."""

from __future__ import annotations

import struct
from pathlib import Path

from pinshift.planning import memo as plan_memo
from test_plan_memo import _planning_forbidden, memo_on  # noqa: F401 (a fixture)

RECORD = struct.Struct(">20sI")
ARGS = ("apply", "rename-attr", "--set", "from=python3Packages", "--set", "to=python313Packages", "--dry-run",
        "--format", "json", "pkgs")


def _files(count: int) -> dict[str, str]:
    return {f"pkgs/p{n:03d}.nix": f'{{ pkgs }}: pkgs.python3Packages.buildPythonPackage {{ pname = "p{n}"; }}\n'
            for n in range(count)}


def _records(plans: Path) -> list[bytes]:
    (path,) = plans.glob("*/*.memo")
    data, keys, offset = path.read_bytes(), [], len(plan_memo.FORMAT)
    assert data.startswith(plan_memo.FORMAT)
    while offset < len(data):
        key, length = RECORD.unpack_from(data, offset)
        keys.append(key)
        offset += RECORD.size + length
    assert offset == len(data)  # whole records only
    return keys


def _decodes(monkeypatch) -> list[int]:
    """Count the payloads this process decodes (the real decoder still runs)."""
    calls: list[int] = []
    real = plan_memo.decode

    def counted(payload, steps):
        calls.append(1)
        return real(payload, steps)

    monkeypatch.setattr(plan_memo, "decode", counted)
    return calls


def _off(run_cli, monkeypatch, repo: Path) -> str:
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    try:
        result = run_cli(*ARGS, cwd=repo)
    finally:
        monkeypatch.setenv("PINSHIFT_CACHE", "on")
    assert result.exit_code == 0, result
    return result.stdout


def test_workers_store_their_plans_and_the_parent_decodes_none(run_cli, make_repo, memo_on, monkeypatch):
    repo = make_repo(_files(300))
    monkeypatch.setenv("PINSHIFT_JOBS", "2")
    off = _off(run_cli, monkeypatch, repo)
    decoded = _decodes(monkeypatch)
    cold = run_cli(*ARGS, cwd=repo)
    assert cold.exit_code == 0 and cold.stdout == off
    assert decoded == []  # every plan came back as results, none as a payload
    assert len(set(_records(memo_on))) == 300  # ... and every one is in the memo, written by the workers
    planned = _planning_forbidden(monkeypatch)
    monkeypatch.setenv("PINSHIFT_JOBS", "1")
    warm = run_cli(*ARGS, cwd=repo)
    assert warm.exit_code == 0 and warm.stdout == off and planned == []
    assert len(decoded) == 300


def test_a_damaged_memo_file_has_the_workers_send_their_plans(run_cli, make_repo, memo_on, monkeypatch):
    repo = make_repo(_files(300))
    monkeypatch.setenv("PINSHIFT_JOBS", "2")
    off = _off(run_cli, monkeypatch, repo)
    assert run_cli(*ARGS, cwd=repo).exit_code == 0
    (path,) = memo_on.glob("*/*.memo")
    path.write_bytes(path.read_bytes()[:-7])  # the last record cut short: not appended to, rewritten by the parent
    for number in range(300):  # new bytes for every file: every plan is new
        (repo / "pkgs" / f"p{number:03d}.nix").write_text(_files(300)[f"pkgs/p{number:03d}.nix"] + "# new\n")
    off = _off(run_cli, monkeypatch, repo)
    decoded = _decodes(monkeypatch)
    again = run_cli(*ARGS, cwd=repo)
    assert again.exit_code == 0 and again.stdout == off
    assert len(decoded) == 300  # sent to the parent as payloads
    records = _records(memo_on)  # rewritten whole: the new plans, and the old ones this run did not use are gone
    assert len(set(records)) == 300
    planned = _planning_forbidden(monkeypatch)
    assert run_cli(*ARGS, cwd=repo).stdout == off and planned == []
