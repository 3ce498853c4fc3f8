"""The reference graph in planning: handed to the step kinds that move files or change what files take,
and checked after every step.

**Before a step** whose kind has `plan_references` (rename-files, clone-files, remove-files, pin-nixpkgs):
a `ReferenceGraph` over the files as the earlier steps left them goes to the kind's pure hook, with the
step's file operations and the paths its globs select. What it returns (`steps.kind.ReferencePlan`) is
handed on: per-file facts to the kind's `plan` (`context.references`), more removals, refusals (the run
stops, exit 1, nothing written), findings.

**After every step**, on the planned tree (every file as that step leaves it): no reference the step
made or moved names a missing file, and no call passes an argument its callee does not take (or, by
`import`, leaves out one it requires). Only what the step changed is looked at: the references of the
files it changed (each file's `FileGraph` before and after, recorded where it was planned), the callers
of files whose function head it changed, the files that refer to paths it removed or renamed away;
a problem that was there before the step is the repository's, not the step's. A step that makes one
has the referring file refused with `path:line:col`, naming the other file: like any refused file it
stops `migrate` and `apply` (exit 1) and is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pinshift.graph.paths import resolve
from pinshift.graph.tree import Problem, ReferenceGraph, argument_problems
from pinshift.files.globs import matches
from pinshift.planning.plan import FileChange, Outcome


def tree_scope(globs: Sequence[str]) -> Callable[[str], bool]:
    """Which files a step may edit for their references: the recipe's files and the step's (all, without globs)."""
    if not globs:
        return lambda path: True
    return lambda path: matches(path, globs)


# --- before a step ------------------------------------------------------------------------------


def plan_references(files, job, ops: Sequence[Any]):
    """The kind's ReferencePlan for `job`, from the graph of `files` as the steps before it left them."""
    scope = tuple(job.tree_globs) + tuple(job.globs) if job.tree_globs else ()
    graph = ReferenceGraph(files, editable=tree_scope(scope))
    selected = [path for path in files.paths() if matches(path, job.globs)]
    return job.kind.plan_references(graph, job.params, ops, selected)


# --- after a step -------------------------------------------------------------------------------


class StepTree:
    """The tree as one step of a segment leaves it: the segment's changes up to that step over `files`."""

    def __init__(self, files, current: Mapping[str, FileChange]):
        self.files, self.current = files, current

    def paths(self) -> list[str]:
        return self.files.paths()

    def read(self, path: str) -> bytes:
        change = self.current.get(path)
        if change is not None:
            return change.after
        return self.files.read(path)

    def prefetch(self, paths: Sequence[str]) -> None:
        hook = getattr(self.files, "prefetch", None)
        if hook is not None:
            hook([p for p in paths if p not in self.current])


def check_segment(files, segment: Sequence[Any], results: list, plans: Sequence[Any]) -> None:
    """Refuse, in `plans` (one per job of `segment`), the files whose references a step of the segment
    breaks (see the module docstring). `results` are the segment's (path, changes) in path order."""
    current: dict[str, FileChange] = {}
    for position, job in enumerate(segment):
        changed = {}
        for path, changes in results:
            change = changes[position]
            if change is not None and change.outcome is Outcome.CHANGED and change.after is not None:
                changed[path] = change
                current[path] = change
        ops = list(getattr(job, "ops", ()) or ()) if position == 0 else []
        gone = {op.path: op for op in ops if op.action in ("rename", "remove")}
        if not gone and not any(c.graph is not None for c in changed.values()):
            continue
        problems = _step_problems(StepTree(files, dict(current)), changed, gone, getattr(job, "dangling", set()))
        _refuse(problems, results, position, plans[position])


def _step_problems(tree: StepTree, changed: Mapping[str, FileChange], gone: Mapping[str, Any],
                   allowed: set) -> dict[str, list[Problem]]:
    graph = ReferenceGraph(tree)
    renamed = {path: op.target for path, op in gone.items() if op.action == "rename"}
    heads = {path: change.graph for path, change in changed.items()
             if change.graph is not None and change.graph[0].signature != change.graph[1].signature}
    found: dict[str, list[Problem]] = {}

    def add(problem: Problem) -> None:
        found.setdefault(problem.source, []).append(problem)

    looked: set[str] = set()
    for path, change in changed.items():  # the references of the files the step changed
        if change.graph is None:
            continue
        looked.add(path)
        before, after = change.graph
        if not after.references:
            continue  # nothing it refers to (read where it was planned): not parsed again here
        origin = change.old_path or change.source or path
        earlier = {}
        for reference in before.references:
            named = resolve(origin, reference.literal)
            earlier.setdefault((reference.how, renamed.get(named, named)), []).append(reference)
        for reference in graph.references(path):  # read again here: placed, for the messages
            if reference.computed:
                continue
            named = resolve(path, reference.literal)
            same = earlier.get((reference.how, named), [])
            for problem in graph.problems_of(path, reference):
                if problem.kind == "dangling" and same and problem.target not in gone:
                    continue  # it named nothing before the step either
                if problem.kind == "argument" and problem.target not in heads \
                        and any(r.arguments == reference.arguments for r in same):
                    continue  # the same call of the same function head as before
                add(problem)
    for source, reference, callee in graph.referrers(heads):  # callers of a function head the step changed
        if source in looked:
            continue
        before = heads[callee][0]
        if argument_problems(source, reference, callee, before.signature):
            continue  # it did not fit the old head either
        for problem in argument_problems(source, reference, callee, graph.signature(callee)):
            add(problem)
    for source, reference, target in graph.referrers(gone):  # references to paths the step took away
        if source in looked or (source, target) in allowed:
            continue
        op = gone[target]
        how = f"renames {target} to {op.target}" if op.action == "rename" else f"removes {target}"
        add(Problem("dangling", source, reference.line, reference.column,
                    f"{reference.verb} {reference.literal}, which names no file: this step {how}", target))
    return found


def _refuse(problems: Mapping[str, list[Problem]], results: list, position: int, plan) -> None:
    if not problems:
        return
    by_path = {path: row[position] for path, row in results}
    for source in sorted(problems):
        found = problems[source]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        reason = f"{found[0]}{more}"
        change = by_path.get(source)
        if change is not None:
            if change.outcome is not Outcome.REFUSED:
                change.outcome, change.reason = Outcome.REFUSED, reason
            continue
        plan.files.append(FileChange(source, Outcome.REFUSED, "nix", reason=reason))
