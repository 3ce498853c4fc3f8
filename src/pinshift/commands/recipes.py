"""`pinshift recipes` and `pinshift show`: what can run here, and what exactly it would do.

Read-only: recipes are looked up as `migrate` looks them up (the repository's
`.pinshift/recipes/` first, then the bundled ones), step kinds as `migrate`
loads them (bundled, then `.pinshift/migrations/`, then `--migrations DIR`),
and every kind that does not come with pinshift is named with where it came from.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from pathlib import Path
from typing import Any

import click

from pinshift.errors import UsageError

_REPO_HELP = "The recipe repository (default: the current directory)."
_MIGRATIONS_HELP = "Load extra step kinds from the *.py files of DIR."


def repository_root(directory: Path) -> Path:
    """The work tree containing `directory` (nearest ancestor with `.git`), else `directory` itself.

    A plain walk rather than GitPython: listing recipes must not need git at all.
    """
    start = Path(directory).resolve()
    if not start.is_dir():
        raise UsageError(f"--repo {directory}: not a directory")
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def load_kinds(root: Path, migrations: Path | None) -> dict:
    from pinshift.steps import available_kinds

    return available_kinds(root, migrations)


def origin_label(origin: str, root: Path) -> str:
    """`bundled`, or the kind's file relative to the repository when it lives there."""
    if origin == "bundled":
        return origin
    try:
        return Path(origin).resolve().relative_to(root).as_posix()
    except ValueError:
        return origin


def loaded_notes(kinds: dict, root: Path, names=None) -> list[str]:
    """One note per step kind that does not come with pinshift (the issue: 'and said so in the output')."""
    return [f"note: step kind '{kind.name}' loaded from {origin_label(kind.origin, root)}"
            for kind in sorted(kinds.values(), key=lambda k: k.name)
            if kind.origin != "bundled" and (names is None or kind.name in names)]


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
    from pinshift.steps import _key

    hints = typing.get_type_hints(kind.params_type)
    rows = []
    for f in dataclasses.fields(kind.params_type):
        key = _key(f.name)
        if f.default is not dataclasses.MISSING:
            default = f"default: {toml_value(f.default)}"
        elif f.default_factory is not dataclasses.MISSING:
            default = f"default: {toml_value(f.default_factory())}"
        else:
            default = "required"
        rows.append((key, type_name(hints[f.name]), default, _docstring_help(kind.doc, key)))
    return rows


def _table(rows: list[tuple[str, ...]], indent: str = "") -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)] if rows else []
    return [(indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1]).rstrip()
            for row in rows]


# --- what the commands print -------------------------------------------------------------------


def kinds_listing(kinds: dict, root: Path) -> list[str]:
    rows = []
    for name in sorted(kinds):
        kind = kinds[name]
        summary = re.sub(rf"^{re.escape(name)}\s+[—-]+\s+", "", kind.summary)
        rows.append((name, origin_label(kind.origin, root), summary))
    return _table(rows)


def kind_documentation(kind, root: Path) -> list[str]:
    files = ", ".join(kind.languages) or "any"
    if kind.plans_paths:
        files = f"any, self-references in {files}" if kind.languages else "any"
    lines = [f"step kind {kind.name} ({origin_label(kind.origin, root)}; files: {files})", ""]
    lines.extend(kind.doc.splitlines() or ["(this step kind has no documentation)"])
    rows = parameter_rows(kind)
    lines += ["", "Parameters (as validated; keys are written kebab-case):"]
    lines.extend(_table(rows, "  ") if rows else ["  none"])
    return lines


def recipe_origin(argument: str, recipe) -> str:
    """Where `find_recipe` found it: a file named on the command line, the repository, or bundled."""
    if argument.endswith(".toml") or "/" in argument:
        return f"file {recipe.source}"
    if recipe.source.startswith(".pinshift/"):
        return f"repository: {recipe.source}"
    return f"bundled: {recipe.source}"


def recipe_description(recipe, origin: str, resolved, kinds: dict, root: Path) -> list[str]:
    """The recipe as it will run: every step with all its parameters, defaults filled in."""
    lines = [f"recipe {recipe.name} ({origin})"]
    for label, value in (("description", recipe.description), ("base", recipe.base), ("target", recipe.target),
                         ("files", ", ".join(recipe.files))):
        if value:
            lines.append(f"{label:<12} {value}")
    lines.extend(loaded_notes(kinds, root, {kind.name for _, kind, _ in resolved}))
    total = len(resolved)
    for index, (step, kind, params) in enumerate(resolved, 1):
        lines += ["", f"step {index}/{total} {kind.name}: {step.title}"]
        if step.files is not None:
            lines.append(f"  files: {', '.join(step.files)}")
        given = {_kebab(k) for k in step.params}
        rows = []
        for f in dataclasses.fields(params):
            key, value = _kebab(f.name), toml_value(getattr(params, f.name))
            rows.append((key, value if key in given else f"{value} (default)"))
        width = max((len(key) for key, _ in rows), default=0)
        lines.extend(f"  {key:<{width}}  = {value}" for key, value in rows)
        if step.message.strip():
            lines.append(f"  message: {step.message.strip().splitlines()[0]}")
    return lines


def _kebab(name: str) -> str:
    from pinshift.steps import _key

    return _key(name)


@click.command()
@click.option("--repo", type=click.Path(path_type=Path), default=".", help=_REPO_HELP)
@click.option("--kinds", is_flag=True, help="List the step kinds instead of the recipes.")
@click.option("--migrations", type=click.Path(path_type=Path), default=None, help=_MIGRATIONS_HELP)
def recipes(repo: Path, kinds: bool, migrations: Path | None) -> None:
    """List the recipes available here and where each comes from (.pinshift/recipes/ or bundled)."""
    root = repository_root(repo)
    loaded = load_kinds(root, migrations)
    if kinds:
        lines = kinds_listing(loaded, root)
    else:
        from pinshift.recipes import list_recipes

        lines = _table([(name, origin, description) for name, origin, description in list_recipes(root)])
        lines.extend(loaded_notes(loaded, root))
    click.echo("\n".join(lines))


@click.command()
@click.argument("recipe", required=False)
@click.option("--step", "step_kind", metavar="KIND", help="Document step kind KIND instead.")
@click.option("--steps", "all_kinds", is_flag=True, help="List every step kind.")
@click.option("--repo", type=click.Path(path_type=Path), default=".", help=_REPO_HELP)
@click.option("--migrations", type=click.Path(path_type=Path), default=None, help=_MIGRATIONS_HELP)
def show(recipe: str | None, step_kind: str | None, all_kinds: bool, repo: Path, migrations: Path | None) -> None:
    """Show RECIPE's resolved steps and parameters (or a name or path to a .toml file); or a step kind."""
    chosen = [name for name, given in (("RECIPE", recipe), ("--step", step_kind), ("--steps", all_kinds)) if given]
    if len(chosen) != 1:
        raise UsageError("name exactly one of RECIPE, --step KIND or --steps; `pinshift recipes` lists the recipes")
    root = repository_root(repo)
    kinds = load_kinds(root, migrations)
    if all_kinds:
        lines = kinds_listing(kinds, root)
    elif step_kind:
        from pinshift.steps import get_kind

        lines = kind_documentation(get_kind(kinds, step_kind), root)
    else:
        from pinshift.recipes import find_recipe, validate_recipe

        found = find_recipe(recipe, root)
        lines = recipe_description(found, recipe_origin(recipe, found), validate_recipe(found, kinds), kinds, root)
    click.echo("\n".join(lines))
