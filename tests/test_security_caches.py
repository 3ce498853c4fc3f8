"""Caches are data, never code (issue 39 §6): a poisoned record in any store is a miss, and nothing it names runs.

Every store pinshift keeps under `$XDG_CACHE_HOME/pinshift` (the plan memo, the facts memo, the build summaries) is
filled by a real run with the cache on; then every record's payload is replaced, in the store's own framing, by
something that would run `touch MARKER` if anything loaded it as code: a pickle whose `__reduce__` is `os.system`
(compressed as the stores compress, and bare), JSON in the codec's framing naming `os.system` or
`subprocess.Popen` as a class, and jsonpickle's `py/object` spelling. The next run of the real command must
create no marker and print exactly what it prints with the cache off.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import sys
import zlib
from pathlib import Path

import pytest

from conftest import require_nix
from pinshift.facts import facts_memo
from pinshift.evaluation import summary_memo
from pinshift.demo.build import build_demo
from pinshift.files import data_codec
from pinshift.planning import memo as plan_memo

RECIPE = "pytorch-2.10-cuda12_9"
PLAN_RECORD = struct.Struct(">20sI")  # the plan memo: key, length, payload
STORE_RECORD = struct.Struct(">2sI20s")  # pinshift.files.record_store: magic, length, key, payload


class _RunsCode:
    """Pickles as a call of os.system: loading the pickle runs the command."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _codec_framing(structure) -> bytes:
    """JSON in pinshift.files.data_codec's framing (a 4-byte length, the JSON, no bytes after it), compressed."""
    text = json.dumps(structure).encode()
    return zlib.compress(struct.pack(">I", len(text)) + text)


def poisons(marker: Path, store: str) -> dict[str, bytes]:
    """Payloads that would create `marker` if anything ran them, by how they would (for `store`'s framing)."""
    command = f"touch {marker}"
    bomb = pickle.dumps(_RunsCode(command), pickle.HIGHEST_PROTOCOL)
    found = {
        "pickle": zlib.compress(bomb),
        "bare-pickle": bomb,
        "jsonpickle": zlib.compress(json.dumps(
            {"py/object": "subprocess.Popen", "py/newargs": [["touch", str(marker)]]}).encode()),
    }
    if store == "summaries":  # zlib-compressed JSON: the record's fields holding the names instead of values
        found["json-os.system"] = zlib.compress(json.dumps(
            {"reads": [], "summary": None, "error": None, "__class__": "os.system", "args": [command]}).encode())
        found["json-Popen"] = zlib.compress(json.dumps(
            {"reads": {"subprocess.Popen": [["touch", str(marker)]]}, "summary": {}, "error": None}).encode())
    else:
        found["json-os.system"] = _codec_framing({"l": [{"os.system": [command]}]})
        found["json-Popen"] = _codec_framing({"subprocess.Popen": [["touch", str(marker)]]})
        found["json-system"] = _codec_framing({"system": [command]})
    return found


def _plan_records(path: Path) -> list[bytes]:
    data, keys, offset = path.read_bytes(), [], len(plan_memo.FORMAT)
    assert data.startswith(plan_memo.FORMAT)
    while offset < len(data):
        key, length = PLAN_RECORD.unpack_from(data, offset)
        keys.append(key)
        offset += PLAN_RECORD.size + length
    return keys


def poison_plan_memo(plans: Path, payload: bytes) -> int:
    """Every record of every plan memo file now holds `payload`; how many there are."""
    count = 0
    for path in plans.glob("*/*.memo"):
        keys = _plan_records(path)
        path.write_bytes(plan_memo.FORMAT + b"".join(PLAN_RECORD.pack(key, len(payload)) + payload for key in keys))
        count += len(keys)
    return count


def _store_keys(path: Path, format: bytes) -> list[bytes]:
    data, keys, offset = path.read_bytes(), [], len(format)
    assert data.startswith(format)
    while offset < len(data):
        _, length, key = STORE_RECORD.unpack_from(data, offset)
        keys.append(key)
        offset += STORE_RECORD.size + length
    return keys


