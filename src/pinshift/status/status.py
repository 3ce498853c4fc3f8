"""Where every branch stands: one `BranchStatus` per repository × branch, from its recipes' facts.

The figures of a row come from the facts `pinshift scan` gathers (pinshift.facts.facts and
matrix), counted over the branch's build recipes (pinshift.facts.recipe_set: the packages Flox builds, not
the helpers in a lib/ folder or only imported; of those, files that reach a package set or interpreter,
name a pname or pin something); a file with syntax problems is not counted and makes the row say so.
Every counted value keeps how it was read (`Counted.sources`), most used first.

- pins: each nixpkgs revision (or revision expression) with its recipe count, most used
  first; recipes that take Flox function arguments "use the caller's nixpkgs" and have none;
- packages: per package (the file names' project: pytorch, vllm, onnxruntime …), the repository's main
  package first (most recipes; on a tie, the one most other packages' names extend: matrix.package_order),
  the versions its recipes build: with a nixpkgs clone, what Nix evaluates at the recipe's real pin
  (origin "real", pinshift.status.status_real); else (not evaluated, or failing there: a note counts
  those) the version a recipe states (`2.10.0`, origin "override" or "recipe"), else, with a clone
  (`with_pin_versions`), the attribute's version read from the pin's files (origin "pin"), else `?`
  with the reason;
- CUDA, GPU targets (GPU recipes only), Python, package sets, each with counts and sources;
- recipe pattern: "Flox function args", "self-contained fetchTarball" (the recipe imports its
  own pinned nixpkgs), "... + source override" (it also fetches the source of the nixpkgs package it
  overrides), "... + own source" (it builds a package of its own from fetched source: mkDerivation,
  buildPythonApplication);
- variants: the build recipes, and how many are GPU, CPU and Darwin builds; drift: `scan`'s definition
  (matrix.drift_markers): more than one place nixpkgs comes from, more than one package set for one Python;
- alignment (`align`): whether every build recipe pins the target revision.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.facts.branch_recipes import BranchRecipes
from pinshift.facts.facts import RecipeFacts
from pinshift.facts.matrix import aggregate_builds, package_of, package_order
from pinshift.facts.notation import sm_key
from pinshift.facts.recipe_set import recipe_set

CALLER = "caller's nixpkgs"  # a pin column entry: Flox function arguments, no pin of the recipe's own
UNPINNED = "unpinned"  # `import <nixpkgs>` without a fetcher
FLOX_ARGS = "Flox function args"
UNKNOWN = "?"

_REVISION = re.compile(r"[0-9a-fA-F]{7,40}\Z")


def python_of(facts: RecipeFacts) -> str:
    """`3.13` (package set, interpreter, else the file name), `3.x` (a bare python3Packages), `?`."""
    return facts.python.value if facts.python is not None else UNKNOWN


def pattern_of(facts: RecipeFacts) -> str:
    """How the recipe gets its nixpkgs: Flox function args, self-contained <fetcher> (+ source override)."""
    if facts.uses_caller_nixpkgs:
        return FLOX_ARGS
    pins = facts.nixpkgs_pins
    if not pins:
        return UNPINNED
    fetcher = pins[0].kind.removeprefix("builtins.")
    if not any(pin not in pins for pin in facts.pins):
        return f"self-contained {fetcher}"
    builds_itself = facts.builder is not None and facts.builder != "callPackage"
    return f"self-contained {fetcher}" + (" + own source" if builds_itself else " + source override")


def version_key(value: str) -> tuple:
    """`12.8` before `12.9` before `12.x` before `13.0`; other values after, by text."""
    parts = value.split(".")
    if all(p.isdigit() or p == "x" for p in parts) and parts[0].isdigit():
        return (0, tuple(int(p) if p.isdigit() else 10**6 for p in parts), value)
    return (1, (), value)


_version_key = version_key  # older name


@dataclass(frozen=True)
class Counted:
    """A value of one column, the number of build recipes with it, and how those recipes state it
    (`sources`: (source, recipes), most first)."""

    value: str
    recipes: int
    sources: tuple[tuple[str, int], ...] = ()

    def to_json(self, key: str) -> dict:
        return {key: self.value, "recipes": self.recipes,
                "sources": [{"source": source, "recipes": count} for source, count in self.sources]}


def counted(pairs, order=version_key) -> tuple[Counted, ...]:
    """(value, source) per recipe -> Counted values, most recipes first, ties by `order`."""
    by_value: dict[str, Counter] = {}
    for value, source in pairs:
        by_value.setdefault(value, Counter())[source] += 1
    ranked = sorted(by_value.items(), key=lambda item: (-sum(item[1].values()), order(item[0])))
    return tuple(Counted(value, sum(sources.values()), tuple(sorted(sources.items(), key=lambda s: (-s[1], s[0]))))
                 for value, sources in ranked)


@dataclass(frozen=True)
class Version:
    """A version a package's recipes build: `origin` override / recipe (stated by the recipe), pin (read from
    the nixpkgs clone at the recipe's pin), or "" for `?` (unknown; `sources` say why)."""

    value: str
    origin: str
    recipes: int
    sources: tuple[tuple[str, int], ...] = ()


