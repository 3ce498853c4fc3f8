"""`pinshift infer`: learn a recipe from two commits, then prove it.

1. Compare: git's view of which files changed and which were renamed or copied (trees.py).
2. Propose and try, kind by kind in recipe order (PHASES): each proposer reads what still
   differs between the current state and TARGET (hunks.py, state.py) and suggests steps; each
   suggestion is planned on the state with the runner `pinshift migrate` uses and kept only
   if every byte it changes is TARGET's (prove.py). Later kinds see what earlier steps did:
   rename-attr is inferred on files pin-nixpkgs has already converted.
3. Prove: the recipe, as the TOML text that will be written, is read back, validated and
   planned from BASE in memory exactly as `pinshift migrate --dry-run` plans it; a step whose
   plan changes a byte TARGET did not change is dropped and the proof runs again.
4. Measure: each changed file reproduced, partly reproduced or not; each hunk left (coverage.py).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.errors import PinshiftError, UsageError
from pinshift.globs import glob_problem, matches
from pinshift.infer import propose_docs, propose_files, propose_nix, propose_pins, propose_strings
from pinshift.infer.candidates import Setting, draft_message, literal, literal_value, writable
from pinshift.infer.coverage import Coverage, measure, overreaching, planned_files
from pinshift.infer.prove import Accepted, Dropped, attempt
from pinshift.infer.recipe_toml import render
from pinshift.infer.state import State
from pinshift.infer.trees import Comparison
from pinshift.plan import Plan
from pinshift.recipes import DEFAULT_FILES, parse_recipe, validate_recipe
from pinshift.runner import plan_recipe

# The order steps are tried in, and the order they run in: files move first (later steps see the
# new names), then whole-file conversions, pins, names, bindings, strings, markers, documents.
PHASES = (
    ("rename-files", propose_files.propose_renames),
    ("clone-files", propose_files.propose_clones),
    ("remove-files", propose_files.propose_removals),
    ("pin-nixpkgs", propose_pins.propose_pin_nixpkgs),
    ("pin-swap", propose_pins.propose_pin_swaps),
    ("rename-attr", propose_nix.propose_attr_renames),
    ("set-binding", propose_nix.propose_bindings),
    ("replace-in-strings", propose_strings.propose_string_replacements),
    ("metadata-rev", propose_nix.propose_metadata_revs),
    ("readme-branch-table", propose_docs.propose_readme_tables),
    ("python-constant", propose_docs.propose_python_constants),
)


@dataclass(frozen=True)
class InferOptions:
    base: str
    target: str
    files: tuple[str, ...] = ()
    repo: Path = Path(".")


@dataclass
class Inference:
    """What `infer` found: the recipe (None when no step could be inferred), the steps kept and dropped,
    the proof's plan and the coverage it measured."""

    comparison: Comparison
    setting: Setting
    steps: list[Accepted] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    recipe: dict = field(default_factory=dict)
    step_tables: list[dict] = field(default_factory=list)
    plan: Plan | None = None
    coverage: Coverage | None = None

    @property
    def complete(self) -> bool:
        return self.coverage is not None and self.coverage.complete


def open_comparison(options: InferOptions) -> tuple[Comparison, Setting]:
    """Check the repository, the refs and the globs; compare the two commits. Raises for every usage error."""
    from pinshift.gitrepo import Repository
    from pinshift.placeholders import migration_branches

    for glob in options.files:
        problem = glob_problem(glob)
        if problem or not glob:
            raise UsageError(f"--files '{glob}': not a usable glob ({problem or 'empty'})")
    repository = Repository.open(options.repo)
    hint = "name a branch or commit of this repository"
    base_commit = repository.resolve_commit(options.base, "BASE", hint)
    target_commit = repository.resolve_commit(options.target, "TARGET", hint)
    comparison = Comparison.of(repository, options.base, options.target, base_commit, target_commit, options.files)
    if not comparison.changed:
        within = " within --files" if options.files else ""
        more = f" ({comparison.outside} changed file{'s' if comparison.outside != 1 else ''} outside --files)" \
            if comparison.outside else ""
        raise UsageError(f"{options.base} and {options.target} have the same files{within}{more}: nothing to infer")
    branches = {"base": migration_branches(repository, options.base, options.target, "")["base"],
                "target": migration_branches(repository, options.target, options.target, "")["base"]}
    setting = Setting(recipe_files=options.files or default_files(comparison), branches=branches,
                      base=options.base, target=options.target)
    return comparison, setting


def default_files(comparison: Comparison) -> tuple[str, ...]:
    """The recipe's `files`: pinshift's default when the changed Nix files are under it, else every Nix file."""
    nix = [p for p in comparison.target_paths() + sorted(comparison.removed) if p.endswith(".nix")]
    if nix and all(matches(p, DEFAULT_FILES) for p in nix):
        return DEFAULT_FILES
    return ("**/*.nix",)


