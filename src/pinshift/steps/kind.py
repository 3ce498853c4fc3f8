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
    def claims(params) -> list[Claim]              # optional: typed values that state a fact of the branch
    def nixpkgs_query(params) -> NixpkgsQuery | None  # optional: what it needs from a nixpkgs clone
    def with_nixpkgs(params, facts) -> Params        # ...and the params once pinshift.facts.pin_inputs got it
    def plan_paths(paths, params) -> list[FileOp]   # optional: a file-level step (see pinshift.files.fileops)
    def plan_references(graph, params, ops, selected) -> ReferencePlan  # optional: what it does to references

The module docstring is the kind's user documentation (`pinshift show --step KIND`).
`needles` lists byte strings the step can possibly change; a file containing none
of them is not parsed at all. `prepare` sees every document that passed the
prefilter before any plan runs (pin-swap resolves an abbreviated revision there).

Which kinds exist and when a file outside pinshift is imported: pinshift.steps.registry.
`nixpkgs_query`/`with_nixpkgs` keep a step pure that needs git: the command asks a
local nixpkgs clone before planning (pinshift.facts.pin_inputs: a branch name resolved to
its commit, the sha256 of that commit's archive, or `PinOf`: the pin another recipe
repository's branch uses) and hands the answer back as params.
A Params field typed by a frozen dataclass (`PinOf`) is a TOML table, validated key by key.
`plan_paths` makes a file-level step: it maps the paths the step's globs select to
renames, clones and removals (plain values, no I/O); `plan` then runs on each new
path, with `context.source` naming the file it came from.
`plan_references` sees the reference graph of the tree as the steps before it left it
(pinshift.graph.tree.ReferenceGraph: who imports or calls which file, passing what), the step's
file operations and the paths its globs select, and says per file what its `plan` must know about
references (`context.references`), plus files to remove too, refusals and findings: rename-files
makes the files that import a renamed recipe follow it, pin-nixpkgs fits each call to what the
callee takes after the step. Such a step starts a segment (the runner builds the graph first).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

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
    """Where a step runs: the file's repository-relative path and the recipe's name.

    `source` is set for a file a file-level step just renamed or cloned: the path it came from.
    `references` is what the kind's `plan_references` said about this file (its own values), else ().
    """

    path: str
    recipe: str = ""
    step_index: int = 0
    source: str = ""
    references: tuple = ()


@dataclass
class ReferencePlan:
    """What a step does to the references between files, decided from the graph before any file is planned.

    `files`: path (as the step leaves it: a renamed file's new path) -> the facts its `plan` gets as
    `context.references` (plain, comparable values: they are part of the file's plan memo key);
    `remove`: more paths to remove, each with a note saying why (remove-files' `references = "remove-too"`);
    `dangling`: (source, target) pairs the step leaves dangling on purpose (not refused after the step);
    `refusals`: why the step cannot run as asked (the run stops, exit 1, nothing written);
    `warnings`, `notes`: (path, line, column, message) findings on files the step may not change.
    """

    files: dict[str, tuple] = field(default_factory=dict)
    remove: dict[str, str] = field(default_factory=dict)
    dangling: set[tuple[str, str]] = field(default_factory=set)
    refusals: list[str] = field(default_factory=list)
    warnings: list[tuple[str, int, int, str]] = field(default_factory=list)
    notes: list[tuple[str, int, int, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Claim:
    """A value typed into a step's parameters that says something about the branch (a README cell `PyTorch =
    "2.10.0"`): `key` where it was typed (`columns.PyTorch`), `value`, and the fact of the branch's recipes it
    states (pinshift.recipes.placeholders.FACTS: `version`, `pin`…; None: no fact can check it). A `version` claim
    names the package it is about in `package` (the column's header, `pytorch`), "" for any."""

    key: str
    value: str
    fact: str | None
    package: str = ""


@dataclass(frozen=True)
class Parameter:
    """One parameter of a step kind, as recipes and `--set` write it."""

    key: str  # kebab-case, as written in recipes (`include-comments`)
    field: str  # the Params field (`include_comments`)
    hint: Any  # its type
    required: bool
    default: Any = None  # the default when not required (a default_factory's value)


PIN_OF_FILES = (".flox/pkgs/**/*.nix",)  # the recipe files read in the other repository (recipes.DEFAULT_FILES)


@dataclass(frozen=True)
class PinOf:
    """The nixpkgs pin another recipe repository's branch uses: `{ repo = "../build-vllm", ref = "main" }`.

    `repo` is a local clone (relative to the recipe repository, or absolute), `ref` its branch
    (or any commit-ish); the branch's recipes (`files`) must all pin one revision, unless
    `pick = "majority"` takes the most common one. pinshift.facts.pin_inputs reads it before planning.
    """

    repo: str
    ref: str
    pick: typing.Literal["single", "majority"] = "single"
    files: tuple[str, ...] = PIN_OF_FILES

    def __post_init__(self) -> None:
        from pinshift.files.globs import glob_problem

        if not self.repo.strip():
            raise ParamError("repo", "'repo' must be the path of a local clone (relative to the recipe repository)")
        if not self.ref.strip() or self.ref.startswith("-") or any(c.isspace() for c in self.ref):
            raise ParamError("ref", f"'ref' must be a branch (or commit) of {self.repo}, not {self.ref!r}")
        if not self.files:
            raise ParamError("files", "'files' must list at least one glob")
        for glob in self.files:
            if problem := glob_problem(glob):
                raise ParamError("files", f"'files': invalid glob '{glob}' ({problem})")

    @property
    def label(self) -> str:
        """`build-vllm@main`: the repository's directory name and the ref."""
        return f"{Path(self.repo.rstrip('/')).name or self.repo}@{self.ref}"


@dataclass(frozen=True)
class NixpkgsQuery:
    """What a step needs from a local nixpkgs clone before it can plan (answered by pinshift.facts.pin_inputs).

    `revision` (a commit id, abbreviated or not, a branch or a tag) is resolved to its full
    commit id; a `PinOf` is first read from that repository's branch (its recipes' single
    pin) and needs a clone only when that pin is abbreviated or `archive_hash` is asked.
    With `archive_hash` the sha256 of the commit's GitHub archive is computed too.
    `without_clone` is the step's own message for a run given no clone.
    """

    revision: str | PinOf
    archive_hash: bool
    without_clone: str


@dataclass(frozen=True)
class NixpkgsFacts:
    """The answer to a NixpkgsQuery: the revision as asked, its commit, the ref it went through, the digest.

    `origin` says where a PinOf's revision came from (`the pin of build-vllm@main`), else "".
    """

    revision: str
    commit: str
    ref: str | None = None
    archive_hash: bytes | None = None
    origin: str = ""


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
    def optional(self) -> bool:
        """Whether a step of this kind may change nothing on a base without stopping it (`OPTIONAL = True` in
        the module: the README and metadata kinds); a recipe step's `optional` overrides it."""
        return getattr(self.module, "OPTIONAL", False) is True

    @property
    def params_type(self) -> type:
        return self.module.Params

    def _call(self, doing: str, function: Any, *args: Any) -> Any:
        if self.script is None:
            return function(*args)
        from pinshift.steps.scripts import guarded

        return guarded(self.script, self.name, doing, function, *args)

    def parameters(self) -> tuple[Parameter, ...]:
        """The kind's parameters in declaration order: key, type, required or default."""
        return self._call("reading its parameters", _parameters, self.params_type)

    def parse_params(self, raw: Mapping[str, Any]) -> Any:
        """Typed Params from recipe/CLI values; raises ParamError naming the key."""
        return self._call("checking its parameters", build_params, self.params_type, raw)

    @property
    def own_placeholders(self) -> tuple[str, ...]:
        """`{name}`s the kind fills itself (its module's `PLACEHOLDERS`), left alone by recipe expansion."""
        return tuple(getattr(self.module, "PLACEHOLDERS", ()))

    @property
    def plans_paths(self) -> bool:
        """A file-level kind: it renames, clones or removes files (`plan_paths`)."""
        return callable(getattr(self.module, "plan_paths", None))

    def plan_paths(self, paths: Sequence[str], params: Any) -> list:
        return list(self._call("planning its paths", self.module.plan_paths, paths, params))

    def plans_references(self, params: Any) -> bool:
        """Whether the kind decides what it does to references from the graph (`plan_references`; its
        optional `needs_references(params)` may say it does not, for these parameters)."""
        if not callable(getattr(self.module, "plan_references", None)):
            return False
        hook = getattr(self.module, "needs_references", None)
        return bool(self._call("deciding whether to read references", hook, params)) if hook else True

    def plan_references(self, graph: Any, params: Any, ops: Sequence[Any], selected: Sequence[str]) -> ReferencePlan:
        found = self._call("planning its references", self.module.plan_references, graph, params, ops, selected)
        if not isinstance(found, ReferencePlan):
            self._broken(f"plan_references() returned {type(found).__name__}, not a ReferencePlan")
        return found

    def claims(self, params: Any) -> list[Claim]:
        """The typed values of `params` that say something about the branch (its module's optional `claims`);
        migrate checks each against the facts of the branch's recipes (pinshift.status.branch_facts)."""
        hook = getattr(self.module, "claims", None)
        found = list(self._call("listing its claims", hook, params)) if hook else []
        if self.script is not None and not all(isinstance(claim, Claim) for claim in found):
            self._broken("claims() must return pinshift.steps.kind.Claim values")
        return found

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

    def nixpkgs_query(self, params: Any) -> NixpkgsQuery | None:
        hook = getattr(self.module, "nixpkgs_query", None)
        return hook(params) if hook else None

    def with_nixpkgs(self, params: Any, facts: NixpkgsFacts) -> Any:
        return self.module.with_nixpkgs(params, facts)


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
                # a table's own error (a missing key) says more than "must be a string"
                if isinstance(value, Mapping) and dataclasses.is_dataclass(arg):
                    errors.insert(0, str(error))
                else:
                    errors.append(str(error))
        raise ParamError(key, errors[0] if errors else f"'{key}' has an invalid value")
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            keys = ", ".join(param_key(f.name) for f in dataclasses.fields(hint))
            raise ParamError(key, f"'{key}' must be a table ({keys}), not {value!r}")
        try:
            return build_params(hint, value)
        except ParamError as error:
            raise ParamError(key, f"'{key}' table: {error}") from None
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
