"""Would these recipes evaluate on their pin? Syntax, static compatibility with nixpkgs, and `--eval`.

Codes (each finding names every recipe it affects):

  V001 tree-sitter finds a syntax problem       V104 an .override argument is not a parameter
  V002 `nix-instantiate --parse` rejects it     V105 the parameters cannot be found (warning)
  V100 no pinned revision (warning)             V201 `--eval`: Nix cannot evaluate pname/version
  V101 the revision is not in the checkout      V202 `--eval`: the pin cannot be shadowed (warning)
  V102 the package set does not exist          V106 a sha256/hash is not the one of the pin's archive
  V103 the attribute does not exist in it
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import os
import shutil
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from pinshift.facts.collect import Recipe
from pinshift.lint.findings import Finding, finding_at


RULES = {
    "V001": "tree-sitter finds a syntax problem",
    "V002": "nix-instantiate --parse rejects the file",
    "V100": "no pinned nixpkgs revision",
    "V101": "the revision is not in the nixpkgs checkout",
    "V102": "the package set does not exist at the pin",
    "V103": "the attribute does not exist in the package set",
    "V104": "an .override argument is not a parameter of the package function",
    "V105": "the package function's parameters cannot be found",
    "V106": "a sha256/hash is not the one of the pin's archive",
    "V201": "--eval: Nix cannot evaluate pname/version",
    "V202": "--eval: the pin cannot be shadowed",
}


@dataclass(frozen=True)
class VerifyOptions:
    nixpkgs: Path | None = None  # a local nixpkgs git checkout; None: static checks are skipped
    rev: str | None = None  # check every recipe against this revision instead of its own pin
    eval: bool = False
    nix: str | None = field(default_factory=lambda: shutil.which("nix-instantiate"))


@dataclass
class Verification:
    findings: list[Finding] = field(default_factory=list)
    evaluations: dict = field(default_factory=dict)  # recipe path -> {"pname": ..., "version": ...}
    notes: list[str] = field(default_factory=list)  # what was not checked, and why

    def to_json(self) -> dict:
        return {"evaluations": self.evaluations, "notes": self.notes}


def verify(recipes: list[Recipe], options: VerifyOptions, on_disk: dict[str, Path] | None = None) -> Verification:
    """Every check the options allow; `on_disk` maps recipe paths to files Nix can import (for --eval)."""
    result = Verification()
    _syntax(recipes, options, result)
    builds = [r for r in recipes if r.facts.package_set is not None and not r.doc.problems]
    if options.nixpkgs is None:
        result.notes.append("static compatibility not checked: pass --nixpkgs DIR (a local nixpkgs git clone)")
        if options.eval:
            result.notes.append("--eval needs --nixpkgs DIR as well")
        return result
    from pinshift.nixpkgs.checkout import NixpkgsCheckout

    checkout = NixpkgsCheckout(options.nixpkgs)
    with ExitStack() as stack:
        tree = stack.enter_context(_VerifiedTree(recipes, on_disk or {})) if options.eval else None
        _by_pin(checkout, builds, options, result, tree)
    result.findings.sort(key=lambda f: (f.path, f.line, f.column, f.code))
    return result


def _by_pin(checkout, builds: list[Recipe], options: VerifyOptions, result: Verification, tree) -> None:
    for rev, group in _by_revision(builds, options, result).items():
        commit = checkout.resolve(rev)
        if commit is None:
            result.findings.append(_grouped(group, lambda r: r.facts.pins[0].offset, "V101",
                                             f"nixpkgs revision {rev} is not in {options.nixpkgs}; fetch it there "
                                             f"(git -C {options.nixpkgs} fetch origin {rev})"))
            continue
        _static(group, checkout.at(commit), rev, result)
        _hashes(group, options.nixpkgs, commit, result)
        if tree is not None:
            _evaluate(group, checkout, commit, options, tree, result)


class _VerifiedTree:
    """The bytes `verify --eval` read, written into a private folder (the layout they have on disk, below their
    common folder): Nix may read this folder and the nixpkgs export, nothing else. A recipe imports the
    companions verified with it (`pinshift verify --eval .flox/pkgs/`), never a file it was not given, the
    repository's `.git/config` or the user's home, and Nix evaluates the very bytes pinshift checked."""

    def __init__(self, recipes: list[Recipe], on_disk: dict[str, Path]):
        from pinshift.evaluation.clone_eval import scratch

        self._scratch = scratch()
        self.root = Path(self._scratch.name) / "tree"
        self.root.mkdir()
        self.paths: dict[str, Path] = {}
        located = {r.path: on_disk[r.path] for r in recipes if r.path in on_disk}
        common = os.path.commonpath([str(p.parent) for p in located.values()]) if located else None
        keys: dict[str, str] = {}
        data = {r.path: r.data for r in recipes}
        taken: set[str] = set()
        for index, recipe in enumerate(recipes):
            where = located.get(recipe.path)
            key = os.path.relpath(where, common) if where is not None else os.path.normpath(recipe.path)
            if key.startswith(("/", "../")) or key in (".", "..") or key in taken:
                key = f"{index}/{Path(recipe.path).name}"
            keys[recipe.path] = key
            taken.add(key)
        from pinshift.sandbox.tree_writer import SnapshotWriter, folder_order

        try:
            with SnapshotWriter(self.root) as writer:
                for path, key in sorted(keys.items(), key=lambda item: folder_order(item[1])):
                    writer.write(key, data[path])
                    self.paths[path] = self.root / key
        except BaseException:
            self._scratch.cleanup()
            raise

    def __enter__(self) -> "_VerifiedTree":
        return self

    def __exit__(self, *exc) -> None:
        self._scratch.cleanup()


def _pinned_hashes(recipe: Recipe, commit: str) -> list[tuple[int, bytes]]:
    """(offset, digest) of each sha256/hash that must be the archive hash of `commit`.

    A value that is not a sha256 (`""`, the placeholder that makes Nix print the right hash) is not checked.
    """
    from pinshift.migrations._pin_swap_hashes import is_plain_string, why_not_computable
    from pinshift.migrations.pin_swap import pin_sites
    from pinshift.nixpkgs.nar import parse_sha256

    found, seen = [], set()
    for site in pin_sites(recipe.doc):
        call = site.call
        if id(call) in seen or len(site.rev) < 7 or not commit.startswith(site.rev.lower()):
            continue
        seen.add(id(call))
        if why_not_computable(recipe.doc, call) is not None:
            continue
        for key in ("sha256", "hash"):
            node = call.hashes.get(key)
            if node is not None and is_plain_string(node):
                digest = parse_sha256(recipe.doc.text(node)[1:-1].decode("utf-8", "replace"))
                if digest is not None:
                    found.append((node.start_byte, digest))
    return found


def _hashes(group: list[Recipe], clone: Path, commit: str, result: Verification) -> None:
    """V106: a fetchTarball/fetchzip/fetchFromGitHub hash that is not the sha256 of its revision's archive."""
    from pinshift.errors import PinshiftError
    from pinshift.nixpkgs.nar import render_sha256
    from pinshift.nixpkgs.clone import NixpkgsClone

    pinned = [(recipe, offset, digest) for recipe in group for offset, digest in _pinned_hashes(recipe, commit)]
    if not pinned:
        return
    try:
        actual = NixpkgsClone(clone).archive_hash(commit).digest
    except PinshiftError as error:
        result.notes.append(f"sha256 of nixpkgs {commit[:7]} not checked: {error}")
        return
    wrong: dict[bytes, list[tuple[Recipe, int]]] = defaultdict(list)
    for recipe, offset, digest in pinned:
        if digest != actual:
            wrong[digest].append((recipe, offset))
    for digest, places in wrong.items():
        first_recipe, first_offset = places[0]
        result.findings.append(finding_at(
            first_recipe, first_offset, "V106",
            f"sha256 of nixpkgs {commit[:7]}'s archive is {render_sha256(actual)}, not {render_sha256(digest)}: Nix refuses the "
            f"download (fix with pin-swap hash = \"compute\", or `pinshift hash {commit[:12]}`)",
            "error", [recipe.path for recipe, _ in places]))


