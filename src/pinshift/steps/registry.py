"""Which step kinds exist here, and loading them: bundled ones always, others only when needed and allowed.

A kind name means, in order:
1. a bundled kind (`migrations/` of pinshift) — a file elsewhere that claims a bundled name is never
   loaded (`shadowed`): `pinshift show RECIPE` of a bundled-only recipe runs no repository code;
2. a kind defined by a file of `--migrations DIR` (consent for DIR is given by naming it);
3. a kind defined by a file of the repository's `.pinshift/migrations/` (needs consent: `--trust-repo`
   or the repository listed in the user's config, see pinshift.steps.trust).

Files of 2 and 3 are found by a static read (pinshift.steps.scripts) and imported on first use, after the
consent check, with a line on stderr naming the file and the consent.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import importlib
import os
import pkgutil
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from pinshift.errors import NotTrusted, StepScriptError, UsageError
from pinshift.steps.scripts import StepScript, find_scripts, import_script
from pinshift.steps.kind import StepKind
from pinshift.steps.trust import Consent, consent_for_repository, how_to_consent

REPOSITORY_MIGRATIONS = Path(".pinshift") / "migrations"


def _kind_from_module(module: types.ModuleType, origin: str, script: Path | None = None) -> StepKind:
    name = getattr(module, "NAME", None)
    if not isinstance(name, str) or not hasattr(module, "Params") or not hasattr(module, "plan"):
        error = StepScriptError if script is not None else UsageError
        raise error(f"{origin}: not a step-kind module (needs NAME, Params and plan)")
    return StepKind(name=name, module=module, origin=origin, script=script)


class BundledKinds(Mapping):
    """The step kinds shipped in pinshift's `migrations/` package, by name; each module is imported when its kind is
    first asked for (start-up imports only the kinds a recipe uses). A kind's name is its module's with `-` for `_`
    (`pin_swap` is `pin-swap`), and its NAME must say so (tests/test_step_kinds_lazy.py)."""

    def __init__(self):
        import pinshift.migrations as package

        self._modules = {info.name.replace("_", "-"): info.name for info in pkgutil.iter_modules(package.__path__)
                         if not info.name.startswith("_")}
        self._kinds: dict[str, StepKind] = {}

    def __getitem__(self, name: str) -> StepKind:
        kind = self._kinds.get(name)
        if kind is None:
            module = importlib.import_module(f"pinshift.migrations.{self._modules[name]}")
            kind = _kind_from_module(module, "bundled")
            if kind.name != name:
                raise RuntimeError(f"pinshift.migrations.{self._modules[name]}: NAME is {kind.name!r}, not {name!r}")
            self._kinds[name] = kind
        return kind

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._modules))

    def __len__(self) -> int:
        return len(self._modules)

    def __contains__(self, name: object) -> bool:
        return name in self._modules


def bundled_kinds() -> BundledKinds:
    """The step kinds shipped in pinshift's `migrations/` package (imported as they are asked for)."""
    return BundledKinds()


def load_script(script: StepScript) -> StepKind:
    """Import one step script (consent already given) and check it defines the kind it was found as."""
    module = import_script(script)
    kind = _kind_from_module(module, str(script.path), script.path)
    if kind.name != script.kind:
        raise StepScriptError(f"{script.path}: NAME is {kind.name!r} once imported, but {script.kind!r} when read "
                              f"by its {script.named_by}; write NAME = \"...\" as a plain string")
    return kind


def load_kinds_from(directory: Path) -> dict[str, StepKind]:
    """Every step kind of a directory the caller names (as `--migrations DIR` does): imported now."""
    return {script.kind: load_script(script) for script in find_scripts(directory)}


