"""What one recipe says about itself: pins, package set and attribute, overrides, GPU/CPU targets, name.

scan, lint and verify all start from these facts, read once per file from the
syntax queries (never from regular expressions over the whole file), so the
three commands agree on what a recipe is. Every fact keeps the byte offset it
was read at, so findings can point at `path:line:col`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pinshift.migrations.pin_swap import pin_sites
from pinshift.syntax.document import Document
from pinshift.syntax.queries import (
    attrpath_segments, bindings, fetcher_calls, functions, selects, string_value, strings, unwrap, walk,
)

PACKAGE_SET = re.compile(r"python\d*Packages\Z")
_METADATA_REV = re.compile(rb"echo[ \t]+(\S+)[ \t]*>[ \t]*\$out/\.metadata-rev")
GPU_NAMES = ("gpuArchNum", "gpuArchSM", "gpuTargets")


@dataclass(frozen=True)
class Fact:
    """A value read from a recipe and the byte offset it was read at."""

    value: str
    offset: int


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
    """Everything scan, lint and verify need to know about one recipe file."""

    path: str
    problems: tuple = ()
    pins: list[Pin] = field(default_factory=list)
    package_set: Fact | None = None
    attribute: Fact | None = None
    overrides: list[Fact] = field(default_factory=list)  # `.override { name = ...; }` argument names
    gpu: dict[str, Fact] = field(default_factory=dict)  # gpuArchNum / gpuArchSM / gpuTargets -> value
    cpu_flags: tuple[str, ...] = ()
    cpu_flags_offset: int = 0
    pname: Fact | None = None
    platforms: tuple[str, ...] = ()
    platforms_offset: int = 0
    metadata_rev: Fact | None = None
    cuda_overlay: Fact | None = None  # `cudaPackages_12_9` as the overlay names it
    arguments: tuple[str, ...] = ()  # formals of the outermost function (`{ python3Packages, cudaPackages }:`)

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
    def uses_caller_nixpkgs(self) -> bool:
        """A build with no nixpkgs pin of its own, a function of what it builds with (Flox: `{ python3Packages, ... }:`).

        A fetcher of the package's own source (`fetchFromGitHub { repo = "pytorch"; rev = "v${version}"; }`)
        is not a nixpkgs pin.
        """
        builds = self.package_set is not None or self.pname is not None
        return builds and bool(self.arguments) and not self.nixpkgs_pins

    @property
    def package_path(self) -> str | None:
        """`python313Packages.torch`, as scan prints it."""
        if self.package_set is None:
            return None
        return self.package_set.value + (f".{self.attribute.value}" if self.attribute else "")

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "problems": [str(p) for p in self.problems],
            "pins": [{"kind": p.kind, "revision": p.revision, "expression": p.expression, "hash": p.has_hash}
                     for p in self.pins],
            "package_set": _value(self.package_set),
            "attribute": _value(self.attribute),
            "overrides": [o.value for o in self.overrides],
            "gpu": {name: fact.value for name, fact in self.gpu.items()},
            "cpu_flags": list(self.cpu_flags),
            "pname": _value(self.pname),
            "platforms": list(self.platforms),
            "metadata_rev": _value(self.metadata_rev),
            "cuda_overlay": _value(self.cuda_overlay),
            "arguments": list(self.arguments),
        }


def _value(fact: Fact | None) -> str | None:
    return fact.value if fact else None


def _text(doc: Document, node) -> str:
    return doc.text(node).decode("utf-8", "replace")


def _string(doc: Document, node) -> str | None:
    value = string_value(doc, unwrap(node)) if node is not None else None
    return value.decode("utf-8", "replace") if value is not None else None


def _list_strings(doc: Document, node) -> tuple[str, ...]:
    node = unwrap(node)
    if node is None or node.type != "list_expression":
        return ()
    values = (_string(doc, item) for item in node.named_children if item.type != "comment")
    return tuple(v for v in values if v is not None)


def recipe_facts(doc: Document) -> RecipeFacts:
    """The facts of one parsed recipe; a file with syntax problems still reports what could be read."""
    facts = RecipeFacts(path=doc.path, problems=doc.problems)
    found = bindings(doc)  # walked once, read by two readers (pinshift status reads thousands of recipes)
    _read_pins(doc, facts)
    _read_arguments(doc, facts)
    _read_package(doc, facts)
    _read_overrides(doc, facts, found)
    _read_bindings(doc, facts, found)
    _read_strings(doc, facts)
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
    if body is not None and body.type == "function_expression":
        for function in functions(doc):
            if function.node == body:
                facts.arguments = tuple(f.name for f in function.formals)
                return


def _read_package(doc: Document, facts: RecipeFacts) -> None:
    """The first `<...>.pythonXYZPackages.<attr>` select names the package set and attribute."""
    for select in selects(doc):
        names = ((select.base_name,) if select.base_name else ()) + select.names
        segments = ((None,) if select.base_name else ()) + select.segments
        for index, name in enumerate(names):
            if name and PACKAGE_SET.match(name):
                start = select.base.start_byte if index == 0 and select.base_name else segments[index].node.start_byte
                facts.package_set = Fact(name, start)
                if index + 1 < len(names) and names[index + 1] not in (None, "override", "overrideAttrs"):
                    facts.attribute = Fact(names[index + 1], segments[index + 1].node.start_byte)
                return


def _read_overrides(doc: Document, facts: RecipeFacts, found: list) -> None:
    """Argument names of `x.override { ... }` (not overrideAttrs); `gpuTargets` there is a GPU target too."""
    held: dict[int, list] = {}  # container id -> its bindings (each override's argument looked up, not searched)
    for binding in found:
        held.setdefault(binding.container.id, []).append(binding)
    for node in walk(doc.root, "apply_expression"):
        function = unwrap(node.child_by_field_name("function"))
        if function is None or function.type != "select_expression":
            continue
        segments = attrpath_segments(doc, function.child_by_field_name("attrpath"))
        if not segments or segments[-1].name != "override":
            continue
        argument = unwrap(node.child_by_field_name("argument"))
        if argument is None or argument.type != "attrset_expression":
            continue
        for binding in held.get(argument.id, ()):
            if binding.path and binding.path[0]:
                facts.overrides.append(Fact(binding.path[0], binding.attrpath.start_byte))
                if binding.path[0] == "gpuTargets":
                    facts.gpu["gpuTargets"] = Fact(_text(doc, binding.value), binding.value.start_byte)


def _read_bindings(doc: Document, facts: RecipeFacts, found: list) -> None:
    for binding in found:
        name = binding.dotted if binding.depth <= 2 else ""  # the facts below are one or two names deep
        if name in ("gpuArchNum", "gpuArchSM") and (value := _string(doc, binding.value)) is not None:
            facts.gpu[name] = Fact(value, binding.value.start_byte)
        elif name == "cpuFlags":
            facts.cpu_flags = _list_strings(doc, binding.value)
            facts.cpu_flags_offset = binding.value.start_byte
        elif name == "pname" and facts.pname is None and (value := _string(doc, binding.value)) is not None:
            facts.pname = Fact(value, binding.value.start_byte)
        elif name == "meta.platforms":
            facts.platforms = _list_strings(doc, binding.value)
            facts.platforms_offset = binding.value.start_byte
        elif name == "cudaPackages":
            target = unwrap(binding.value)
            if target is not None and target.type == "select_expression":
                last = attrpath_segments(doc, target.child_by_field_name("attrpath"))[-1]
                if last.name and last.name.startswith("cudaPackages"):
                    facts.cuda_overlay = Fact(last.name, last.node.start_byte)


def _read_strings(doc: Document, facts: RecipeFacts) -> None:
    """The catalog marker `echo N > $out/.metadata-rev` in a build-phase string."""
    for string in strings(doc):
        for fragment in string.literals():
            match = _METADATA_REV.search(doc.text(fragment))
            if match:
                facts.metadata_rev = Fact(match.group(1).decode(), fragment.start_byte + match.start(1))
                return