def poison_record_store(directory: Path, format: bytes, magic: bytes, payload: bytes) -> int:
    """Every record of every store in `directory` now holds `payload`; how many there are."""
    count = 0
    for path in directory.glob("*.store"):
        keys = _store_keys(path, format)
        path.write_bytes(format + b"".join(STORE_RECORD.pack(magic, len(payload), key) + payload for key in keys))
        count += len(keys)
    return count


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return build_demo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    """The demo after `pinshift demo`: pytorch-2.9 and the migrated pytorch-2.10-cuda12_9."""
    from pinshift.cli import main

    root = tmp_path_factory.mktemp("migrated") / "demo"
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            assert main(["demo", "--dir", str(root)]) == 0
        finally:
            sys.stdout = stdout
    return root


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    """The cache on, in a directory of this test's own: `$XDG_CACHE_HOME/pinshift`."""
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "pinshift"


def _off(monkeypatch, run):
    monkeypatch.setenv("PINSHIFT_CACHE", "off")
    try:
        return run()
    finally:
        monkeypatch.setenv("PINSHIFT_CACHE", "on")


VARIANTS = ["pickle", "bare-pickle", "jsonpickle", "json-os.system", "json-Popen"]


@pytest.mark.parametrize("variant", VARIANTS + ["json-system"])
def test_a_poisoned_plan_memo_runs_nothing_and_plans_afresh(run_cli, demo, cache, monkeypatch, tmp_path, variant):
    def report(name: str) -> tuple[int, bytes]:
        out = tmp_path / f"{name}.json"
        result = run_cli("migrate", RECIPE, "--repo", str(demo), "--dry-run", "--format", "json", "--output", str(out))
        return result.exit_code, out.read_bytes()

    off = _off(monkeypatch, lambda: report("off"))
    assert off[0] == 0
    report("cold")
    marker = tmp_path / "ran"
    assert poison_plan_memo(cache / "plans", poisons(marker, "plans")[variant]) >= 67
    assert report("poisoned") == off
    assert not marker.exists()
    assert report("again") == off  # the rewritten memo is sound again
    assert not marker.exists()


@pytest.mark.parametrize("variant", VARIANTS + ["json-system"])
def test_a_poisoned_facts_memo_runs_nothing_and_reads_afresh(run_cli, demo, cache, monkeypatch, tmp_path, variant):
    def status() -> tuple[int, str, str]:
        result = run_cli("status", "--repo", str(demo), "--format", "json")
        return result.exit_code, result.stdout, result.stderr

    off = _off(monkeypatch, status)
    assert off[0] == 0
    assert status() == off
    marker = tmp_path / "ran"
    assert poison_record_store(cache / "facts", facts_memo.FORMAT, b"PF", poisons(marker, "facts")[variant]) >= 66
    assert status() == off
    assert not marker.exists()


@pytest.mark.parametrize("variant", VARIANTS)
def test_poisoned_summaries_run_nothing_and_are_evaluated_afresh(run_cli, migrated, cache, monkeypatch, tmp_path,
                                                                  variant):
    require_nix()

    def diff() -> tuple[int, str, str]:
        result = run_cli("diff", "pytorch-2.9", RECIPE, "--repo", str(migrated), "--format", "json")
        return result.exit_code, result.stdout, result.stderr

    off = _off(monkeypatch, diff)
    assert off[0] == 0, off
    diff()
    marker = tmp_path / "ran"
    payload = poisons(marker, "summaries")[variant]
    assert poison_record_store(cache / "summaries", summary_memo.FORMAT, b"PS", payload) >= 66
    poisoned = diff()
    assert not marker.exists()
    assert poisoned[0] == off[0] and poisoned[2] == off[2]
    assert _recipes(poisoned[1]) == _recipes(off[1])
    assert json.loads(poisoned[1])["evaluation"]["remembered"] == json.loads(off[1])["evaluation"]["remembered"]


def _recipes(report: str):
    return json.loads(report)["recipes"]