def _announce_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class StepKinds:
    """The step kinds a command can use, by name; repository code is imported only on first use, with consent.

    Supports `name in kinds`, `kinds[name]` (loads a script kind), iteration over the names and
    `len`: what `validate_recipe` and `get_kind` need. Nothing here imports a script unless asked
    for its kind.
    """

    def __init__(self, repo_root: Path | None = None, migrations: Path | None = None,
                 consent: Consent = Consent(), announce: Callable[[str], None] = _announce_on_stderr):
        self.bundled = bundled_kinds()
        self.repo_root = repo_root
        self.migrations = migrations
        self.consent = consent
        self.announce = announce
        self.scripts: dict[str, list[StepScript]] = {}  # kind -> the files of the winning directory defining it
        self.shadowed: list[StepScript] = []  # files claiming a bundled kind's name: never loaded
        self._loaded: dict[str, StepKind] = {}
        directories = []
        if migrations is not None:
            if not migrations.is_dir():
                raise UsageError(f"--migrations {migrations}: not a directory")
            directories.append(migrations)
        if repo_root is not None and (repo_root / REPOSITORY_MIGRATIONS).is_dir():
            own = repo_root / REPOSITORY_MIGRATIONS
            if migrations is None or os.path.realpath(own) != os.path.realpath(migrations):
                directories.append(own)
        for directory in directories:
            found: dict[str, list[StepScript]] = {}
            below = repo_root if repo_root is not None and directory == repo_root / REPOSITORY_MIGRATIONS else None
            for script in find_scripts(directory, below):
                if script.kind in self.bundled:
                    self.shadowed.append(script)
                elif script.kind not in self.scripts:
                    found.setdefault(script.kind, []).append(script)
            self.scripts.update(found)

    # --- the mapping validate_recipe and get_kind use ---------------------------------------------

    def __contains__(self, name: object) -> bool:
        return name in self.bundled or name in self.scripts

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self.bundled, *self.scripts}))

    def __len__(self) -> int:
        return len({*self.bundled, *self.scripts})

    def __getitem__(self, name: str) -> StepKind:
        if name in self.bundled:
            return self.bundled[name]
        if name not in self._loaded:
            if name not in self.scripts:
                raise KeyError(name)
            self.require([name])
        return self._loaded[name]

    # --- scripts ------------------------------------------------------------------------------------

    def from_repository(self, script: StepScript) -> bool:
        """Whether `script` is the repository's own (not one of `--migrations DIR`)."""
        if self.migrations is None:
            return True
        return os.path.realpath(script.path.parent) != os.path.realpath(self.migrations)

    def consent_for(self, script: StepScript) -> str | None:
        """Why `script` may run (`--migrations DIR`, `--trust-repo`, `listed in CONFIG`), or None."""
        if not self.from_repository(script):
            return f"--migrations {self.migrations}"
        return consent_for_repository(self.repo_root, self.consent)

    def script_for(self, name: str) -> StepScript:
        scripts = self.scripts[name]
        if len(scripts) > 1:
            files = " and ".join(s.path.name for s in scripts)
            raise UsageError(f"step kind '{name}' is defined by both {files} in {scripts[0].path.parent}; "
                             "rename one of them (its NAME and its file)")
        return scripts[0]

    def require(self, names: Iterable[str]) -> None:
        """Load the script kinds among `names`: every consent is checked before any file is imported."""
        wanted = [n for n in dict.fromkeys(names) if n not in self.bundled and n not in self._loaded and n in self.scripts]
        reasons = {}
        for name in wanted:
            script = self.script_for(name)
            reason = self.consent_for(script)
            if reason is None:
                raise NotTrusted(f"step kind '{name}' is repository code ({self._shown(script.path)}), which pinshift "
                                 f"runs only with consent: {how_to_consent(self.repo_root)}")
            reasons[name] = reason
        for name in wanted:
            script = self.script_for(name)
            self.announce(f"pinshift: loading step kind '{name}' from {os.path.abspath(script.path)} "
                          f"(trusted: {reasons[name]})")
            self._loaded[name] = load_script(script)

    def _shown(self, path: Path) -> str:
        if self.repo_root is not None:
            try:
                return path.relative_to(self.repo_root).as_posix()
            except ValueError:
                pass
        return str(path)


def available_kinds(repo_root: Path | None = None, extra_dir: Path | None = None, consent: Consent = Consent(),
                    announce: Callable[[str], None] = _announce_on_stderr) -> StepKinds:
    """Bundled kinds, then `--migrations DIR`'s, then the repository's `.pinshift/migrations/` (found, not run)."""
    return StepKinds(repo_root, extra_dir, consent, announce)


def get_kind(kinds, name: str) -> StepKind:
    if name not in kinds:
        raise UsageError(f"unknown step kind '{name}' (known: {', '.join(sorted(kinds))})")
    return kinds[name]
