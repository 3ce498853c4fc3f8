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

The module docstring is the kind's user documentation (`pinshift show --step KIND`).
`needles` lists byte strings the step can possibly change; a file containing none
of them is not parsed at all. `prepare` sees every document that passed the
prefilter before any plan runs (pin-swap resolves an abbreviated revision there).

Which kinds exist and when a file outside pinshift is imported: pinshift.kinds.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinshift.edits import Edit
from pinshift.errors import ParamError


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
    A refusal says the step cannot change this file as asked: the file is left as it was,
    whatever edits were planned, and reported refused (which stops `migrate` and `apply`).
    """

    edits: list[Edit] = field(default_factory=list)
    warnings: list[StepWarning] = field(default_factory=list)
    notes: list[StepWarning] = field(default_factory=list)
    refusals: list[StepWarning] = field(default_factory=list)

    def warn(self, offset: int, message: str) -> None:
        self.warnings.append(StepWarning(offset, message))

    def note(self, offset: int, message: str) -> None:
        self.notes.append(StepWarning(offset, message))

    def refuse(self, offset: int, message: str) -> None:
        self.refusals.append(StepWarning(offset, message))


@dataclass(frozen=True)
class StepContext:
    """Where a step runs: the file's repository-relative path and the recipe's name."""

    path: str
    recipe: str = ""
    step_index: int = 0


@dataclass(frozen=True)
class Parameter:
    """One parameter of a step kind, as recipes and `--set` write it."""

    key: str  # kebab-case, as written in recipes (`include-comments`)
    field: str  # the Params field (`include_comments`)
    hint: Any  # its type
    required: bool
    default: Any = None  # the default when not required (a default_factory's value)


@dataclass(frozen=True)
class StepKind:
    """A loaded step-kind module, with where it came from ("bundled" or a file path).

    Commands and the runner call a kind only through these methods. For a kind loaded
    from a file outside pinshift (`script`), each call runs under `scripts.script_call`:
    its output goes to stderr and its failures become a StepScriptError naming the file.
    """

    name: str
    module: types.ModuleType
    origin: str
    script: Path | None = None

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

    def _call(self, doing: str, function: Any, *args: Any) -> Any:
        if self.script is None:
            return function(*args)
        from pinshift.scripts import guarded

        return guarded(self.script, self.name, doing, function, *args)

    def parameters(self) -> tuple[Parameter, ...]:
        """The kind's parameters in declaration order: key, type, required or default."""
        return self._call("reading its parameters", _parameters, self.params_type)

    def parse_params(self, raw: Mapping[str, Any]) -> Any:
        """Typed Params from recipe/CLI values; raises ParamError naming the key."""
        return self._call("checking its parameters", build_params, self.params_type, raw)

    def needles(self, params: Any) -> tuple[bytes, ...]:
        hook = getattr(self.module, "needles", None)
        if not hook:
            return ()
        found = tuple(self._call("listing its needles", hook, params))
        if self.script is not None and not all(isinstance(n, bytes) for n in found):
            self._broken("needles() must return byte strings")
        return found

    def needs_survey(self, params: Any) -> bool:
        """Whether the kind's `prepare` must see every file before planning (its optional `needs_survey` says)."""
        if not hasattr(self.module, "prepare"):
            return False
        hook = getattr(self.module, "needs_survey", None)
        return bool(self._call("deciding whether to survey", hook, params)) if hook else True

    @property
    def can_survey(self) -> bool:
        """A `prepare` split into per-file `survey` and `resolve`: the runner surveys while it plans."""
        return callable(getattr(self.module, "survey", None)) and callable(getattr(self.module, "resolve", None))

    def prepare(self, params: Any, docs: Sequence[Any]) -> Any:
        hook = getattr(self.module, "prepare", None)
        return self._call("preparing", hook, params, docs) if hook else params

    def survey(self, doc: Any, params: Any) -> Any:
        return self._call(f"surveying {doc.path}", self.module.survey, doc, params)

    def resolve(self, params: Any, surveys: Sequence[Any]) -> Any:
        return self._call("resolving its surveys", self.module.resolve, params, surveys)

    def plan(self, doc: Any, params: Any, context: StepContext) -> StepOutput:
        if self.script is None:
            return self.module.plan(doc, params, context)
        output = self._call(f"planning {context.path}", self.module.plan, doc, params, context)
        if not isinstance(output, StepOutput):
            self._broken(f"plan() returned {type(output).__name__}, not a StepOutput")
        if not all(isinstance(e, Edit) for e in output.edits):
            self._broken("plan() returned edits that are not pinshift.edits.Edit values")
        if not all(isinstance(w, StepWarning) for w in (*output.warnings, *output.notes)):
            self._broken("plan() returned warnings that are not StepWarning values (use out.warn / out.note)")
        return output

    def _broken(self, message: str) -> None:
        from pinshift.errors import StepScriptError

        raise StepScriptError(f"{self.script}: step kind '{self.name}': {message}")


# --- parameters ---------------------------------------------------------------------------


def param_key(name: str) -> str:
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
    fields = {param_key(f.name): f for f in dataclasses.fields(params_type)}
    normalized = {param_key(k): v for k, v in raw.items()}
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


def _parameters(params_type: type) -> tuple[Parameter, ...]:
    hints = typing.get_type_hints(params_type)
    out = []
    for f in dataclasses.fields(params_type):
        if f.default is not dataclasses.MISSING:
            out.append(Parameter(param_key(f.name), f.name, hints[f.name], False, f.default))
        elif f.default_factory is not dataclasses.MISSING:
            out.append(Parameter(param_key(f.name), f.name, hints[f.name], False, f.default_factory()))
        else:
            out.append(Parameter(param_key(f.name), f.name, hints[f.name], True))
    return tuple(out)


# --- loading kinds: pinshift.kinds (these names stay importable from here) -----------------------

_LOADERS = ("available_kinds", "bundled_kinds", "get_kind", "load_kinds_from")


def __getattr__(name: str) -> Any:
    if name in _LOADERS:
        from pinshift import kinds

        return getattr(kinds, name)
    raise AttributeError(f"module 'pinshift.steps' has no attribute {name!r}")
