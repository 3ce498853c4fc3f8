"""rename-attr's check of definitions: renamed selects that read an attribute this same file defines.

`nixpkgs_pinned.python3Packages.torch` renamed to `python313Packages` reads another
attribute; when an overlay or packageOverrides of this file defines `python3Packages`
(`python3Packages = prev.python3Packages.override { … };`), the rename would silently
drop that definition from the build. With definitions = "refuse" the file is refused,
naming the definition and the use; with "rename" the definition's name is renamed
with its uses, when every reader of the definition can be renamed too.
See pinshift.syntax.package_sets for the shapes that count as definitions.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from pinshift.steps.kind import StepOutput
from pinshift.syntax.package_sets import Definition, PackageSets, layer_definitions
from pinshift.syntax.scopes import references


@dataclass(frozen=True)
class Reader:
    """Something the step does not rename that reads `from` of an expression: `inherit (x) from;`, a `with x;` name."""

    node: Node
    source: Node
    text: str


def first_segment(doc, segment: Node) -> bool:
    """Whether an attrpath segment is the first of its path (`x.from.y`, not `x.y.from`)."""
    return doc.ancestry.parent(segment).child_by_field_name("attr") == segment


def _select(doc, segment: Node) -> Node:
    """The select (or `?` test) an attrpath segment is part of (parents from doc.ancestry: no walk from the root)."""
    return doc.ancestry.parent(doc.ancestry.parent(segment))


def selected_from(doc, segment: Node) -> Node:
    """The expression a (first) segment selects from, or `?` tests: `nixpkgs_pinned` of `nixpkgs_pinned.a.b`."""
    return _select(doc, segment).child_by_field_name("expression")


def _use_text(doc, segment: Node, name: str) -> str:
    base = selected_from(doc, segment)
    shown = doc.text(base).decode("utf-8", "replace") if base.type == "variable_expression" else "(…)"
    operator = " ? " if _select(doc, segment).type == "has_attr_expression" else "."
    return f"{shown}{operator}{name}"


def _is_set_argument(sets: PackageSets, base: Node) -> bool:
    return base.type == "variable_expression" and sets.is_set_argument(base)


def _more(count: int, word: str) -> str:
    return f" and {count} more {word}{'s' if count != 1 else ''}" if count else ""


def check_definitions(doc, params, renamed: list[Node], segments: list[Node], readers: list[Reader],
                      out: StepOutput) -> list[Node]:
    """Refuse the file, or return the extra segments to rename (definitions, `prev.from` uses)."""
    candidates = [s for s in renamed if first_segment(doc, s)]
    if not candidates:
        return []
    sets = PackageSets(doc)
    hits = [(s, d) for s in candidates if (d := sets.definitions(selected_from(doc, s), params.from_))]
    _warn_unseen(doc, params, sets, candidates, out)
    if not hits:
        return []
    # name a use outside the overlays first: it is the one the reader asked to rename
    hits.sort(key=lambda hit: _is_set_argument(sets, selected_from(doc, hit[0])))
    if params.definitions == "rename":
        return _rename(doc, params, sets, hits, renamed, segments, readers, out)
    definitions = {d.node.id: d for _, found in hits for d in found}
    segment, found = hits[0]
    definition = found[0]
    out.refuse(definition.name_node.start_byte,
               f"{params.from_} is defined here ({definition.described}{_more(len(definitions) - 1, 'definition')}) "
               f"and used at {doc.location(segment.start_byte)} ({_use_text(doc, segment, params.from_)})"
               f"{_more(len(hits) - 1, 'use')}: renaming only the use to {params.to} would bypass this definition; "
               "file left unchanged (set definitions = \"rename\" to rename both)")
    return []


def _shown(doc, node: Node) -> str:
    if node.type == "function_expression":
        return "an overlay whose result"
    text = " ".join(doc.text(node).decode("utf-8", "replace").split())
    return f"`{text if len(text) <= 60 else text[:57] + '...'}`, which"


def _warn_unseen(doc, params, sets: PackageSets, candidates: list[Node], out: StepOutput) -> None:
    """One warning when renamed uses read a set built with overlays this file does not show."""
    unseen = [(s, found) for s in candidates if (found := sets.opaque(selected_from(doc, s)))]
    if not unseen:
        return
    segment, found = unseen[0]
    out.warn(segment.start_byte,
             f"{_use_text(doc, segment, params.from_)}{_more(len(unseen) - 1, 'use')} reads a set built with "
             f"{_shown(doc, found[0])} this file does not show (at {doc.location(found[0].start_byte)}): "
             f"not checked for a definition of {params.from_}; look there before relying on the rename")


def _rename(doc, params, sets: PackageSets, hits, renamed: list[Node], segments: list[Node],
            readers: list[Reader], out: StepOutput) -> list[Node]:
    """Rename the definitions reached, and every other reader of them that can be renamed; else refuse."""
    name, to = params.from_, params.to
    definitions: dict[int, Definition] = {d.node.id: d for _, found in hits for d in found}
    first = next(iter(definitions.values()))
    where = doc.location(first.name_node.start_byte)
    problems: list[tuple[int, str]] = []

    def reaches(expr) -> bool:
        return any(d.node.id in definitions for d in sets.definitions(expr, name))

    for definition in definitions.values():
        if definition.inherited:
            problems.append((definition.name_node.start_byte, f"{name} is inherited here ({definition.described}): "
                             "an inherit also names where the value comes from; write it as a binding first"))
        elif definition.layer.node.type == "rec_attrset_expression":
            for variable, binder in references(doc, name, within=definition.layer.node):
                if binder.name_node == definition.name_node:
                    problems.append((variable.start_byte, f"{name} here refers to the rec binding at "
                                     f"{doc.location(definition.name_node.start_byte)}; rename it by hand"))
    layers = {layer.node.id: layer for segment, _ in hits for layer in sets.layers(selected_from(doc, segment))}
    for layer in layers.values():
        for clash in layer_definitions(doc, layer, to):
            problems.append((clash.name_node.start_byte, f"{to} is already defined here ({clash.described}); "
                             f"renaming the definition of {name} at {where} would define it twice"))
    already = {s.id for s in renamed}
    extra = []
    for segment in segments:
        if segment.id in already or not first_segment(doc, segment) or not reaches(selected_from(doc, segment)):
            continue
        if _is_set_argument(sets, selected_from(doc, segment)):
            extra.append(segment)
        else:
            problems.append((segment.start_byte, f"{_use_text(doc, segment, name)} also reads the definition at "
                             f"{where} and is not renamed (base = {params.base}); renaming the definition "
                             "would change what it builds"))
    defined_at = {d.name_node.id for d in definitions.values()}
    for reader in readers:
        if reader.node.id not in defined_at and reaches(reader.source):
            problems.append((reader.node.start_byte, f"{reader.text} reads the definition at {where} and cannot be "
                             "renamed; renaming the definition would change what it builds"))
    if problems:
        for offset, message in problems:
            out.refuse(offset, f"definitions = \"rename\": {message}; file left unchanged")
        return []
    shared = [d for d in definitions.values() if d.layer.elsewhere]
    if shared:
        out.warn(shared[0].name_node.start_byte,
                 f"{name} renamed to {to} here ({shared[0].described}) for a set another file builds: the files "
                 f"that read {name} from that set must say {to} too; check them")
    return [d.name_node for d in definitions.values()] + extra
