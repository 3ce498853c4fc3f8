"""What each recipe really builds: evaluated against the real pin exported from a local nixpkgs clone, offline.

`--nixpkgs DIR` (or $PINSHIFT_NIXPKGS) for `pinshift diff` and migrate's build check. Each recipe's nixpkgs pins
(`builtins.fetchTarball` of `…/archive/<rev>.tar.gz`, read from its bytes by pinshift.facts.facts) are resolved
in the clone and each commit is exported once (`git archive`, as `verify --eval` does: pinshift.evaluation.clone_eval) into
a private scratch folder. The recipe is imported with `scopedImport`, `fetchTarball` and `builtins.fetchTarball`
shadowed by a function that hands back the export of the revision a nixpkgs archive URL names (any other URL:
an error; nothing is downloaded), and
`nix-instantiate --eval --strict --json` reads its `name`, `pname`, `version` and `drvPath`: the derivation's
path is computed, nothing is built or written (`--store dummy://`, `--readonly-mode`). Every call runs in a
NixSandbox (pinshift.sandbox.nix_process): restricted to the snapshot's folder and the exports, no network, an
empty environment, memory and time limits.

A recipe pinning a revision the clone does not have, pinning none, or pinning with another fetcher cannot be
told (`Outcome.unknown`, the reason), never guessed. Nix's error is one line with the recipe's file:line:col
where Nix gives one; the snapshot's folder is left out and an export is written `<nixpkgs 0182a36>`.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import json
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pinshift.evaluation.clone_eval import nix_string

_EXPRESSION = """
let
  exports = {{ {exports} }};
  fetch = arg:
    let
      url = if builtins.isAttrs arg then arg.url or "" else toString arg;
      found = builtins.match "https?://[^/]+/[^/]+/nixpkgs/archive/([0-9a-fA-F]+)(\\\\.tar\\\\.gz)?" url;
      rev = if found == null then null else builtins.head found;
    in if rev != null && exports ? ${{rev}} then exports.${{rev}}
       else throw "fetchTarball ${{url}}: not a nixpkgs pin exported from the --nixpkgs clone";
  recipe = scopedImport {{ builtins = builtins // {{ fetchTarball = fetch; }}; fetchTarball = fetch; }} {recipe};
  value = if builtins.isFunction recipe then recipe {{ }} else recipe;
  text = v: if builtins.isString v then v else null;
in {{
  name = text (value.name or null);
  pname = text (value.pname or null);
  version = text (value.version or null);
  drvPath = if builtins.isAttrs value && value ? drvPath then value.drvPath else null;
}}
"""


@dataclass(frozen=True)
class Build:
    """What one recipe builds at its real pin: the derivation's name, pname, version and .drv path."""

    name: str | None
    pname: str | None
    version: str | None
    drv_path: str | None

    def to_json(self) -> dict:
        return {"name": self.name, "pname": self.pname, "version": self.version, "drvPath": self.drv_path}


@dataclass(frozen=True)
class Outcome:
    """One recipe on one side: what it builds, Nix's error, or why it cannot be told (exactly one is set).
    `pins`: the nixpkgs commits (abbreviated) it was evaluated at; `package`: the attribute it builds (`torch`)."""

    build: Build | None = None
    error: str | None = None
    unknown: str | None = None
    pins: tuple[str, ...] = ()
    package: str | None = None


def _pins(data: bytes, path: str) -> tuple[list[str], str | None, str | None]:
    """(the nixpkgs revisions the recipe fetches with fetchTarball, why it cannot be evaluated, its attribute)."""
    from pinshift.facts.collect import recipe_from_bytes

    facts = recipe_from_bytes(path, data).facts
    attribute = facts.attribute.value if facts.attribute is not None else None
    pins = [p for p in facts.pins if p.nixpkgs]
    if not pins:
        return [], "no nixpkgs pin of its own (it uses its caller's nixpkgs)", attribute
    literal = [p for p in pins if p.revision]
    if len(literal) != len(pins):
        shown = next(p.shown for p in pins if not p.revision)
        return [], f"its nixpkgs pin is not a literal revision ({shown})", attribute
    others = sorted({p.kind for p in literal if p.kind.rsplit(".", 1)[-1] != "fetchTarball"})
    if others:
        return [], f"the pin uses {', '.join(others)}; only fetchTarball pins can be replaced offline", attribute
    return list(dict.fromkeys(p.revision for p in literal)), None, attribute


class RealEvaluator:
    """A nixpkgs clone opened for real evaluations (a one-line UsageError when DIR is not one), its exports, one
    sandbox; `close` (a context manager) removes them."""

    def __init__(self, clone: Path, nix: str):
        from pinshift.evaluation.clone_eval import scratch
        from pinshift.sandbox.nix_process import NixSandbox
        from pinshift.nixpkgs.checkout import NixpkgsCheckout

        self.clone = Path(clone)
        self.checkout = NixpkgsCheckout(self.clone)
        self.nix = nix
        self._scratch = scratch()
        self._sandbox = NixSandbox()
        self._exports: dict[str, Path | None] = {}  # full commit -> export
        self._commits: dict[str, str | None] = {}  # revision as written -> full commit
        self._lock = threading.Lock()
        self.calls = 0

    def close(self) -> None:
        self._sandbox.close()
        self._scratch.cleanup()

    def __enter__(self) -> "RealEvaluator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _commit(self, rev: str) -> str | None:
        with self._lock:
            if rev not in self._commits:
                self._commits[rev] = self.checkout.resolve(rev)
            return self._commits[rev]

    def _export(self, commit: str) -> Path:
        from pinshift.evaluation.clone_eval import export_revision

        with self._lock:
            if commit not in self._exports:
                self._exports[commit] = export_revision(self.checkout.repo, commit, Path(self._scratch.name))
            return self._exports[commit]

    def evaluate_all(self, jobs: Sequence[tuple[Path, str, bytes]]) -> list[Outcome]:
        """One Outcome per (snapshot root, path in it, its bytes), in order; calls run in parallel."""
        from pinshift.evaluation.evaluation import _cores

        if not jobs:
            return []
        with ThreadPoolExecutor(max_workers=min(len(jobs), _cores())) as pool:
            return list(pool.map(lambda job: self.evaluate(*job), jobs))

    def evaluate(self, root: Path, path: str, data: bytes) -> Outcome:
        """`path` (a file of the snapshot at `root`, holding `data`) evaluated at the revisions it pins."""
        from pinshift.evaluation.evaluation import error_message
        from pinshift.sandbox.nix_process import configured_timeout, eval_command, memory_message

        revisions, why, attribute = _pins(data, path)
        if why is not None:
            return Outcome(unknown=why, package=attribute)
        exports: dict[str, Path] = {}
        for rev in revisions:
            commit = self._commit(rev)
            if commit is None:
                return Outcome(unknown=f"nixpkgs {rev[:12]} is not in the --nixpkgs clone {self.clone}; fetch it "
                                      f"there (git -C {self.clone} fetch origin {rev})", package=attribute)
            exports[rev] = self._export(commit)
        pins = tuple(dict.fromkeys(p.name.removeprefix("nixpkgs-")[:7] for p in exports.values()))
        bound = " ".join(f"{nix_string(rev)} = /. + {nix_string(str(where))};" for rev, where in exports.items())
        expression = _EXPRESSION.format(exports=bound, recipe=f"(/. + {nix_string(str(root / path))})")
        done = self._sandbox.run(eval_command(self.nix, [root, *dict.fromkeys(exports.values())], expression,
                                              show_trace=True))  # the trace names the recipe's line
        with self._lock:
            self.calls += 1
        if done.timed_out:
            return Outcome(error=f"evaluation did not finish in {configured_timeout():g} s", pins=pins,
                           package=attribute)
        if done.status != 0:
            stderr = done.stderr
            for where in exports.values():
                stderr = stderr.replace(str(where), f"<nixpkgs {where.name.removeprefix('nixpkgs-')[:7]}>")
            message = memory_message(error_message(stderr, [root]), self._sandbox.memory)
            return Outcome(error=message.replace(str(self._scratch.name), "<scratch>"), pins=pins, package=attribute)
        try:
            value = json.loads(done.stdout)
        except ValueError:
            return Outcome(error="nix-instantiate printed no JSON value", pins=pins, package=attribute)
        return Outcome(Build(value.get("name"), value.get("pname"), value.get("version"), value.get("drvPath")),
                       pins=pins, package=attribute)


_LOCATION = re.compile(r" \(at [^()]*:\d+:\d+\)$")


def error_key(message: str | None) -> str | None:
    """Nix's message without the recipe's own file:line:col, so that recipes failing alike are one group."""
    return _LOCATION.sub("", message) if message is not None else None


def evaluate_snapshots_real(clone: Path, nix: str, wanted: Sequence[tuple[object, Sequence[str]]],
                            ) -> tuple[dict[tuple[str, str], Outcome], int]:
    """(snapshot name, path) -> Outcome for every path wanted of each snapshot (pinshift.evaluation.snapshots, written
    here when not yet), and the nix-instantiate calls made."""
    keys: list[tuple[str, str]] = []
    jobs: list[tuple[Path, str, bytes]] = []
    seen: set[tuple[str, str]] = set()
    for snapshot, paths in wanted:
        snapshot.materialise()
        for path in paths:
            if (snapshot.name, path) in seen:
                continue
            seen.add((snapshot.name, path))
            try:
                data = (snapshot.root / path).read_bytes()
            except OSError:  # not written (larger than the limit)
                continue
            keys.append((snapshot.name, path))  # each tree on its own: an import may differ where the bytes do not
            jobs.append((snapshot.root, path, data))
    with RealEvaluator(clone, nix) as evaluator:
        results = evaluator.evaluate_all(jobs)
        calls = evaluator.calls
    return dict(zip(keys, results)), calls
