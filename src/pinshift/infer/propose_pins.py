"""Candidates for the pin kinds: pin-swap (a fetcher's revision replaced) and pin-nixpkgs (a pinned nixpkgs added).

pin-swap: a hunk inside a revision a fetcher names (pin-swap's own `pin_sites`) whose TARGET
text is a full revision. `old` is abbreviated to 7 hex digits when no other revision written
in the files starts with them (more digits otherwise), `new` is TARGET's full revision. The
fetchers' hashes say `hash`: TARGET dropped them ("remove"), wrote one value (that value), or
left them ("keep", the default). The old revision also replaced in comments or other strings
turns on `include-comments` / `include-strings`.

pin-nixpkgs: a Flox function-argument file whose TARGET imports nixpkgs in its top `let`
(`nixpkgs_pinned = import (builtins.fetchTarball { url = ...; }) { config = ...; };`). The
parameters are read off TARGET's binding: its name, revision, url, hash, `config` and
`overlays` (indentation taken off as the step puts it on), the comment above it, the new
function head; nixpkgs' own arguments the file used (`config`) are mapped to `name.config`.
Files that differ in any of these make separate steps.
"""

from __future__ import annotations

import re
from collections import defaultdict

from pinshift import languages
from pinshift.infer.candidates import Candidate, Setting
from pinshift.infer.state import State
from pinshift.migrations.pin_swap import pin_sites
from pinshift.nixpkgs.nar import parse_sha256
from pinshift.syntax.queries import STRING_TYPES, fetcher_calls, functions, string_value, unwrap, walk

_FULL = re.compile(rb"[0-9a-fA-F]{40}\Z")
_HEXWORD = re.compile(rb"(?<![0-9A-Za-z_])[0-9a-fA-F]{7,40}(?![0-9A-Za-z_])")
_ARCHIVE = re.compile(r"/archive/([0-9a-fA-F]{40})\.")
DEFAULT_URL = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz"
DEFAULT_SIGNATURE = "{ pkgs ? import <nixpkgs> {} }"
NOT_IN_PACKAGE_SET = ("config", "overlays", "crossOverlays", "system", "localSystem", "crossSystem")


def _nix_pairs(state: State):
    for path, target_path in state.pairs():
        if languages.language_for(path) == "nix" and languages.language_for(target_path) == "nix":
            yield path, target_path


# --- pin-swap -------------------------------------------------------------------------------


def abbreviation(old: str, written: set[str]) -> str:
    """The shortest prefix of `old` (7 digits at least) that no other revision in `written` starts with.

        >>> abbreviation("6a030d535719c5190187c4cec156f335e95e3211", {"6a030d5ffff"})
        '6a030d53'
    """
    others = {w for w in written if not old.startswith(w) and not w.startswith(old)}
    for length in range(7, 41):
        prefix = old[:length]
        if not any(w.startswith(prefix) for w in others):
            return prefix
    return old


def written_revisions(state: State, setting: Setting, prefix: str) -> set[str]:
    """Every hex word starting with `prefix` in the Nix files the recipe covers (lower case)."""
    found = set()
    paths = [p for p in state.paths() if languages.language_for(p) == "nix"]
    state.files.prefetch(paths)
    needle = prefix.encode()
    for path in paths:
        data = state.read(path)
        if data is None or needle not in data.lower():
            continue
        found.update(m.group(0).decode().lower() for m in _HEXWORD.finditer(data)
                     if m.group(0).lower().startswith(needle))
    return found


def _swaps(state: State, path: str, target_path: str) -> list[tuple[str, str, object]]:
    """(old revision, TARGET's full revision, fetcher call) for each fetcher revision TARGET replaced."""
    doc = state.doc(path)
    target = state.comparison.target_read(target_path)
    if doc is None or target is None:
        return []
    found = []
    sites = list(pin_sites(doc))
    for hunk in state.hunks(path, target_path):
        for site in sites:
            if site.start <= hunk.start and hunk.end <= site.end and hunk.start < hunk.end:
                new = target[hunk.new_start - (hunk.start - site.start) : hunk.new_end + (site.end - hunk.end)]
                if _FULL.match(new) and new.decode().lower() != site.rev.lower():
                    found.append((site.rev.lower(), new.decode(), site.call))
    return found


