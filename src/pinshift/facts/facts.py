"""What one recipe says about itself: pins, what it builds, GPU/CUDA/Python/CPU targets, name, version.

scan, lint, status and verify all start from these facts, read once per file from the syntax
queries (never from regular expressions over the whole file), so the commands agree on what a
recipe is. Every fact keeps the byte offset it was read at, so findings can point at
`path:line:col`, and its source (the binding or notation it came from), so reports can say why a
cell reads as it does.

Recipes of different repositories say the same thing differently; each fact is read from every
notation they use (pinshift.facts.notation normalises the values):

- GPU target (`target`, e.g. sm90): `gpuArchSM`, `gpuArchNum`, `gpuArchCMake`, `gpuTargets`,
  `cudaCapabilities` (nixpkgs' config), `TORCH_CUDA_ARCH_LIST`, `CMAKE_CUDA_ARCHITECTURES` (as
  bindings or in build-phase strings and `lib.cmakeFeature` calls), each followed through `let`-bound
  names; else the file name's `sm<N>`. The first notation in that order that names one wins.
- CUDA (`cuda`, e.g. 12.9): the `cudaPackages = ….cudaPackages_X_Y;` overlay (or `.override`
  argument), else a `cudaPackages_X_Y` the recipe selects from, else a `cudaVersion` binding, else
  the file name's `cudaX_Y`/`cuXY`; a major-only set (`cudaPackages_13`) takes its minor from the file
  name or `cudaVersion`, else reads `13.x`.
- Python (`python`, e.g. 3.13): the package set (`python313Packages`) or interpreter
  (`python313.override`, `python313.pkgs`, a let-bound custom interpreter) the package is reached
  through (pinshift.facts.built), else the file name's `python313`; `3.x` for a bare
  `python3Packages` nothing else explains (the pin's default Python 3).
- Kind: `gpu` when the content names a GPU target; else `cpu` or `darwin` when the name says so
  (or the platforms are all Darwin); else `gpu` for `cudaSupport = true` or an `sm<N>` name (or an
  imported recipe's); else `cpu`.
- CPU ISA (`isa`): `cpuFlags`, `NIX_CFLAGS_COMPILE`/`CXXFLAGS`/`CFLAGS` bindings, `-m…` flags in a
  build-phase string, else the file name. A recipe that selects its ISA from a table another file holds
  (`cpuISA = (import ./lib/cpu-isa.nix).avx512;`, or through `callPackage`) records the selection
  (`selected_imports`), the table's file its `flag_table` (`{ avx512 = { flags = [ … ]; }; }`), and
  pinshift.facts.recipe_set joins the two once every file of the set is read.
- Version (`version`): the package's own, when the recipe states it (pinshift.facts.built).
- Package (`package`): the file name's project (`onnxruntime` in onnxruntime-python312-…), else the attribute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from pinshift.facts.built import (
    Fact, Reach, own_version, python_of_reach, reach_of, result_expression, version_names,
)
from pinshift.facts.notation import (
    cuda_set_version, cuda_text_version, cuda_version, flags_in, isa_of, name_parts, recipe_stem, sm_targets,
)
from pinshift.facts.resolve import Resolver
from pinshift.migrations.pin_swap import pin_sites
from pinshift.syntax.document import Document
from pinshift.syntax.queries import (
    STRING_TYPES, as_string, attrpath_segments, bindings_spelling, fetcher_calls, name_of, nodes_spelling, string_value,
    unwrap,
)

__all__ = ["Fact", "Pin", "RecipeFacts", "recipe_facts", "GPU_NAMES"]

# every GPU-target notation, in the order one is preferred to the next
GPU_NAMES = ("gpuArchNum", "gpuArchSM", "gpuArchCMake", "gpuTargets", "cudaCapabilities", "TORCH_CUDA_ARCH_LIST",
             "CMAKE_CUDA_ARCHITECTURES")
FLAG_NAMES = ("cpuFlags", "NIX_CFLAGS_COMPILE", "CXXFLAGS", "CFLAGS")
# the bindings the facts are read from (found by their names: pinshift.syntax.queries.bindings_spelling)
BINDING_NAMES = GPU_NAMES + FLAG_NAMES + ("pname", "platforms", "cudaSupport", "cudaPackages", "cudaVersion", "flags")
_STRING_NEEDLES = (b"metadata-rev", b"TORCH_CUDA_ARCH_LIST", b"CMAKE_CUDA_ARCHITECTURES", b"-mavx", b"-march=")
_METADATA_REV = re.compile(rb"echo[ \t]+(\S+)[ \t]*>[ \t]*\$out/\.metadata-rev")
_ENV_TARGET = re.compile(rb"(TORCH_CUDA_ARCH_LIST|CMAKE_CUDA_ARCHITECTURES)\s*=\s*[\"']?([^\"'\s$;]*)")
_CUDA_SET = re.compile(r"cudaPackages_\d+(?:_\d+)?\Z")


@dataclass(frozen=True)
class Pin:
    """A fetcher call pinning a source: its function, the revision it names (if any), whether it has a hash.

    `expression` is the source text of a revision that is not a literal (`"v${version}"`), else None.
    """

    kind: str
    revision: str | None
    has_hash: bool
    offset: int
    expression: str | None = None
    nixpkgs: bool = False  # the URL or repo names nixpkgs

    @property
    def shown(self) -> str:
        """`0182a36` for a literal revision, the expression as written otherwise."""
        if self.revision:
            return self.revision[:7]
        return self.expression or "(no revision)"


@dataclass
class RecipeFacts:
    """Everything scan, lint, status and verify need to know about one recipe file."""

    path: str
    problems: tuple = ()
    pins: list[Pin] = field(default_factory=list)
    package_set: Fact | None = None  # `python313Packages`, the set the package is reached through
    attribute: Fact | None = None  # `torch`, `vllm`
    interpreter: Fact | None = None  # `python313` when reached through an interpreter (`python313.pkgs.vllm`)
    interpreter_use: str = ""  # pkgs | override | withPackages
    reached_via: str = ""  # `python312.override via python312Custom`
    overrides: list[Fact] = field(default_factory=list)  # `.override { name = ...; }` argument names
    gpu: dict[str, Fact] = field(default_factory=dict)  # notation (GPU_NAMES) -> value as resolved, its source
    cuda_support: Fact | None = None  # "true" / "false" as the recipe sets cudaSupport
    cpu_flags: tuple[str, ...] = ()
    cpu_flags_offset: int = 0
    cpu_flags_source: str = ""
    pname: Fact | None = None  # resolved through let-bound names (`pname = variantName;`)
    pname_expression: str | None = None  # the pname as written when it cannot be resolved
    version: Fact | None = None  # the package's own version, when the recipe states it
    builder: str | None = None  # the recipe builds the package itself with this (mkDerivation, buildPython*)
    platforms: tuple[str, ...] = ()
    platforms_offset: int = 0
    metadata_rev: Fact | None = None
    cuda_overlay: Fact | None = None  # `cudaPackages_12_9` as the overlay (or an .override) names it
    cuda_used: Fact | None = None  # the first `cudaPackages_X_Y` selected from elsewhere
    cuda_binding: Fact | None = None  # a `cudaVersion = "12.4";` binding
    arguments: tuple[str, ...] = ()  # formals of the outermost function (`{ python3Packages, cudaPackages }:`)
    imported: Fact | None = None  # the first recipe it imports (`import ./pytorch-….nix`, `callPackage ./….nix`)
    imports: tuple[str, ...] = ()  # every path it imports or callPackages, as written (`./lib/cpu-isa.nix`)
    selected_imports: tuple[Fact, ...] = ()  # `(import ./lib/cpu-isa.nix).avx512`: value avx512, source the path
    flag_table: dict[str, tuple[str, ...]] = field(default_factory=dict)  # `avx512.flags = [ … ]` of a table file
    # derived from the above and the file name (`derive`), each with its source
    kind: str = "cpu"  # gpu | cpu | darwin
    target: Fact | None = None  # `sm90` (`sm80+sm86` for several; `sm?` for a CUDA build naming none)
    cuda: Fact | None = None  # `12.9`
    python: Fact | None = None  # `3.13`
    isa: Fact | None = None  # `avx512`
    package: Fact | None = None  # `pytorch`, `onnxruntime`

    @property
    def revision(self) -> str | None:
        """The nixpkgs revision the recipe pins (its first fetcher revision)."""
        return next((p.revision for p in self.pins if p.revision), None)

    @property
    def nixpkgs_pins(self) -> list[Pin]:
        """The fetchers that pin nixpkgs itself; all fetchers when none says so (a mirror URL)."""
        return [p for p in self.pins if p.nixpkgs] or ([] if self.arguments else list(self.pins))

    @property
    def pin_value(self) -> str | None:
        """What the recipe pins nixpkgs to, for drift: a literal revision, else the expression; None: no pin."""
        pins = self.nixpkgs_pins
        return next((p.revision for p in pins if p.revision), None) or next((p.expression for p in pins if p.expression), None)

    @property
    def builds(self) -> bool:
        """Whether the file looks like a build: it reaches a package set or interpreter, or names a pname."""
        return self.package_set is not None or self.interpreter is not None or self.pname is not None \
            or self.pname_expression is not None

    @property
    def uses_caller_nixpkgs(self) -> bool:
        """A build with no nixpkgs pin of its own, a function of what it builds with (Flox: `{ python3Packages, ... }:`).

        A fetcher of the package's own source (`fetchFromGitHub { repo = "pytorch"; rev = "v${version}"; }`)
        is not a nixpkgs pin.
        """
        return self.builds and bool(self.arguments) and not self.nixpkgs_pins

    @property
    def package_path(self) -> str | None:
        """`python313Packages.torch`, `python313.pkgs.vllm`, as scan prints it."""
        attribute = f".{self.attribute.value}" if self.attribute else ""
        if self.package_set is not None:
            return self.package_set.value + attribute
        if self.interpreter is not None:
            return f"{self.interpreter.value}.pkgs{attribute}"
        return None

    @property
    def set_shown(self) -> str | None:
        """The package set as status counts it: `python313Packages`, `python313.override`, `python313.withPackages`."""
        if self.package_set is not None:
            return self.package_set.value
        if self.interpreter is not None:
            return f"{self.interpreter.value}.{self.interpreter_use or 'pkgs'}"
        return None

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "problems": [str(p) for p in self.problems],
            "pins": [{"kind": p.kind, "revision": p.revision, "expression": p.expression, "hash": p.has_hash}
                     for p in self.pins],
            "package_set": _value(self.package_set),
            "attribute": _value(self.attribute),
            "interpreter": _value(self.interpreter),
            "overrides": [o.value for o in self.overrides],
            "gpu": {name: {"value": fact.value, "source": fact.source} for name, fact in self.gpu.items()},
            "cuda_support": _value(self.cuda_support),
            "cpu_flags": list(self.cpu_flags),
            "pname": _value(self.pname),
            "pname_expression": self.pname_expression,
            "platforms": list(self.platforms),
            "metadata_rev": _value(self.metadata_rev),
            "cuda_overlay": _value(self.cuda_overlay),
            "arguments": list(self.arguments),
            "imported": _value(self.imported),
            "kind": self.kind,
            "facts": {name: _sourced(getattr(self, name))
                      for name in ("package", "version", "target", "cuda", "python", "isa")},
        }


def _value(fact: Fact | None) -> str | None:
    return fact.value if fact else None


def _sourced(fact: Fact | None) -> dict | None:
    return {"value": fact.value, "source": fact.source} if fact else None


def _text(doc: Document, node) -> str:
    return doc.text(node).decode("utf-8", "replace")


def _string(doc: Document, node) -> str | None:
    inner = unwrap(node)
    value = string_value(doc, inner) if inner is not None else None
    return value.decode("utf-8", "replace") if value is not None else None


def _via(resolved) -> str:
    return f" via {', '.join(resolved.via)}" if resolved.via else ""


def recipe_facts(doc: Document) -> RecipeFacts:
    """The facts of one parsed recipe; a file with syntax problems still reports what could be read.

    Every reader starts from the places the file spells what it looks for (a byte search, then a climb
    up the tree), never from a walk of every node: pinshift status reads thousands of recipes.
    """
    facts = RecipeFacts(path=doc.path, problems=doc.problems)
    resolver = Resolver(doc)
    _read_pins(doc, facts)
    _read_arguments(doc, facts)
    _read_package(doc, facts, resolver)
    _read_overrides(doc, facts)
    found = bindings_spelling(doc, BINDING_NAMES + tuple(sorted(version_names(doc))))  # one search for every name
    pname_binding = _read_bindings(doc, facts, found, resolver)
    _read_strings(doc, facts, resolver)
    _read_imports(doc, facts)
    derive(facts)
    facts.version = own_version(doc, resolver, pname_binding, facts.package.value if facts.package else "", found,
                                facts.attribute.value if facts.attribute else None)
    return facts


def _read_pins(doc: Document, facts: RecipeFacts) -> None:
    revisions = {}
    for site in pin_sites(doc):
        revisions.setdefault(site.call.node.id, site.rev)
    for call in fetcher_calls(doc):
        revision = revisions.get(call.node.id)
        source = call.rev if call.rev is not None else call.url
        expression = None if revision or source is None else _text(doc, source)
        repo = _string(doc, call.args.get("repo")) if call.form == "attrset" else None
        names_nixpkgs = repo == "nixpkgs" or (call.url is not None and b"nixpkgs" in doc.text(call.url).lower())
        facts.pins.append(Pin(call.function, revision, bool(call.hashes), call.node.start_byte, expression,
                              names_nixpkgs))


def _read_arguments(doc: Document, facts: RecipeFacts) -> None:
    """The formals of the file's outermost function: what the caller supplies."""
    body = unwrap(next((n for n in doc.root.named_children if n.type != "comment"), None))
    formals = body.child_by_field_name("formals") if body is not None and body.type == "function_expression" else None
    if formals is not None:
        names = (formal.child_by_field_name("name") for formal in formals.children_by_field_name("formal"))
        facts.arguments = tuple(_text(doc, name) for name in names if name is not None and not name.is_missing)