def test_an_old_pickle_store_is_never_read(run_cli, demo, cache, monkeypatch, tmp_path):
    """The stores' earlier formats held pickles: a store in such a format, under the name the current one has, is
    a miss for every key (the header says it is not this format), and is replaced by the next save."""
    marker = tmp_path / "ran"
    bomb = zlib.compress(pickle.dumps(_RunsCode(f"touch {marker}")))

    def status() -> tuple[int, str]:
        result = run_cli("status", "--repo", str(demo), "--format", "json")
        return result.exit_code, result.stdout

    off = _off(monkeypatch, status)
    status()
    [store] = (cache / "facts").glob("*.store")
    keys = _store_keys(store, facts_memo.FORMAT)
    assert len(keys) >= 66
    store.write_bytes(b"pinshift-facts/1\n" + b"".join(STORE_RECORD.pack(b"PF", len(bomb), key) + bomb for key in keys))
    assert status() == off
    assert not marker.exists()
    assert store.read_bytes().startswith(facts_memo.FORMAT)


# --- the codec itself: only what its allowlist names, and a miss for everything else -------------------------------


def test_the_codec_never_calls_what_the_data_names(tmp_path):
    """Every shape of hostile payload is Undecodable (never another exception, never a call)."""
    from pinshift.planning.plan import FileChange, Outcome

    codec = plan_memo._codec()
    marker = tmp_path / "ran"
    hostile = [
        *poisons(marker, "plans").values(),
        b"", b"not zlib", zlib.compress(b""), zlib.compress(b"\0\0\0\x05{}"),  # cut short
        _codec_framing({"FileChange": ["too", "few"]}),
        _codec_framing({"Outcome": "__class__"}), _codec_framing({"Outcome": "mro"}),
        _codec_framing({"r": 0}), _codec_framing({"b": 10**9}), _codec_framing({"k": "os"}),
        _codec_framing({"d": [[{"l": []}, 1]]}),  # an unhashable key
        _codec_framing({"l": [], "b": 1}), _codec_framing([{"__builtins__": ["eval"]}]),
        _codec_framing({"__reduce__": [[]]}), _codec_framing({"Warning": {"path": "x"}}),
        _codec_framing({"Warning": [1, "line", 2, "message"]}),  # a field of another type than its annotation's
        _codec_framing([{"FileChange": [{"b": 0}] + [None] * 15}]),
        zlib.compress(struct.pack(">I", 1000) + b"[]"),  # a length past the end
        zlib.compress(struct.pack(">I", 2) + b"[]" + b"left over"),
        zlib.compress(struct.pack(">I", 2) + b"\xff\xfe"),
        zlib.compress(struct.pack(">I", 200_000) + b"[" * 100_000 + b"]" * 100_000),  # deeper than recursion goes
        zlib.compress(struct.pack(">I", 24_000) + b'{"t":[' * 3_000 + b"]}" * 3_000),  # deeper than the parser goes
    ]
    for payload in hostile:
        with pytest.raises(data_codec.Undecodable):
            codec.decode(payload)
        assert plan_memo.decode(payload, 1) is None
    assert not marker.exists()
    change = FileChange("bad\udcff\n.nix", Outcome.CHANGED, before=b"\xff\x00x", after=b"y")  # git's any bytes
    back = codec.decode(codec.encode([change, None, (1, [2], {"k": frozenset({3})})]))
    assert back == [change, None, (1, [2], {"k": frozenset({3})})]
    assert type(back[0].outcome) is Outcome and back[0].before == b"\xff\x00x"
    with pytest.raises(data_codec.Unencodable):
        codec.encode([{1, 2}])  # a set is not among the values kept (a frozenset is)
    with pytest.raises(data_codec.Unencodable):
        codec.encode([Path("x")])


def test_the_stores_import_no_pickle():
    """No cache module can load code: neither pickle nor marshal nor shelve is imported by any of them."""
    import ast

    for module in (plan_memo, facts_memo, summary_memo, data_codec):
        tree = ast.parse(Path(module.__file__).read_text())
        names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                 for alias in node.names} | {node.module.split(".")[0] for node in ast.walk(tree)
                                             if isinstance(node, ast.ImportFrom) and node.module}
        assert not names & {"pickle", "marshal", "shelve", "dill", "cloudpickle", "jsonpickle"}, module.__name__
    assert sys.modules.get("pinshift.files.data_codec") is data_codec
