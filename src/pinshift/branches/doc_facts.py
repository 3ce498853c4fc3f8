"""A migration's `{facts.NAME}` filled from what the branch's recipes say after its steps, and its typed values
held to those facts (docs/doc-steps.md#facts-instead-of-typed-values).

`plan_with_facts` plans as `planning.runner.plan_recipe` does, with one more stage when a step needs the facts
(it writes `{facts.…}`, or its kind `claims` a typed value, a README cell `PyTorch = "2.10.0"`):

1. the steps whose parameters use no fact are planned (a recipe without facts in its parameters: all of them,
   and that plan is the result);
2. the recipe files (the recipe's `files`, `.nix`) as those steps leave them give the facts
   (pinshift.status.branch_facts: `status`'s reading; with `--nixpkgs DIR`, a version the recipes do not state
   is read at their pin in the clone);
3. each `{facts.NAME}` is filled (an unknown fact is written `?` and named `unchecked` in the notes), the
   parameters checked again by the kind, and every typed value judged: one the facts contradict stops the run
   (StepFailed, exit 1, no branch: the value, the fact and where it came from), one no fact can check is named
   `unchecked` in the step's notes (text, Markdown and JSON reports, and the summary);
4. the steps with facts are planned with the filled parameters on the tree the others leave (`PlannedTree`):
   when they come last, as a README step does, every file is planned once; a step without facts after one
   with facts has the whole recipe planned again.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from collections.abc import Mapping
from dataclasses import replace

from pinshift.errors import ParamError, PinshiftError, StepFailed
from pinshift.planning.plan import Plan, iter_tree_changes
from pinshift.planning.runner import plan_recipe
from pinshift.recipes.placeholders import facts_in, fill_facts


def needs_facts(migration) -> bool:
    """Whether a step still to plan writes a fact or claims a typed value."""
    return any(step.facts or step.text_facts or kind.claims(params)
               for step, kind, params in migration.steps[migration.first_step - 1:])


def plan_with_facts(migration, tree) -> Plan:
    """The Plan of the remaining steps with their facts filled and their typed values checked (see the module)."""
    options, first = migration.options, migration.first_step
    if not needs_facts(migration):
        return plan_recipe(tree, migration.recipe, migration.steps, options.run, first)
    with_facts = any(step.facts for step, _, _ in migration.steps[first - 1:])
    before = [entry for number, entry in enumerate(migration.steps, 1) if number < first or not entry[0].facts]
    planned = plan_recipe(tree, migration.recipe, before, options.run, first) if len(before) >= first else None
    last = max((number for number, (step, _, _) in enumerate(migration.steps, 1) if not step.facts), default=0)
    trailing = all(number > last for number, (step, _, _) in enumerate(migration.steps, 1)
                   if number >= first and step.facts)
    facts, notes = _facts(migration, tree, planned)
    values = {name: fact.shown for name, fact in facts.items()}
    aliases = {facts[name].value for name in ("package", "attribute") if name in facts and facts[name].value}
    paths = (PlannedTree(tree, planned) if planned is not None else tree).paths()
    for number in range(first, len(migration.steps) + 1):
        _fill(migration, number, facts, values, aliases, _touches_a_file(migration, number, paths))
    if notes:
        migration.notes.setdefault(first, [])[:0] = notes
    if planned is not None:
        for step in planned.steps:  # only titles and messages took facts there: those steps' plans stand
            recipe_step = migration.steps[step.index - 1][0]
            step.title, step.message, step.total = recipe_step.title, recipe_step.message, len(migration.steps)
    if not with_facts:
        return planned
    if planned is None or not trailing:  # a step after a step with facts: the whole recipe again
        return plan_recipe(tree, migration.recipe, migration.steps, options.run, first)
    rest = plan_recipe(PlannedTree(tree, planned), migration.recipe, migration.steps, options.run, max(first, last + 1))
    planned.steps += rest.steps  # the steps with facts come last: planned once, on the tree the others leave
    planned.notes += [note for note in rest.notes if note not in planned.notes]
    return planned


class PlannedTree:
    """A commit's files as a Plan's steps leave them (a SourceTree, as pinshift.planning.runner reads one): a file
    no step changed is the commit's (its blob id, for the plan memo), a changed one the last step's bytes."""

    def __init__(self, tree, plan: Plan):
        self.tree = tree
        self.max_bytes = getattr(tree, "max_bytes", None)
        self.changes: dict[str, bytes | None] = {}
        self.modes: dict[str, str] = {}
        for step in plan.steps:
            for change in iter_tree_changes(step):
                self.changes[change.path] = change.data
                if change.mode is not None:
                    self.modes[change.path] = change.mode

    def paths(self) -> list[str]:
        kept = [path for path in self.tree.paths() if self.changes.get(path, b"") is not None]
        return sorted(set(kept) | {path for path, data in self.changes.items() if data is not None})

    def read(self, path: str) -> bytes:
        data = self.changes.get(path)
        return data if data is not None else self.tree.read(path)

    def mode(self, path: str) -> str | None:
        if path in self.modes:
            return self.modes[path]
        hook = getattr(self.tree, "mode", None)
        return hook(path) if hook is not None else None

    def memo_id(self, path: str) -> str | None:
        hook = getattr(self.tree, "memo_id", None)
        return hook(path) if hook is not None and path not in self.changes else None


def _facts(migration, tree, planned: Plan | None):
    from pinshift.status.branch_facts import tree_facts
    from pinshift.files.content import SkippedFile
    from pinshift.files.globs import matches

    globs = migration.recipe.files

    def wanted(path: str) -> bool:
        return path.endswith(".nix") and matches(path, globs)

    files: dict[str, bytes | None] = {}
    paths = [path for path in tree.paths() if wanted(path)]
    if hasattr(tree, "contents"):  # a commit's files: one `git cat-file --batch` per chunk, links and large files out
        files.update(tree.contents(paths))
    else:
        for path in paths:
            try:
                files[path] = tree.read(path)
            except SkippedFile:
                continue
    for step in planned.steps if planned is not None else ():
        for change in iter_tree_changes(step):
            if wanted(change.path) or change.path in files:
                files[change.path] = change.data
    checkout = None
    if migration.options.nixpkgs is not None:
        from pinshift.nixpkgs.checkout import NixpkgsCheckout

        checkout = NixpkgsCheckout(migration.options.nixpkgs)
    return tree_facts({path: data for path, data in files.items() if data is not None}, checkout)


def _touches_a_file(migration, number: int, paths: list[str]) -> bool:
    """Whether step `number` has a file to act on: one of the tree's paths (as the steps before leave it) matches
    its files. A step with none plans nothing, so a fact it cannot take or a value the facts contradict is
    no reason to stop the branch (the plan says the step changed nothing, as without facts)."""
    from pinshift.files.globs import matches

    step = migration.steps[number - 1][0]
    globs = migration.recipe.files_for(step)
    return any(matches(path, globs) for path in paths)


def _fill(migration, number: int, facts, values: Mapping[str, str], aliases: set[str], touches: bool = True) -> None:
    from pinshift.status.branch_facts import contradiction, judge, unchecked

    step, kind, params = migration.steps[number - 1]
    where = f"step {number}/{len(migration.steps)} {kind.name}"
    used = facts_in([step.params, step.title, step.message])
    notes = migration.notes.setdefault(number, [])
    known = [f"{{facts.{name}}} {facts[name].value}" for name in used if facts[name].value is not None]
    if known:
        notes.append(f"facts: {', '.join(known)}")
    for name in used:
        if facts[name].value is None:
            notes.append(f"unchecked: {{facts.{name}}} is not known, written \"{facts[name].shown}\" "
                         f"({facts[name].source})")
    if step.facts:
        raw = fill_facts(dict(step.params), values)
        try:
            params = kind.parse_params(raw)
        except (ParamError, PinshiftError) as error:
            unknown = [name for name in step.facts if facts[name].value is None]
            why = f" ({', '.join(f'{{facts.{n}}} is not known: {facts[n].source}' for n in unknown)})" if unknown else ""
            if touches:
                raise StepFailed(f"{_who(migration)}: {where}: the facts do not fit its parameters: {error}{why}; "
                                 f"{_left(migration)}") from None
            # no file to write them into: the step plans nothing, with the sample values the recipe was checked with
            notes.append(f"unchecked: the facts do not fit its parameters: {error}{why}; no file matches the step")
    else:
        raw = dict(step.params)
    for claim in kind.claims(params):
        if facts_in(_raw_value(step.params, claim.key)):
            continue  # the fact itself, not a typed value
        verdict = judge(claim, facts, aliases)
        if verdict.state == "contradicted" and touches:
            raise StepFailed(f"{_who(migration)}: {where}: {contradiction(verdict)}; {_left(migration)}")
        if verdict.state == "contradicted":  # nothing written: the value is claimed nowhere
            notes.append(f"unchecked: {contradiction(verdict)}; no file matches the step")
        if verdict.state == "unchecked":
            notes.append(unchecked(verdict))
    filled = replace(step, params=raw, title=fill_facts(step.title, values), message=fill_facts(step.message, values),
                     facts=())
    migration.steps[number - 1] = (filled, kind, params)
    if not notes:
        migration.notes.pop(number, None)


def _raw_value(params: Mapping, key: str):
    """The value a claim's key (`columns.PyTorch`, `revision`) was typed as, before facts were filled."""
    if key in params:
        return params[key]
    head, _, rest = key.partition(".")
    table = params.get(head)
    return table.get(rest) if isinstance(table, Mapping) else None


def _who(migration) -> str:
    return f"{migration.base} ({migration.repository.short(migration.base_commit)})"


def _left(migration) -> str:
    return "no branch made" if migration.target_commit is None else f"branch {migration.target} unchanged"
