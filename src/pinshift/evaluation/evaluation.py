"""What each recipe builds, evaluated offline: the real `nix-instantiate` against pinshift's stand-in nixpkgs.

The stand-in (`evaluation/standin/*.nix`, shipped with pinshift) replaces the recipe's nixpkgs by symbolic values
that record what the recipe selects, overrides and sets; `standin/default.nix` says how. Evaluation, in a
NixSandbox (pinshift.sandbox.nix_process: its own nix.conf, PATH and HOME, an emptied environment, a network
namespace, memory and time limits):

    nix-instantiate --store dummy:// --readonly-mode --option restrict-eval true --option allowed-uris '' \
        --option allow-unsafe-native-code-during-evaluation false --option allow-import-from-derivation false \
        --option substituters '' -I <each tree> -I <the stand-in> -I <the universe's folder> \
        --eval --strict --json --expr '<a batch>'

nothing is fetched, built or written, no Nix store (nor its database) is even opened, and nothing outside the
`-I` folders can be read. Many recipes go into one call (a list), and the calls run in parallel (one per
core). Each element traces `[SECRET, "recipe", i]`, every file it reads (`[SECRET, "read", path]`) and its
summary (`[SECRET, "summary", i, …]`) on stderr, SECRET being chosen per Evaluator and given only in the
`--expr` text, so no recipe can trace a line pinshift would take for its own. A batch that fails loses
nothing: the summaries before the failing recipe are kept, the failing one is evaluated alone (with
`--show-trace`, for where it failed), the rest are evaluated again. A call that runs longer than
$PINSHIFT_EVAL_TIMEOUT seconds (120) is stopped and its current recipe reported as not finishing; one over
the memory limit fails with Nix's "out of memory".

Each result is an `Evaluation`: the summary (plain JSON values) or Nix's error, and the files it read, by
which pinshift.evaluation.summary_memo remembers it. When the stand-in cannot evaluate a recipe for a reason of its
own (a fetched source, a symbolic link or submodule of the tree it does not write), it traces `[SECRET, "cannot",
reason]` and throws; the Evaluation's `cannot_tell` is that reason when Nix's error is the stand-in's message.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.sandbox.nix_process import NixSandbox, configured_timeout, eval_command, finish, memory_message
from pinshift.evaluation.snapshots import Snapshot

STANDIN = Path(__file__).resolve().parent / "standin"
CANNOT_TELL = "pinshift's stand-in cannot tell what this builds: "  # how standin/default.nix's `cannotTell` begins
# How many recipes each tree (snapshot name: "start", "step 2", …) had evaluated by nix-instantiate in this process,
# for the tests that prove the build check evaluates the trees between the start and the last only where needed.
EVALUATED: Counter[str] = Counter()
ALWAYS = ("pname", "version", "name", "src", "meta", "passthru")  # names every summary reads


EVALUATING = "evaluating recipes"  # what the progress line says while Nix evaluates


def find_nix() -> str | None:
    """The nix-instantiate on PATH, or None."""
    return shutil.which("nix-instantiate")


@dataclass(frozen=True)
class Evaluation:
    """One recipe evaluated: `summary` (what it builds, plain JSON values) or `error` (Nix's message, one line).

    `reads`: the tree's paths it read (imports, readFile, pathExists), in order; `cacheable` is False when it read
    something a blob id cannot stand for (a directory listing, a file outside the tree, a file of another
    snapshot: its blob id is not the one its path has in this tree)."""

    summary: dict | None
    error: str | None = None
    reads: tuple[str, ...] = ()
    cacheable: bool = True
    # why the stand-in could not evaluate it, when the reason is the stand-in's (a fetched source it does not read,
    # a builtin that needs the network): traced after the run's secret and Nix's error is that message
    cannot_tell: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Job:
    snapshot: Snapshot
    path: str


# --- the universe: every attribute name the evaluated files select ----------------------------------------------

_SELECTED = re.compile(rb"""\.\s*"?([A-Za-z_][A-Za-z0-9_'-]*)""")
_FORMAL = re.compile(rb"""[{,]\s*([A-Za-z_][A-Za-z0-9_'-]*)\s*(?=[,?}@])""")
_TESTED = re.compile(rb"""\?\s*"?([A-Za-z_][A-Za-z0-9_'-]*)""")
# Every pattern below matches (never fails after scanning ahead) where it starts: an `inherit` without `;`, a string
# or comment never closed, matches to the end of the file, so a search is linear in the file's size whatever it holds.
_INHERITED = re.compile(rb"""\binherit\b([^;]*);?""")
_SOURCE = re.compile(rb"""^\s*\([^)]*\)?""")
_IDENTIFIER = re.compile(rb"""[A-Za-z_][A-Za-z0-9_'-]*""")
_WITH = re.compile(rb"""\bwith\b""")
_STRINGS = re.compile(rb"""''(?:[^']|'(?!'))*(?:'')?|"(?:[^"\\]|\\[\s\S])*"?|#[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/)?""")