def _read_package(doc: Document, facts: RecipeFacts, resolver: Resolver) -> None:
    """The package set or interpreter and attribute the result is reached through; else the first
    select from one (`….python313.withPackages`); and the first `cudaPackages_X_Y` selected."""
    reach = reach_of(doc, resolver, result_expression(doc))
    facts.builder = reach.builder if reach is not None else None
    if reach is None or not reach.found:
        reach = _first_reach(doc, resolver)
    _cuda_select(doc, facts)
    if reach is not None:
        _take_reach(facts, reach)


def _select_of(node):
    """The select expression an identifier is a segment or the base variable of, else None."""
    parent = node.parent
    if parent is not None and parent.type == "attrpath" and parent.parent is not None \
            and parent.parent.type == "select_expression":
        return parent.parent
    if parent is not None and parent.type == "variable_expression" and parent.parent is not None \
            and parent.parent.type == "select_expression" and parent.parent.child_by_field_name("expression") == parent:
        return parent.parent
    return None


def _first_reach(doc: Document, resolver: Resolver) -> Reach | None:
    """The first select from a package set or interpreter the file spells (`python313.withPackages`)."""
    for node in nodes_spelling(doc, b"python"):
        select = _select_of(node) if node.type == "identifier" else None
        if select is not None:
            candidate = reach_of(doc, resolver, select)
            if candidate is not None and candidate.found:
                return candidate
    return None