@dataclass
class PackageStatus:
    """One package of a branch: its recipes, the attribute they build (`torch`), and their versions.

    `stated` is per (pin, version, origin, source) the number of recipes, as read; `versions` is that
    with the pins' versions filled in (`with_pin_versions`) and unknowns explained.
    """

    package: str
    recipes: int
    attribute: str | None = None
    stated: tuple[tuple[str | None, str | None, str, str, int], ...] = ()
    versions: tuple[Version, ...] = ()


def package_versions(package: PackageStatus, at_pin: dict | None, caller_pins: bool = False) -> tuple[Version, ...]:
    """The versions of a package's recipes: their own, else the pin's (`at_pin`: (pin, attribute) -> version or
    None, None without --nixpkgs), else `?` with the reason."""
    entries: dict[tuple[str, str], Counter] = {}
    for pin, version, origin, source, count in package.stated:
        if version is None:
            version, origin, source = _pin_version(package, pin, at_pin)
        entries.setdefault((version, origin), Counter())[source] += count
    ranked = sorted(entries.items(), key=lambda item: (item[0][0] == UNKNOWN, -sum(item[1].values()),
                                                        version_key(item[0][0])))
    return tuple(Version(value, origin, sum(sources.values()), tuple(sorted(sources.items(), key=lambda s: (-s[1], s[0]))))
                 for (value, origin), sources in ranked)


def _pin_version(package: PackageStatus, pin: str | None, at_pin: dict | None) -> tuple[str, str, str]:
    attribute = package.attribute
    if pin is None:
        return UNKNOWN, "", "they use their caller's nixpkgs"
    if at_pin is None:
        return UNKNOWN, "", "--nixpkgs DIR reads it from each pin"
    if attribute is None or not _REVISION.match(pin):
        return UNKNOWN, "", "no attribute and literal pin to read it at"
    if (pin, attribute) not in at_pin:
        return UNKNOWN, "", f"nixpkgs {pin[:7]} is not in the --nixpkgs clone"
    version = at_pin[(pin, attribute)]
    if version is None:
        return UNKNOWN, "", f"no literal version of {attribute} at nixpkgs {pin[:7]}"
    return version, "pin", f"{attribute} at nixpkgs {pin[:7]}"


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
    kinds: tuple[tuple[str, int], ...] = ()  # gpu / cpu / darwin -> recipes
    pins: tuple[tuple[str, int], ...] = ()  # nixpkgs revision (or expression) -> recipes, most first
    caller: int = 0  # recipes using the caller's nixpkgs
    unpinned: int = 0
    hashed: int = 0  # recipes whose nixpkgs fetcher carries a sha256/hash
    package_sets: tuple[Counted, ...] = ()
    cuda: tuple[Counted, ...] = ()  # GPU recipes only; `?` for those stating none
    gpu: tuple[Counted, ...] = ()  # GPU targets (sm90), GPU recipes only
    python: tuple[Counted, ...] = ()
    patterns: tuple[Counted, ...] = ()
    packages: tuple[PackageStatus, ...] = ()  # most recipes first
    problems: list[str] = field(default_factory=list)  # "path:line:col: message", first per unparsable file
    skipped: list[str] = field(default_factory=list)
    error: str | None = None
    pin_versions: dict = field(default_factory=dict)  # (pin, attribute) -> version at it (--nixpkgs)
    alignment: Alignment | None = None
    markers: tuple[str, ...] = ()  # matrix.drift_markers of its build recipes
    helpers: dict[str, str] = field(default_factory=dict)  # path -> why it is no recipe (facts.recipe_set)

    @property
    def label(self) -> str:
        return f"{self.repository}@{self.branch}"

    @property
    def pytorch(self) -> dict[str, str | None]:
        """pin -> the version of torch at it (--nixpkgs), as JSON's `pins[].pytorch` reports it."""
        return {pin: version for (pin, attribute), version in self.pin_versions.items() if attribute == "torch"}

    @property
    def drift(self) -> list[str]:
        """Markers: `pin drift`, `package-set drift`, as `pinshift scan` says them (matrix.drift_markers)."""
        return list(self.markers)


