"""Candidates for the Nix kinds that change names and values: rename-attr, rename-binding, set-binding, metadata-rev.

rename-attr: an identifier TARGET spells differently (a whole token: `python3Packages` ->
`python313Packages`). With `base` when every renamed occurrence is a segment of a select on one
variable (`nixpkgs_pinned.python3Packages`); without, when a function argument or several
bases are renamed; `definitions = "rename"` when a binding of the name was renamed too.

rename-binding: a `let`/`rec` binding renamed with the variables bound to it (`python312Custom`
-> `python311Custom`); several names made one make one regex step (`python3\\d+Custom`).

set-binding: a binding of the attrset returned by the `overrideAttrs` that makes the file's value
(or, with `where`, a `let` binding's value) that TARGET adds (its value, the binding before it as
`after` when it is not the last, the new comment line above it as `comment`, `blank-line` when
its spacing is not the file's habit) or whose value TARGET changes to something that is not a
string and differs beyond string text (those are replace-in-strings'). Files that get the same
binding make one step.

metadata-rev: the `echo N > $out/.metadata-rev` markers: all bumped by one (an increment),
all set to one number (`value`), or set per group of files; markers TARGET adds to files
without one: `missing = "insert"`.
"""

from __future__ import annotations

import re
from collections import defaultdict

from pinshift import languages
from pinshift.infer.candidates import Candidate, Setting
from pinshift.infer.token_hunks import hunks
from pinshift.infer.propose_pins import comment_above
from pinshift.infer.state import State
from pinshift.migrations._results import binding_overrides, result_overrides
from pinshift.migrations.metadata_rev import _markers
from pinshift.migrations.replace_in_strings import bound_strings
from pinshift.steps.kind import StepOutput
from pinshift.steps import layout
from pinshift.syntax.queries import bindings, name_of
from pinshift.syntax.scopes import binder_of

_WORD = re.compile(rb"\w+\Z")
MAX_GROUPS = 8  # more distinct values than this for one binding path: per-file edits, not a recipe step


def _nix_pairs(state: State):
    for path, target_path in state.pairs():
        if languages.language_for(path) == "nix" and languages.language_for(target_path) == "nix":
            yield path, target_path


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


# --- rename-attr ----------------------------------------------------------------------------


def _role(doc, identifier) -> tuple[str, str | None]:
    """(what the identifier is, the variable a select starts from): ("segment", "nixpkgs_pinned"), ("formal", None)..."""
    parent = identifier.parent
    if parent is None:
        return "other", None
    if parent.type == "attrpath" and parent.parent is not None:
        holder = parent.parent
        if holder.type in ("select_expression", "has_attr_expression") and holder.child_by_field_name("attrpath") == parent:
            base = holder.child_by_field_name("expression")
            name = doc.text(base).decode() if base is not None and base.type == "variable_expression" else None
            return "segment", name
        if holder.type == "binding":
            return "definition", None
    if parent.type in ("variable_expression", "formal"):
        return parent.type.removesuffix("_expression"), None
    return "other", None


def _identifier_changes(state: State) -> list[tuple[str, str, str, str, str | None]]:
    """(path, old, new, role, base) for each identifier TARGET spells differently; a `let`/`rec` binding's name
    and the variables bound to one have the role "binding" (rename-binding's), the rest rename-attr's."""
    found = []
    for path, target_path in _nix_pairs(state):
        doc, target_doc = state.doc(path), state.target_doc(target_path)
        if doc is None or target_doc is None:
            continue
        for hunk in state.hunks(path, target_path):
            if not (_WORD.match(hunk.old) and _WORD.match(hunk.new)):
                continue
            node = doc.root.descendant_for_byte_range(hunk.start, hunk.end)
            new_node = target_doc.root.descendant_for_byte_range(hunk.new_start, hunk.new_end)
            if node is None or new_node is None or node.type != "identifier" or new_node.type != "identifier":
                continue
            old, new = doc.text(node).decode(), target_doc.text(new_node).decode()
            if old == new:
                continue
            role, base = _role(doc, node)
            if role == "definition" and _in_scope_binding(node):
                role = "binding"
            elif role == "variable" and binder_of(doc, node.parent).kind in ("let", "rec"):
                role = "binding"
            found.append((path, old, new, role, base))
    return found


