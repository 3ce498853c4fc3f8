"""Recipes: named, declarative TOML files that say which steps run, in which order, on which files.

A recipe is data a reviewer can read (see docs/recipes.md):

    name = "pytorch-2.10-cuda12_9"
    description = "..."
    base = "pytorch-2.9"
    target = "pytorch-2.10-cuda12_9"
    files = [".flox/pkgs/**/*.nix"]

    [[steps]]
    kind = "pin-swap"
    title = "Pin nixpkgs to 0182a36"
    [steps.params]
    old = "6a030d5"
    new = "0182a361324364ae3f436a63005877674cf45efb"

Lookup order for a name: the repository's `.pinshift/recipes/NAME.toml`, then the
recipes bundled with pinshift. A path to a `.toml` file is loaded as it is.

A repository's recipe is read only from a regular file inside it, reached without following a link
at any level (`.pinshift`, `.pinshift/recipes` or the file itself), of at most 1 MiB
(`RECIPE_LIMIT`): a link to `/dev/zero`, a fifo or a file elsewhere is never opened. Named by
`migrate NAME`, such a file is refused in one line; `pinshift recipes` lists the others and skips
it with one note. A `.toml` path the user names may be a link (the user chose it), but must be a
regular file within the same limit.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pinshift.errors import ParamError, RecipeError, UsageError
from pinshift.files.globs import glob_problem
from pinshift.steps.kind import StepKind

DEFAULT_FILES = (".flox/pkgs/**/*.nix",)
_RECIPE_KEYS = {"name", "description", "base", "bases", "target", "files", "steps"}
_STEP_KEYS = {"kind", "title", "message", "params", "files", "optional"}


@dataclass(frozen=True)
class RecipeStep:
    kind: str
    title: str
    params: Mapping[str, Any]
    message: str = ""
    files: tuple[str, ...] | None = None
    optional: bool | None = None  # may change nothing on a base (None: as its kind says, StepKind.optional)
    # the `{facts.NAME}` its params use (pinshift.recipes.placeholders.FACTS): validated with sample values, they are
    # filled by migrate from what the recipes say after the steps (pinshift.status.branch_facts), then checked again
    facts: tuple[str, ...] = ()

    @property
    def text_facts(self) -> tuple[str, ...]:
        """The `{facts.NAME}` its title and message use."""
        from pinshift.recipes.placeholders import facts_in

        return facts_in([self.title, self.message])


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    base: str
    target: str
    files: tuple[str, ...]
    steps: tuple[RecipeStep, ...]
    source: str = field(default="")
    bases: tuple[str, ...] = ()  # fan-out: run onto each of these base branches (globs match local branches)

    def files_for(self, step: RecipeStep) -> tuple[str, ...]:
        return step.files if step.files is not None else self.files


def _globs(value: Any, where: str, key: str) -> tuple[str, ...]:
    """A `files` value as a tuple of globs; a non-string or an invalid glob (`[z-a]*.nix`) is a RecipeError."""
    globs = [value] if isinstance(value, str) else value
    if not isinstance(globs, list) or not all(isinstance(v, str) for v in globs):
        raise RecipeError(f"{where}: '{key}' must be a list of glob strings")
    for glob in globs:
        problem = glob_problem(glob)
        if problem:
            raise RecipeError(f"{where}: '{key}': invalid glob '{glob}' ({problem})")
    return tuple(globs)


def _toml_type(value: Any) -> str:
    """How TOML calls the type of a decoded value, for messages."""
    names = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (list, "an array"),
             (Mapping, "a table"), (str, "a string"))
    return next((name for kind, name in names if isinstance(value, kind)), "a date or time")


def parse_recipe(data: Mapping[str, Any], source: str) -> Recipe:
    """A Recipe from decoded TOML; every structural error names the file, step and key."""
    unknown = set(data) - _RECIPE_KEYS
    if unknown:
        raise RecipeError(f"{source}: unknown key '{sorted(unknown)[0]}' (known: {', '.join(sorted(_RECIPE_KEYS))})")
    for key in ("name", "steps"):
        if key not in data:
            raise RecipeError(f"{source}: missing key '{key}'")
    if not isinstance(data["name"], str) or not data["name"]:
        raise RecipeError(f"{source}: 'name' must be a non-empty string")
    raw_steps = data["steps"]
    if not isinstance(raw_steps, list) or not raw_steps:
        raise RecipeError(f"{source}: 'steps' must be a non-empty array of [[steps]] tables")
    steps = []
    for number, raw in enumerate(raw_steps, 1):
        if not isinstance(raw, Mapping):
            raise RecipeError(f"{source}: step {number}: must be a table")
        kind = raw.get("kind")
        where = f"{source}: step {number}" + (f" ({kind})" if isinstance(kind, str) and kind else "")
        unknown = set(raw) - _STEP_KEYS
        if unknown:
            raise RecipeError(f"{where}: unknown key '{sorted(unknown)[0]}' (known: {', '.join(sorted(_STEP_KEYS))})")
        if kind is None:
            raise RecipeError(f"{where}: missing key 'kind'")
        if not isinstance(kind, str) or not kind:
            shown = "an empty string" if kind == "" else _toml_type(kind)
            raise RecipeError(f"{where}: 'kind' must be the name of a step kind (a string), not {shown}")
        params = raw.get("params", {})
        if not isinstance(params, Mapping):
            raise RecipeError(f"{where}: 'params' must be a table")
        for key in ("title", "message"):
            if key in raw and not isinstance(raw[key], str):
                raise RecipeError(f"{where}: '{key}' must be a string, not {_toml_type(raw[key])}")
        files = _globs(raw["files"], where, "files") if "files" in raw else None
        if "optional" in raw and not isinstance(raw["optional"], bool):
            raise RecipeError(f"{where}: 'optional' must be true or false, not {_toml_type(raw['optional'])}")
        steps.append(
            RecipeStep(
                kind=kind,
                title=raw.get("title") or kind,
                params=dict(params),
                message=raw.get("message", ""),
                files=files,
                optional=raw.get("optional"),
            )
        )
    for key in ("description", "base", "target"):
        if key in data and not isinstance(data[key], str):
            raise RecipeError(f"{source}: '{key}' must be a string")
    return Recipe(
        name=data["name"],
        description=data.get("description", ""),
        base=data.get("base", ""),
        target=data.get("target", ""),
        files=_globs(data["files"], source, "files") if "files" in data else DEFAULT_FILES,
        steps=tuple(steps),
        source=source,
        bases=_bases(data, source),
    )


def _bases(data: Mapping[str, Any], source: str) -> tuple[str, ...]:
    """The recipe's `bases`: a non-empty list of branch names or globs; a recipe with `bases` has no `base`."""
    if "bases" not in data:
        return ()
    value = data["bases"]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise RecipeError(f"{source}: 'bases' must be a non-empty list of branch names (or globs)")
    if "base" in data:
        raise RecipeError(f"{source}: 'base' and 'bases' exclude each other: one base, or a list to fan out onto")
    return tuple(value)


