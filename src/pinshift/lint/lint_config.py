"""Which lint rules apply where: `--select`/`--ignore`, and the `[lint]` table of `.pinshift/config.toml`.

In the style of ruff:

    [lint]
    select = ["ALL"]                 # codes or prefixes ("L00", "L"); default: every rule
    ignore = ["L003"]
    [lint.per-file-ignores]
    ".flox/pkgs/torchvision-*.nix" = ["L005", "L006"]
    "legacy-*.nix" = ["ALL"]         # a pattern without "/" also matches the file name anywhere

`--select` on the command line replaces the configured `select`; `--ignore` adds to
`ignore`. An ignored code stays ignored even when selected. Per-file patterns are
globs (`**` crosses directories) over paths relative to the repository root.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pinshift.errors import UsageError
from pinshift.files.globs import matches
from pinshift.files.tree import SkippedFile, read_inside

CONFIG = Path(".pinshift") / "config.toml"
_KEYS = {"select", "ignore", "per-file-ignores"}


@dataclass(frozen=True)
class RuleSelection:
    """The rules in force: selected codes minus ignored ones, minus per-file ignores for a file."""

    known: tuple[str, ...]
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    source: str = ""  # the config file read, for messages

    def enabled(self, code: str, path: str) -> bool:
        if not _covered(code, self.select) or _covered(code, self.ignore):
            return False
        relative = _relative(path, self.root)
        for pattern, codes in self.per_file_ignores:
            if _matches(relative, pattern) and _covered(code, codes):
                return False
        return True


def _covered(code: str, selectors: Iterable[str]) -> bool:
    return any(s == "ALL" or code.startswith(s) for s in selectors)


def _relative(path: str, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return PurePosixPath(path).as_posix()


def _matches(relative: str, pattern: str) -> bool:
    if "/" not in pattern:
        return matches(PurePosixPath(relative).name, [pattern])
    return matches(relative, [pattern.removeprefix("./")])


def check_codes(values: Iterable[str], known: Iterable[str], where: str) -> tuple[str, ...]:
    """Codes or prefixes as given, upper-cased; one that matches no rule is a UsageError naming `where`."""
    known = tuple(known)
    out = []
    for value in values:
        code = value.strip().upper()
        if not code:
            continue
        if code != "ALL" and not any(k.startswith(code) for k in known):
            raise UsageError(f"{where}: unknown rule code '{value.strip()}' (known: {', '.join(known)}, ALL)")
        out.append(code)
    return tuple(out)


def split_codes(options: Iterable[str]) -> list[str]:
    """`--select L001,L004 --select L005` -> ["L001", "L004", "L005"]."""
    return [code for option in options for code in option.split(",")]


def _string_list(value, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where} must be a list of rule codes, like [\"L001\", \"L005\"]")
    return value


def find_root(paths: Iterable[str]) -> Path:
    """The work tree (nearest ancestor with `.git`) of the first PATH, else of the current directory."""
    first = next(iter(paths), ".")
    start = Path(os.path.abspath(first))
    start = start if start.is_dir() else start.parent
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return Path.cwd()


def load_selection(root: Path, known: Iterable[str], select: Iterable[str] = (),
                   ignore: Iterable[str] = ()) -> RuleSelection:
    """The rules in force under `root`: its `.pinshift/config.toml` `[lint]` table, then the command line."""
    known = tuple(known)
    table, source = _lint_table(root)
    where = f"{source}: [lint]"
    config_select = check_codes(_string_list(table["select"], f"{where} select"), known, f"{where} select") \
        if "select" in table else ("ALL",)
    config_ignore = check_codes(_string_list(table.get("ignore", []), f"{where} ignore"), known, f"{where} ignore")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, Mapping):
        raise UsageError(f"{where} per-file-ignores must be a table of \"glob\" = [codes]")
    per_file_ignores = tuple(
        (pattern, check_codes(_string_list(codes, f"{where} per-file-ignores.\"{pattern}\""), known,
                              f"{where} per-file-ignores.\"{pattern}\""))
        for pattern, codes in per_file.items()
    )
    cli_select = check_codes(select, known, "--select")
    cli_ignore = check_codes(ignore, known, "--ignore")
    return RuleSelection(known, cli_select or config_select, config_ignore + cli_ignore, per_file_ignores, root,
                         source if table else "")


def _lint_table(root: Path) -> tuple[dict, str]:
    path = root / CONFIG
    shown = CONFIG.as_posix()
    if not os.path.lexists(path):
        return {}, shown
    try:  # a regular file inside the repository (no link at any level), at most 1 MiB
        raw = read_inside(root, shown, 1 << 20)
    except SkippedFile as reason:
        raise UsageError(f"{reason}; the lint config is read only from a regular file of at most 1 MiB inside the "
                         "repository, never through a link") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{shown}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{shown}: invalid TOML: {error}") from None
    except OSError as error:
        raise UsageError(f"{shown}: cannot read ({error.strerror or error})") from None
    table = data.get("lint", {})
    if not isinstance(table, Mapping):
        raise UsageError(f"{shown}: [lint] must be a table")
    unknown = set(table) - _KEYS
    if unknown:
        raise UsageError(f"{shown}: [lint] unknown key '{sorted(unknown)[0]}' (known: {', '.join(sorted(_KEYS))})")
    return dict(table), shown
