"""Step kinds: how a module in `migrations/` becomes a validated, runnable step.

A step-kind module (see docs/writing-steps.md) defines:

    NAME = "pin-swap"                  # the kind users write in recipes
    LANGUAGES = ("nix",)               # document kinds it accepts (default: nix only)
    @dataclass(frozen=True)
    class Params: ...                  # typed fields; __post_init__ raises ParamError
    def plan(doc, params, context) -> StepOutput     # pure: edits + warnings
    def needles(params) -> tuple[bytes, ...]        # optional prefilter (see below)
    def prepare(params, docs) -> Params             # optional repo-wide resolution
    def survey(doc, params) / resolve(params, surveys)  # optional: prepare split per file (see runner)
    def plan_paths(paths, params) -> list[FileOp]   # optional: a file-level step (see pinshift.fileops)

The module docstring is the kind's user documentation (`pinshift show --step KIND`).
`needles` lists byte strings the step can possibly change; a file containing none
of them is not parsed at all. `prepare` sees every document that passed the
prefilter before any plan runs (pin-swap resolves an abbreviated revision there).
`plan_paths` makes a file-level step: it maps the paths the step's globs select to
renames, clones and removals (plain values, no I/O); `plan` then runs on each new
path, with `context.source` naming the file it came from.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pkgutil
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinshift.edits import Edit
from pinshift.errors import ParamError, RecipeError, UsageError


@dataclass(frozen=True)
class StepWarning:
    """A warning a step raises at a byte offset of the document it looked at."""

    offset: int
    message: str


@dataclass
class StepOutput:
    """What a step returns for one document: edits to apply, warnings and notes to report.

    A warning is something a human must look at (`--strict` fails on it); a note only
    says what the step deliberately left alone (a README table that is not a branch table).
    """

    edits: list[Edit] = field(default_factory=list)
    warnings: list[StepWarning] = field(default_factory=list)
    notes: list[StepWarning] = field(default_factory=list)

    def warn(self, offset: int, message: str) -> None:
        self.warnings.append(StepWarning(offset, message))

    def note(self, offset: int, message: str) -> None:
        self.notes.append(StepWarning(offset, message))


@dataclass(frozen=True)
class StepContext:
    """Where a step runs: the file's repository-relative path and the recipe's name.

    `source` is set for a file a file-level step just renamed or cloned: the path it came from.
    """

    path: str
    recipe: str = ""
    step_index: int = 0
    source: str = ""


@dataclass(frozen=True)
class StepKind:
    """A loaded step-kind module, with where it came from ("bundled" or a file path)."""

    name: str
    module: types.ModuleType
    origin: str

    @property
    def doc(self) -> str:
        return (self.module.__doc__ or "").strip()

    @property
    def summary(self) -> str:
        return self.doc.splitlines()[0] if self.doc else ""

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(getattr(self.module, "LANGUAGES", ("nix",)))

    @property
    def params_type(self) -> type:
        return self.module.Params

    def parse_params(self, raw: Mapping[str, Any]) -> Any:
        """Typed Params from recipe/CLI values; raises ParamError naming the key."""
        return build_params(self.params_type, raw)

    @property
    def plans_paths(self) -> bool:
        """A file-level kind: it renames, clones or removes files (`plan_paths`)."""
        return callable(getattr(self.module, "plan_paths", None))

    def needles(self, params: Any) -> tuple[bytes, ...]:
        hook = getattr(self.module, "needles", None)
        return tuple(hook(params)) if hook else ()

    def prepare(self, params: Any, docs: Sequence[Any]) -> Any:
        hook = getattr(self.module, "prepare", None)
        return hook(params, docs) if hook else params

    def plan(self, doc: Any, params: Any, context: StepContext) -> StepOutput:
        return self.module.plan(doc, params, context)


# --- parameters ---------------------------------------------------------------------------


def _key(name: str) -> str:
    """Recipe keys are kebab-case; Params fields are snake_case (`include-comments`).

    A trailing underscore only keeps a field name off a Python keyword: field `from_` is key `from`.
    """
    return name.rstrip("_").replace("_", "-") if name.endswith("_") else name.replace("_", "-")


def _coerce(key: str, hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(key, arg, value)
            except ParamError as error:
                errors.append(str(error))
        raise ParamError(key, errors[0] if errors else f"'{key}' has an invalid value")
    if origin is typing.Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise ParamError(key, f"'{key}' must be one of {choices}, not {value!r}")
        return value
    if origin in (tuple, list):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise ParamError(key, f"'{key}' must be a list, not {value!r}")
        inner = args[0] if args else Any
        return tuple(_coerce(key, inner, v) for v in value)
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            raise ParamError(key, f"'{key}' must be a table of key = value, not {value!r}")
        return dict(value)
    if hint is bool:
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
            return value.lower() in ("true", "yes", "1")
        if not isinstance(value, bool):
            raise ParamError(key, f"'{key}' must be true or false, not {value!r}")
        return value
    if hint is int:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamError(key, f"'{key}' must be a whole number, not {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ParamError(key, f"'{key}' must be a string, not {value!r}")
        return value
    return value


def build_params(params_type: type, raw: Mapping[str, Any]) -> Any:
    """Validate `raw` against a Params dataclass: unknown, missing and mistyped keys are errors."""
    hints = typing.get_type_hints(params_type)
    fields = {_key(f.name): f for f in dataclasses.fields(params_type)}
    normalized = {_key(k): v for k, v in raw.items()}
    for key in normalized:
        if key not in fields:
            known = ", ".join(sorted(fields)) or "none"
            raise ParamError(key, f"unknown parameter '{key}' (known: {known})")
    values = {}
    for key, f in fields.items():
        if key in normalized:
            values[f.name] = _coerce(key, hints[f.name], normalized[key])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ParamError(key, f"missing parameter '{key}'")
    try:
        return params_type(**values)
    except ParamError:
        raise
    except (TypeError, ValueError) as error:
        raise ParamError("", str(error)) from None


# --- loading kinds ------------------------------------------------------------------------


def _kind_from_module(module: types.ModuleType, origin: str) -> StepKind:
    name = getattr(module, "NAME", None)
    if not isinstance(name, str) or not hasattr(module, "Params") or not hasattr(module, "plan"):
        raise RecipeError(f"{origin}: not a step-kind module (needs NAME, Params and plan)")
    return StepKind(name=name, module=module, origin=origin)


def bundled_kinds() -> dict[str, StepKind]:
    """The step kinds shipped in pinshift's `migrations/` package."""
    import pinshift.migrations as package

    kinds = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"pinshift.migrations.{info.name}")
        kind = _kind_from_module(module, "bundled")
        kinds[kind.name] = kind
    return kinds


