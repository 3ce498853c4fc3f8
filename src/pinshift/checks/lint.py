"""Naming rules: a recipe's file name (`pytorch-python313-cuda12_9-sm90-avx512`) must say what it builds.

The seed's convention is `<project>-python<XY>-<target>[-<isa>]` where target is
`cuda<X>_<Y>-sm<N>`, `cpu` or `darwin-mps`. Each rule compares one part of the
name with the fact the content states; the finding points at that fact.

  L001 file name differs from pname          L005 SM differs from the GPU target
  L002 Python version differs from package set   L006 ISA differs from the CPU flags
  L003 python3Packages is ambiguous (warning)    L007 ARM ISA on a non-aarch64-linux platform
  L004 CUDA version differs from the overlay     L000 name does not follow the convention

GPU targets compare as SM numbers in any notation (`"8.6"`, `sm_86`, `"86"`). An
overlay that names only the CUDA major (`cudaPackages_13` for `cuda13_0`) is a
note, not a finding; a recipe whose caller supplies `cudaPackages` (Flox function
arguments) has no overlay to check. A `# pinshift: noqa` (or `# pinshift: noqa:
L001, L005`) comment on a finding's line suppresses it (see `suppressed_by_noqa`).
"""

from __future__ import annotations

import re
from pathlib import PurePath

from pinshift.checks.collect import Recipe
from pinshift.checks.findings import Finding, finding_at
from pinshift.checks.matrix import ARM_ISAS, isa_of, normalize_sm, overlay_cuda, sm_of
from pinshift.syntax.package_sets import definition_read
from pinshift.syntax.queries import walk

RULES = {
    "L000": "the name does not follow <project>-python<XY>-cuda<X>_<Y>-sm<N>-<isa>",
    "L001": "the file name differs from pname",
    "L002": "the Python version in the name differs from the package set",
    "L003": "python3Packages is ambiguous",
    "L004": "the CUDA version in the name differs from the overlay",
    "L005": "the SM in the name differs from the GPU target",
    "L006": "the ISA in the name differs from the CPU flags",
    "L007": "the ISA does not fit the platform",
}

NAME = re.compile(
    r"(?P<project>[a-z0-9]+)-python(?P<python>\d+)"
    r"(?:-cuda(?P<cuda>\d+_\d+)-sm(?P<sm>\d+)|-(?P<cpu>cpu)|-(?P<darwin>darwin)-[a-z0-9]+)"
    r"(?:-(?P<isa>[a-z0-9_]+))?\Z"
)


def is_recipe(recipe: Recipe) -> bool:
    """Lint only files that build something: they name a package set or a pname."""
    return recipe.facts.package_set is not None or recipe.facts.pname is not None


def lint_recipe(recipe: Recipe) -> list[Finding]:
    facts = recipe.facts
    stem = PurePath(recipe.path).name.removesuffix(".nix")
    pname_at = facts.pname.offset if facts.pname else 0
    found = []

    def add(offset, code, message, severity="error"):
        found.append(finding_at(recipe, offset, code, message, severity))

    pin_at = next((p.offset for p in facts.nixpkgs_pins), None)

    if facts.pname is None:
        add(0, "L001", f"no pname: the file name '{stem}' cannot be checked against it; add pname = \"{stem}\";")
    elif facts.pname.value != stem:
        add(pname_at, "L001", f"file name '{stem}' differs from pname '{facts.pname.value}'; rename one of them")
    name = NAME.match(stem)
    if name is None:
        add(pname_at, "L000", f"'{stem}' does not follow <project>-python<XY>-cuda<X>_<Y>-sm<N>-<isa> "
                              f"(or -cpu-<isa>, -darwin-<backend>)", "warning")
        return found
    _python(name, facts, add, recipe.doc)
    _cuda(name, facts, add, pname_at if pin_at is None else pin_at)
    _sm(name, facts, add, pname_at)
    _isa(name, facts, add, pname_at)
    return found


def _python(name, facts, add, doc) -> None:
    package_set = facts.package_set
    if package_set is None:
        return
    version = package_set.value.removeprefix("python").removesuffix("Packages")
    if version in ("", "3"):
        wanted = f"python{name['python']}Packages"
        defined = definition_read(doc, package_set.value)
        advice = f"use {wanted}"
        if defined is not None:  # renaming only the uses would bypass the file's own definition (issue 23)
            line, column = doc.position(defined[1].name_node.start_byte)
            advice = (f"this file defines {package_set.value} itself ({defined[1].described}, at {line}:{column}): "
                      f"rename that definition with its uses to {wanted} (rename-attr with definitions = \"rename\"), "
                      "not only the uses")
        add(package_set.offset, "L003", f"{package_set.value} is ambiguous: the name says python{name['python']}; "
                                        f"{advice}", "warning")
    elif version != name["python"]:
        add(package_set.offset, "L002", f"name says python{name['python']} but the recipe uses {package_set.value}")


