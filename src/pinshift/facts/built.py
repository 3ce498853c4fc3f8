"""What a recipe builds: the package set or Python interpreter it reaches its package through, the
attribute, and the package's own version when the recipe states it.

Read from the recipe's result expression (the body under its function and `let`s), following the
applications and override calls down to the package they start from:

    (nixpkgs_pinned.python313Packages.torch.override { … }).overrideAttrs (…)   -> python313Packages, torch
    python.pkgs.vllm.overridePythonAttrs (…)  with python = nixpkgs_pinned.python313.override { … }
                                                                             -> python313 (overridden), vllm
    python312Custom.pkgs.vllm …               with python312Custom = ….python312.override { … }
    pythonPackages.vllm …                     with pythonPackages = pythonEnv.pkgs; pythonEnv = ….python311…
    nixpkgs_pinned.python312Packages.buildPythonApplication rec { … }            -> python312Packages, no attribute

When the result leads nowhere (a function of its caller's arguments, `stdenv.mkDerivation`), the
first package set or interpreter the file selects from stands in, as scan always read it.

The version (`Version`) is, in this order: the `version` bound beside the recipe's `pname`
(`version = "2.10.0";`, `version = ortVersion;`), else that attrset's `src` fetcher `tag`/`rev`
(`"v1.18.1"`), else the `version` an override of the built attribute states inside the overlay that
overrides its package set (`python3Packages = prev.python3Packages.overrideScope (pyFinal: pyPrev: { torch =
pyPrev.torch.overrideAttrs (old: { version = "2.10.0"; … }); })`, or a `packageOverrides = self: super: { … }`
of the interpreter: what the stand-in nixpkgs of `pinshift diff` applies, read here without evaluating), else
the one let-bound `…Version` that is not a dependency's (`vllmVersion`, `ortVersion`, `torchVersion`; not
`cudaVersion`), else a let-bound `version`. `origin` says whether the recipe
overrides a nixpkgs package ("override") or builds one itself (mkDerivation, buildPython*: "recipe").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from pinshift.facts.notation import python_version
from pinshift.facts.resolve import Resolver
from pinshift.syntax.document import Document
from pinshift.syntax.queries import attrpath_segments, bindings_spelling, fetcher_calls, nodes_spelling, unwrap

PACKAGE_SET = re.compile(r"python\d*Packages\Z")
INTERPRETER = re.compile(r"python3\d*\Z")
OVERRIDES = frozenset({"override", "overrideAttrs", "overridePythonAttrs", "overrideDerivation", "overrideScope"})
BUILDERS = frozenset({"buildPythonPackage", "buildPythonApplication", "mkDerivation", "callPackage",
                      "withPackages", "buildEnv", "toPythonModule", "toPythonApplication"})
# `…Version` let bindings that version a dependency, not the package
DEPENDENCIES = frozenset({"cuda", "cudnn", "cudaToolkit", "python", "nccl", "cutlass", "magma", "triton", "gcc",
                          "driver", "nvcc", "llvm", "rocm", "cmake", "protobuf", "sdk", "nixpkgs", "metadata",
                          "cuDNN", "tensorrt", "onnx", "abseil", "eigen", "flash", "flashAttn", "xformers"})
_VERSION_LIKE = re.compile(r"(?:refs/tags/)?(?:[A-Za-z_-]*-)?v?(\d+(?:\.\d+)+(?:[.-]?(?:post|rc|dev|a|b)\d*)?)\Z")
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Fact:
    """A value read from a recipe, the byte offset it was read at, and where it came from.

    `source` names the binding or notation (`gpuArchCMake`, `config.cudaCapabilities via gpuCapabilities`,
    `cudaPackages_12_4 overlay`, `file name`), as reports explain a cell.
    """

    value: str
    offset: int
    source: str = ""


@dataclass
class Reach:
    """How the built package is reached: a package set (`python313Packages`) or an interpreter
    (`python313`, used as `.pkgs`, `.override { packageOverrides … }` or `.withPackages`), and the attribute.

    `via` lists the let-bound names followed to it (`python312Custom`), `builder` the function the
    recipe builds with when it builds the package itself (`buildPythonApplication`, `mkDerivation`).
    """

    package_set: Fact | None = None
    interpreter: Fact | None = None
    interpreter_use: str = "pkgs"  # pkgs | override | withPackages
    attribute: Fact | None = None
    builder: str | None = None
    via: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.package_set is not None or self.interpreter is not None

    @property
    def python_source(self) -> str:
        """`python313Packages`, `python312.override via python312Custom`."""
        if self.package_set is not None:
            named = self.package_set.value
        elif self.interpreter is not None:
            named = f"{self.interpreter.value}.{self.interpreter_use}"
        else:
            return ""
        return named + (f" via {', '.join(self.via)}" if self.via else "")


def result_expression(doc: Document) -> Node | None:
    """The expression a recipe file evaluates to, under its outer function(s), `let`s, `with`s and asserts."""
    node = unwrap(next((n for n in doc.root.named_children if n.type != "comment"), None))
    for _ in range(64):
        if node is None:
            return None
        if node.type in ("function_expression", "let_expression", "with_expression", "assert_expression"):
            node = unwrap(node.child_by_field_name("body"))
        else:
            return node
    return node


def _names(doc: Document, select: Node) -> tuple[Node | None, list[tuple[str | None, Node]]]:
    """(base expression, [(name, node) of each segment]) of a select."""
    base = unwrap(select.child_by_field_name("expression"))
    attrpath = select.child_by_field_name("attrpath")
    segments = attrpath_segments(doc, attrpath) if attrpath is not None else ()
    return base, [(s.name, s.node) for s in segments]


def reach_of(doc: Document, resolver: Resolver, node: Node | None, depth: int = 0) -> Reach | None:
    """How the package an expression denotes is reached, following applications, overrides and let-bound names."""
    node, _ = resolver.follow(node)
    if node is None or depth > _MAX_DEPTH:
        return None
    if node.type == "apply_expression":
        return reach_of(doc, resolver, node.child_by_field_name("function"), depth + 1)
    if node.type != "select_expression":
        return None
    base, segments = _names(doc, node)
    stripped = []
    while segments and segments[-1][0] in OVERRIDES:
        stripped.append(segments.pop()[0])
    builder = segments[-1][0] if segments and segments[-1][0] in BUILDERS else None
    found = _in_path(doc, resolver, base, segments, depth)
    if found is None:
        return Reach(builder=builder) if builder else None
    if found.interpreter is not None and found.attribute is None and "override" in stripped:
        found.interpreter_use = "override"
    found.builder = found.builder or builder
    return found


def _attribute(segments, index: int) -> Fact | None:
    if index < len(segments) and segments[index][0] and segments[index][0] not in OVERRIDES | BUILDERS | {"pkgs"}:
        name, node = segments[index]
        return Fact(name, node.start_byte, "attribute")
    return None


def _after_interpreter(reach: Reach, rest) -> None:
    """`X.pkgs.vllm`, `X.override …`, `X.withPackages …` after an interpreter: the attribute or the use."""
    if rest and rest[0][0] == "pkgs":
        reach.attribute = _attribute(rest, 1)
    elif rest and rest[0][0] in ("override", "withPackages"):
        reach.interpreter_use = rest[0][0]
    elif rest and reach.attribute is None:
        reach.attribute = _attribute(rest, 0)  # `pythonPackages.vllm` with pythonPackages = python.pkgs


def _in_path(doc: Document, resolver: Resolver, base: Node | None, segments, depth: int) -> Reach | None:
    """The package set or interpreter in `base.seg1.seg2…`: through a let-bound base first, else by name."""
    base_name = doc.text(base).decode("utf-8", "replace") if base is not None and base.type == "variable_expression" else None
    if base_name is not None:
        target, via = resolver.follow(base)
        if via:  # bound by a let/rec: what it stands for says more than its name
            inner = reach_of(doc, resolver, base, depth + 1)
            if inner is not None and inner.found:
                inner.via = (base_name,) + inner.via
                if inner.interpreter is not None:
                    _after_interpreter(inner, segments)
                elif inner.attribute is None:
                    inner.attribute = _attribute(segments, 0)
                return inner
    entries = ([(base_name, base)] if base_name else []) + segments
    found = _by_name(entries)
    if found is None and base is not None and base_name is None:  # `(x.override { … }).overrideAttrs …`
        found = reach_of(doc, resolver, base, depth + 1)
        if found is not None and found.found and found.attribute is None:
            found.attribute = _attribute(segments, 0)
    return found if found is not None and (found.found or found.builder) else None


def _by_name(entries) -> Reach | None:
    """The first package set or interpreter among (name, node) entries of a path."""
    for index, (name, where) in enumerate(entries):
        if name is None:
            continue
        rest = entries[index + 1:]
        if PACKAGE_SET.match(name):
            reach = Reach(package_set=Fact(name, where.start_byte, name), attribute=_attribute(rest, 0))
            if reach.attribute is None and rest and rest[0][0] in BUILDERS:
                reach.builder = rest[0][0]
            return reach
        if INTERPRETER.match(name):
            reach = Reach(interpreter=Fact(name, where.start_byte, name))
            _after_interpreter(reach, rest)
            return reach
    return None


def python_of_reach(reach: Reach) -> str | None:
    """`3.13` from `python313Packages` or `python313`; None for `python3Packages`/`python3` (the pin's default)."""
    if reach.package_set is not None:
        return python_version(reach.package_set.value.removesuffix("Packages"))
    if reach.interpreter is not None:
        return python_version(reach.interpreter.value)
    return None


# --- the package's own version ----------------------------------------------------------------------


def _strip_version(text: str) -> str | None:
    """`v2.10.0` -> 2.10.0, `refs/tags/v1.18.1` -> 1.18.1; None when it does not look like a version."""
    match = _VERSION_LIKE.fullmatch(text.strip())
    return match.group(1) if match else None


VERSION_NAMES = ("version", "src")  # the bindings own_version reads, with every `…Version` (version_names)


def version_names(doc: Document) -> set[str]:
    """The names own_version reads: `version`, `src` and every identifier ending in `Version` the file spells."""
    spelled = {doc.text(node).decode("utf-8", "replace") for node in nodes_spelling(doc, b"Version")
               if node.type == "identifier" and doc.text(node).endswith(b"Version")}
    return spelled | set(VERSION_NAMES)


def own_version(doc: Document, resolver: Resolver, pname_binding, package: str, found: list | None = None,
                attribute: str | None = None) -> Fact | None:
    """The version the recipe states for its package (see the module docstring for the order); `found`: the
    bindings of `version_names` when the caller looked them up already; `attribute`: the attribute the recipe
    builds (`torch`), whose override in an overlay may state it."""
    found = bindings_spelling(doc, sorted(version_names(doc))) if found is None else found
    if pname_binding is not None:
        siblings = {b.path[-1]: b for b in found if b.path and b.path[-1] in VERSION_NAMES
                    and b.container == pname_binding.container and b.path[:-1] == pname_binding.path[:-1]}
        if "version" in siblings:
            binding = siblings["version"]
            value = resolver.string(binding.value)
            if value is None:
                return None  # stated, but not as a literal (old.version, a function of the caller's arguments)
            source = "version" + (f" via {', '.join(value.via)}" if value.via else "")
            return Fact(value.value, value.offset, source)
        if "src" in siblings:
            fact = _src_version(doc, resolver, siblings["src"].value)
            if fact is not None:
                return fact
    overlay = _overlay_version(doc, resolver, attribute, found) if attribute else None
    return overlay or _let_version(resolver, package, found)


_SCOPES = ("overrideScope", "overrideScope'", "packageOverrides", "overrides")
_CLIMB = 16  # parents climbed from an override to the package-set override holding it


def _overlay_version(doc: Document, resolver: Resolver, attribute: str, found: list) -> Fact | None:
    """`version = "2.10.0";` in `ATTRIBUTE = ….ATTRIBUTE.overrideAttrs (old: { … })` inside an overlay of the
    package set (`overrideScope`, `packageOverrides`, `overrides`)."""
    for binding in found:
        if binding.path[-1:] != ("version",) or len(attrpath_segments(doc, binding.attrpath)) != 1:
            continue
        node = binding.container
        while node.parent is not None and (node.parent.type == "parenthesized_expression" or (
                node.parent.type == "function_expression" and node.parent.child_by_field_name("body") == node)):
            node = node.parent
        call = node.parent
        if call is None or call.type != "apply_expression" or call.child_by_field_name("argument") != node:
            continue
        function = unwrap(call.child_by_field_name("function"))
        if function is None or function.type != "select_expression":
            continue
        names = [segment.name for segment in attrpath_segments(doc, function.child_by_field_name("attrpath"))]
        if len(names) < 2 or names[-1] not in OVERRIDES or names[-2] != attribute:
            continue
        scope = _scope_of(doc, call)
        value = resolver.string(binding.value) if scope else None
        if value is not None:
            return Fact(value.value, value.offset, f"version in the {attribute} override ({scope})")
    return None


def _scope_of(doc: Document, override: Node) -> str | None:
    """The package-set override an override sits in: `overrideScope`, `packageOverrides` or `overrides`."""
    node: Node | None = override
    for _ in range(_CLIMB):
        node = node.parent
        if node is None:
            return None
        if node.type == "binding":
            attrpath = node.child_by_field_name("attrpath")
            names = [s.name for s in attrpath_segments(doc, attrpath)] if attrpath is not None else []
            if names and names[-1] in _SCOPES:
                return names[-1]
        elif node.type == "apply_expression":
            function = unwrap(node.child_by_field_name("function"))
            if function is not None and function.type == "select_expression":
                names = [s.name for s in attrpath_segments(doc, function.child_by_field_name("attrpath"))]
                if names and names[-1] in _SCOPES:
                    return names[-1]
    return None


def _src_version(doc: Document, resolver: Resolver, value: Node) -> Fact | None:
    """The version a fetcher call's `tag` or `rev` names (`tag = "v${version}"` resolved)."""
    node = unwrap(value)
    for call in fetcher_calls(doc):
        if call.node != node:
            continue
        for key in ("tag", "rev"):
            if key in call.args:
                resolved = resolver.string(call.args[key])
                version = _strip_version(resolved.value) if resolved is not None else None
                if version is not None:
                    return Fact(version, resolved.offset, f"src.{key}")
    return None


def _let_version(resolver: Resolver, package: str, found: list) -> Fact | None:
    """The one let-bound `…Version` of the package (`ortVersion`), else a let-bound `version`."""
    candidates = []
    plain = None
    for binding in found:
        if binding.root_kind != "let" or len(binding.path) != 1 or binding.path[0] is None:
            continue
        name = binding.path[0]
        if name == "version":
            plain = plain or binding
        elif name.endswith("Version") and name[:-7] and name[:-7] not in DEPENDENCIES:
            candidates.append(binding)
    own = [b for b in candidates if _names_package(b.path[0][:-7], package)]
    chosen = own[0] if own else (candidates[0] if len(candidates) == 1 else plain)
    if chosen is None:
        return None
    value = resolver.string(chosen.value)
    if value is None:
        return None
    return Fact(value.value, value.offset, f"{chosen.path[0]} (let)")


_ALIASES = {"ort": "onnxruntime", "torch": "pytorch", "pytorch": "torch", "comfy": "comfyui"}


def _names_package(prefix: str, package: str) -> bool:
    prefix, package = prefix.lower(), package.lower()
    return bool(prefix) and (package.startswith(prefix) or _ALIASES.get(prefix, "") == package)
