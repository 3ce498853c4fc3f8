"""Naming rules: a recipe's file name (`pytorch-python313-cuda12_9-sm90-avx512`) must say what it builds.

The name is read token by token (pinshift.facts.notation.name_parts): `<project>`, `python<XY>`
(or `py<XY>`), `cuda<X>_<Y>` (or `cu<XY>`), `sm<N>`, `cpu`, `darwin-<backend>`, an ISA; a part
the name leaves out is not checked. Each rule compares one part of the name with the fact the
content states (pinshift.facts.facts: every notation of GPU target, CUDA, Python and CPU flags,
names followed through `let` bindings); the finding points at that fact.

Severities follow ruff's convention that an error is something wrong, not something unclear:
**error** only when the name and the content contradict each other, so the package built is not the
one the name promises (a wrong build); **warning** when the name or the content leaves something
unsaid or ambiguous; **note** when they agree through an alias (never fails a run).

  L000 warning  the name does not follow the convention
  L001 warning  the file name differs from pname, or the recipe sets no pname (note: pname is computed)
  L002 error    the Python version in the name differs from the package set or interpreter
  L003 warning  python3Packages / python3 is ambiguous
  L004 error    the CUDA version in the name differs from the overlay (warning: none found; note: an alias)
  L005 error    the SM in the name differs from the GPU target (warning: no target stated)
  L006 error    the ISA in the name differs from the CPU flags (warning: one of the two is missing)
  L007 error    the ISA does not fit the platforms

A `# pinshift: noqa` (or `# pinshift: noqa: L001, L005`) comment on a finding's line suppresses it
(see `suppressed_by_noqa`).
"""

from __future__ import annotations

import re

from pinshift.facts.collect import Recipe
from pinshift.facts.facts import GPU_NAMES, Fact
from pinshift.lint.findings import Finding, finding_at
from pinshift.lint.lint_references import RULES as REFERENCE_RULES
from pinshift.lint.lint_references import SEVERITY as REFERENCE_SEVERITY
from pinshift.facts.notation import (
    ARM_ISAS, cuda_set_version, cuda_text_version, isa_of, name_parts, recipe_stem, sm_targets,
)
from pinshift.facts.recipe_set import recipe_set
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
# the severity of each code's contradiction (a wrong build); its other findings are warnings or notes
SEVERITY = {"L000": "warning", "L001": "warning", "L002": "error", "L003": "warning", "L004": "error",
            "L005": "error", "L006": "error", "L007": "error"}
RULES.update(REFERENCE_RULES)
SEVERITY.update(REFERENCE_SEVERITY)


def is_recipe(recipe: Recipe) -> bool:
    """Lint only files that build something: they reach a package set or interpreter, or set a pname."""
    return recipe.facts.builds


def lint_recipe(recipe: Recipe, facts=None) -> list[Finding]:
    """The naming findings of one recipe; `facts` (default: its own) as pinshift.facts.recipe_set completed them."""
    facts = recipe.facts if facts is None else facts
    stem = recipe_stem(recipe.path)
    pname_at = facts.pname.offset if facts.pname else 0
    found = []

    def add(offset, code, message, severity=None):
        found.append(finding_at(recipe, offset, code, message, severity or SEVERITY[code]))

    if facts.pname is not None:
        if facts.pname.value != stem:
            via = f" ({facts.pname.source})" if facts.pname.source != "pname" else ""
            add(pname_at, "L001", f"file name '{stem}' differs from pname '{facts.pname.value}'{via}; rename one of them")
    elif facts.pname_expression is not None:
        add(0, "L001", f"pname is computed ({facts.pname_expression[:60]}), not compared with the file name '{stem}'",
            "note")
    else:
        add(0, "L001", f"no pname: the build is named by its nixpkgs package, not '{stem}'; add pname = \"{stem}\";")
    name = name_parts(stem)
    if not name.convention:
        add(pname_at, "L000", f"'{stem}' does not follow <project>-python<XY>-cuda<X>_<Y>-sm<N>-<isa> "
                              f"(or -cpu-<isa>, -darwin-<backend>)")
        if not (name.python or name.cuda or name.sm or name.isa):
            return found
    pin_at = next((p.offset for p in facts.nixpkgs_pins), None)
    _python(name, facts, add, recipe.doc)
    _cuda(name, facts, add, pname_at if pin_at is None else pin_at)
    _sm(name, facts, add, pname_at)
    _isa(name, facts, add, pname_at)
    return found


def _python(name, facts, add, doc) -> None:
    """L002/L003 against the package set or interpreter the package is reached through (not the file name)."""
    reached = facts.package_set or facts.interpreter
    if reached is None or name.python is None:
        return
    ambiguous = reached.value in ("python3Packages", "python3")
    if ambiguous:
        digits = name.python.replace(".", "")
        wanted = f"python{digits}Packages" if facts.package_set is not None else f"python{digits}"
        defined = definition_read(doc, reached.value)
        advice = f"use {wanted}"
        if defined is not None:  # renaming only the uses would bypass the file's own definition (issue 23)
            line, column = doc.position(defined[1].name_node.start_byte)
            advice = (f"this file defines {reached.value} itself ({defined[1].described}, at {line}:{column}): "
                      f"rename that definition with its uses to {wanted} (rename-attr with definitions = \"rename\"), "
                      "not only the uses")
        add(reached.offset, "L003", f"{reached.value} is ambiguous: the name says python{digits}; {advice}")
        return
    stated = facts.python.value if facts.python is not None and not facts.python.source.startswith("file name") else None
    if stated is not None and stated != name.python:
        via = f" (through {facts.reached_via})" if facts.reached_via and facts.reached_via != reached.value else ""
        add(reached.offset, "L002", f"name says python{name.python.replace('.', '')} but the recipe uses "
                                    f"{reached.value}{via}")