def _in_scope_binding(identifier) -> bool:
    """Whether an attrpath's first name binds a variable: a binding of a `let` or `rec { }`."""
    attrpath = identifier.parent
    binding = attrpath.parent
    container = binding.parent.parent if binding.parent is not None else None
    return (attrpath.child_by_field_name("attr") == identifier and container is not None
            and container.type in ("let_expression", "rec_attrset_expression", "let_attrset_expression"))


def propose_attr_renames(state: State, setting: Setting) -> list[Candidate]:
    seen: dict[tuple[str, str], list[tuple[str, str, str | None]]] = defaultdict(list)
    for path, old, new, role, base in _identifier_changes(state):
        if role != "binding":
            seen[(old, new)].append((path, role, base))
    found = []
    for (old, new), places in sorted(seen.items(), key=lambda item: (-len(item[1]), item[0])):
        roles = {role for _, role, _ in places}
        bases = {base for _, role, base in places if role == "segment"}
        params: dict = {"from": old, "to": new}
        if roles == {"segment"} and len(bases) == 1 and None not in bases:
            params["base"] = next(iter(bases))
        if "definition" in roles:
            params["definitions"] = "rename"
        paths = tuple(dict.fromkeys(p for p, _, _ in places))
        where = f"in every select on {params['base']}" if "base" in params else "in selects and function arguments"
        found.append(Candidate("rename-attr", params, f"Use {new} instead of {old}", paths, order=(paths[0],),
                               detail=f"{old} becomes {new} {where}, in {_plural(len(paths), 'file')}."))
    return found


# --- rename-binding -------------------------------------------------------------------------


def name_pattern(names: list[str]) -> str | None:
    r"""A regular expression matching each of `names` (the same but for runs of digits), None if there is none.

        >>> name_pattern(["python312Custom", "python313Custom"])
        'python3\\d+Custom'
        >>> name_pattern(["a1", "b2"]) is None
        True
    """
    split = [re.split(r"(\d+)", name) for name in names]
    if len({len(parts) for parts in split}) != 1:
        return None
    pattern = []
    for index, column in enumerate(zip(*split)):
        if index % 2 == 0:
            if len(set(column)) != 1:
                return None
            pattern.append(re.escape(column[0]))
        elif len(set(column)) == 1:
            pattern.append(column[0])
        else:
            first = {value[0] for value in column}
            pattern.append((first.pop() if len(first) == 1 else "") + r"\d+")
    return "".join(pattern)


def propose_binding_renames(state: State, setting: Setting) -> list[Candidate]:
    r"""rename-binding for `let`/`rec` bindings TARGET renamed with their references (python312Custom ->
    python311Custom); several names renamed to one (python312Custom and python313Custom -> python311Custom)
    make one step whose `from` matches them all (`python3\d+Custom`)."""
    seen: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, old, new, role, _ in _identifier_changes(state):
        if role == "binding" and path not in seen[new][old]:
            seen[new][old].append(path)
    found = []
    for new, olds in sorted(seen.items()):
        pattern = name_pattern(sorted(olds)) if len(olds) > 1 else None
        groups = [(pattern, sorted(olds))] if pattern is not None else [(None, [old]) for old in sorted(olds)]
        for regex, names in groups:
            paths = tuple(dict.fromkeys(p for name in names for p in olds[name]))
            params: dict = {"from": regex or names[0], "to": new}
            if regex:
                params["regex"] = True
            named = " and ".join(names) if len(names) <= 3 else f"{names[0]} and {len(names) - 1} more names"
            found.append(Candidate("rename-binding", params, f"Rename {named} to {new}", paths, order=(paths[0],),
                                   detail=f"The let binding {named} becomes {new}, with every reference bound to "
                                          f"it, in {_plural(len(paths), 'file')}."))
    return found


# --- set-binding ----------------------------------------------------------------------------


def _stringish(value) -> bool:
    return bool(list(bound_strings(value)))


def _only_text_differs(doc, value, target_doc, target_value) -> bool:
    """Whether two values differ only inside the literal text of strings (`src = fetchFromGitHub { hash = "…"; }`
    with another hash): replace-in-strings' change, said in words, not the whole value set again."""
    found = hunks(doc.text(value), target_doc.text(target_value))
    for hunk in found:
        start, end = value.start_byte + hunk.start, value.start_byte + hunk.end
        node = doc.root.descendant_for_byte_range(start, max(start, end - 1) if end > start else start)
        if node is None or node.type != "string_fragment" or not (node.start_byte <= start and end <= node.end_byte):
            return False
    return bool(found)