def branch_status(branch: BranchRecipes) -> BranchStatus:
    """The row of one branch's recipes (an unreadable branch keeps its error, figures empty)."""
    row = BranchStatus(branch.repository, branch.root, branch.branch, branch.commit, branch.files,
                       skipped=list(branch.skipped), error=branch.error)
    if branch.error:
        return row
    broken = [f for f in branch.recipes if f.problems]
    row.problems = [str(f.problems[0]) for f in broken]
    split = recipe_set(branch.recipes)
    row.helpers = split.helpers
    found = [f for f in split.recipes if not f.problems]
    agg = aggregate_builds(found)
    row.variants = len(found)
    row.kinds = tuple(sorted(Counter(f.kind for f in found).items(), key=lambda item: ("gpu", "cpu", "darwin").index(item[0])))
    row.pins = tuple((value, len(paths)) for value, paths in agg.pins.groups)
    row.caller, row.unpinned = len(agg.caller), len(agg.unpinned)
    row.hashed = sum(1 for f in found if any(p.has_hash for p in f.nixpkgs_pins))
    row.package_sets = counted((_set_column(f.set_shown), f.reached_via or f.set_shown) for f in found
                               if f.set_shown)
    row.markers = agg.markers
    gpus = [f for f in found if f.kind == "gpu"]
    row.cuda = counted((f.cuda.value, f.cuda.source) if f.cuda else (UNKNOWN, _no_cuda(f)) for f in gpus)
    row.gpu = counted(((f.target.value, f.target.source) for f in gpus if f.target), order=sm_key)
    row.python = counted((f.python.value, f.python.source) if f.python else (UNKNOWN, "no package set, interpreter "
                         "or python3XX in the file name") for f in found)
    row.patterns = counted((pattern, pattern) for pattern in map(pattern_of, found))
    row.packages = _packages(found)
    for package in row.packages:
        package.versions = package_versions(package, None)
    return row


def _set_column(shown: str) -> str:
    """The Package Set column's value: `python3.pkgs` is `python3Packages` (one set, the source keeps the spelling)."""
    return f"{shown.removesuffix('.pkgs')}Packages" if shown.endswith(".pkgs") else shown


def _no_cuda(facts: RecipeFacts) -> str:
    if "cudaPackages" in facts.arguments:
        return "cudaPackages comes from the caller and the file name has no cudaX_Y"
    return "no cudaPackages_X_Y overlay or set, cudaVersion or cudaX_Y in the file name"


def _packages(found: list[RecipeFacts]) -> tuple[PackageStatus, ...]:
    by_package: dict[str, list[RecipeFacts]] = {}
    for facts in found:
        by_package.setdefault(package_of(facts), []).append(facts)
    packages = []
    for name, recipes in by_package.items():
        attributes = Counter(f.attribute.value for f in recipes if f.attribute)
        stated: Counter = Counter()
        for f in recipes:
            pin = f.pin_value
            if f.version is not None:
                origin = "recipe" if f.builder and f.builder != "callPackage" else "override"
                stated[(pin, f.version.value, origin, f.version.source)] += 1
            else:
                stated[(pin, None, "", "")] += 1
        packages.append(PackageStatus(name, len(recipes), attributes.most_common(1)[0][0] if attributes else None,
                                      tuple((*key, count) for key, count in sorted(stated.items(), key=_stated_key))))
    order = package_order({p.package: p.recipes for p in packages})
    return tuple(sorted(packages, key=lambda p: order(p.package)))


def _stated_key(item) -> tuple:
    (pin, version, origin, source), count = item
    return (-count, pin or "", version or "", origin, source)


def align(row: BranchStatus, target: str) -> Alignment:
    """`aligned` when every build recipe pins `target` (a full revision; recipes may abbreviate it)."""
    target = target.lower()
    on_target = sum(count for value, count in row.pins
                    if _REVISION.match(value) and (target.startswith(value.lower()) or value.lower().startswith(target)))
    total = sum(count for _, count in row.pins) + row.caller + row.unpinned
    state = "aligned" if total and on_target == total else ("partly" if on_target else "not aligned")
    return Alignment(state, on_target, total)