def _cuda_select(doc: Document, facts: RecipeFacts) -> None:
    """The first `cudaPackages_X_Y` selected from (`nixpkgs_pinned.cudaPackages_12_9.cudnn`) or named under `with`."""
    for node in nodes_spelling(doc, b"cudaPackages_"):
        if node.type != "identifier" or not _CUDA_SET.match(_text(doc, node)):
            continue
        if _select_of(node) is not None or (node.parent is not None and node.parent.type == "variable_expression"):
            name = _text(doc, node)
            facts.cuda_used = Fact(name, node.start_byte, f"{name} selected")
            return


def _take_reach(facts: RecipeFacts, reach: Reach) -> None:
    facts.package_set = reach.package_set
    facts.interpreter = reach.interpreter
    facts.interpreter_use = reach.interpreter_use if reach.interpreter is not None else ""
    facts.attribute = reach.attribute
    facts.reached_via = reach.python_source
    python = python_of_reach(reach)
    if python is not None:
        at = (reach.package_set or reach.interpreter).offset
        facts.python = Fact(python, at, reach.python_source)


def _read_overrides(doc: Document, facts: RecipeFacts) -> None:
    """Argument names of `x.override { ... }` (not overrideAttrs), from where the file spells `override`."""
    for node in nodes_spelling(doc, b"override"):
        select = _select_of(node) if node.type == "identifier" and doc.text(node) == b"override" else None
        if select is None or node.parent.children_by_field_name("attr")[-1] != node:
            continue
        call = select.parent
        while call is not None and call.type == "parenthesized_expression":
            call = call.parent
        if call is None or call.type != "apply_expression" or unwrap(call.child_by_field_name("function")) != select:
            continue
        argument = unwrap(call.child_by_field_name("argument"))
        binding_set = next((c for c in argument.named_children if c.type == "binding_set"), None) \
            if argument is not None and argument.type == "attrset_expression" else None
        for binding in binding_set.named_children if binding_set is not None else ():
            attrpath = binding.child_by_field_name("attrpath") if binding.type == "binding" else None
            first = attrpath.child_by_field_name("attr") if attrpath is not None else None
            name = name_of(doc, first) if first is not None else None
            if name:
                facts.overrides.append(Fact(name, attrpath.start_byte, ".override argument"))