def _own_bindings(doc, attrset) -> dict[tuple, object]:
    found = {}
    for binding in bindings(doc):
        if binding.root == attrset and None not in binding.path:
            found.setdefault(binding.path, binding)
    return found


def _after(doc, binding) -> str | None:
    """The dotted name of the binding right before `binding` in its attrset (None: it is the last one)."""
    siblings = [c for c in binding.node.parent.named_children if c.type != "comment"]
    index = next(i for i, c in enumerate(siblings) if c == binding.node)
    if index == len(siblings) - 1:
        return None
    previous = siblings[index - 1] if index > 0 else None
    if previous is None or previous.type != "binding":
        return None
    names = [name_of(doc, s) for s in previous.child_by_field_name("attrpath").children_by_field_name("attr")]
    return None if None in names else ".".join(names)


def _compared_calls(doc, target_doc) -> list[tuple[object, object, str | None]]:
    """(call, TARGET's call, set-binding's `where`) for the overrideAttrs calls a binding may be added to: the one
    that makes the file's value, and the one making each `let` binding's value (a companion's inline PyTorch)."""
    found = []
    calls, target_calls = result_overrides(doc), result_overrides(target_doc)
    if calls and len(calls) == len(target_calls):
        found += [(call, target_call, None) for call, target_call in zip(calls, target_calls)]
    names = {b.path[0] for b in bindings(doc) if len(b.path) == 1 and b.container.type == "let_expression"
             and b"overrideAttrs" in doc.text(b.value)}
    for name in sorted(names):
        calls, target_calls = binding_overrides(doc, name), binding_overrides(target_doc, name)
        if calls and len(calls) == len(target_calls):
            found += [(call, target_call, name) for call, target_call in zip(calls, target_calls)]
    return found


def _auto_blank_line(doc, attrset, after: str | None) -> bool:
    """Whether set-binding, by the file's habit, puts a blank line above a binding inserted after `after`."""
    siblings = [c for c in (attrset.named_children[0].named_children if attrset.named_children else [])]
    named = [b for b in siblings if b.type == "binding" and after is not None and _dotted(doc, b) == after]
    anchor = named[0] if named else (siblings[-1] if siblings else None)
    if anchor is None:
        return False
    position = siblings.index(anchor)
    following = [b for b in siblings[position + 1 :] if b.type != "comment"]
    if following:
        return layout.blank_line_before(doc.data, layout.comment_block_start(doc.data, following[0].start_byte))
    return len(siblings) > 1 and layout.blank_line_before(doc.data, anchor.start_byte)


def _dotted(doc, binding) -> str | None:
    names = [name_of(doc, s) for s in binding.child_by_field_name("attrpath").children_by_field_name("attr")]
    return None if None in names else ".".join(names)


def binding_changes(state: State, path: str, target_path: str) -> list[tuple[dict, int]]:
    """(set-binding params, offset in TARGET) for each binding of an overrideAttrs attrset TARGET adds or changes:
    the one making the file's value, or (with `where`) one making a `let` binding's value."""
    doc, target_doc = state.doc(path), state.target_doc(target_path)
    if doc is None or target_doc is None:
        return []
    found = []
    for call, target_call, where in _compared_calls(doc, target_doc):
        before, after = _own_bindings(doc, call.attrset), _own_bindings(target_doc, target_call.attrset)
        added = [p for p in after if p not in before]
        differing = [p for p in after if p in before and doc.text(before[p].value) != target_doc.text(after[p].value)]
        changed = [p for p in differing if not (_stringish(before[p].value) and _stringish(after[p].value))
                   and not any(other != p and other[: len(p)] == p for other in differing + added)
                   and not _only_text_differs(doc, before[p].value, target_doc, after[p].value)]
        for key in added:
            if any(key[:n] in after and key[:n] not in before for n in range(1, len(key))):
                continue  # inside a binding that is new as a whole
            binding = after[key]
            params = {"path": ".".join(key), "value": target_doc.text(binding.value).decode("utf-8", "surrogateescape")}
            previous = _after(target_doc, binding)
            if previous is not None:
                params["after"] = previous
            comment = comment_above(target_doc, binding.node)
            if comment is not None and comment.encode() not in doc.data:
                params["comment"] = comment
            if len(key) == 1 and layout.ends_its_line(target_doc.data, binding.node.end_byte):
                start = layout.comment_block_start(target_doc.data, binding.node.start_byte) if "comment" in params \
                    else binding.node.start_byte
                blank = layout.blank_line_before(target_doc.data, start)
                if blank != _auto_blank_line(doc, call.attrset, previous):
                    params["blank-line"] = "before" if blank else "none"
            if where is not None:
                params["where"] = where
            found.append((params, binding.node.start_byte))
        for key in changed:  # (a binding with a nested binding that changed is left to that one)
            binding = after[key]
            value = target_doc.text(binding.value).decode("utf-8", "surrogateescape")
            params = {"path": ".".join(key), "value": value}
            if where is not None:
                params["where"] = where
            found.append((params, binding.node.start_byte))
    return found


