"""`pinshift infer`: learn a recipe from two commits, then prove it.

1. Compare: git's view of which files changed and which were renamed or copied (trees.py).
2. Propose and try, kind by kind in recipe order (PHASES): each proposer reads what still
   differs between the current state and TARGET (token_hunks.py, state.py) and suggests steps; each
   suggestion is planned on the state with the runner `pinshift migrate` uses and kept only
   if every byte it changes is TARGET's (prove.py). Later kinds see what earlier steps did:
   rename-attr is inferred on files pin-nixpkgs has already converted.
3. Prove: the recipe, as the TOML text that will be written, is read back, validated and
   planned from BASE in memory exactly as `pinshift migrate --dry-run` plans it; a step whose
   plan changes a byte TARGET did not change is dropped and the proof runs again.
4. Measure: each changed file reproduced, partly reproduced or not; each hunk left (coverage.py).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.errors import PinshiftError, UsageError
from pinshift.files.globs import glob_problem, matches
from pinshift.infer import propose_docs, propose_files, propose_nix, propose_pins, propose_rewrite, propose_strings
from pinshift.infer.candidates import Setting, draft_message, literal, literal_value, writable
from pinshift.infer.coverage import Coverage, corrupted, measure, planned_files, recipe_origins
from pinshift.infer.group_globs import describe
from pinshift.infer.prove import Accepted, Dropped, attempt
from pinshift.infer.recipe_toml import render
from pinshift.infer.state import State
from pinshift.infer.trees import Comparison
from pinshift.planning.plan import Plan
from pinshift.recipes.recipe import DEFAULT_FILES, parse_recipe, validate_recipe
from pinshift.planning.runner import plan_recipe

# The order steps are tried in, and the order they run in: files move first (later steps see the
# new names), then whole-file conversions, pins, rewrite patterns for changes of shape no other kind
# makes (before a rename takes one word of them), names, bindings, strings, markers, documents, and
# last rewrite patterns for what no other kind explained.
PHASES = (
    ("rename-files", propose_files.propose_renames),
    ("clone-files", propose_files.propose_clones),
    ("remove-files", propose_files.propose_removals),
    ("pin-nixpkgs", propose_pins.propose_pin_nixpkgs),
    ("pin-swap", propose_pins.propose_pin_swaps),
    ("rewrite", propose_rewrite.propose_shape_rewrites),  # a change of shape no other kind makes
    ("rename-attr", propose_nix.propose_attr_renames),
    ("rename-binding", propose_nix.propose_binding_renames),
    ("set-binding", propose_nix.propose_bindings),
    ("replace-in-strings", propose_strings.propose_string_replacements),
    ("metadata-rev", propose_nix.propose_metadata_revs),
    ("readme-branch-table", propose_docs.propose_readme_tables),
    ("python-constant", propose_docs.propose_python_constants),
    ("rewrite", propose_rewrite.propose_rewrites),  # last: a pattern only for what no other kind explained
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
    from pinshift.git.repo import Repository
    from pinshift.recipes.placeholders import migration_branches

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
        from pinshift.steps.registry import available_kinds

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
    comparison = inference.comparison
    subject = repository.subject(comparison.target_commit)
    one_commit = repository.first_parent(comparison.target_commit) == comparison.base_commit
    recipe = {"name": target or recipe_name(subject) or "inferred",
              "description": (f"{subject} (inferred by pinshift infer from {setting.base} to {setting.target})"
                              if subject and one_commit else
                              f"Inferred by pinshift infer from {setting.base} to {setting.target}"),
              "base": base, "target": target, "files": list(setting.recipe_files)}
    steps = []
    for accepted, title in zip(inference.steps, distinct_titles(inference.steps)):
        candidate = accepted.candidate
        message = draft_message(title, candidate.detail)
        table = {"kind": candidate.kind, "title": title, "message": message, "params": candidate.params}
        if accepted.files is not None:
            table["files"] = list(accepted.files)
        steps.append(table)
    return recipe, steps


def recipe_name(subject: str) -> str:
    """A recipe name from a commit subject: `Add CUDA 12.x variants` -> `add-cuda-12.x-variants`.

        >>> recipe_name("Add CUDA 12.x variants"), recipe_name("vLLM 0.16.0: bump (#42)")
        ('add-cuda-12.x-variants', 'vllm-0.16.0-bump-42')
    """
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9._]*", subject.lower())
    name = "-".join(w.rstrip(".") for w in words)
    return name[:60].rstrip("-.")


def distinct_titles(steps: list[Accepted]) -> list[str]:
    """Each step's title, told apart from the others': a step restricted to a group of files says which
    (its one or two globs); titles still alike show more of their text, then the files they run on."""
    titles = []
    for accepted in steps:
        candidate = accepted.candidate
        title = candidate.title
        if candidate.files is None and accepted.files is not None and len(accepted.files) <= 2 \
                and len(candidate.intended) > 1:
            title += f" ({', '.join(glob.rpartition('/')[2] for glob in accepted.files)})"
        titles.append(title)
    for limit in (80, 160):
        if len(set(titles)) == len(titles):
            break
        for index, accepted in enumerate(steps):
            if titles.count(titles[index]) > 1 and accepted.candidate.retitle is not None:
                titles[index] = accepted.candidate.retitle(limit)
    alike = [titles.count(title) > 1 for title in titles]
    for index, accepted in enumerate(steps):
        if alike[index]:
            files = accepted.files or ()
            where = ", ".join(glob.rpartition("/")[2] for glob in files[:2]) if files else "the recipe's files"
            titles[index] = f"{titles[index]} ({where}{', …' if len(files) > 2 else ''})"
    alike = [titles.count(title) > 1 for title in titles]  # (still alike: the same step twice) numbered
    numbered = list(titles)
    for index, title in enumerate(titles):
        if alike[index]:
            numbered[index] = f"{title} ({_ordinal(titles[: index + 1].count(title))})"
    return numbered


def _ordinal(number: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(number, f"number {number}")


MAX_PROOF_ROUNDS = 24


def prove(inference: Inference, kinds) -> None:
    """Plan the recipe as written from BASE; keep each step off the files it leaves as neither BASE nor TARGET
    has them (or drop it); measure coverage. The recipe written is the one whose whole plan passed."""
    comparison = inference.comparison
    for _ in range(MAX_PROOF_ROUNDS):
        inference.recipe, inference.step_tables = recipe_tables(inference)
        if not inference.steps:
            break
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
        if refused is not None:
            dropped = inference.steps.pop(refused.index - 1)
            inference.dropped.append(Dropped(dropped.candidate, f"the whole recipe's plan refuses "
                                                                f"{refused.refused[0].path} (dropped at the proof)"))
            continue
        planned = planned_files(plan, comparison.base_tree)
        wrong = corrupted(comparison, planned, recipe_origins(plan))
        if not wrong:
            inference.plan = plan
            inference.coverage = measure(comparison, planned)
            return
        _keep_off(inference, plan, wrong)
    inference.steps.clear()  # (no recipe proved within the rounds: nothing is written)
    inference.recipe, inference.step_tables = recipe_tables(inference)
    inference.plan = Plan(recipe=inference.recipe["name"], steps=[])
    inference.coverage = measure(comparison, planned_files(inference.plan, comparison.base_tree))


def _keep_off(inference: Inference, plan: Plan, wrong: dict[str, str]) -> None:
    """Each wrong file is kept off the last step that changed it: that step's `files` narrowed to the rest of
    what it changed, or the step dropped when no few globs say the rest. The proof then runs again."""
    comparison = inference.comparison
    names: dict[str, set[str]] = {}  # a wrong path and the names it had on the way (renamed or cloned from)
    origins = recipe_origins(plan)
    for path in wrong:
        names[path] = {path, origins.get(path, path)}
    culprits: dict[int, set[str]] = {}
    for path, known in names.items():
        step = next((s for s in reversed(plan.steps) if any(
            {c.path, c.old_path, c.source} & known for c in s.changed)), None)
        if step is not None:
            culprits.setdefault(step.index - 1, set()).update(known)
    if not culprits:  # (cannot happen: a wrong path is one a step wrote) drop the last step rather than loop
        dropped = inference.steps.pop()
        inference.dropped.append(Dropped(dropped.candidate, f"the whole recipe's plan {next(iter(wrong.values()))}"))
        return
    universe = set(comparison.base_tree.paths()) | set(comparison.target_paths())
    for index in sorted(culprits, reverse=True):
        accepted = inference.steps[index]
        step = plan.steps[index]
        keep = {p for c in step.changed for p in (c.path, c.old_path, c.source) if p is not None} - culprits[index]
        files = describe(keep, universe - keep) if keep else None
        first = sorted(culprits[index])[0]
        why = wrong.get(first) or next(iter(wrong.values()))
        if files is None:
            inference.steps.pop(index)
            how = "" if not keep else ": no few globs say the files it is right for"
            inference.dropped.append(Dropped(accepted.candidate, f"the whole recipe's plan {why} (dropped at the "
                                                                  f"proof{how})"))
        else:
            accepted.files = files