def _read_bindings(doc: Document, facts: RecipeFacts, found: list, resolver: Resolver):
    """Every fact a binding states; the first of each name counts. Returns the `pname` binding."""
    pname_binding = None
    for binding in found:
        if not binding.path or binding.path[-1] is None:
            continue
        name = binding.path[-1]
        dotted = binding.dotted
        if name in GPU_NAMES and name not in facts.gpu:
            _gpu_binding(doc, facts, binding, name, resolver)
        elif name in FLAG_NAMES and not facts.cpu_flags:
            _flags_binding(facts, binding, name, resolver)
        elif name == "pname" and pname_binding is None:
            pname_binding = binding
            value = resolver.string(binding.value)
            if value is not None:
                facts.pname = Fact(value.value, binding.value.start_byte, "pname" + _via(value))
            else:
                facts.pname_expression = _text(doc, binding.value)
        elif dotted == "meta.platforms" and not facts.platforms:
            values = resolver.strings(binding.value)
            facts.platforms = tuple(v.value for v in values or ())
            facts.platforms_offset = binding.value.start_byte
        elif name == "cudaSupport" and (facts.cuda_support is None or facts.cuda_support.value == "false"):
            literal = unwrap(binding.value)
            if literal is not None and literal.type == "variable_expression" and doc.text(literal) in (b"true", b"false"):
                facts.cuda_support = Fact(_text(doc, literal), literal.start_byte, dotted)
        elif name == "cudaPackages" and facts.cuda_overlay is None:
            _cuda_binding(doc, facts, binding, resolver)
        elif name == "flags" and len(binding.path) == 2 and binding.path[0] and binding.path[0] not in facts.flag_table:
            values = resolver.strings(binding.value)
            flags = tuple(v.value for v in values or ())
            if flags and all(flag.startswith("-m") for flag in flags):
                facts.flag_table[binding.path[0]] = flags
        elif name == "cudaVersion" and facts.cuda_binding is None:
            value = resolver.string(binding.value)
            if value is not None:
                facts.cuda_binding = Fact(value.value, value.offset, f"{dotted}" + _via(value))
    return pname_binding