def load_kinds_from(directory: Path) -> dict[str, StepKind]:
    """Step kinds from every `*.py` file of a directory (a repository's `.pinshift/migrations/`)."""
    kinds = {}
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"pinshift_user_step_{path.stem}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:  # a user's script failing to import is their input error
            raise RecipeError(f"{path}: cannot load step script: {error}") from None
        kind = _kind_from_module(module, str(path))
        kinds[kind.name] = kind
    return kinds


def available_kinds(repo_root: Path | None = None, extra_dir: Path | None = None) -> dict[str, StepKind]:
    """Bundled kinds, overridden by the repository's `.pinshift/migrations/` and then `--migrations DIR`."""
    kinds = bundled_kinds()
    if repo_root is not None and (repo_root / ".pinshift" / "migrations").is_dir():
        kinds.update(load_kinds_from(repo_root / ".pinshift" / "migrations"))
    if extra_dir is not None:
        if not extra_dir.is_dir():
            raise UsageError(f"--migrations {extra_dir}: not a directory")
        kinds.update(load_kinds_from(extra_dir))
    return kinds


def get_kind(kinds: Mapping[str, StepKind], name: str) -> StepKind:
    if name not in kinds:
        raise UsageError(f"unknown step kind '{name}' (known: {', '.join(sorted(kinds))})")
    return kinds[name]