def _grouped(group: list[Recipe], offset_of, code: str, message: str, severity: str = "error") -> Finding:
    first = group[0]
    return finding_at(first, offset_of(first), code, message, severity, [r.path for r in group])


def _syntax(recipes: list[Recipe], options: VerifyOptions, result: Verification) -> None:
    sandbox = None
    try:
        for recipe in recipes:
            for problem in recipe.doc.problems:
                result.findings.append(Finding(recipe.path, problem.line, problem.column, "V001", problem.message))
            if options.nix and not recipe.doc.problems:
                if sandbox is None:
                    from pinshift.sandbox.nix_process import NixSandbox

                    sandbox = NixSandbox()
                from pinshift.sandbox.nix_process import parse_command

                parsed = sandbox.run(parse_command(options.nix), input=recipe.data)
                if parsed.status != 0 or parsed.timed_out:
                    lines = parsed.stderr.strip().splitlines() or ["rejected"]
                    result.findings.append(Finding(recipe.path, 1, 1, "V002",
                                                   "nix-instantiate --parse: " + lines[0].removeprefix("error: ")))
    finally:
        if sandbox is not None:
            sandbox.close()
    if not options.nix:
        result.notes.append("nix-instantiate not on PATH: syntax checked with tree-sitter only")


def _by_revision(builds: list[Recipe], options: VerifyOptions, result: Verification) -> dict[str, list[Recipe]]:
    groups: dict[str, list[Recipe]] = defaultdict(list)
    for recipe in builds:
        rev = options.rev or recipe.facts.revision
        if rev is None:
            result.findings.append(finding_at(recipe, recipe.facts.package_set.offset, "V100",
                                              "no pinned nixpkgs revision found; pass --rev REV to check against one",
                                              "warning"))
        else:
            groups[rev].append(recipe)
    return dict(sorted(groups.items()))