def _cuda_binding(doc: Document, facts: RecipeFacts, binding, resolver: Resolver) -> None:
    """`cudaPackages = final.cudaPackages_12_9;` in an overlay, or `cudaPackages = cudaPackages_12_9;` (under
    `with`) as an `.override` argument: the set the build takes."""
    target, _ = resolver.follow(binding.value)
    if target is None:
        return
    if target.type == "select_expression":
        last = attrpath_segments(doc, target.child_by_field_name("attrpath"))[-1]
        name, at = last.name, last.node
    elif target.type == "variable_expression":
        name, at = _text(doc, target), target
    else:
        return
    if name and name.startswith("cudaPackages"):
        call = binding.container.parent
        function = unwrap(call.child_by_field_name("function")) if call is not None and call.type == "apply_expression" else None
        argument = function is not None and _text(doc, function).rsplit(".", 1)[-1] == "override"
        facts.cuda_overlay = Fact(name, at.start_byte, f"{name} (.override argument)" if argument else f"{name} overlay")


def _gpu_binding(doc: Document, facts: RecipeFacts, binding, name: str, resolver: Resolver) -> None:
    values = resolver.strings(binding.value)
    label = binding.dotted
    if values is None:  # not literal (a function argument): kept as written, names no target
        facts.gpu[name] = Fact(_text(doc, binding.value), binding.value.start_byte, label)
        return
    via = tuple(dict.fromkeys(v for item in values for v in item.via))
    source = label + (f" via {', '.join(via)}" if via else "")
    offset = values[0].offset if values else binding.value.start_byte
    facts.gpu[name] = Fact(" ".join(v.value for v in values), offset, source)


