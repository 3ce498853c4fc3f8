"""`pinshift recipes` and `pinshift show`: what can run here, and what exactly it would do.

Read-only: recipes are looked up as `migrate` looks them up (the repository's
`.pinshift/recipes/` first, then the bundled ones), step kinds as `migrate`
finds them (bundled, then `--migrations DIR`, then `.pinshift/migrations/`), and
every kind that does not come with pinshift is named with where it came from.
Listing runs no repository code: kinds outside pinshift are listed from a static
read of their files; `show RECIPE` and `show --step KIND` import one only when
the recipe or KIND needs it, with consent (`--trust-repo`, `pinshift trust`).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import dataclasses
import re
import types
import typing
from pathlib import Path
from typing import Any

import click

from pinshift.commands.completion import complete_recipes, complete_step_kinds
from pinshift.report.display import echo_fitted, printable
from pinshift.errors import UsageError

_REPO_HELP = "The recipe repository (default: the current directory)."
_MIGRATIONS_HELP = "Load extra step kinds from the *.py files of DIR (naming DIR consents to running them)."
_TRUST_HELP = "Allow the repository's own step kinds (.pinshift/migrations/*.py) that are needed to run."


def repository_root(directory: Path) -> Path:
    """The work tree containing `directory` (nearest ancestor with `.git`), else `directory` itself.

    A plain walk rather than git: listing recipes must not need git at all.
    """
    start = Path(directory).resolve()
    if not start.is_dir():
        raise UsageError(f"--repo {directory}: not a directory")
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def load_kinds(root: Path, migrations: Path | None, trust_repo: bool = False):
    """The step kinds here (pinshift.steps.registry.StepKinds): nothing outside pinshift is imported until asked for."""
    from pinshift.steps.registry import available_kinds
    from pinshift.steps.trust import Consent

    return available_kinds(root, migrations, Consent(trust_repo, migrations))


def origin_label(origin: str, root: Path) -> str:
    """`bundled`, or the kind's file relative to the repository when it lives there."""
    if origin == "bundled":
        return origin
    try:
        return Path(origin).resolve().relative_to(root).as_posix()
    except ValueError:
        return origin


def loaded_notes(kinds, root: Path) -> list[str]:
    """One note per loaded step kind that does not come with pinshift (`kinds`: StepKind values)."""
    return [f"note: step kind '{kind.name}' loaded from {origin_label(kind.origin, root)}"
            for kind in sorted({k.name: k for k in kinds}.values(), key=lambda k: k.name)
            if kind.origin != "bundled"]


def script_notes(kinds, root: Path) -> list[str]:
    """What `pinshift recipes` says about step kinds outside pinshift, found without running them."""
    lines = []
    for name in sorted(kinds.scripts):
        for script in kinds.scripts[name]:
            where = printable(origin_label(str(script.path), root))
            reason = kinds.consent_for(script)
            status = f"trusted: {reason}" if reason else "not trusted: runs only with --trust-repo or after `pinshift trust`"
            lines.append(f"note: step kind '{printable(name)}' in {where} ({status})")
    lines.extend(shadowed_notes(kinds, root))
    return lines


def shadowed_notes(kinds, root: Path) -> list[str]:
    return [f"note: {printable(origin_label(str(s.path), root))} defines '{s.kind}', the name of a bundled step kind; "
            "it is never loaded (give it a name of its own)" for s in kinds.shadowed]


# --- values and parameter types as users write them -------------------------------------------


def toml_value(value: Any) -> str:
    """A parameter value spelled as in a recipe (TOML), `none` for an absent optional one."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        return f'"{escaped}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_table_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a table parameter (pin-swap's new)
        return toml_value({_kebab(f.name): getattr(value, f.name) for f in dataclasses.fields(value)})
    return repr(value)


def _table_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_value(key)


def type_name(hint: Any) -> str:
    """`str`, `list of str`, `"skip" | "insert"`, `table of str`, `int, optional`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        named = " | ".join(type_name(a) for a in rest)
        return f"{named}, optional" if len(rest) < len(args) else named
    if origin is typing.Literal:
        return " | ".join(toml_value(a) for a in args)
    if origin in (tuple, list):
        return f"list of {type_name(args[0]) if args else 'values'}"
    if origin is dict or hint is dict:
        return f"table of {type_name(args[1]) if len(args) == 2 else 'values'}"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return "table { " + ", ".join(_kebab(f.name) for f in dataclasses.fields(hint)) + " }"
    return getattr(hint, "__name__", str(hint))


