"""Where every branch stands: one `BranchStatus` per repository × branch, from its recipes' facts.

The figures of a row come from the facts `pinshift scan` gathers (pinshift.checks.facts and
matrix), counted over the branch's build recipes (files that name a package set or pin
something); a file with syntax problems is not counted and makes the row say so.

- pins: each nixpkgs revision (or revision expression) with its recipe count, most used
  first; recipes that take Flox function arguments "use the caller's nixpkgs" and have none;
- package sets (`python313Packages`), CUDA versions (the overlay's `cudaPackages_12_9`, else
  the name's `cuda12_9`; GPU recipes only), Python (`python312Packages` says 3.12; for
  `python3Packages` the names do: `pytorch-python313-…`), each with counts;
- recipe pattern: "Flox function args", "self-contained fetchTarball" (the recipe imports its
  own pinned nixpkgs), "... + source override" (it also fetches the package's own source);
- variants: the build recipes; drift: more than one pin, more than one package set;
- PyTorch: the version of `torch` each pin provides, read from a local nixpkgs clone
  (`with_pytorch`), None where unknown;
- alignment (`align`): whether every build recipe pins the target revision.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.checks.branches import BranchRecipes
from pinshift.checks.facts import RecipeFacts
from pinshift.checks.matrix import NO_CUDA, aggregate, builds, cuda_of, stem

CALLER = "caller's nixpkgs"  # a pin column entry: Flox function arguments, no pin of the recipe's own
UNPINNED = "unpinned"  # `import <nixpkgs>` without a fetcher
FLOX_ARGS = "Flox function args"

_SET_PYTHON = re.compile(r"python(\d)(\d+)Packages\Z")
_NAME_PYTHON = re.compile(r"(?:\A|-)python(\d)(\d+)(?:-|\Z)")
_REVISION = re.compile(r"[0-9a-fA-F]{7,40}\Z")


def python_of(facts: RecipeFacts) -> str:
    """`3.13` from `python313Packages`, else from the name (`pytorch-python313-cpu-avx2`); `3` for a bare
    `python3Packages` the names say nothing about (the pin's default Python); `?` otherwise."""
    if facts.package_set is not None and (match := _SET_PYTHON.match(facts.package_set.value)):
        return f"{match.group(1)}.{match.group(2)}"
    for name in (stem(facts.path), facts.pname.value if facts.pname else ""):
        if match := _NAME_PYTHON.search(name):
            return f"{match.group(1)}.{match.group(2)}"
    if facts.package_set is not None and facts.package_set.value == "python3Packages":
        return "3"
    return "?"


def pattern_of(facts: RecipeFacts) -> str:
    """How the recipe gets its nixpkgs: Flox function args, self-contained <fetcher> (+ source override)."""
    if facts.uses_caller_nixpkgs:
        return FLOX_ARGS
    pins = facts.nixpkgs_pins
    if not pins:
        return UNPINNED
    fetcher = pins[0].kind.removeprefix("builtins.")
    own_source = any(pin not in pins for pin in facts.pins)
    return f"self-contained {fetcher}" + (" + source override" if own_source else "")


def _counted(values) -> tuple[tuple[str, int], ...]:
    """(value, count), most common first, ties by value."""
    return tuple(sorted(Counter(values).items(), key=lambda item: (-item[1], _version_key(item[0]))))


def _version_key(value: str) -> tuple:
    parts = value.split(".")
    return (0, tuple(int(p) for p in parts), value) if all(p.isdigit() for p in parts) else (1, (), value)


@dataclass(frozen=True)
class Alignment:
    """How a branch stands against the target pin: `state` is "aligned", "partly" or "not aligned"."""

    state: str
    on_target: int  # build recipes pinning the target revision
    total: int

    @property
    def aligned(self) -> bool:
        return self.state == "aligned"


@dataclass
class BranchStatus:
    """One row of `pinshift status`."""

    repository: str
    root: str
    branch: str
    commit: str
    files: int = 0
    variants: int = 0
    pins: tuple[tuple[str, int], ...] = ()  # nixpkgs revision (or expression) -> recipes, most first
    caller: int = 0  # recipes using the caller's nixpkgs
    unpinned: int = 0
    hashed: int = 0  # recipes whose nixpkgs fetcher carries a sha256/hash
    package_sets: tuple[tuple[str, int], ...] = ()
    cuda: tuple[tuple[str, int], ...] = ()
    python: tuple[tuple[str, int], ...] = ()
    patterns: tuple[tuple[str, int], ...] = ()
    packages: tuple[tuple[str, int], ...] = ()  # variant matrix per package (torch, torchvision...)
    problems: list[str] = field(default_factory=list)  # "path:line:col: message", first per unparsable file
    skipped: list[str] = field(default_factory=list)
    error: str | None = None
    pytorch: dict[str, str | None] = field(default_factory=dict)  # pin -> torch version at it (--nixpkgs)
    alignment: Alignment | None = None
    mixed_sets: bool = False  # one Python reached through two package sets

    @property
    def label(self) -> str:
        return f"{self.repository}@{self.branch}"

    @property
    def drift(self) -> list[str]:
        """Markers: `pin drift` (more than one pin, or pinned and unpinned recipes), `package-set drift`
        (two package sets for one Python, `python3Packages` and `python313Packages`; python312Packages
        beside python313Packages builds two Pythons, which is no drift)."""
        markers = []
        kinds = len(self.pins) + bool(self.caller) + bool(self.unpinned)
        if kinds > 1:
            markers.append("pin drift")
        if self.mixed_sets:
            markers.append("package-set drift")
        return markers


def branch_status(branch: BranchRecipes) -> BranchStatus:
    """The row of one branch's recipes (an unreadable branch keeps its error, figures empty)."""
    row = BranchStatus(branch.repository, branch.root, branch.branch, branch.commit, branch.files,
                       skipped=list(branch.skipped), error=branch.error)
    if branch.error:
        return row
    broken = [f for f in branch.recipes if f.problems]
    row.problems = [str(f.problems[0]) for f in broken]
    found = builds([f for f in branch.recipes if not f.problems])
    agg = aggregate(found)
    row.variants = agg.count
    row.pins = tuple((value, len(paths)) for value, paths in agg.pins.groups)
    row.caller, row.unpinned = len(agg.caller), len(agg.unpinned)
    row.hashed = sum(1 for f in found if any(p.has_hash for p in f.nixpkgs_pins))
    row.package_sets = _counted(f.package_set.value for f in found if f.package_set)
    sets_per_python: dict[str, set[str]] = {}
    for f in found:
        if f.package_set is not None:
            sets_per_python.setdefault(python_of(f), set()).add(f.package_set.value)
    row.mixed_sets = any(len(sets) > 1 for sets in sets_per_python.values())
    row.cuda = _counted(c for c in map(cuda_of, found) if c != NO_CUDA)
    row.python = _counted(python_of(f) for f in found if f.package_set or f.pname)
    row.patterns = _counted(map(pattern_of, found))
    row.packages = tuple((m.package, m.count) for m in agg.matrices)
    return row


def align(row: BranchStatus, target: str) -> Alignment:
    """`aligned` when every build recipe pins `target` (a full revision; recipes may abbreviate it)."""
    target = target.lower()
    on_target = sum(count for value, count in row.pins
                    if _REVISION.match(value) and (target.startswith(value.lower()) or value.lower().startswith(target)))
    total = sum(count for _, count in row.pins) + row.caller + row.unpinned
    state = "aligned" if total and on_target == total else ("partly" if on_target else "not aligned")
    return Alignment(state, on_target, total)


def with_pytorch(rows: list[BranchStatus], checkout) -> list[str]:
    """Fill each row's `pytorch` (the torch version at each literal pin) from the nixpkgs clone
    (a checks.nixpkgs.NixpkgsCheckout); the notes to show.

    Read statically as `verify` reads a clone (pinshift.checks.nixpkgs): python-packages.nix's `torch`
    binding, the file its `callPackage` names, that file's `version = "...";`.
    """
    clone_directory = checkout.directory
    versions: dict[str, str | None] = {}
    notes = []
    for row in rows:
        for value, _ in row.pins:
            if not _REVISION.match(value):
                continue
            if value not in versions:
                commit = checkout.resolve(value)
                if commit is None:
                    notes.append(f"nixpkgs {value[:12]} ({row.label}) is not in {clone_directory}; fetch it there "
                                 f"(git -C {clone_directory} fetch origin {value})")
                    versions[value] = None
                else:
                    versions[value] = checkout.at(commit).version("torch")
                    if versions[value] is None:
                        notes.append(f"nixpkgs {value[:7]}: no literal `version` found for torch")
            row.pytorch[value] = versions[value]
    return notes


# --- gathering -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatusOptions:
    """Every `pinshift status` option, built once by the command."""

    repos: tuple[Path, ...] = (Path("."),)
    branches: tuple[str, ...] = ()  # globs of branch names; empty: every local branch
    files: tuple[str, ...] = (".flox/pkgs/**/*.nix",)
    nixpkgs: Path | None = None
    align_to: str | None = None
    majority: bool = False
    max_bytes: int = 10 * 1024 * 1024
    jobs: int | None = None


@dataclass
class StatusResult:
    rows: list[BranchStatus]
    target: object = None  # alignment.BranchPin with --align-to
    notes: list[str] = field(default_factory=list)


def natural_key(name: str) -> tuple:
    """`pytorch-2.9` before `pytorch-2.10`: digit runs compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part)


def gather_status(options: StatusOptions) -> StatusResult:
    """Open each repository, read every matching branch's recipes from its commit, build the rows.

    Errors about the input (a repository that is not one, a target that has no single pin) are raised
    before anything else is read; a branch that cannot be read is a row with its error.
    """
    from fnmatch import fnmatchcase

    from pinshift.checks.alignment import read_branch_pin, split_align_to
    from pinshift.checks.branches import FactsCache, ReadOptions, read_branches, repository_name
    from pinshift.errors import UsageError
    from pinshift.gitrepo import Repository

    cache = FactsCache()
    repositories, seen = [], set()
    for given in options.repos:
        repository = Repository.open_to_read(Path(given), f"--repo {given}")
        if repository.root.resolve() not in seen:
            seen.add(repository.root.resolve())
            repositories.append(repository)
    names = [repository_name(r.root) for r in repositories]
    checkout = None
    if options.nixpkgs is not None:
        from pinshift.checks.nixpkgs import NixpkgsCheckout

        checkout = NixpkgsCheckout(options.nixpkgs)
    target = None
    if options.align_to is not None:
        path, ref = split_align_to(options.align_to)
        target = read_branch_pin(Path(path).expanduser(), ref, options.files, options.majority,
                                 f"--align-to {options.align_to}",
                                 "pass --pick majority to align to the most common", cache)
    result = StatusResult([], target)
    listed = []
    for repository, name in zip(repositories, names):
        shown = name if names.count(name) == 1 else str(repository.root)
        branches = repository.local_branches()
        chosen = [(b, c) for b, c in branches if not options.branches
                  or any(fnmatchcase(b, glob) for glob in options.branches)]
        if not chosen:
            listed.append(f"{shown} ({', '.join(b for b, _ in branches[:10]) or 'no branches'})")
            continue
        chosen.sort(key=lambda item: natural_key(item[0]))
        for branch in read_branches(repository, chosen, options.files, options.max_bytes, cache,
                                    ReadOptions(options.jobs), shown):
            result.rows.append(branch_status(branch))
    if not result.rows:
        raise UsageError(f"no branch matches --branches {' '.join(options.branches)}: " + "; ".join(listed))
    result.notes.extend(f"no branch of {entry} matches --branches" for entry in listed)
    if checkout is not None:
        result.notes.extend(with_pytorch(result.rows, checkout))
    if target is not None:
        for row in result.rows:
            if not row.error:
                row.alignment = align(row, target.revision)
    return result


def align_recipe(row, target: BranchPin, repo_path: str, files: tuple[str, ...], majority: bool,
                 command: str, hashes: bool) -> tuple[str, str]:
    """(name, TOML text) of the recipe moving `row`'s branch (a status.BranchStatus) onto `target`'s pin.

    One pin-swap step per other literal pin of the branch, each `new = { repo = …, ref = … }` so that
    `pinshift migrate` reads the target again (and says so in the commit). `repo_path` is the target
    as the recipe repository sees it. A branch that cannot be swapped (aligned already, recipes
    without a pin of their own, a pin written as an expression) is a UsageError saying what to do.
    """
    from pinshift.checks.alignment import slug, toml_value
    from pinshift.errors import UsageError
    from pinshift.steps import PIN_OF_FILES

    label = row.label
    if row.error:
        raise UsageError(f"--recipe {label}: the branch cannot be read: {row.error}")
    if row.problems:
        raise UsageError(f"--recipe {label}: {len(row.problems)} recipe files do not parse (first: {row.problems[0]}); "
                         "fix them first (pinshift parse lists them)")
    if row.caller:
        raise UsageError(f"--recipe {label}: {row.caller} recipes use the caller's nixpkgs (Flox function "
                         f"arguments), which pin-swap cannot move; convert them first (pinshift migrate "
                         f"flox-args-to-pinned --from {row.branch} --branch {row.branch}-pinned), then align that branch")
    if row.unpinned:
        raise UsageError(f"--recipe {label}: {row.unpinned} recipes import <nixpkgs> without a pin; pin them first "
                         "(the pin-nixpkgs step kind)")
    expressions = [value for value, _ in row.pins if not _REVISION.match(value)]
    if expressions:
        raise UsageError(f"--recipe {label}: a pin is written as an expression ({expressions[0]}), which pin-swap "
                         "cannot swap; write its revision as a literal first")
    if align(row, target.revision).aligned:
        raise UsageError(f"--recipe {label}: the branch is aligned already (all {row.variants} recipes pin "
                         f"{target.revision[:7]}, {target.origin}); there is nothing to align")
    olds = [(value, count) for value, count in row.pins
            if not (target.revision.startswith(value.lower()) or value.lower().startswith(target.revision))]
    short = target.revision[:7]
    name = slug(f"align-{row.branch}")
    table = [f"repo = {toml_value(repo_path)}", f"ref = {toml_value(target.label.rpartition('@')[2])}"]
    if majority:
        table.append('pick = "majority"')
    if tuple(files) != PIN_OF_FILES:
        table.append(f"files = {toml_value(files)}")
    lines = [
        f"# Aligns {label} to the nixpkgs pin of {target.label} ({short} when this was written).",
        f"# Written by: {command}",
        f"# Save it as .pinshift/recipes/{name}.toml in {row.repository}, then: pinshift migrate {name}",
        f"name = {toml_value(name)}",
        f"description = {toml_value(f'{row.branch} onto the nixpkgs pin of {target.label}')}",
        f"base = {toml_value(row.branch)}",
        f"target = {toml_value(slug(f'{row.branch}-nixpkgs-{short}'))}",
        f"files = {toml_value(files)}",
    ]
    for value, _ in olds:
        lines += [
            "",
            "[[steps]]",
            'kind = "pin-swap"',
            f"title = {toml_value(f'Pin nixpkgs {value[:7]} to the pin of {target.label}')}",
            "[steps.params]",
            f"old = {toml_value(value)}",
            "new = { " + ", ".join(table) + " }",
        ]
        if hashes:
            lines.append('hash = "compute"  # the fetchers carry a sha256: migrate with --nixpkgs DIR to compute it')
    return name, "\n".join(lines) + "\n"