def names_of(data: bytes) -> set[str]:
    """The attribute names a Nix file may select: after a `.`, in `?` tests, `inherit` lists and function formals;
    in a file with a `with`, every identifier outside strings and comments (a variable `with pkgs;` supplies)."""
    found = set(_SELECTED.findall(data)) | set(_FORMAL.findall(data)) | set(_TESTED.findall(data))
    for listed in _INHERITED.findall(data):
        found.update(_IDENTIFIER.findall(_SOURCE.sub(b"", listed, count=1)))
    if _WITH.search(data):
        found.update(_IDENTIFIER.findall(_STRINGS.sub(b" ", data)))
    return {name.decode("ascii") for name in found if not name.startswith(b"__")}


def universe(files: Iterable[bytes]) -> list[str]:
    names = set(ALWAYS)
    for data in files:
        names |= names_of(data)
    return sorted(names)


# --- calls ----------------------------------------------------------------------------------------------------------


def nix_string(text: str) -> str:
    """A Nix string literal for `text`."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("${", "\\${") + '"'


def nix_path(path: Path | str) -> str:
    return f"(/. + {nix_string(str(path))})"


def batch_expression(jobs: Sequence[Job], universe_file: Path, roots: Sequence[Path], secret: str) -> str:
    """The call's `--expr`: each job's summary traced after `secret`, which no evaluated file can know (restricted
    evaluation cannot read the command line) and so cannot forge."""
    listed = " ".join(nix_string(str(root)) for root in roots)
    mark = nix_string(secret)
    head = (f"let u = builtins.fromJSON (builtins.readFile {nix_path(universe_file)}); s = import {nix_path(STANDIN)} "
            f"{{ universe = u.names; unwritten = u.unwritten; roots = [ {listed} ]; secret = {mark}; }}; "
            f"t = builtins.trace; j = builtins.toJSON; in [\n")
    items = [f"(t (j [ {mark} \"recipe\" {number} ]) (t (j [ {mark} \"summary\" {number} (s.recipe "
             f"{nix_path(job.snapshot.root)} {nix_string(job.path)}) ]) null))" for number, job in enumerate(jobs)]
    return head + "\n".join(items) + "\n]"


class SharedValues:
    """One object for each distinct JSON value decoded: a string, an integer, a list or an object is looked up by
    its value (a list or an object by the identity of its parts, each shared before it, and in its order) and the
    first one seen is used again. The summaries of a tree's recipes differ in a few attributes, so 80,000 of them
    hold those few: decoded one by one they took some 6 KB each (a 40,000-recipe check held about 500 MB of them),
    shared about 0.2 KB (docs/performance.md). A summary is never changed in place (nothing in pinshift does:
    comparing makes new values), so sharing its parts changes nothing but memory. Floats are left as they are
    (0.0 and -0.0 are equal and print apart). Used from the Evaluator's threads: a lookup is one `setdefault`, and
    a race only shares a little less."""

    def __init__(self):
        self.table: dict = {}

    def __call__(self, value):
        kind = type(value)
        if kind is str or kind is int:
            return self.table.setdefault((kind, value) if kind is int else value, value)
        if kind is list:
            items = [self(item) for item in value]
            key = (list, *map(id, items))
        elif kind is dict:
            items = {self(name): self(item) for name, item in value.items()}
            key = (dict, *map(id, items), *map(id, items.values()))
        else:  # true, false, null (one object each), a float
            return value
        # a key holds the ids of parts the stored value holds: they cannot be freed and their ids given to another
        return self.table.setdefault(key, items)


@dataclass
class _Run:
    summaries: dict[int, dict] = field(default_factory=dict)
    reads: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    cannot: dict[int, str] = field(default_factory=dict)  # the stand-in's own reason it cannot evaluate a recipe
    current: int | None = None
    error: str | None = None  # the call failed (while evaluating `current`)
    timed_out: bool = False


def _parse(stderr: str, secret: str) -> _Run:
    """What a call's stderr says: only `trace:` lines whose first element is `secret` are pinshift's (anything a
    recipe traces is ignored, whatever it looks like); Nix's error is the last `error:` line and what follows."""
    run = _Run()
    prefix = "trace: " + json.dumps([secret])[:-1] + ","
    lines = stderr.splitlines()
    error_at = None
    for number, line in enumerate(lines):
        if line.startswith("error:"):
            error_at = number
        if not line.startswith(prefix):
            continue
        try:
            value = json.loads(line[7:])
        except ValueError:
            continue
        value = value[1:] if isinstance(value, list) else []
        if not value:
            continue
        if value[0] == "recipe" and len(value) == 2 and isinstance(value[1], int):
            run.current = value[1]
            run.reads.setdefault(value[1], [])
        elif value[0] == "summary" and len(value) == 3 and isinstance(value[1], int):
            run.summaries[value[1]] = value[2]
        elif value[0] == "cannot" and len(value) == 2 and isinstance(value[1], str) and run.current is not None:
            run.cannot[run.current] = value[1]
        elif value[0] in ("read", "exists", "readdir") and len(value) == 2 and run.current is not None:
            run.reads[run.current].append((value[0], str(value[1])))
    if error_at is not None:
        run.error = "\n".join(lines[error_at:])
    return run