# "str, required. The revision..." -> "The revision...": the table shows the type and default already
_TYPE_PREFIX = re.compile(r"^[^.]*\b(?:required|optional|default)\b[^.]*\.\s+")


def _docstring_help(doc: str, key: str) -> str:
    """The text a kind's docstring gives `key` in its `Parameters:` section (continuation lines joined)."""
    section = doc.partition("Parameters:")[2]
    lines = section.splitlines()
    for number, line in enumerate(lines):
        match = re.match(rf"(\s+){re.escape(key)}\s{{2,}}(\S.*)", line)
        if not match:
            continue
        text = [match.group(2).strip()]
        indent = len(line) - len(line.lstrip()) + len(key) + 2
        for follow in lines[number + 1:]:
            if not follow.strip() or len(follow) - len(follow.lstrip()) < indent:
                break
            text.append(follow.strip())
        return _TYPE_PREFIX.sub("", " ".join(text), count=1)
    return ""


def parameter_rows(kind) -> list[tuple[str, str, str, str]]:
    """(key, type, `required` or `default: X`, help) for each parameter of a kind, from its Params."""
    return [(p.key, type_name(p.hint), "required" if p.required else f"default: {toml_value(p.default)}",
             _docstring_help(kind.doc, p.key))
            for p in kind.parameters()]


def _table(rows: list[tuple[str, ...]], indent: str = "") -> list[str]:
    """Columns aligned; the last one (a summary) wraps under itself where the screen is narrower (fit_lines)."""
    from pinshift.report.display import fit_line, width_for

    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)] if rows else []
    hang = " " * (len(indent) + sum(w + 2 for w in widths))
    return [piece for row in rows
            for piece in fit_line((indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  "
                                   + row[-1]).rstrip(), width_for(), hang)]


# --- what the commands print -------------------------------------------------------------------


def kinds_listing(kinds, root: Path) -> list[str]:
    """Every kind by name, with its origin and summary; kinds outside pinshift are read, not run."""
    rows = []
    for name in kinds:
        if name in kinds.bundled:
            origin, summary = "bundled", kinds.bundled[name].summary
        else:
            script = kinds.scripts[name][0]
            origin, summary = origin_label(str(script.path), root), script.summary
        summary = re.sub(rf"^{re.escape(name)}\s+[—-]+\s+", "", summary)
        rows.append((printable(name), printable(origin), printable(summary)))
    return _table(rows) + shadowed_notes(kinds, root)


def kind_documentation(kind, root: Path) -> list[str]:
    files = ", ".join(kind.languages) or "any"
    if kind.plans_paths:
        files = f"any, self-references in {files}" if kind.languages else "any"
    lines = [f"step kind {kind.name} ({origin_label(kind.origin, root)}; files: {files})", ""]
    from pinshift.languages.fit import reflow
    from pinshift.report.display import width_for

    lines.extend(reflow(kind.doc.splitlines(), width_for()) or ["(this step kind has no documentation)"])
    lines += ["", NEEDED_OPTIONAL if kind.optional else NEEDED_ESSENTIAL]
    rows = parameter_rows(kind)
    lines += ["", "Parameters (as validated; keys are written kebab-case):"]
    lines.extend(_table(rows, "  ") if rows else ["  none"])
    return lines


NEEDED_ESSENTIAL = ("In pinshift migrate, a step of this kind that changes nothing on a base stops that base: no "
                    "branch is made for it (exit 1), unless the recipe step says optional = true (docs/recipes.md).")
NEEDED_OPTIONAL = ("In pinshift migrate, a step of this kind may change nothing on a base (optional by default); "
                   "optional = false in the recipe step makes it needed (docs/recipes.md).")


def optional_line(step, kind) -> str:
    """Whether a recipe step may change nothing on a base, and why (pinshift.branches.migrate.essential)."""
    if step.optional is not None:
        return f"  optional: {'yes' if step.optional else 'no'} (optional = {'true' if step.optional else 'false'})" \
               + ("" if step.optional else ": if it changes nothing on a base, no branch is made")
    if kind.optional:
        return f"  optional: yes ({kind.name}'s default)"
    return "  optional: no: if it changes nothing on a base, no branch is made"


def recipe_origin(argument: str, recipe) -> str:
    """Where `find_recipe` found it: a file named on the command line, the repository, or bundled."""
    if argument.endswith(".toml") or "/" in argument:
        return f"file {recipe.source}"
    if recipe.source.startswith(".pinshift/"):
        return f"repository: {recipe.source}"
    return f"bundled: {recipe.source}"


