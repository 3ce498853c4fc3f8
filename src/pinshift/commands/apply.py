"""`pinshift apply KIND --set key=value [PATH...]`: one step on the working tree, without git.

For quick use and scripting: the same step kinds, parameter validation, runner and
report as `migrate`, but on the files as they are on disk. A step is all or nothing
here too: when a file is refused, or a warning fires under --strict, no file is
written (exit 1), so a tree is never left half-migrated; `--skip-refused` opts out for
refused files (they are listed and left as they are, the others written), and
`--exclude GLOB` leaves files out before anything is read. Writing is all or nothing
as well (`pinshift.files.replace`): a file that turned read-only, immutable or different
since it was read, a full disk or a read-only mount leaves every file as it was.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import dataclasses
import os
import re
import tomllib
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from pinshift.commands.completion import complete_step_kinds
from pinshift.report.display import echo_fitted, printable
from pinshift.errors import IncompleteRun, ParamError, PinshiftError, StepFailed, UsageError, WriteFailed, WriteRefused
from pinshift.files.tree import DEFAULT_MAX_BYTES, DirectoryTree, SkippedFile
from pinshift.report import emit, options_from, report_options
from pinshift.git.repo import listed_files

DEFAULT_GLOBS = ("**/*.nix",)


# --- --set key=value ---------------------------------------------------------------------------


def literal(text: str) -> Any:
    """`text` as a TOML value when it spells one unambiguously (3, true, ["a"], {a = "b"}), else itself.

    Floats and dates stay text: `2.10` would otherwise become 2.1.
    """
    try:
        value = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
    return value if isinstance(value, (bool, int, str, list, dict)) else text


def parse_settings(settings: tuple[str, ...]) -> dict[str, Any]:
    """Parameter text from `--set` items, kebab-case keys; `a.b=v` puts key `b` in table `a`.

    Only the first dot separates: `--set asserts.torch.__version__=2.10.0` sets the
    table key `torch.__version__`.
    """
    from pinshift.steps.kind import param_key

    values: dict[str, Any] = {}
    for item in settings:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name or name.startswith(".") or name.endswith("."):
            raise UsageError(f"--set {item}: expected KEY=VALUE (or TABLE.KEY=VALUE)")
        key, dot, inner = name.partition(".")
        key = param_key(key.strip())
        if not dot:
            if key in values:
                raise UsageError(f"--set {item}: '{key}' is set twice")
            values[key] = text
            continue
        table = values.setdefault(key, {})
        if not isinstance(table, dict):
            raise UsageError(f"--set {item}: '{key}' is set both as a value and as a table")
        if inner in table:
            raise UsageError(f"--set {item}: '{key}.{inner}' is set twice")
        table[inner] = text
    return values


def _wants_text(hint: Any) -> bool:
    """True for `str`, `str | None` and `Literal["a", "b"]`: such a value is taken as written.

    A table arm (`str | PinOf`) is set key by key (`--set new.repo=...`), so a plain value is its text.
    """
    args = [a for a in typing.get_args(hint) if a is not type(None)
            and not (isinstance(a, type) and dataclasses.is_dataclass(a))]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return all(_wants_text(a) for a in args)
    if typing.get_origin(hint) is typing.Literal:
        return all(isinstance(a, str) for a in args)
    return hint is str


def typed(hint: Any, value: Any) -> Any:
    """A `--set` value as its parameter's type wants it: text for text, TOML for lists, tables, numbers.

    Type-directed, so `--set value='"12.9"'` (Nix source) keeps its quotes and
    `--set old=1234567` (a revision of digits) stays a string.
    """
    if isinstance(value, dict):
        table = next((a for a in (hint, *typing.get_args(hint)) if isinstance(a, type) and dataclasses.is_dataclass(a)),
                     None)
        if table is not None:  # a table with typed keys (pin-swap's `new = { repo, ref }`: --set new.repo=...)
            from pinshift.steps.kind import param_key

            fields = {param_key(k): h for k, h in typing.get_type_hints(table).items()}
            return {k: typed(fields.get(param_key(k), Any), v) for k, v in value.items()}
        args = typing.get_args(hint)
        inner = args[1] if len(args) == 2 else Any
        return {k: typed(inner, v) for k, v in value.items()}
    return value if _wants_text(hint) else literal(value)


def _expanded(kind, values: dict[str, Any]) -> dict[str, Any]:
    """`{{`/`}}` unescaped; `{base}`/`{target}` and `{facts.…}` are a usage error: apply runs outside any
    migration, on no branch."""
    from pinshift.recipes.placeholders import PlaceholderError, expand_params, facts_in

    try:
        expanded = expand_params(values, {}, kind.own_placeholders)
    except PlaceholderError as error:
        hint = f"apply has no migration, so write the branch name itself (--set {error.key}=BRANCH)" \
            if error.known else f"`pinshift show --step {kind.name}` lists its parameters"
        raise UsageError(f"{kind.name}: {error}; {hint}") from None
    for key, value in expanded.items():
        if facts_in(value):
            raise UsageError(f"{kind.name}: '{key}': {{facts.{facts_in(value)[0]}}} is a fact of a branch's recipes after "
                             f"a migration's steps, and apply runs on no branch: write the value itself")
    return expanded


def step_params(kind, settings: tuple[str, ...]) -> tuple[Any, dict[str, Any]]:
    """Validated Params and the values they came from; errors say where the parameters are documented."""
    hints = {parameter.key: parameter.hint for parameter in kind.parameters()}
    values = {key: typed(hints.get(key, Any), value) for key, value in _expanded(kind, parse_settings(settings)).items()}
    try:
        return kind.parse_params(values), values
    except ParamError as error:
        raise UsageError(f"{kind.name}: {error}; `pinshift show --step {kind.name}` lists its parameters") from None


# --- which files ---------------------------------------------------------------------------------


class SelectedFiles:
    """The files `apply` runs on, keyed by their path as the user names them (relative to the cwd).

    Several PATH arguments become one tree, so a step's `prepare` (pin-swap resolving an
    abbreviated revision) sees every file at once, as it does in `migrate`.
    """

    fork_safe = True

    def __init__(self) -> None:
        self.entries: dict[str, tuple[DirectoryTree, str]] = {}
        self._seen: set[Path] = set()

    def add(self, shown: str, tree: DirectoryTree, relative: str) -> None:
        # the real file, so two PATHs naming it once count once; the tree's root is already real, and a
        # listed path passes through no symlinked directory: only a link itself needs resolving
        full = tree.root / relative
        real = Path(os.path.realpath(full)) if os.path.islink(full) else full  # a loop is skipped when read
        if real not in self._seen:
            self._seen.add(real)
            self.entries[shown] = (tree, relative)

    def paths(self) -> list[str]:
        return list(self.entries)

    def read(self, path: str) -> bytes:
        tree, relative = self.entries[path]
        return tree.read(relative)

    def target(self, path: str) -> tuple[Path, Path]:
        """(tree root, the file to write for `path`: a symlink inside its tree resolved); SkippedFile if that is no
        longer safe (a link out of the tree, a folder on the way that is a link)."""
        tree, relative = self.entries[path]
        return tree.root, tree.resolve(relative)

    def new_target(self, path: str, beside: str) -> tuple[Path, Path]:
        """(tree root, file) for a new `path` (a renamed or cloned file's new name), in the tree of `beside`.

        Both are paths as apply shows them (relative to the cwd): the new one is placed relative to the
        same PATH argument, so its folders are opened from that tree's root without following a link.
        """
        tree, relative = self.entries[beside]
        prefix = beside[:len(beside) - len(relative)] if beside.endswith(relative) else None
        inner = os.path.relpath(path, prefix or ".") if prefix is not None else None
        if inner is None or inner == ".." or inner.startswith("../") or os.path.isabs(inner):
            raise SkippedFile(f"{path}: outside the folder of {beside}; skipped")
        return tree.root, tree.root / inner

    def mode(self, path: str) -> str | None:
        tree, relative = self.entries[path]
        return tree.mode(relative)


def select_files(paths: tuple[str, ...], globs: tuple[str, ...], max_bytes: int,
                 excludes: tuple[str, ...] = ()) -> SelectedFiles:
    """Files matching `globs` under each directory PATH (honouring .gitignore in a work tree), plus named files,
    without those an `--exclude` glob matches (by the path under PATH, or as shown: relative to the cwd)."""
    from pinshift.files.globs import glob_problem, matches

    for option, glob in [("--files", g) for g in globs] + [("--exclude", g) for g in excludes]:
        problem = glob_problem(glob)
        if problem:
            raise UsageError(f"{option} {glob}: invalid glob ({problem})")

    def excluded(*names: str) -> bool:
        return bool(excludes) and any(matches(name, excludes) for name in names)

    selected = SelectedFiles()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            tree = DirectoryTree(path, max_bytes, listed_files)
            for relative in tree.paths():
                shown = os.path.normpath(os.path.join(given, relative))
                if matches(relative, globs) and not excluded(relative, shown):
                    selected.add(shown, tree, relative)
        elif path.exists() or path.is_symlink():
            if not excluded(os.path.normpath(given), path.name):
                selected.add(os.path.normpath(given), DirectoryTree(path.parent, max_bytes), path.name)
        else:
            raise UsageError(f"{given}: no such file or directory")
    return selected


def add_referrers(selected: SelectedFiles, root: Path, max_bytes: int, excludes: tuple[str, ...]) -> list[str]:
    """Add every Nix file under `root` (the current directory; .gitignore honoured) to `selected`: the files whose
    references a file-level step follows. The `--exclude`d ones are left out and returned (with their bytes read
    by `check_excluded_referrers`)."""
    from pinshift.files.globs import matches

    tree = DirectoryTree(root, max_bytes, listed_files)
    excluded = []
    for relative in tree.paths():
        shown = os.path.normpath(os.path.relpath(root / relative))
        if not matches(relative, DEFAULT_GLOBS):
            continue
        if excludes and (matches(relative, excludes) or matches(shown, excludes)):
            excluded.append(shown)
        else:
            selected.add(shown, tree, relative)
    return excluded


def check_excluded_referrers(step, excluded: list[str]) -> None:
    """An `--exclude`d Nix file that names a file the step renames or removes would be left dangling: refused."""
    names = {}
    for change in step.changed:
        for old in ([change.old_path] if change.old_path else []) + ([change.path] if change.removed else []):
            names[os.path.basename(old).encode()] = old
    if not names:
        return
    for path in excluded:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        for name, old in names.items():
            if name in data:
                raise StepFailed(f"{step.kind}: {path} names {old}, which this step takes away, but --exclude leaves "
                                 f"it out, so its reference would dangle; nothing was written (drop that --exclude, "
                                 "or change the file by hand first)")


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?[])", r"[\1]", text)


def step_globs(paths: tuple[str, ...], globs: tuple[str, ...]) -> tuple[str, ...]:
    """The step's globs in the paths apply shows (relative to the current directory).

    `--files` globs under each directory PATH, and under the directory of each named file plus
    the file itself: a renamed or cloned file must keep a name these match.
    """
    found: list[str] = []
    for given in paths:
        shown = os.path.normpath(given)
        directory = shown if Path(given).is_dir() else os.path.dirname(shown)
        if not Path(given).is_dir():
            found.append(_glob_escape(shown))
        prefix = "" if directory in ("", ".") else _glob_escape(directory).rstrip("/") + "/"
        found.extend(prefix + glob for glob in globs)
    return tuple(dict.fromkeys(found))


# --- output ------------------------------------------------------------------------------------


def _changed_lines(group, verb: str, verbose: bool) -> list[str]:
    """`changed  path (1 edit)` per file; a group of files changed the same way is one line unless `verbose`."""
    from pinshift.report.totals import plural

    def one(c) -> str:
        return f"removed  {c.path}" if c.removed else f"{c.operation or verb}  {c.label} ({plural(len(c.edits), 'edit')})"

    if verbose or len(group.changes) == 1:
        return [one(c) for c in group.changes]
    edits = "" if group.operation == "removed" else f", {plural(group.edits, 'edit')}"
    return [f"{group.operation or verb}  {len(group.changes)} files with the same change{edits} "
            f"(first: {group.representative.label}; --verbose lists all)"]


def summary(step, written: bool, verbose: bool = False) -> str:
    """Notes, changed, skipped and refused files, warnings (one line per group, or each with `verbose`); a count line."""
    from pinshift.report.groups import (change_groups, group_lines, note_groups, refused_groups, run_notes,
                                        skipped_groups, warning_groups)
    from pinshift.report.totals import plural

    lines = [f"note: {note}" for note in run_notes(step)]
    lines.extend(f"note: {line}" for line in group_lines(note_groups(step), verbose))
    verb = "changed" if written else "would change"
    for group in change_groups(step):
        lines.extend(_changed_lines(group, verb, verbose))
    lines.extend(f"skipped  {line}" for line in group_lines(skipped_groups(step), verbose))
    lines.extend(f"refused  {line}" for line in group_lines(refused_groups(step), verbose))
    lines.extend(f"warning: {line}" for line in group_lines(warning_groups(step), verbose))
    operations = f" ({step.operation_counts})" if step.operation_counts else ""
    lines.append(f"{step.kind}: {plural(len(step.changed), 'file')} {verb}{operations}, {plural(step.edit_count, 'edit')}, "
                 f"{plural(len(step.warnings), 'warning')}, {len(step.skipped)} skipped, {len(step.refused)} refused")
    return "\n".join(printable(line) for line in lines) + "\n"


@dataclass(frozen=True)
class ApplyOptions:
    """Every `pinshift apply` option, built once by the command."""

    kind: str
    paths: tuple[str, ...]
    settings: tuple[str, ...]
    globs: tuple[str, ...]
    dry_run: bool
    strict: bool
    migrations: Path | None
    max_bytes: int
    trust_repo: bool = False
    nixpkgs: Path | None = None
    excludes: tuple[str, ...] = ()
    skip_refused: bool = False


def plan_apply(options: ApplyOptions):
    """(Plan, SelectedFiles, PlanMemo or None): the step planned in memory over the selected files; nothing written."""
    from pinshift.commands.recipes import repository_root
    from pinshift.planning.plan import Plan
    from pinshift.planning.jobs import RunOptions
    from pinshift.planning.runner import plan_step
    from pinshift.planning.working_set import WorkingSet
    from pinshift.steps.registry import available_kinds, get_kind
    from pinshift.steps.trust import Consent

    from pinshift.facts.pin_inputs import fill
    from pinshift.planning.memo import PlanMemo

    consent = Consent(options.trust_repo, options.migrations)
    root = repository_root(Path("."))
    kind = get_kind(available_kinds(root, options.migrations, consent), options.kind)
    params, values = step_params(kind, options.settings)
    selected = select_files(options.paths, options.globs, options.max_bytes, options.excludes)
    follows = kind.plans_paths and kind.plans_references(params)
    excluded: list[str] = []
    if follows:  # a rename follows every referrer in the repository, whatever PATH limits the renamed files to
        here = Path(".").resolve()
        if here != root:
            click.echo(printable(f"pinshift: note: references from files outside {here} are not followed: run from "
                                 f"the repository root ({root}) to follow every one"), err=True)
        excluded = add_referrers(selected, here, options.max_bytes, options.excludes)
    [filled] = fill([(kind.name, kind, params)], options.nixpkgs, root)
    memo = PlanMemo.open(note=lambda line: echo_fitted(printable(line), err=True))
    step = plan_step(WorkingSet(selected), kind, filled.params, step_globs(options.paths, options.globs),
                     title=f"{kind.name} (pinshift apply)", tree_globs=() if follows else None,
                     raw_params=values, options=RunOptions(strict=options.strict, memo=memo))
    if memo is not None:
        memo.save()
    step.notes[:0] = filled.notes
    check_new_paths(step, selected)
    check_excluded_referrers(step, excluded)
    return Plan(recipe="", steps=[step], repository=os.getcwd(), dry_run=options.dry_run), selected, memo


def run_apply(options: ApplyOptions, report) -> int:
    """Plan; report (--dry-run) or write every changed file; the exit code."""
    plan, selected, memo = plan_apply(options)
    step = plan.steps[0]
    if report.verbose and memo is not None and memo.hits:
        echo_fitted(f"pinshift: {memo.summary()}", err=True)
    problem = None
    if step.refused or (options.strict and step.warnings):  # else nothing fails: migrate's module left unimported
        from pinshift.branches.migrate import failure

        problem = failure(step, options.strict)
    if options.skip_refused and step.refused:
        problem = f"warning under --strict: {step.warnings[0]}" if options.strict and step.warnings else None
        click.echo(printable(f"pinshift: {len(step.refused)} refused file{'s' if len(step.refused) != 1 else ''} "
                             "skipped (--skip-refused), left as they are: "
                             + ", ".join(change.path for change in step.refused)), err=True)
    if options.dry_run:
        code = emit(plan, report)
        return max(code, 1) if problem else code
    if problem:
        from pinshift.report.groups import group_lines, refused_groups, warning_groups

        for line in group_lines(refused_groups(step), report.verbose):
            echo_fitted(printable(f"refused  {line}"), err=True)
        for line in group_lines(warning_groups(step), report.verbose):
            echo_fitted(printable(f"warning: {line}"), err=True)
        echo_fitted(printable(f"pinshift: {step.kind} failed: {problem}; no file written"), err=True)
        return 1
    write_changes(step, selected)
    if report.format or report.output:
        echo_fitted(summary(step, written=True, verbose=report.verbose), nl=False, err=True, keep_tokens=report.verbose)
        try:
            return emit(plan, report)
        except PinshiftError as error:
            changed = "the file above was" if len(step.changed) == 1 else f"the {len(step.changed)} files above were"
            raise IncompleteRun(f"{error}; {changed} changed all the same") from None
    echo_fitted(summary(step, written=True, verbose=report.verbose), nl=False, keep_tokens=report.verbose)
    return 0


def check_new_paths(step, selected: SelectedFiles) -> None:
    """A renamed or cloned file must not land on a file apply was not given (the plan cannot see it)."""
    for change in step.changed:
        new = change.old_path is not None or change.source is not None
        if new and change.path not in selected.entries and os.path.lexists(change.path):
            raise StepFailed(f"{step.kind}: cannot {change.operation.removesuffix('d')} {change.label}: {change.path} "
                             "already exists, though it is not among the files apply was given (PATH, --files, "
                             ".gitignore); nothing was written (move it away first)")


def originals(step) -> dict[str, bytes | None]:
    """The bytes pinshift read from each path `step` writes over or removes (a renamed file's under its old path)."""
    found: dict[str, bytes | None] = {}
    for change in step.changed:
        if change.old_path is not None:
            found[change.old_path] = change.before
        elif change.source is not None:
            found.setdefault(change.source, change.before)
        else:
            found[change.path] = change.before
    return found


def write_changes(step, selected: SelectedFiles) -> None:
    """Write, create and remove the files of `step`, all or nothing (pinshift.files.replace); several refusals listed first.

    Each path's `before` is the bytes pinshift read from it (it must still hold them); a path
    apply was not given is a new file.
    """
    from pinshift.planning.plan import tree_changes
    from pinshift.files.replace import NOTHING_CHANGED, Replacement, replace_all

    read = originals(step)
    sources = {change.path: change.old_path or change.source for change in step.changed}
    items, unsafe = [], []
    for change in tree_changes(step):
        try:
            if change.path in selected.entries:
                root, target = selected.target(change.path)
                before = read[change.path] if read.get(change.path) is not None else selected.read(change.path)
            elif sources.get(change.path) in selected.entries:
                root, target = selected.new_target(change.path, sources[change.path])
                before = None
            else:
                root, target, before = None, Path(change.path), None
            items.append(Replacement(change.path, target, before, change.data, change.mode, root))
        except SkippedFile as reason:  # a symlink that now loops or leads out of the tree, a linked folder
            unsafe.append(f"{reason}".removesuffix("; skipped") + "; left alone")
    links: list[str] = []
    try:
        if unsafe:
            raise WriteRefused(f"{unsafe[0]}; {NOTHING_CHANGED}", unsafe)
        left = replace_all(items, links)
    except (WriteRefused, WriteFailed) as error:
        reasons = getattr(error, "reasons", [])
        if len(reasons) <= 1:
            raise
        for reason in reasons:
            echo_fitted(printable(f"refused  {reason}"), err=True)
        raise type(error)(f"{len(reasons)} files cannot be changed safely (listed above); {NOTHING_CHANGED}") from None
    for leftover in left:
        echo_fitted(printable(f"pinshift: warning: could not remove {leftover}"), err=True)
    for line in links:
        echo_fitted(printable(f"pinshift: warning: {line}"), err=True)


@click.command()
@click.argument("kind", shell_complete=complete_step_kinds)
@click.argument("paths", nargs=-1)
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="A step parameter (repeatable); VALUE is read as TOML when it is a number, true/false, a "
                   "list, a table or a quoted string, else as text; TABLE.KEY=VALUE sets one key of a table.")
@click.option("--files", "globs", multiple=True, metavar="GLOB",
              help="Which files under each directory PATH (repeatable; default: **/*.nix).")
@click.option("--dry-run", is_flag=True, help="Print the unified diff; write no file of yours "
                                                    "(the plans are remembered in ~/.cache/pinshift; PINSHIFT_CACHE=off).")
@click.option("--strict", is_flag=True, help="Fail (exit 1, write nothing) when the step raises any warning.")
@click.option("--exclude", "excludes", multiple=True, metavar="GLOB",
              help="Leave out the files this glob matches (repeatable; matched against the path under each "
                   "directory PATH and the path as shown).")
@click.option("--skip-refused", is_flag=True,
              help="Write the other files when some are refused; the refused ones are listed and left as they "
                   "are (default: a refused file stops the step, nothing written).")
@click.option("--migrations", type=click.Path(path_type=Path), default=None,
              help="Load extra step kinds from the *.py files of DIR (naming DIR consents to running them).")
@click.option("--trust-repo", is_flag=True,
              help="Allow the repository's own step kind KIND (.pinshift/migrations/*.py) to run.")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Skip larger files.")
@click.option("--nixpkgs", type=click.Path(file_okay=False, path_type=Path), envvar="PINSHIFT_NIXPKGS",
              help="A local nixpkgs clone (default: $PINSHIFT_NIXPKGS) for pin-swap's hash=compute and a branch "
                   "or tag as new; read offline, never written.")
@report_options
def apply(kind, paths, settings, globs, dry_run, strict, excludes, skip_refused, migrations, trust_repo, max_bytes,
          nixpkgs, report_format, report_output, no_color, check) -> None:
    """Run step KIND on the files under PATH (default: .) in place, without git.

    A refused file, or a warning under --strict, exits 1 and writes no file (--skip-refused writes the
    others and lists the refused). --check implies --dry-run.
    """
    report = options_from(report_format, report_output, no_color, check)
    options = ApplyOptions(kind=kind, paths=paths or (".",), settings=settings, globs=globs or DEFAULT_GLOBS,
                           dry_run=dry_run or check, strict=strict, migrations=migrations, max_bytes=max_bytes,
                           trust_repo=trust_repo, nixpkgs=nixpkgs, excludes=excludes, skip_refused=skip_refused)
    code = run_apply(options, report)
    if code:
        raise click.exceptions.Exit(code)