def _hash_mode(state: State, path: str, target_path: str, calls: list) -> str | None:
    """What TARGET did to the swapped fetchers' hashes: "keep", "remove", a value; None when they disagree."""
    doc, target_doc = state.doc(path), state.target_doc(target_path)
    if doc is None or target_doc is None:
        return None
    before, after = fetcher_calls(doc), fetcher_calls(target_doc)
    if len(before) != len(after):
        return None
    modes = set()
    for old_call, new_call in zip(before, after):
        if not any(old_call.node == c.node for c in calls):
            continue
        old_hashes, new_hashes = old_call.hashes, new_call.hashes
        if old_hashes and not new_hashes:
            modes.add("remove")
        elif new_hashes:
            texts = {string_value(target_doc, v) for v in new_hashes.values() if v.type in STRING_TYPES}
            values = {t.decode() for t in texts if t is not None}
            old_texts = {string_value(doc, v) for v in old_hashes.values() if v.type in STRING_TYPES}
            if len(values) == 1 and texts != old_texts and parse_sha256(next(iter(values))) is not None:
                modes.add(next(iter(values)))
            else:
                modes.add("keep")
        else:
            modes.add("keep")
    return modes.pop() if len(modes) == 1 else None


def _also_replaced(state: State, path: str, target_path: str, old: str, new: str) -> set[str]:
    """"include-comments"/"include-strings" when TARGET also replaced the old revision in a comment or another string."""
    doc = state.doc(path)
    if doc is None:
        return set()
    sites = [(s.start, s.end) for s in pin_sites(doc)]
    found = set()
    for hunk in state.hunks(path, target_path):
        if any(s <= hunk.start and hunk.end <= e for s, e in sites) or not hunk.old or not hunk.new:
            continue
        text, replaced = hunk.old.decode("utf-8", "replace").lower(), hunk.new.decode("utf-8", "replace").lower()
        if len(text) >= 7 and old.startswith(text) and new.lower().startswith(replaced) and len(replaced) == len(text):
            node = doc.root.descendant_for_byte_range(hunk.start, hunk.end)
            if node is not None and node.type == "comment":
                found.add("include-comments")
            elif node is not None and node.type == "string_fragment":
                found.add("include-strings")
    return found


def propose_pin_swaps(state: State, setting: Setting) -> list[Candidate]:
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    calls: dict[tuple[str, str, str], list] = defaultdict(list)
    targets: dict[str, str] = {}
    for path, target_path in _nix_pairs(state):
        for old, new, call in _swaps(state, path, target_path):
            if path not in groups[(old, new)]:
                groups[(old, new)].append(path)
            calls[(old, new, path)].append(call)
            targets[path] = target_path
    found = []
    for (old, new), paths in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        params: dict = {"old": abbreviation(old, written_revisions(state, setting, old[:7])), "new": new}
        modes = {_hash_mode(state, p, targets[p], calls[(old, new, p)]) for p in paths}
        if len(modes) == 1 and next(iter(modes)) not in (None, "keep"):
            params["hash"] = next(iter(modes))
        extras = set().union(*(_also_replaced(state, p, targets[p], old, new) for p in paths))
        for key in sorted(extras):
            params[key] = True
        what = "nixpkgs" if any("nixpkgs" in (state.read(p) or b"").decode("utf-8", "replace") for p in paths[:1]) \
            else "the fetchers"
        title = f"Pin {what} to {new[:7]}" if what == "nixpkgs" else f"Swap revision {old[:7]} for {new[:7]}"
        detail = f"{old} -> {new} in the fetchers of {len(paths)} file{'s' if len(paths) != 1 else ''}."
        found.append(Candidate("pin-swap", params, title, tuple(paths), order=(paths[0],), detail=detail,
                               rivals=("pin-swap", old)))
    return found