def _flags_binding(facts: RecipeFacts, binding, name: str, resolver: Resolver) -> None:
    values = resolver.strings(binding.value)
    if values is None:
        return
    flags = tuple(flag for v in values for flag in (flags_in(v.value) if " " in v.value else (v.value,)))
    if name != "cpuFlags" and isa_of(flags) is None:
        return
    facts.cpu_flags = flags
    facts.cpu_flags_offset = binding.value.start_byte
    facts.cpu_flags_source = binding.dotted + (f" via {', '.join(values[0].via)}" if values and values[0].via else "")


def _read_strings(doc: Document, facts: RecipeFacts, resolver: Resolver) -> None:
    """In build-phase strings: the catalog marker `echo N > $out/.metadata-rev`, `TORCH_CUDA_ARCH_LIST=…`
    and `-DCMAKE_CUDA_ARCHITECTURES=…` (a `${…}` value resolved), `lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" x`,
    and `-m…` compiler flags when no binding gave the CPU flags. Only strings that spell one of these are read."""
    found: dict[int, Node] = {}
    for needle in _STRING_NEEDLES:
        for node in nodes_spelling(doc, needle):
            held = node.parent if node.type == "string_fragment" else (node if node.type in STRING_TYPES else None)
            if held is not None and held.type in STRING_TYPES:
                found[held.id] = held
    flags_seen = bool(facts.cpu_flags)
    for string in sorted((as_string(n) for n in found.values()), key=lambda s: s.node.start_byte):
        parts = string.parts
        for index, part in enumerate(parts):
            if part.kind != "literal":
                continue
            text = doc.text(part.node)
            if facts.metadata_rev is None and b"metadata-rev" in text and (match := _METADATA_REV.search(text)):
                facts.metadata_rev = Fact(match.group(1).decode(), part.node.start_byte + match.start(1), "postInstall")
            if b"TORCH_CUDA_ARCH_LIST" in text or b"CMAKE_CUDA_ARCHITECTURES" in text:
                _string_targets(doc, facts, resolver, string, index, text)
            if not flags_seen and (b"-mavx" in text or b"-march=" in text):
                flags = flags_in(text.decode("utf-8", "replace"))
                if isa_of(flags) is not None:
                    facts.cpu_flags, facts.cpu_flags_offset = flags, part.node.start_byte
                    facts.cpu_flags_source = "compiler flags in a string"
                    flags_seen = True


