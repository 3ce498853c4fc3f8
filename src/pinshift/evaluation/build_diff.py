"""`pinshift diff BASE TARGET`: what each recipe builds on two commits, compared (nothing checked out).

Both commits are read from git's objects into a private temporary directory (pinshift.evaluation.snapshots),
every recipe (each `.nix` file, or those PATHS select) is evaluated on each side against the stand-in
(pinshift.evaluation.evaluation, remembered by pinshift.evaluation.summary_memo), and the two summaries of each
recipe are compared (pinshift.evaluation.build_changes). A file git saw renamed is one recipe under its new path.
A recipe that evaluates alike but whose files changed in meaning (`untold`) is `changed_untold`, never `same`.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pinshift.evaluation.build_changes import RecipeDiff, compare, normal_changes
from pinshift.evaluation.evaluation import Evaluation, Evaluator, Job, universe
from pinshift.evaluation.snapshots import Scratch, Snapshot
from pinshift.evaluation.summary_memo import SummaryMemo
from pinshift.errors import UsageError
from pinshift.files.globs import glob_problem, matches
from pinshift.syntax.meaning import meaning


@dataclass
class EvaluationStats:
    """What a run of the stand-in cost: evaluated, remembered, nix-instantiate calls, seconds."""

    evaluated: int = 0
    remembered: int = 0
    calls: int = 0
    seconds: float = 0.0


def evaluate_snapshots(nix: str, memo: SummaryMemo, scratch: Scratch, wanted: Sequence[tuple[Snapshot, Sequence[str]]],
                       stats: EvaluationStats | None = None,
                       progress: Callable[[str, int, int], None] | None = None) -> dict[tuple[str, str], Evaluation]:
    """(snapshot name, path) -> Evaluation for every path wanted of each snapshot; each distinct (path, bytes, bytes
    it read) evaluated once (the memo), the rest in parallel batches (`progress(what, done, total)` as they end)."""
    started = time.monotonic()
    stats = stats if stats is not None else EvaluationStats()
    found: dict[tuple[str, str], Evaluation] = {}
    todo: list[Job] = []
    for snapshot, paths in wanted:
        for path in paths:
            blob = snapshot.files.get(path)
            if blob is None:
                continue
            remembered = memo.lookup(path, blob, snapshot.fingerprint)
            if remembered is not None:
                found[(snapshot.name, path)] = remembered
                stats.remembered += 1
            else:
                todo.append(Job(snapshot, path))
    if todo:
        snapshots = _distinct(snapshot for snapshot, _ in wanted)
        for snapshot in snapshots:
            snapshot.materialise()
        names = universe(_nix_files(snapshots))
        unwritten = {f"{s.root}/{path}": why for s in snapshots for path, why in s.unwritten.items()}
        evaluator = Evaluator(nix, names, scratch.path, [s.root for s in snapshots], unwritten=unwritten)
        pending: dict[tuple[str, str], list[Job]] = {}
        first: list[Job] = []
        for job in todo:  # the same file with the same bytes in two trees: evaluated once, then looked up
            key = (job.path, job.snapshot.files[job.path])
            if key in pending:
                pending[key].append(job)
            else:
                pending[key] = [job]
                first.append(job)
        results = evaluator.evaluate(first, progress)
        for job, evaluation in zip(first, results):
            memo.remember(job.path, job.snapshot.files[job.path], evaluation, job.snapshot.fingerprint)
            found[(job.snapshot.name, job.path)] = evaluation
            stats.evaluated += 1
        again = [job for key, jobs in pending.items() for job in jobs[1:]]
        retry = []
        for job in again:
            remembered = memo.lookup(job.path, job.snapshot.files[job.path], job.snapshot.fingerprint)
            if remembered is not None:
                found[(job.snapshot.name, job.path)] = remembered
                stats.remembered += 1
            else:
                retry.append(job)
        for job, evaluation in zip(retry, evaluator.evaluate(retry, progress)):
            memo.remember(job.path, job.snapshot.files[job.path], evaluation, job.snapshot.fingerprint)
            found[(job.snapshot.name, job.path)] = evaluation
            stats.evaluated += 1
        stats.calls += evaluator.calls_made
        evaluator.close()  # (on an error, its sandbox goes with the garbage collector)
    stats.seconds += time.monotonic() - started
    return found


def _distinct(snapshots) -> list[Snapshot]:
    seen: dict[str, Snapshot] = {}
    for snapshot in snapshots:
        seen.setdefault(snapshot.name, snapshot)
    return list(seen.values())


def _nix_files(snapshots: Sequence[Snapshot]):
    blobs: set[str] = set()
    for snapshot in snapshots:
        for path in snapshot.nix_paths():
            blob = snapshot.files[path]
            if blob not in blobs:
                blobs.add(blob)
                try:
                    yield (snapshot.root / path).read_bytes()
                except OSError:  # not written (larger than the limit): nothing to read
                    continue


# --- the diff of two commits ----------------------------------------------------------------------------------------


@dataclass
class BuildDiff:
    """What `pinshift diff` found: one RecipeDiff per recipe, in path order, and the keys that group them."""

    base: str
    base_commit: str
    target: str
    target_commit: str
    recipes: list[RecipeDiff] = field(default_factory=list)
    keys: dict[str, tuple] = field(default_factory=dict)
    stats: EvaluationStats = field(default_factory=EvaluationStats)
    # at the real pins (--nixpkgs: pinshift.evaluation.real_build), one per recipe in path order; None: not checked
    real: list | None = None
    real_calls: int = 0

    @property
    def broken(self) -> list[RecipeDiff]:
        return [r for r in self.recipes if r.status == "broken"]

    @property
    def real_broken(self) -> list:
        return [r for r in self.real or () if r.status == "broken"]


def selected(paths: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """The paths PATHS select: a path itself, everything under a directory, or a glob (`**` crosses directories)."""
    if not patterns:
        return list(paths)
    chosen = []
    for path in paths:
        for pattern in patterns:
            clean = pattern.strip("/") if pattern not in ("", ".", "./") else ""
            if clean in ("", ".") or path == clean or path.startswith(f"{clean}/") or matches(path, [clean]):
                chosen.append(path)
                break
    return chosen


def check_patterns(patterns: Sequence[str]) -> None:
    for pattern in patterns:
        problem = glob_problem(pattern)
        if problem:
            raise UsageError(f"PATH {pattern!r}: {problem}")


def diff_commits(repository, base: str, target: str, patterns: Sequence[str], nix: str,
                 note: Callable[[str], None] | None = None, nixpkgs=None,
                 progress: Callable[[str, int, int], None] | None = None) -> BuildDiff:
    """Evaluate the recipes of `base` and `target` (commit-ish names) and compare them; with `nixpkgs` (a clone's
    folder) also at the real pins (`BuildDiff.real`)."""
    check_patterns(patterns)
    base_commit = repository.resolve_commit(base, "BASE", "give a branch, tag or commit of the repository")
    target_commit = repository.resolve_commit(target, "TARGET", "give a branch, tag or commit of the repository")
    result = BuildDiff(base, base_commit, target, target_commit)
    renamed = {status.path: status.source for status in repository.changed_files(base_commit, target_commit)
               if status.status == "R" and status.path.endswith(".nix") and status.source.endswith(".nix")}
    memo = SummaryMemo.open(nix, note)
    base_tree, target_tree = repository.tree(base_commit), repository.tree(target_commit)
    with Scratch(files=len(base_tree.paths()) + len(target_tree.paths())) as scratch:
        before = scratch.commit("base", base_tree)
        after = scratch.commit("target", target_tree)
        old_paths = set(before.nix_paths())
        new_paths = set(after.nix_paths())
        sources = set(renamed.values())
        pairs: list[tuple[str | None, str | None]] = []
        for path in sorted(new_paths):
            source = renamed.get(path)
            if source is not None and source in old_paths and path not in old_paths:
                pairs.append((source, path))
            else:
                pairs.append((path if path in old_paths else None, path))
        for path in sorted(old_paths - new_paths - sources):
            pairs.append((path, None))
        if patterns:
            chosen = set(selected(sorted(old_paths | new_paths), patterns))
            if not chosen:
                raise UsageError(f"PATHS {' '.join(patterns)} select no .nix file of {base} or {target}; give "
                                 "repository-relative paths, directories or globs ('.flox/pkgs/**/*.nix')")
            pairs = [(old, new) for old, new in pairs if (old in chosen) or (new in chosen)]
        evaluations = evaluate_snapshots(nix, memo, scratch, [
            (before, [old for old, _ in pairs if old is not None]),
            (after, [new for _, new in pairs if new is not None])], result.stats, progress)
        if nixpkgs is not None:
            from pinshift.evaluation.real_build import evaluate_snapshots_real

            real, result.real_calls = evaluate_snapshots_real(nixpkgs, nix, [
                (before, [old for old, _ in pairs if old is not None]),
                (after, [new for _, new in pairs if new is not None])])
            result.real = _real_diffs(pairs, real)
    memo.save()
    for old, new in pairs:
        left = evaluations.get(("base", old)) if old is not None else None
        right = evaluations.get(("target", new)) if new is not None else None
        path = new if new is not None else old
        diff = compare(path, left, right, old if old != new else None)
        result.recipes.append(diff)
        if diff.status == "changed":
            result.keys[path] = normal_changes(diff, left.summary, right.summary)
    untold(result.recipes, evaluations, (before, base_tree), (after, target_tree))
    result.recipes.sort(key=lambda r: r.path)
    return result



def _real_diffs(pairs, real: dict) -> list:
    from pinshift.evaluation.real_changes import compare_real

    found = []
    for old, new in pairs:
        path = new if new is not None else old
        label = f"{old} → {new}" if old and new and old != new else path
        found.append(compare_real(path, real.get(("base", old)) if old is not None else None,
                                  real.get(("target", new)) if new is not None else None, label))
    return sorted(found, key=lambda r: r.path)
# --- what the stand-in cannot tell: a file changed in meaning, evaluated alike ----------------------------------------


def untold(recipes: Sequence[RecipeDiff], evaluations: dict, base: tuple, target: tuple) -> None:
    """Each `same` recipe whose own file, or a file either side of it read (an import, `readFile`), changed in more
    than comments and layout (pinshift.syntax.meaning; a file that is not Nix: its bytes) becomes `changed_untold`:
    the stand-in evaluates both alike, so it cannot tell what changed, and says so instead of `same`. `base` and
    `target`: (Snapshot, the commit's tree to read the files from)."""
    (before, base_tree), (after, target_tree) = base, target
    candidates = []
    wanted: tuple[set[str], set[str]] = (set(), set())
    for diff in recipes:
        if diff.status != "same":
            continue
        old = diff.old_path or diff.path
        left, right = evaluations.get(("base", old)), evaluations.get(("target", diff.path))
        if left is None or right is None:
            continue
        pairs = [(old, diff.path)] + [(read, read) for read in dict.fromkeys(left.reads + right.reads)
                                      if read not in (old, diff.path)]
        differing = [(o, n) for o, n in pairs if before.files.get(o) != after.files.get(n)]
        if differing:
            candidates.append((diff, differing))
            for o, n in differing:
                wanted[0].add(o)
                wanted[1].add(n)
    if not candidates:
        return
    meanings = (_meanings(before, base_tree, wanted[0]), _meanings(after, target_tree, wanted[1]))
    for diff, differing in candidates:
        changed = [n for o, n in differing if meanings[0].get(o) != meanings[1].get(n) or meanings[0].get(o) is None]
        if not changed:
            continue
        diff.status = "changed_untold"
        own = diff.path in changed
        others = [path for path in changed if path != diff.path]
        if own:
            what = "its file changed in meaning (more than comments and layout)"
        else:
            what = f"{others[0]}, which it reads, changed in meaning (more than comments and layout)"
            if len(others) > 1:
                what = f"{others[0]} and {len(others) - 1} more files it reads changed in meaning (more than comments " \
                       "and layout)"
        diff.reason = f"{what} but it evaluates alike against the stand-in"


def _meanings(snapshot: Snapshot, tree, paths: set[str]) -> dict[str, str]:
    """path -> what it means: a `.nix` file's tokens without comments (one digest per distinct blob), another
    file's blob id; a path the tree lacks or does not hold within the size limit has none (always a change)."""
    found: dict[str, str] = {}
    by_blob: dict[str, str] = {}
    nix = [path for path in sorted(paths) if path.endswith(".nix") and path in snapshot.files]
    for path in paths:
        if path in snapshot.files and not path.endswith(".nix"):
            found[path] = f"blob {snapshot.files[path]}"
    for path, data in tree.contents(nix):
        blob = snapshot.files[path]
        if blob not in by_blob:
            by_blob[blob] = meaning(data)
        found[path] = by_blob[blob]
    return found