# --- pin-nixpkgs ----------------------------------------------------------------------------


def _top(doc):
    node = doc.root.child_by_field_name("expression") or next(
        (c for c in doc.root.named_children if c.type != "comment"), None)
    return unwrap(node)


def _unindent(doc, binding, value) -> str:
    """The value's source as pin-nixpkgs takes it: lines after the first lose the binding line's indentation."""
    text = doc.text(value).decode("utf-8", "surrogateescape")
    line_start = doc.data.rfind(b"\n", 0, binding.start_byte) + 1
    indent = doc.data[line_start : binding.start_byte].decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    return "\n".join([lines[0]] + [line[len(indent):] if line.startswith(indent) else line for line in lines[1:]])


def comment_above(doc, node) -> str | None:
    """The text of a whole-line `# comment` right above the line `node` starts on (None: no such line)."""
    line_start = doc.data.rfind(b"\n", 0, node.start_byte) + 1
    if line_start == 0 or doc.data[line_start : node.start_byte].strip():
        return None
    above = doc.data.rfind(b"\n", 0, line_start - 1) + 1
    line = doc.data[above : line_start].strip()
    if not line.startswith(b"#"):
        return None
    comment = doc.root.descendant_for_byte_range(above + doc.data[above:line_start].index(b"#"), line_start - 1)
    if comment is None or comment.type != "comment":
        return None
    return line[1:].strip().decode("utf-8", "surrogateescape") or None


def pin_nixpkgs_params(state: State, path: str, target_path: str) -> dict | None:
    """The pin-nixpkgs params that make `path` (a Flox-args file) into TARGET's pinned file; None if it is not one."""
    doc, target_doc = state.doc(path), state.target_doc(target_path)
    if doc is None or target_doc is None or not hasattr(doc, "root"):
        return None
    before, after = _top(doc), _top(target_doc)
    if before is None or after is None or before.type != "function_expression" or after.type != "function_expression":
        return None
    if before.child_by_field_name("formals") is None:
        return None
    body = unwrap(after.child_by_field_name("body"))
    if body is None or body.type != "let_expression":
        return None
    for call in fetcher_calls(target_doc):
        binding = call.node
        while binding is not None and binding.type != "binding":
            binding = binding.parent
        if binding is None or binding.parent is None or binding.parent.parent != body:
            continue
        name = target_doc.text(binding.child_by_field_name("attrpath")).decode()
        if name.encode() in doc.data or call.url is None:
            continue
        url = (string_value(target_doc, call.url) or b"").decode("utf-8", "surrogateescape")
        found = _ARCHIVE.search(url)
        if found is None:
            continue
        params: dict = {"rev": found.group(1)}
        if name != "nixpkgs_pinned":
            params["name"] = name
        template = url.replace(found.group(1), "{rev}")
        if template != DEFAULT_URL:
            params["url"] = template
        for key in ("sha256", "hash"):
            node = call.args.get(key)
            value = string_value(target_doc, node) if node is not None and node.type in STRING_TYPES else None
            if value is not None:
                params["hash"] = value.decode()
        application = unwrap(binding.child_by_field_name("expression"))
        argument = unwrap(application.child_by_field_name("argument")) if application.type == "apply_expression" \
            else None
        if argument is not None and argument.type == "attrset_expression":
            for item in argument.named_children[0].named_children if argument.named_children else ():
                if item.type != "binding":
                    continue
                key = target_doc.text(item.child_by_field_name("attrpath")).decode()
                if key in ("config", "overlays"):
                    params[key] = _unindent(target_doc, item, item.child_by_field_name("expression"))
        head = target_doc.data[after.start_byte : next(c for c in after.children if c.type == ":").start_byte]
        signature = head.decode("utf-8", "surrogateescape").strip()
        if signature != DEFAULT_SIGNATURE:
            params["signature"] = signature
        used = {f.name for f in functions(doc)[0].formals} if functions(doc) else set()
        mapping = {f: f"{name}.{f}" for f in sorted(used & set(NOT_IN_PACKAGE_SET))
                   if f"{name}.{f}".encode() in target_doc.data}
        if mapping:
            params["map"] = mapping
        comment = comment_above(target_doc, binding)
        if comment:
            params["comment"] = comment
        if _imports_siblings(doc, target_doc):
            params["companions"] = "import"
        return params
    return None