def _string_targets(doc: Document, facts: RecipeFacts, resolver: Resolver, string, index: int, text: bytes) -> None:
    parts = string.parts
    start = parts[index].node.start_byte
    if len(parts) == 1 and text == b"CMAKE_CUDA_ARCHITECTURES":
        _cmake_feature(doc, facts, resolver, string.node)
        return
    for match in _ENV_TARGET.finditer(text):
        name = match.group(1).decode()
        if name in facts.gpu:
            continue
        if match.group(2):
            facts.gpu[name] = Fact(match.group(2).decode("utf-8", "replace"), start + match.start(2), f"{name} in a string")
        elif match.end() == len(text) and index + 1 < len(parts) and parts[index + 1].kind == "interpolation":
            resolved = resolver.string(parts[index + 1].node.child_by_field_name("expression"))
            if resolved is not None:
                facts.gpu[name] = Fact(resolved.value, resolved.offset, f"{name} in a string" + _via(resolved))


def _cmake_feature(doc: Document, facts: RecipeFacts, resolver: Resolver, node) -> None:
    """`lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" VALUE`: the string is the first argument."""
    call = node.parent
    outer = call.parent if call is not None else None
    if call is None or outer is None or call.type != "apply_expression" or outer.type != "apply_expression":
        return
    if call.child_by_field_name("argument") != node or outer.child_by_field_name("function") != call:
        return
    if "CMAKE_CUDA_ARCHITECTURES" in facts.gpu:
        return
    resolved = resolver.string(outer.child_by_field_name("argument"))
    if resolved is not None:
        facts.gpu["CMAKE_CUDA_ARCHITECTURES"] = Fact(resolved.value, resolved.offset,
                                                     "CMAKE_CUDA_ARCHITECTURES (cmakeFeature)" + _via(resolved))


def _read_imports(doc: Document, facts: RecipeFacts) -> None:
    """Every `import ./x.nix …` or `callPackage ./x.nix …` (`imports`), the first (`imported`: a companion's
    PyTorch recipe), and the attributes selected from one (`(import ./lib/cpu-isa.nix).avx512`)."""
    imports, selected = [], []
    for spelling in nodes_spelling(doc, b".nix"):
        node: Node | None = spelling
        while node is not None and node.type == "path_fragment":
            node = node.parent
        if node is None or node.type != "path_expression":
            continue
        text = _text(doc, node)
        call = node.parent
        if not text.endswith(".nix") or "/" not in text or call is None or call.type != "apply_expression":
            continue
        if call.child_by_field_name("argument") != node:
            continue
        function = unwrap(call.child_by_field_name("function"))
        name = _text(doc, function).rsplit(".", 1)[-1] if function is not None else ""
        if name not in ("import", "callPackage"):
            continue
        if facts.imported is None:
            facts.imported = Fact(text.rsplit("/", 1)[-1].removesuffix(".nix"), node.start_byte, f"{name} {text}")
        imports.append(text)
        attribute = _selected_from(doc, call)
        if attribute is not None:
            selected.append(Fact(attribute[0], attribute[1], text))
    facts.imports = tuple(dict.fromkeys(imports))
    facts.selected_imports = tuple(selected)


def _selected_from(doc: Document, call) -> tuple[str, int] | None:
    """(name, offset) of `(CALL).name`: the attribute selected from an import's (or callPackage's) value."""
    if call is not None and call.type == "apply_expression" and call.parent is not None \
            and call.parent.type == "apply_expression" and call.parent.child_by_field_name("function") == call:
        call = call.parent  # `import ./x.nix { … }`, `callPackage ./x.nix { … }`
    node = call
    while node is not None and node.parent is not None and node.parent.type == "parenthesized_expression":
        node = node.parent
    select = node.parent if node is not None else None
    if select is None or select.type != "select_expression" or select.child_by_field_name("expression") != node:
        return None
    segments = attrpath_segments(doc, select.child_by_field_name("attrpath"))
    if not segments or not segments[0].name:
        return None
    return segments[0].name, segments[0].node.start_byte


# --- derived facts ---------------------------------------------------------------------------------