def infer(options: InferOptions, kinds=None) -> Inference:
    comparison, setting = open_comparison(options)
    if kinds is None:
        from pinshift.kinds import available_kinds

        kinds = available_kinds()
    inference = Inference(comparison, setting)
    state = State(comparison)
    for _, propose in PHASES:
        candidates = propose(state, setting)
        mark_rivals(candidates)
        for candidate in sorted(candidates, key=lambda c: (-len(c.intended) if c.narrow_only else 0, c.order)):
            if not writable(candidate.params) or not writable(candidate.title):
                inference.dropped.append(Dropped(candidate, "its text is not UTF-8 (a recipe cannot hold it)"))
                continue
            as_written(candidate)
            outcome = attempt(state, candidate, setting, kinds)
            (inference.steps if isinstance(outcome, Accepted) else inference.dropped).append(outcome)
    prove(inference, kinds)
    return inference


def as_written(candidate) -> None:
    """Braces doubled in text that would otherwise read as a `{placeholder}` (all but `templated` keys)."""
    candidate.params = {key: value if key in candidate.templated else literal_value(value)
                        for key, value in candidate.params.items()}
    for key in ("title", "detail"):
        if key not in candidate.templated:
            setattr(candidate, key, literal(getattr(candidate, key)))


def mark_rivals(candidates) -> None:
    """Candidates that stand for different groups of files doing the same thing differently run on their
    group only (`files` restricted), largest group first, whatever order their evidence suggests."""
    keys: dict[tuple, int] = {}
    for candidate in candidates:
        if candidate.rivals:
            keys[candidate.rivals] = keys.get(candidate.rivals, 0) + 1
    for candidate in candidates:
        if candidate.rivals and keys[candidate.rivals] > 1:
            candidate.narrow_only = True


# --- the proof ------------------------------------------------------------------------------


def recipe_tables(inference: Inference) -> tuple[dict, list[dict]]:
    """The recipe's top-level keys and its step tables, as they will be written."""
    setting, repository = inference.setting, inference.comparison.repository
    base = setting.branches["base"] if repository.branch_commit(setting.branches["base"]) else ""
    target = setting.branches["target"] if repository.branch_commit(setting.branches["target"]) else ""
    recipe = {"name": target or "inferred",
              "description": f"Inferred by pinshift infer from {setting.base} to {setting.target}",
              "base": base, "target": target, "files": list(setting.recipe_files)}
    steps = []
    for accepted in inference.steps:
        candidate = accepted.candidate
        title = candidate.title
        if candidate.files is None and accepted.files is not None and len(accepted.files) <= 2 \
                and len(candidate.intended) > 1:
            title += f" ({', '.join(glob.rpartition('/')[2] for glob in accepted.files)})"
        message = draft_message(title, candidate.detail)
        table = {"kind": candidate.kind, "title": title, "message": message, "params": candidate.params}
        if accepted.files is not None:
            table["files"] = list(accepted.files)
        steps.append(table)
    return recipe, steps


def prove(inference: Inference, kinds) -> None:
    """Plan the recipe as written from BASE; drop steps that change what TARGET did not; measure coverage."""
    comparison = inference.comparison
    while True:
        inference.recipe, inference.step_tables = recipe_tables(inference)
        if not inference.steps:
            inference.plan = Plan(recipe="inferred", steps=[])
            inference.coverage = measure(comparison, planned_files(inference.plan, comparison.base_tree))
            return
        text = render(inference.recipe, inference.step_tables)
        recipe = parse_recipe(tomllib.loads(text), "the inferred recipe")
        try:
            resolved = validate_recipe(recipe, kinds, inference.setting.branches)
            plan = plan_recipe(comparison.base_tree, recipe, resolved)
        except PinshiftError as error:  # a recipe that cannot run: drop its last step and prove again
            dropped = inference.steps.pop()
            inference.dropped.append(Dropped(dropped.candidate, f"the whole recipe's plan fails with it: "
                                                                f"{str(error).splitlines()[0]} (dropped at the proof)"))
            continue
        refused = next((s for s in plan.steps if s.refused), None)
        planned = planned_files(plan, comparison.base_tree)
        wrong = overreaching(comparison, planned)
        if refused is None and not wrong:
            inference.plan = plan
            inference.coverage = measure(comparison, planned)
            return
        dropped = inference.steps.pop(_culprit(plan, refused, wrong))
        why = f"refuses {refused.refused[0].path}" if refused else f"changes {wrong[0]}, which TARGET does not do"
        inference.dropped.append(Dropped(dropped.candidate, f"the whole recipe's plan {why} (dropped at the proof)"))


def _culprit(plan: Plan, refused, wrong: list[str]) -> int:
    """The index of the step to drop: the refusing step, else the last step that changed a wrong path."""
    if refused is not None:
        return refused.index - 1
    for step in reversed(plan.steps):
        if any(change.path in wrong or change.old_path in wrong for change in step.changed):
            return step.index - 1
    return len(plan.steps) - 1