def _sibling_calls(doc) -> dict[bytes, tuple[bytes, bool]]:
    """Relative `.nix` path -> (how it is called, whether with an empty argument set), for each
    `import ./x.nix ARGS` / `callPackage ./x.nix ARGS` of the file."""
    found = {}
    for call in walk(doc.root, "apply_expression"):
        inner, arguments = unwrap(call.child_by_field_name("function")), unwrap(call.child_by_field_name("argument"))
        if inner is None or inner.type != "apply_expression" or arguments is None or arguments.type != "attrset_expression":
            continue
        caller, path = unwrap(inner.child_by_field_name("function")), unwrap(inner.child_by_field_name("argument"))
        if caller is None or path is None or caller.type != "variable_expression" or path.type != "path_expression":
            continue
        text = doc.text(path)
        if text.startswith((b"./", b"../")) and text.endswith(b".nix"):
            found[text] = (doc.text(caller), not arguments.named_children)
    return found


def _imports_siblings(doc, target_doc) -> bool:
    """Whether TARGET imports with no arguments a sibling recipe the file passed Flox's arguments to
    (`import ./pytorch-….nix { inherit lib …; }` or `callPackage ./pytorch-….nix { }` -> `import ./pytorch-….nix {}`)."""
    before, after = _sibling_calls(doc), _sibling_calls(target_doc)
    return any(after.get(path) == (b"import", True) and (caller != b"import" or not empty)
               for path, (caller, empty) in before.items())


def propose_pin_nixpkgs(state: State, setting: Setting) -> list[Candidate]:
    """One candidate per group of files with the same pin; `map` and `companions` only say how a file's own
    arguments and sibling calls are converted, so files that differ only there (one without a `map` entry
    because it never uses `config`) share a step, with the union of both."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    values: dict[tuple, dict] = {}
    for path, target_path in _nix_pairs(state):
        params = pin_nixpkgs_params(state, path, target_path)
        if params is None:
            continue
        key = tuple(sorted((k, v) for k, v in params.items() if k not in ("map", "companions")))
        merged = values.get(key)
        if merged is not None and any(merged.get("map", {}).get(f, v) != v for f, v in params.get("map", {}).items()):
            key += (("map", tuple(sorted(params["map"].items()))),)  # the same formal mapped otherwise
            merged = values.get(key)
        if merged is None:
            merged = values[key] = {k: v for k, v in params.items() if k not in ("map", "companions")}
        if params.get("map"):
            merged["map"] = dict(sorted({**merged.get("map", {}), **params["map"]}.items()))
        if params.get("companions"):
            merged["companions"] = params["companions"]
        groups[key].append(path)
    found = []
    for key, paths in sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0])):
        params = values[key]
        title = f"Pin nixpkgs {params['rev'][:7]} instead of taking Flox's arguments"
        detail = (f"{len(paths)} recipe{'s' if len(paths) != 1 else ''} import nixpkgs {params['rev']} as "
                  f"{params.get('name', 'nixpkgs_pinned')} instead of taking Flox's function arguments; every use "
                  "of a former argument names the pinned set.")
        found.append(Candidate("pin-nixpkgs", params, title, tuple(paths), order=(paths[0],), detail=detail,
                               rivals=("pin-nixpkgs",)))
    return found