RECIPE_LIMIT = 1 << 20  # 1 MiB: a recipe is a page of TOML
_ONLY_REGULAR = "a repository's recipes are read only from regular files of at most 1 MiB inside it, never through a link"


def _named_file_bytes(path: Path, label: str) -> bytes:
    """The bytes of a recipe file the user named: a regular file (a link to one is the user's choice), <= 1 MiB."""
    import os
    import stat

    from pinshift.files.tree import file_kind

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise RecipeError(f"{label}: cannot read ({error.strerror or error})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RecipeError(f"{label}: {file_kind(info.st_mode)}, not a regular file; a recipe is a TOML file")
        data = handle.read(RECIPE_LIMIT + 1)
    if len(data) > RECIPE_LIMIT:
        raise RecipeError(f"{label}: larger than {RECIPE_LIMIT} bytes; a recipe is at most 1 MiB of TOML")
    return data


def _repository_bytes(root: Path, relative: str) -> bytes:
    """The bytes of a repository's recipe, as `read_inside` reads them; RecipeError saying why not."""
    from pinshift.files.tree import SkippedFile, read_inside

    try:
        return read_inside(root, relative, RECIPE_LIMIT)
    except SkippedFile as reason:
        raise RecipeError(f"{reason}; {_ONLY_REGULAR}") from None


def load_recipe_file(path: Path, label: str | None = None, root: Path | None = None) -> Recipe:
    """The recipe in `path`; with `root` (the repository), `path` is below it and read as `read_inside` reads."""
    label = label or str(path)
    data = _repository_bytes(root, path.relative_to(root).as_posix()) if root is not None \
        else _named_file_bytes(path, label)
    return _parse_bytes(data, label)


def _parse_bytes(data: bytes, label: str) -> Recipe:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RecipeError(f"{label}: not UTF-8 text") from None
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RecipeError(f"{label}: invalid TOML: {error}") from None
    return parse_recipe(parsed, label)


def _bundled_dir():
    """The bundled recipes folder (the repository's `recipes/`, shipped as package `pinshift.bundled_recipes`).

    Found through the import system, so editable installs and installed wheels agree. The package is not
    called `pinshift.recipes`: that name is the package of the recipe code (this module).
    """
    import pinshift.bundled_recipes

    return Path(next(iter(pinshift.bundled_recipes.__path__)))


def list_recipes(repo_root: Path | None = None, notes: list[str] | None = None) -> list[tuple[str, str, str]]:
    """(name, origin, description) of every recipe, repository recipes first and shadowing bundled ones.

    A repository recipe that is no regular file inside it (a link, a fifo, over 1 MiB) is left out
    with one line in `notes`; invalid TOML in a regular one is still an error."""
    found: dict[str, tuple[str, str, str]] = {}
    if repo_root is not None and (repo_root / ".pinshift" / "recipes").is_dir():
        for path in sorted((repo_root / ".pinshift" / "recipes").glob("*.toml")):
            try:
                data = _repository_bytes(repo_root, path.relative_to(repo_root).as_posix())
            except RecipeError as reason:
                if notes is not None:
                    notes.append(f"skipped {reason}")
                continue
            recipe = _parse_bytes(data, str(path.relative_to(repo_root)))
            found.setdefault(path.stem, (path.stem, f".pinshift/recipes/{path.name}", recipe.description))
    for entry in sorted(_bundled_dir().iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            name = entry.name[: -len(".toml")]
            if name not in found:
                recipe = parse_recipe(tomllib.loads(entry.read_text("utf-8")), f"recipes/{entry.name}")
                found[name] = (name, "bundled", recipe.description)
    return list(found.values())


def find_recipe(name: str, repo_root: Path | None = None) -> Recipe:
    """A recipe by name (repository first, then bundled) or by path to a .toml file."""
    if name.endswith(".toml") or "/" in name:
        path = Path(name)
        if not path.exists():
            raise UsageError(f"recipe file {name} does not exist")
        return load_recipe_file(path)
    if repo_root is not None:
        local = repo_root / ".pinshift" / "recipes" / f"{name}.toml"
        if os.path.lexists(local):
            return load_recipe_file(local, f".pinshift/recipes/{name}.toml", repo_root)
    bundled = _bundled_dir() / f"{name}.toml"
    if bundled.is_file():
        return parse_recipe(tomllib.loads(bundled.read_text("utf-8")), f"recipes/{name}.toml")
    known = ", ".join(n for n, _, _ in list_recipes(repo_root)) or "none"
    raise UsageError(f"unknown recipe '{name}' (known: {known}); `pinshift recipes` lists them")


def recipe_branches(recipe: Recipe) -> dict[str, str]:
    """What `{base}` and `{target}` mean when no run says otherwise: the recipe's own base and target."""
    own = {"base": recipe.base, "target": recipe.target or recipe.name}
    return {name: value for name, value in own.items() if value}


def validate_recipe(
    recipe: Recipe, kinds: Mapping[str, StepKind], branches: Mapping[str, str] | None = None,
) -> list[tuple[RecipeStep, StepKind, Any]]:
    """Each step with its kind and typed params, validated before any file is read.

    Every kind name is checked before any kind outside pinshift is loaded, and (`StepKinds`) every
    consent before any of them is imported: a recipe that cannot run runs no repository code.
    `branches` ({"base": ..., "target": ...}, default `recipe_branches(recipe)`) fills the
    `{base}`/`{target}` placeholders in each step's params, title and message; the steps
    returned carry the filled values, so reports and commits show what actually ran.
    `{facts.NAME}` placeholders are kept (`RecipeStep.facts` names those of the params); such a step's
    typed params are checked with a sample value of each fact (`placeholders.sample_facts`), and are only
    that sample until migrate fills the facts and checks them again (pinshift.branches.migrate).
    """
    from pinshift.recipes.placeholders import PlaceholderError, expand_params, facts_in, fill_facts, sample_facts

    for number, step in enumerate(recipe.steps, 1):
        if step.kind not in kinds:
            raise RecipeError(f"{recipe.source}: step {number} ({step.kind}): unknown step kind "
                              f"(known: {', '.join(sorted(kinds))})")
    require = getattr(kinds, "require", None)
    if require is not None:
        require([step.kind for step in recipe.steps])
    branches = recipe_branches(recipe) if branches is None else branches
    resolved = []
    for number, step in enumerate(recipe.steps, 1):
        where = f"{recipe.source}: step {number} ({step.kind})"
        kind = kinds[step.kind]
        try:
            raw = expand_params(step.params, branches, kind.own_placeholders)
            text = expand_params({"title": step.title, "message": step.message}, branches)
        except PlaceholderError as error:
            hint = f"; set {error.name} = \"BRANCH\" in the recipe" if error.known else ""
            raise RecipeError(f"{where}: {error}{hint}") from None
        facts = facts_in(raw)
        try:
            params = kind.parse_params(fill_facts(raw, sample_facts()) if facts else raw)
        except ParamError as error:
            shown = f" (with a sample value for {', '.join(f'{{facts.{n}}}' for n in facts)})" if facts else ""
            raise RecipeError(f"{where}: {error}{shown}") from None
        step = replace(step, params=raw, title=text["title"], message=text["message"], facts=facts)
        resolved.append((step, kind, params))
    return resolved