def _static(group: list[Recipe], nixpkgs, rev: str, result: Verification) -> None:
    short = rev[:7]
    by_set = defaultdict(list)
    for recipe in group:
        by_set[recipe.facts.package_set.value].append(recipe)
    for package_set, users in sorted(by_set.items()):
        if not nixpkgs.has_package_set(package_set):
            result.findings.append(_grouped(users, lambda r: r.facts.package_set.offset, "V102",
                                            f"package set {package_set} does not exist in nixpkgs at {short} "
                                            f"(not bound in pkgs/top-level/all-packages.nix)"))
            continue
        by_attribute = defaultdict(list)
        for recipe in users:
            if recipe.facts.attribute is not None:
                by_attribute[recipe.facts.attribute.value].append(recipe)
        for attribute, holders in sorted(by_attribute.items()):
            _attribute(holders, nixpkgs, f"{package_set}.{attribute}", attribute, short, result)


def _attribute(holders: list[Recipe], nixpkgs, dotted: str, attribute: str, short: str, result) -> None:
    if not nixpkgs.has_attribute(attribute):
        result.findings.append(_grouped(holders, lambda r: r.facts.attribute.offset, "V103",
                                        f"{dotted} does not exist in nixpkgs at {short} "
                                        f"(not bound in pkgs/top-level/python-packages.nix)"))
        return
    by_argument = defaultdict(list)
    for recipe in holders:
        for argument in recipe.facts.overrides:
            by_argument[argument.value].append(recipe)
    if not by_argument:
        return
    parameters = nixpkgs.parameters(attribute)
    if parameters.unknown:
        users = sorted({r.path: r for rs in by_argument.values() for r in rs}.values(), key=lambda r: r.path)
        result.findings.append(_grouped(users, lambda r: r.facts.overrides[0].offset, "V105",
                                        f"cannot check .override arguments of {dotted} at {short}: "
                                        f"{parameters.unknown}", "warning"))
        return
    for argument, users in sorted(by_argument.items()):
        if argument in parameters.names:
            continue
        close = parameters.suggest(argument)
        hint = f" (renamed to {close}?)" if close else ""
        severity, effect = ("warning", "it would be ignored (the function takes ...)") if parameters.ellipsis \
            else ("error", "evaluation fails with 'unexpected argument'")
        offset = _argument_offset(argument)
        result.findings.append(_grouped(users, offset, "V104",
                                        f".override argument {argument} is not a parameter of {dotted} at {short} "
                                        f"({parameters.path}){hint}: {effect}", severity))


def _argument_offset(argument: str):
    return lambda r: next(o.offset for o in r.facts.overrides if o.value == argument)


def _evaluate(group, checkout, commit, options, tree: _VerifiedTree, result) -> None:
    from pinshift.evaluation.clone_eval import evaluate, export_revision, scratch
    from pinshift.sandbox.nix_process import NixSandbox

    if not options.nix:
        result.notes.append("--eval skipped: nix-instantiate is not on PATH")
        return
    with scratch() as directory, NixSandbox() as sandbox:
        export = export_revision(checkout.repo, commit, Path(directory))
        failures = defaultdict(list)
        for recipe in group:
            kinds = {p.kind.rsplit(".", 1)[-1] for p in recipe.facts.pins if p.revision}
            if "fetchTarball" not in kinds:
                result.findings.append(finding_at(recipe, recipe.facts.pins[0].offset, "V202",
                                                  f"not evaluated: the pin uses {', '.join(sorted(kinds))}, only "
                                                  f"fetchTarball pins can be replaced offline", "warning"))
                continue
            value, error = evaluate(options.nix, tree.paths[recipe.path], export, sandbox, tree.root)
            if error is not None:
                error = error.replace(f"{tree.root}/", "").replace(str(export), f"<nixpkgs {commit[:7]}>")
                failures[error].append(recipe)
            else:
                result.evaluations[recipe.path] = value
        for error, failed in sorted(failures.items()):
            result.findings.append(_grouped(failed, lambda r: r.facts.package_set.offset, "V201",
                                            f"nix-instantiate --eval at {commit[:7]}: {error}"))


def verify_plan(tree, planned, options: VerifyOptions) -> Verification:
    """`migrate --verify`: verify the .nix files as the planned steps leave them, before any commit.

    `tree` is the SourceTree the plan was made from; files no step changed are read from it.
    """
    from pinshift.facts.collect import recipe_from_bytes
    from pinshift.files.tree import SkippedFile

    final: dict[str, bytes | None] = {path: None for path in tree.paths() if path.endswith(".nix")}
    for step in planned.steps:
        for change in step.changed:
            if change.old_path is not None:  # renamed: only the new path remains
                final.pop(change.old_path, None)
            if change.removed:
                final.pop(change.path, None)
            elif change.path.endswith(".nix"):
                final[change.path] = change.after
    recipes = []
    for path, data in sorted(final.items()):
        try:
            recipes.append(recipe_from_bytes(path, data if data is not None else tree.read(path)))
        except SkippedFile:
            continue
    return verify(recipes, options)