def recipe_description(recipe, origin: str, resolved, kinds: dict, root: Path) -> list[str]:
    """The recipe as it will run: every step with all its parameters, defaults filled in."""
    from pinshift.recipes.placeholders import facts_in

    lines = [f"recipe {recipe.name} ({origin})"]
    for label, value in (("description", recipe.description), ("base", recipe.base), ("target", recipe.target),
                         ("files", ", ".join(recipe.files))):
        if value:
            lines.append(f"{label:<12} {value}")
    lines.extend(loaded_notes([kind for _, kind, _ in resolved], root))
    total = len(resolved)
    for index, (step, kind, params) in enumerate(resolved, 1):
        lines += ["", f"step {index}/{total} {kind.name}: {step.title}"]
        if step.files is not None:
            lines.append(f"  files: {', '.join(step.files)}")
        given = {_kebab(k): v for k, v in step.params.items()}
        rows = []
        for f in dataclasses.fields(params):
            key = _kebab(f.name)
            # a parameter with `{facts.…}` is shown as written: its typed value is only a sample until migrate
            value = toml_value(given[key] if key in given and facts_in(given[key]) else getattr(params, f.name))
            rows.append((key, value if key in given else f"{value} (default)"))
        width = max((len(key) for key, _ in rows), default=0)
        lines.extend(f"  {key:<{width}}  = {value}" for key, value in rows)
        if step.message.strip():
            lines.append(f"  message: {step.message.strip().splitlines()[0]}")
        lines.append(optional_line(step, kind))
    return lines


def _kebab(name: str) -> str:
    from pinshift.steps.kind import param_key

    return param_key(name)


@click.command()
@click.option("--repo", type=click.Path(path_type=Path), default=".", help=_REPO_HELP)
@click.option("--kinds", is_flag=True, help="List the step kinds instead of the recipes.")
@click.option("--migrations", type=click.Path(path_type=Path), default=None, help=_MIGRATIONS_HELP)
def recipes(repo: Path, kinds: bool, migrations: Path | None) -> None:
    """List the recipes available here and where each comes from (.pinshift/recipes/ or bundled).

    Runs no repository code: step kinds outside pinshift are listed from a static read of their files.
    """
    root = repository_root(repo)
    found = load_kinds(root, migrations)
    if kinds:
        lines = kinds_listing(found, root)
    else:
        from pinshift.recipes.recipe import list_recipes

        skipped: list[str] = []
        lines = _table([(name, origin, description) for name, origin, description in list_recipes(root, skipped)])
        lines.extend(f"note: {line}" for line in skipped)
        lines.extend(script_notes(found, root))
    echo_fitted(printable("\n".join(lines), keep_newlines=True))


@click.command()
@click.argument("recipe", required=False, shell_complete=complete_recipes)
@click.option("--step", "step_kind", metavar="KIND", shell_complete=complete_step_kinds, help="Document step kind KIND instead.")
@click.option("--steps", "all_kinds", is_flag=True, help="List every step kind.")
@click.option("--repo", type=click.Path(path_type=Path), default=".", help=_REPO_HELP)
@click.option("--migrations", type=click.Path(path_type=Path), default=None, help=_MIGRATIONS_HELP)
@click.option("--trust-repo", is_flag=True, help=_TRUST_HELP)
def show(recipe: str | None, step_kind: str | None, all_kinds: bool, repo: Path, migrations: Path | None,
         trust_repo: bool) -> None:
    """Show RECIPE's resolved steps and parameters (or a name or path to a .toml file); or a step kind."""
    chosen = [name for name, given in (("RECIPE", recipe), ("--step", step_kind), ("--steps", all_kinds)) if given]
    if len(chosen) != 1:
        raise UsageError("name exactly one of RECIPE, --step KIND or --steps; `pinshift recipes` lists the recipes")
    root = repository_root(repo)
    kinds = load_kinds(root, migrations, trust_repo)
    if all_kinds:
        lines = kinds_listing(kinds, root)
    elif step_kind:
        from pinshift.steps.registry import get_kind

        lines = kind_documentation(get_kind(kinds, step_kind), root)
    else:
        from pinshift.recipes.recipe import find_recipe, validate_recipe

        found = find_recipe(recipe, root)
        lines = recipe_description(found, recipe_origin(recipe, found), validate_recipe(found, kinds), kinds, root)
    echo_fitted(printable("\n".join(lines), keep_newlines=True))