def _cuda(name, facts, add, overlay_at) -> None:
    """L004: the overlay names the name's CUDA version; `overlay_at` is where an overlay would go (the pin)."""
    if not name["cuda"]:
        return
    wanted = name["cuda"].replace("_", ".")
    overlay = facts.cuda_overlay
    if overlay is None:
        if "cudaPackages" not in facts.arguments and not facts.uses_caller_nixpkgs:
            add(overlay_at, "L004", f"name says cuda{name['cuda']} but no cudaPackages overlay was found")
        return
    version = overlay_cuda(overlay.value)
    if version == wanted:
        return
    if version is not None and (version == "" or wanted.startswith(version + ".")):
        which = f"the newest CUDA {version}.x" if version else "the default CUDA"
        add(overlay.offset, "L004", f"name says cuda{name['cuda']} and the overlay uses {overlay.value} ({which} "
                                    f"at the pin): not a contradiction; cudaPackages_{name['cuda']} would say it exactly",
            "note")
    else:
        add(overlay.offset, "L004", f"name says cuda{name['cuda']} but the overlay uses {overlay.value}")


def _sm(name, facts, add, pname_at) -> None:
    """L005: the GPU target (gpuArchNum, gpuArchSM, gpuTargets; any notation) is the name's SM."""
    sm = sm_of(facts)
    if not name["cuda"]:
        if sm:
            add(pname_at, "L005", f"name has no sm<N> but the recipe targets GPU sm{sm}")
        return
    if sm is None:
        where = facts.gpu["gpuTargets"].offset if "gpuTargets" in facts.gpu else pname_at
        add(where, "L005", f"name says sm{name['sm']} but no GPU target (gpuArchNum/gpuArchSM) was found")
        return
    for key in ("gpuArchNum", "gpuArchSM", "gpuTargets"):
        fact = facts.gpu.get(key)
        if fact is None:
            continue
        own = normalize_sm(fact.value) if key != "gpuTargets" else sm
        if key == "gpuTargets" and ("gpuArchNum" in facts.gpu or "gpuArchSM" in facts.gpu):
            continue  # `[ gpuArchSM ]`: already checked through the binding
        if own is not None and own != name["sm"]:
            add(fact.offset, "L005", f"name says sm{name['sm']} but {key} = \"{fact.value}\" targets sm{own}")
            return


def _isa(name, facts, add, pname_at) -> None:
    wanted = name["isa"]
    if name["darwin"]:
        return
    actual = isa_of(facts.cpu_flags)
    offset = facts.cpu_flags_offset or pname_at
    if wanted and actual != wanted:
        add(offset, "L006", f"name says {wanted} but the CPU flags target {actual or 'no known ISA'}")
    elif not wanted and actual:
        add(offset, "L006", f"name has no ISA but the CPU flags target {actual}")
    if wanted in ARM_ISAS and facts.platforms != ("aarch64-linux",):
        shown = ", ".join(facts.platforms) or "none"
        add(facts.platforms_offset or pname_at, "L007",
            f"ARM ISA {wanted} needs platforms = [ \"aarch64-linux\" ] (found: {shown})")
    elif wanted and wanted not in ARM_ISAS and "aarch64-linux" in facts.platforms:
        add(facts.platforms_offset, "L007", f"x86 ISA {wanted} on platform aarch64-linux")


def lint(recipes: list[Recipe]) -> list[Finding]:
    return [f for recipe in recipes if is_recipe(recipe) for f in lint_recipe(recipe)]


# --- suppression: # pinshift: noqa, --select/--ignore, [lint] ---------------------------------------

_NOQA = re.compile(rb"#\s*pinshift:\s*noqa\b(?P<colon>\s*:\s*(?P<codes>[A-Za-z]+\d+(?:\s*,?\s*[A-Za-z]+\d+)*))?",
                   re.IGNORECASE)


def noqa_lines(recipe: Recipe) -> dict[int, frozenset[str] | None]:
    """1-based line -> codes its `# pinshift: noqa: L001, L005` comment suppresses (None: every code).

    Only real comments count (a `#` inside a string is text), read from the syntax tree.
    """
    if b"noqa" not in recipe.data.lower():
        return {}
    found: dict[int, frozenset[str] | None] = {}
    for comment in walk(recipe.doc.root, "comment"):
        match = _NOQA.search(recipe.doc.text(comment))
        if match is None:
            continue
        line = recipe.doc.position(comment.start_byte)[0]
        codes = match.group("codes")
        if codes is None and recipe.doc.text(comment)[match.end():].lstrip().startswith(b":"):
            continue  # `noqa: something` that names no code suppresses nothing
        found[line] = None if codes is None else frozenset(
            c.upper() for c in re.findall(r"[A-Za-z]+\d+", codes.decode("ascii", "replace")))
    return found


def suppressed_by_noqa(finding: Finding, lines: dict[int, frozenset[str] | None]) -> bool:
    if finding.line not in lines:
        return False
    codes = lines[finding.line]
    return codes is None or finding.code in codes


def apply_selection(findings: list[Finding], recipes: list[Recipe], selection) -> tuple[list[Finding], int]:
    """(the findings in force, how many of the selected ones a noqa comment suppressed).

    `selection` is a lint_config.RuleSelection: --select/--ignore and the [lint] table decide which
    rules run (a rule left out is not counted); a `# pinshift: noqa` comment then silences single findings.
    """
    noqa = {r.path: noqa_lines(r) for r in recipes}
    selected = [f for f in findings if selection.enabled(f.code, f.path)]
    kept = [f for f in selected if not suppressed_by_noqa(f, noqa.get(f.path, {}))]
    return kept, len(selected) - len(kept)