def with_pin_versions(rows: list[BranchStatus], checkout) -> list[str]:
    """Fill each row's `pin_versions` ((pin, attribute) -> the attribute's version at the pin) from the
    nixpkgs clone (a nixpkgs.checkout.NixpkgsCheckout) and its packages' versions; the notes to show.

    Read statically as `verify` reads a clone (pinshift.nixpkgs.checkout): python-packages.nix's binding of
    the attribute (`torch`, `vllm`, `onnxruntime`; all-packages.nix and pkgs/by-name for a top-level one),
    the file its `callPackage` names, that file's `version = "...";`.
    """
    clone_directory = checkout.directory
    commits: dict[str, str | None] = {}
    versions: dict[tuple[str, str], str | None] = {}
    notes = []
    for row in rows:
        wanted = {(pin, package.attribute) for package in row.packages if package.attribute
                  for pin, version, _, _, _ in package.stated if version is None and pin and _REVISION.match(pin)}
        for pin, attribute in sorted(wanted):
            if pin not in commits:
                commits[pin] = checkout.resolve(pin)
                if commits[pin] is None:
                    notes.append(f"nixpkgs {pin[:12]} ({row.label}) is not in {clone_directory}; fetch it there "
                                 f"(git -C {clone_directory} fetch origin {pin})")
            if commits[pin] is None:
                continue
            if (pin, attribute) not in versions:
                versions[(pin, attribute)] = checkout.at(commits[pin]).version(attribute)
                if versions[(pin, attribute)] is None:
                    notes.append(f"nixpkgs {pin[:7]}: no literal `version` found for {attribute}")
            row.pin_versions[(pin, attribute)] = versions[(pin, attribute)]
        for package in row.packages:
            package.versions = package_versions(package, row.pin_versions)
    return notes


def with_real_versions(pairs, clone: Path, nix: str) -> list[str]:
    """Fill `package.versions` of each row from its build recipes evaluated at their real pins
    (pinshift.status.status_real); `pairs` are (row, branch recipes, repository). The notes to show.

    A recipe Nix evaluates counts its version (origin "real", source `evaluated at nixpkgs 0182a36`); one that
    fails there (a note per branch counts them) or cannot be told (a pin the clone does not have, no pin of its
    own) keeps what the recipe states, else the pin's version read from its files (origin "pin")."""
    from pinshift.status.status_real import evaluate_branches

    wanted = []
    for row, branch, repository in pairs:
        found = [] if row.error else [f for f in recipe_set(branch.recipes).recipes if not f.problems]
        wanted.append((row.label, branch, repository, [f.path for f in found]))
    outcomes, notes = evaluate_branches(wanted, clone, nix)
    for (row, branch, _), real in zip(pairs, outcomes):
        if not real:
            continue
        by_package: dict[str, list[RecipeFacts]] = {}
        for facts in [f for f in recipe_set(branch.recipes).recipes if not f.problems]:
            by_package.setdefault(package_of(facts), []).append(facts)
        for package in row.packages:
            counts: dict[tuple[str, str], Counter] = {}
            for facts in by_package.get(package.package, []):
                value, origin, source = _real_version(package, facts, real.get(facts.path), row)
                counts.setdefault((value, origin), Counter())[source] += 1
            if counts:
                ranked = sorted(counts.items(), key=lambda item: (item[0][0] == UNKNOWN, -sum(item[1].values()),
                                                                   version_key(item[0][0])))
                package.versions = tuple(
                    Version(value, origin, sum(sources.values()),
                            tuple(sorted(sources.items(), key=lambda s: (-s[1], s[0]))))
                    for (value, origin), sources in ranked)
    return notes


def _real_version(package: PackageStatus, facts: RecipeFacts, outcome, row: BranchStatus) -> tuple[str, str, str]:
    if outcome is not None and outcome.build is not None and outcome.build.version:
        return outcome.build.version, "real", f"evaluated at nixpkgs {', '.join(outcome.pins)}"
    if facts.version is not None:
        origin = "recipe" if facts.builder and facts.builder != "callPackage" else "override"
        return facts.version.value, origin, facts.version.source
    if outcome is not None and outcome.build is not None:
        return UNKNOWN, "", f"no version at nixpkgs {', '.join(outcome.pins)}"
    return _pin_version(package, facts.pin_value, row.pin_versions)


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
    cache_notes: list[str] = field(default_factory=list)  # why a cache was not used: for stderr, not the report
    real: bool = False  # the versions were evaluated at the real pins (--nixpkgs: pinshift.status.status_real)


