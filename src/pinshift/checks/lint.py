"""Naming rules: a recipe's file name (`pytorch-python313-cuda12_9-sm90-avx512`) must say what it builds.

The seed's convention is `<project>-python<XY>-<target>[-<isa>]` where target is
`cuda<X>_<Y>-sm<N>`, `cpu` or `darwin-mps`. Each rule compares one part of the
name with the fact the content states; the finding points at that fact.

  L001 file name differs from pname          L005 SM differs from the GPU target
  L002 Python version differs from package set   L006 ISA differs from the CPU flags
  L003 python3Packages is ambiguous (warning)    L007 ARM ISA on a non-aarch64-linux platform
  L004 CUDA version differs from the overlay     L000 name does not follow the convention
"""

from __future__ import annotations

import re
from pathlib import PurePath

from pinshift.checks.collect import Recipe
from pinshift.checks.findings import Finding, finding_at
from pinshift.checks.matrix import ARM_ISAS, isa_of, sm_of
from pinshift.syntax.package_sets import definition_read

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
    _cuda(name, facts, add, pname_at)
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


def _cuda(name, facts, add, pname_at) -> None:
    if name["cuda"]:
        overlay = facts.cuda_overlay
        if overlay is None:
            add(pname_at, "L004", f"name says cuda{name['cuda']} but no cudaPackages overlay was found")
        elif overlay.value != f"cudaPackages_{name['cuda']}":
            add(overlay.offset, "L004", f"name says cuda{name['cuda']} but the overlay uses {overlay.value}")
        sm = sm_of(facts)
        if sm is None:
            add(pname_at, "L005", f"name says sm{name['sm']} but no GPU target (gpuArchNum/gpuArchSM) was found")
        elif sm != name["sm"]:
            where = facts.gpu.get("gpuArchNum") or facts.gpu["gpuArchSM"]
            add(where.offset, "L005", f"name says sm{name['sm']} but the GPU target is sm{sm}")
        elif "gpuArchSM" in facts.gpu and facts.gpu["gpuArchSM"].value.replace(".", "") != name["sm"]:
            add(facts.gpu["gpuArchSM"].offset, "L005",
                f"name says sm{name['sm']} but gpuArchSM is {facts.gpu['gpuArchSM'].value}")
    elif sm_of(facts):
        add(pname_at, "L005", f"name has no sm<N> but the recipe targets GPU sm{sm_of(facts)}")


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