class _Calls:
    """Running nix-instantiate processes (in `sandbox`), so that an interrupt stops every one of them."""

    def __init__(self, sandbox: NixSandbox):
        self.sandbox = sandbox
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()
        self.stopped = False

    def run(self, words: list[str], timeout: float) -> tuple[str, bool, int]:
        """(stderr, timed out, exit status)."""
        with self.lock:
            if self.stopped:
                raise KeyboardInterrupt
            process = self.sandbox.start(words)
            self.running.add(process)
        try:
            done = finish(process, timeout)
        finally:
            with self.lock:
                self.running.discard(process)
        return done.stderr, done.timed_out, done.status

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            for process in self.running:
                try:
                    process.kill()
                except OSError:
                    pass


class Evaluator:
    """Evaluates jobs with `nix` against the stand-in, in a NixSandbox of its own (removed by `close`; a context
    manager); `roots` are every snapshot's directory: the only folders, with the stand-in and the universe's,
    the calls may read (`-I`), and what messages leave out."""

    def __init__(self, nix: str, names: list[str], scratch: Path, roots: Sequence[Path], timeout: float | None = None,
                 workers: int | None = None, unwritten: dict[str, str] | None = None):
        self.nix = nix
        universe_dir = Path(tempfile.mkdtemp(prefix="universe-", dir=scratch))
        self.universe_file = universe_dir / "universe.json"
        # the universe, and the absolute paths of the trees' entries that are not written (-> why)
        self.universe_file.write_text(json.dumps({"names": names, "unwritten": unwritten or {}}))
        self.roots = list(roots)
        self.allowed = [*self.roots, STANDIN, universe_dir]
        self.timeout = timeout if timeout is not None else configured_timeout()
        self.workers = workers or _cores()
        self.secret = secrets.token_hex(16)
        self.sandbox = NixSandbox()
        self.calls = _Calls(self.sandbox)
        self.calls_made = 0
        self.shared = SharedValues()  # the summaries' equal parts held once

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _command(self, jobs: Sequence[Job], show_trace: bool = False) -> list[str]:
        expression = batch_expression(jobs, self.universe_file, self.roots, self.secret)
        return eval_command(self.nix, self.allowed, expression, show_trace)

    def evaluate(self, jobs: Sequence[Job], progress: Callable[[str, int, int], None] | None = None
                 ) -> list[Evaluation]:
        """One Evaluation per job, in order; `progress("evaluating recipes", done, total)` as batches finish."""
        if not jobs:
            return []
        EVALUATED.update(job.snapshot.name for job in jobs)
        results: list[Evaluation | None] = [None] * len(jobs)
        size = max(8, min(250, -(-len(jobs) // (self.workers * 2))))
        batches = [list(range(start, min(start + size, len(jobs)))) for start in range(0, len(jobs), size)]
        executor = ThreadPoolExecutor(max_workers=self.workers)
        try:
            futures = [executor.submit(self._batch, jobs, batch, results) for batch in batches]
            done = 0
            if progress:
                progress(EVALUATING, done, len(jobs))
            for future, batch in zip(futures, batches):
                future.result()
                done += len(batch)
                if progress:
                    progress(EVALUATING, done, len(jobs))
        except BaseException:
            self.calls.stop()
            executor.shutdown(wait=True, cancel_futures=True)
            raise
        executor.shutdown(wait=True)
        return [r for r in results]  # type: ignore[misc]

    def _batch(self, jobs: Sequence[Job], indices: list[int], results: list) -> None:
        """Evaluate `indices`; on a failure keep what came before, the failing one alone, then the rest."""
        while indices:
            chosen = [jobs[i] for i in indices]
            stderr, timed_out, status = self.calls.run(self._command(chosen), self.timeout)
            self.calls_made += 1
            run = _parse(stderr, self.secret)
            for number, index in enumerate(indices):
                if number in run.summaries:
                    results[index] = self._evaluation(run.summaries[number], None, run.reads.get(number, []))
            if status == 0 and not timed_out and len(run.summaries) == len(indices):
                return
            failing = run.current if run.current is not None and run.current not in run.summaries else None
            if failing is None:  # nothing says which: the first without a summary
                failing = next((n for n in range(len(indices)) if n not in run.summaries), None)
                if failing is None:
                    return
            if timed_out:
                results[indices[failing]] = self._evaluation(
                    None, f"evaluation did not finish in {self.timeout:g} s", run.reads.get(failing, []))
            else:
                self._alone(jobs, indices[failing], results)
            indices = [index for index in indices if results[index] is None]

    def _alone(self, jobs: Sequence[Job], index: int, results: list) -> None:
        """One recipe by itself, with --show-trace: its error names where it failed in the recipe."""
        stderr, timed_out, _ = self.calls.run(self._command([jobs[index]], show_trace=True), self.timeout)
        self.calls_made += 1
        run = _parse(stderr, self.secret)
        if 0 in run.summaries:  # it evaluates alone: what failed was the batch (out of memory?)
            results[index] = self._evaluation(run.summaries[0], None, run.reads.get(0, []))
            return
        message = f"evaluation did not finish in {self.timeout:g} s" if timed_out else self._message(run.error or stderr)
        results[index] = self._evaluation(None, message, run.reads.get(0, []), None if timed_out else run.cannot.get(0))

    def _evaluation(self, summary: dict | None, error: str | None, reads: list[tuple[str, str]],
                    cannot: str | None = None) -> Evaluation:
        """`cannot`: the reason the stand-in traced for not evaluating it; it counts only when Nix's error is the
        stand-in's message for it (a recipe that caught it with `tryEval` and failed otherwise has failed)."""
        paths, cacheable, own = [], True, None  # own: the recipe's snapshot (its first read is the recipe itself)
        for kind, path in reads:
            relative = self._relative(path)
            root = path[: len(path) - len(relative) - 1] if relative is not None else None
            if relative is None or kind == "readdir" or own not in (None, root):  # outside, a listing, another tree
                cacheable = False
                continue
            own = root
            if kind == "read" and os.path.isdir(path):
                relative = f"{relative}/default.nix" if relative else "default.nix"
            if relative not in paths:
                paths.append(self.shared(relative))
        reason = _clean(cannot, self.roots) if cannot is not None and error is not None else None
        if reason is not None and not error.startswith(f"{CANNOT_TELL}{reason}"):
            reason = None
        return Evaluation(self.shared(summary), error, tuple(paths), cacheable, reason)

    def _relative(self, path: str) -> str | None:
        for root in self.roots:
            prefix = f"{root}/"
            if path.startswith(prefix):
                return path[len(prefix):]
        return None

    def _message(self, stderr: str) -> str:
        return memory_message(error_message(stderr, self.roots), self.sandbox.memory)


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_AT = re.compile(r"^\s*at (.+?):(\d+):(\d+):?$")
_WHILE = re.compile(r"^\s*… while evaluating the attribute '([^']+)'")


def error_message(stderr: str, roots: Sequence[Path]) -> str:
    """Nix's error in one line: the message, then where in the tree it happened (the first place in a recipe
    file), else which attribute was being evaluated; snapshot directories left out of every path."""
    lines = [line.rstrip() for line in stderr.splitlines()]
    start = next((n for n in range(len(lines) - 1, -1, -1) if lines[n].startswith("error:")), None)
    if start is None:
        tail = [line for line in lines if line.strip() and not line.startswith("trace: ")]
        return _clean(tail[-1].strip() if tail else "nix-instantiate failed", roots)
    message, rest = [lines[start].removeprefix("error:").strip()], start + 1
    while rest < len(lines) and lines[rest].strip() and not _AT.match(lines[rest]):
        message.append(lines[rest].strip())
        rest += 1
    where = attribute = None
    for line in lines[rest:]:
        at = _AT.match(line)
        if at is not None and where is None and any(at.group(1).startswith(f"{root}/") for root in roots):
            where = f"{at.group(1)}:{at.group(2)}:{at.group(3)}"
        during = _WHILE.match(line)
        if during is not None and attribute is None and not during.group(1).startswith("__pinshift"):
            attribute = during.group(1)
    text = " ".join(part for part in message if part)
    if where is not None:
        text += f" (at {where})"
    elif attribute is not None:
        text += f" (while evaluating {attribute})"
    return _clean(text, roots)


def _clean(text: str, roots: Sequence[Path]) -> str:
    for root in roots:
        text = text.replace(f"{root}/", "")
    return text.replace(f"{STANDIN}/", "«stand-in»/")