def _cuda(name, facts, add, overlay_at) -> None:
    """L004: the CUDA set (overlay, a cudaPackages_X_Y it selects, a cudaVersion) is the name's CUDA version;
    `overlay_at` is where an overlay would go (the pin)."""
    if not name.cuda or name.cuda.endswith(".x"):
        return
    wanted, token = name.cuda, name.cuda_token
    stated = facts.cuda_overlay or facts.cuda_used
    if stated is None:
        if facts.cuda_binding is not None and (version := cuda_text_version(facts.cuda_binding.value)):
            if version[1] is not None and f"{int(version[0])}.{int(version[1])}" != wanted:
                add(facts.cuda_binding.offset, "L004", f"name says {token} but {facts.cuda_binding.source} = "
                                                       f"\"{facts.cuda_binding.value}\"")
            return
        if "cudaPackages" not in facts.arguments and not facts.uses_caller_nixpkgs and facts.kind == "gpu":
            add(overlay_at, "L004", f"name says {token} but no cudaPackages overlay was found", "warning")
        return
    version = cuda_set_version(stated.value)
    if version is None:
        return
    major, minor = version
    if minor is not None and f"{int(major)}.{int(minor)}" == wanted:
        return
    if not major or (minor is None and wanted.startswith(f"{int(major)}.")):
        which = f"the newest CUDA {int(major)}.x" if major else "the default CUDA"
        add(stated.offset, "L004", f"name says {token} and the overlay uses {stated.value} ({which} at the pin): not "
                                   f"a contradiction; cudaPackages_{wanted.replace('.', '_')} would say it exactly",
            "note")
    else:
        what = "the overlay uses" if stated is facts.cuda_overlay else "the recipe selects"
        add(stated.offset, "L004", f"name says {token} but {what} {stated.value}")


def _sm(name, facts, add, pname_at) -> None:
    """L005: every GPU-target notation the recipe states names the name's SM."""
    stated = [(notation, facts.gpu[notation]) for notation in GPU_NAMES if notation in facts.gpu]
    if facts.target is not None and facts.target.source.startswith("the imported"):
        stated.append(("imported", Fact(facts.target.value, facts.target.offset, facts.target.source)))
    targets = [(notation, fact, sm_targets(fact.value)) for notation, fact in stated]
    named = [(notation, fact, found) for notation, fact, found in targets if found]
    if not name.sm:
        if named and name.cpu:
            notation, fact, found = named[0]
            add(fact.offset, "L005", f"name says cpu but {fact.source} = \"{fact.value}\" targets GPU {found[0]}")
        elif named and not name.darwin and len(named[0][2]) == 1:  # several targets: no sm<N> could say them
            add(named[0][1].offset, "L005", f"name has no sm<N> but the recipe targets GPU {named[0][2][0]}",
                "warning")
        return
    if not named:
        where = stated[0][1].offset if stated else pname_at
        add(where, "L005", f"name says {name.sm} but no GPU target was found ({', '.join(GPU_NAMES)}); "
                           "nixpkgs builds its default capabilities", "warning")
        return
    for notation, fact, found in named:
        if name.sm not in found:
            shown = fact.source if notation == "imported" else f"{fact.source} = \"{fact.value}\""
            add(fact.offset, "L005", f"name says {name.sm} but {shown} targets {'+'.join(found)}")
            return


def _isa(name, facts, add, pname_at) -> None:
    wanted = name.isa
    if name.darwin:
        return
    actual = isa_of(facts.cpu_flags)
    offset = facts.cpu_flags_offset or pname_at
    if wanted and actual and actual != wanted:
        add(offset, "L006", f"name says {wanted} but the CPU flags target {actual}")
    elif wanted and not actual:
        what = "no known ISA" if facts.cpu_flags else "none were found"
        add(offset, "L006", f"name says {wanted} but the CPU flags target {what}", "warning")
    elif not wanted and actual and (name.cpu or name.sm):
        add(offset, "L006", f"name has no ISA but the CPU flags target {actual}", "warning")
    if wanted in ARM_ISAS and facts.platforms != ("aarch64-linux",):
        shown = ", ".join(facts.platforms) or "none"
        add(facts.platforms_offset or pname_at, "L007",
            f"ARM ISA {wanted} needs platforms = [ \"aarch64-linux\" ] (found: {shown})")
    elif wanted and wanted not in ARM_ISAS and "aarch64-linux" in facts.platforms:
        add(facts.platforms_offset, "L007", f"x86 ISA {wanted} on platform aarch64-linux")


def lint(recipes: list[Recipe]) -> list[Finding]:
    """The naming rules (L) on the recipes among the files (pinshift.facts.recipe_set: a helper in a lib/ folder
    or only imported is no recipe, so L000-L007 never fire on it), with CPU flags an import gives them."""
    completed = {facts.path: facts for facts in recipe_set([r.facts for r in recipes]).recipes}
    return [f for recipe in recipes if recipe.path in completed and is_recipe(recipe)
            for f in lint_recipe(recipe, completed[recipe.path])]


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