def propose_bindings(state: State, setting: Setting) -> list[Candidate]:
    groups: dict[tuple, list[str]] = defaultdict(list)
    where: dict[tuple, int] = {}
    values: dict[tuple, dict] = {}
    for path, target_path in _nix_pairs(state):
        for params, offset in binding_changes(state, path, target_path):
            key = tuple(sorted(params.items()))
            groups[key].append(path)
            values[key] = params
            where.setdefault(key, offset)
    per_path = defaultdict(int)
    for key in groups:
        per_path[values[key]["path"]] += 1
    found = []
    for key, paths in sorted(groups.items(), key=lambda item: (where[item[0]], -len(item[1]))):
        params = values[key]
        if per_path[params["path"]] > MAX_GROUPS:
            continue
        verb = "Add" if "after" in params or "comment" in params else "Set"
        value = params["value"]
        title = f"{verb} {params['path']} = {value}" if len(value) <= 30 and "\n" not in value else \
            f"{verb} {params['path']}"
        found.append(Candidate("set-binding", params, title, tuple(paths), order=(where[key],),
                               rivals=("set-binding", params["path"]),
                               detail=f"{params['path']} = {params['value']} in the overrideAttrs attrset of "
                                      f"{_plural(len(paths), 'file')}."))
    return found


# --- metadata-rev ---------------------------------------------------------------------------


def _numbers(doc) -> list[int]:
    return [int(match.group(1)) for _, match in _markers(doc, StepOutput())]


def propose_metadata_revs(state: State, setting: Setting) -> list[Candidate]:
    bumped: dict[str, list[tuple[int, int]]] = {}
    inserted: dict[str, list[int]] = {}
    for path, target_path in _nix_pairs(state):
        if b".metadata-rev" not in (state.comparison.target_read(target_path) or b""):
            continue
        doc, target_doc = state.doc(path), state.target_doc(target_path)
        if doc is None or target_doc is None:
            continue
        before, after = _numbers(doc), _numbers(target_doc)
        if before and len(before) == len(after) and before != after:
            bumped[path] = list(zip(before, after))
        elif not before and after:
            inserted[path] = after
    found = []
    if bumped:
        pairs = [pair for pairs in bumped.values() for pair in pairs if pair[0] != pair[1]]
        if all(new == old + 1 for old, new in pairs):
            groups = {(): sorted(bumped)}
        else:
            groups = defaultdict(list)
            for path, pairs_of_file in sorted(bumped.items()):
                values = {new for _, new in pairs_of_file}
                if len(values) == 1:
                    groups[(("value", values.pop()),)].append(path)
        for key, paths in sorted(groups.items(), key=lambda item: -len(item[1])):
            params = dict(key)
            params["missing"] = "skip"
            title = f"Set .metadata-rev to {params['value']}" if "value" in params else "Bump .metadata-rev"
            what = f"set to {params['value']}" if "value" in params else "bumped by one"
            found.append(Candidate("metadata-rev", params, title, tuple(paths), order=(paths[0],),
                                   rivals=("metadata-rev",),
                                   detail=f"The .metadata-rev marker of {_plural(len(paths), 'file')} {what}, so the "
                                          "catalog republishes the rebuilt variants."))
    if inserted:
        starts = {numbers[0] for numbers in inserted.values()}
        params = {"missing": "insert"}
        if len(starts) == 1:
            params["start"] = starts.pop()
        paths = tuple(sorted(inserted))
        found.append(Candidate("metadata-rev", params, "Add a .metadata-rev marker", paths, order=(paths[0],),
                               detail=f"{_plural(len(paths), 'file')} without a .metadata-rev marker get one."))
    return found