def derive(facts: RecipeFacts) -> None:
    """The facts read through several notations, in one notation each, with the source that decided."""
    stem = recipe_stem(facts.path)
    name = name_parts(stem)
    facts.package = Fact(name.project, 0, "file name") if name.project else (
        Fact(facts.attribute.value, facts.attribute.offset, "attribute") if facts.attribute else None)
    facts.target = _target(facts, name)
    support = facts.cuda_support.value if facts.cuda_support else None
    darwin = name.darwin or (facts.platforms and all(p.endswith("-darwin") for p in facts.platforms))
    if facts.target is not None and not facts.target.source.startswith(("file name", "the imported")):
        facts.kind = "gpu"  # the content names a GPU target
    elif name.cpu or darwin:
        facts.kind = "darwin" if darwin else "cpu"  # a CPU or Darwin name is believed over a global cudaSupport
    elif support == "true" or (facts.target is not None and support != "false"):
        facts.kind = "gpu"
        if facts.target is None:
            facts.target = Fact("sm?", facts.cuda_support.offset,
                                "cudaSupport = true; no GPU target stated (nixpkgs' default capabilities)")
    else:
        facts.kind = "cpu"
    if facts.kind != "gpu":
        facts.target = None
    facts.cuda = _cuda(facts, name, stem)
    if facts.python is None:
        facts.python = _python(facts, name)
    isa = isa_of(facts.cpu_flags)
    if isa is not None:
        facts.isa = Fact(isa, facts.cpu_flags_offset, facts.cpu_flags_source or "cpuFlags")
    elif name.isa is not None:
        facts.isa = Fact(name.isa, 0, "file name")


def _target(facts: RecipeFacts, name) -> Fact | None:
    for notation in GPU_NAMES:
        fact = facts.gpu.get(notation)
        targets = sm_targets(fact.value) if fact is not None else ()
        if targets:
            return Fact("+".join(targets), fact.offset, fact.source)
    imported = name_parts(facts.imported.value) if facts.imported is not None else None
    if imported is not None and imported.sm:
        return Fact(imported.sm, facts.imported.offset, f"the imported recipe ({facts.imported.source})")
    if name.sm:
        return Fact(name.sm, 0, f"file name {name.sm}")
    return None


def _cuda(facts: RecipeFacts, name, stem: str) -> Fact | None:
    named = cuda_text_version(facts.cuda_binding.value) if facts.cuda_binding else None
    for fact in (facts.cuda_overlay, facts.cuda_used):
        version = cuda_set_version(fact.value) if fact is not None else None
        if not version or not version[0]:
            continue
        major, minor = version
        if minor is not None:
            return Fact(cuda_version(major, minor), fact.offset, fact.source)
        if name.cuda and name.cuda.startswith(f"{int(major)}.") and not name.cuda.endswith(".x"):
            return Fact(name.cuda, fact.offset, f"{fact.source}, minor from the file name {name.cuda_token}")
        if named is not None and named[0] == major and named[1] is not None:
            return Fact(cuda_version(*named), fact.offset, f"{fact.source}, minor from {facts.cuda_binding.source}")
        return Fact(cuda_version(major, None), fact.offset, f"{fact.source} (the newest {int(major)}.x at the pin)")
    if named is not None:
        return Fact(cuda_version(*named), facts.cuda_binding.offset, facts.cuda_binding.source)
    imported = name_parts(facts.imported.value) if facts.imported is not None else None
    if imported is not None and imported.cuda:
        return Fact(imported.cuda, facts.imported.offset, f"the imported recipe ({facts.imported.source})")
    if name.cuda:
        return Fact(name.cuda, 0, f"file name {name.cuda_token}")
    return None


def _python(facts: RecipeFacts, name) -> Fact | None:
    default = None
    if facts.package_set is not None and facts.package_set.value == "python3Packages":
        default = "python3Packages"
    elif facts.interpreter is not None and facts.interpreter.value == "python3":
        default = "python3"
    if name.python is not None:
        why = f"; {default} is the pin's default" if default else ""
        return Fact(name.python, 0, f"file name{why}")
    if facts.pname is not None:
        version = name_parts(facts.pname.value).python
        if version is not None:
            return Fact(version, facts.pname.offset, "pname")
    if default is not None:
        at = (facts.package_set or facts.interpreter).offset
        return Fact("3.x", at, f"{default}: the pin's default Python 3")
    return None