def natural_key(name: str) -> tuple:
    """`pytorch-2.9` before `pytorch-2.10`: digit runs compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part)


def gather_status(options: StatusOptions, progress=None) -> StatusResult:
    """Open each repository, read every matching branch's recipes from its commit, build the rows.

    Errors about the input (a repository that is not one, a target that has no single pin) are raised
    before anything else is read; a branch that cannot be read is a row with its error. `progress(what, done,
    total)` hears of the branches read and the files parsed.
    """
    from fnmatch import fnmatchcase

    from pinshift.facts.alignment import read_branch_pin, split_align_to
    from pinshift.facts.branch_recipes import FactsCache, ReadOptions, read_repositories, repository_name
    from pinshift.errors import UsageError
    from pinshift.git.repo import Repository

    from pinshift.facts.facts_memo import FactsMemo

    cache = FactsCache()
    cache_notes: list[str] = []
    memo = FactsMemo.open(note=cache_notes.append)
    repositories, seen = [], set()
    for given in options.repos:
        repository = Repository.open_to_read(Path(given), f"--repo {given}")
        if repository.root.resolve() not in seen:
            seen.add(repository.root.resolve())
            repositories.append(repository)
    names = [repository_name(r.root) for r in repositories]
    checkout = None
    if options.nixpkgs is not None:
        from pinshift.nixpkgs.checkout import NixpkgsCheckout

        checkout = NixpkgsCheckout(options.nixpkgs)
    target = None
    if options.align_to is not None:
        path, ref = split_align_to(options.align_to)
        target = read_branch_pin(Path(path).expanduser(), ref, options.files, options.majority,
                                 f"--align-to {options.align_to}",
                                 "pass --pick majority to align to the most common", cache)
    result = StatusResult([], target, cache_notes=cache_notes)
    listed, requests = [], []
    for repository, name in zip(repositories, names):
        shown = name if names.count(name) == 1 else str(repository.root)
        branches = repository.local_branches()
        chosen = [(b, c) for b, c in branches if not options.branches
                  or any(fnmatchcase(b, glob) for glob in options.branches)]
        if not chosen:
            listed.append(f"{shown} ({', '.join(b for b, _ in branches[:10]) or 'no branches'})")
            continue
        chosen.sort(key=lambda item: natural_key(item[0]))
        requests.append((repository, chosen, shown))
    pairs = []  # (row, branch recipes, repository), for the versions at the real pins
    for (repository, _, _), branches in zip(requests, read_repositories(requests, options.files, options.max_bytes,
                                                                        cache, ReadOptions(options.jobs), memo,
                                                                        progress)):
        for branch in branches:
            result.rows.append(branch_status(branch))
            pairs.append((result.rows[-1], branch, repository))
    memo.save()
    if not result.rows:
        raise UsageError(f"no branch matches --branches {' '.join(options.branches)}: " + "; ".join(listed))
    result.notes.extend(f"no branch of {entry} matches --branches" for entry in listed)
    if checkout is not None:
        result.notes.extend(with_pin_versions(result.rows, checkout))
        from pinshift.evaluation.evaluation import find_nix

        nix = find_nix()
        if nix is None:
            result.notes.append("versions read from each pin's files, not evaluated: nix-instantiate is not on PATH")
        else:
            result.notes.extend(with_real_versions(pairs, options.nixpkgs, nix))
            result.real = True
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
    from pinshift.facts.alignment import slug, toml_value
    from pinshift.errors import UsageError
    from pinshift.steps.kind import PIN_OF_FILES

    label = row.label
    if row.error:
        raise UsageError(f"--recipe {label}: the branch cannot be read: {row.error}")
    if row.problems:
        raise UsageError(f"--recipe {label}: {_recipes(len(row.problems), 'recipe file')} {'does' if len(row.problems) == 1 else 'do'} not parse (first: {row.problems[0]}); "
                         "fix them first (pinshift parse lists them)")
    if row.caller:
        raise UsageError(f"--recipe {label}: {_recipes(row.caller)} {'uses' if row.caller == 1 else 'use'} the caller's nixpkgs (Flox function "
                         f"arguments), which pin-swap cannot move; convert them first (pinshift migrate "
                         f"flox-args-to-pinned --from {row.branch} --branch {row.branch}-pinned), then align that branch")
    if row.unpinned:
        raise UsageError(f"--recipe {label}: {_recipes(row.unpinned)} {'imports' if row.unpinned == 1 else 'import'} <nixpkgs> without a pin; pin {'it' if row.unpinned == 1 else 'them'} first "
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


def _recipes(count: int, noun: str = "recipe") -> str:
    """`1 recipe`, `2 recipes`."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
