"""Candidates for the file-level kinds: rename-files, clone-files, remove-files.

A renamed file's old and new names differ in one stretch of name tokens
(`pytorch-python312-cpu-avx2.nix` -> `pytorch-python311-cpu-avx2.nix`: `python312` -> `python311`);
files renamed the same way make one rename-files step. A new file (git's copy, or a file git
calls added) is a clone of the file of its directory whose name one change turns into its own,
the smallest change first, then the most alike (at least half its lines): `cuda12_9` -> `cuda12_8`.
The innermost bindings whose values differ from the source's (other than the clone's own name),
code or a word-like string, become clone-files `values`; text is a later replace-in-strings'.
Clones of one name change and the same values make one step. Files TARGET no longer has make one
remove-files step, selected by globs of their names.
"""

from __future__ import annotations

import difflib
from collections import defaultdict

from pinshift.files.globs import matches
from pinshift.infer.candidates import Candidate, Setting, short
from pinshift.infer.group_globs import describe, exact_globs, group_globs
from pinshift.infer.names import change_words, inserted_text, name_change, token_count
from pinshift.infer.state import State
from pinshift.migrations._file_names import Naming, stem
from pinshift.migrations.replace_in_strings import bound_strings
from pinshift.syntax.queries import STRING_TYPES, bindings, unwrap

def _directory(path: str) -> str:
    return path.rpartition("/")[0]


def _params(change: tuple[str, str, bool]) -> dict:
    params = {"from": change[0], "to": change[1]}
    if change[2]:
        params["regex"] = True
    return params


def propose_renames(state: State, setting: Setting) -> list[Candidate]:
    groups: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    for target_path, origin in sorted(state.comparison.renamed.items()):
        if not state.has(origin) or state.has(target_path) or _directory(origin) != _directory(target_path):
            continue
        change = name_change(origin.rpartition("/")[2], target_path.rpartition("/")[2])
        if change is not None:
            groups[change].append((origin, target_path))
    found = []
    for change, moves in sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0])):
        params = _params(change)
        first = f"{moves[0][0].rpartition('/')[2]} to {moves[0][1].rpartition('/')[2]}"
        words, kind = change_words(change)
        title = {"replace": f"Rename the files from {change[0]} to {change[1]}",
                 "prefix": f"Prefix {_plural(len(moves), 'file name')} with {inserted_text(change)}",
                 "insert": f"Add {words} to {_plural(len(moves), 'file name')}"}[kind] if len(moves) > 1 else \
            f"Rename {first}"
        intended = tuple(p for move in moves for p in move)
        more = f" and {len(moves) - 1} more" if len(moves) > 1 else ""
        detail = (f"{_plural(len(moves), 'file')} renamed ({moves[0][0]} -> {moves[0][1]}{more}); each file's "
                  "references to its own name in strings and comments (pname, the header comment) follow it.")
        found.append(Candidate("rename-files", params, title, intended, order=(moves[0][0],), detail=detail))
    return found


MAX_SOURCES = 16  # candidate sources compared by content for each new file (the smallest name changes)
CLONE_SIMILAR = 0.5  # lines alike (after the name change) for a file to be a copy of another, as git's copies
MAX_PAIRS = 200_000  # new files x files of their directories beyond which only git's copy source is looked at
MAX_VALUE_TEXT = 40  # a string value longer than this, or with spaces, is text: later steps replace in it


def clone_values(state: State, source: str, target_path: str) -> dict[str, str]:
    """Binding path -> TARGET's value for the bindings a clone has of its own: those that differ from its
    source's, in TARGET and now, beyond the clone's name. A binding TARGET changed in the source too (a
    description every file got) is not the clone's own: a later step makes it in both. Only the innermost
    of nested ones (`cudaPackages` in the overlay, not `overlays` or `nixpkgs_pinned` around it), and only
    values that are code or a short word-like string (`"90"`, `"sm_90"`): text with spaces is left to a
    later replace-in-strings, which says the change in words."""
    clone = state.target_doc(target_path)
    if clone is None or not hasattr(clone, "root"):
        return {}
    old_stem, new_stem = stem(source), stem(target_path)
    sources = [doc for doc in (state.doc(source), state.target_doc(source)) if doc is not None and hasattr(doc, "root")]
    if not sources:
        return {}
    mine = _values(clone)
    theirs = [_values(doc) for doc in sources]
    differing = {path: value for path, value in mine.items()
                 if all(path in other and other[path][0] != value[0]
                        and other[path][0].replace(old_stem, new_stem) != value[0] for other in theirs)}
    innermost = {path: value for path, value in differing.items()
                 if not any(other != path and _holds(value[1], inner[1]) for other, inner in differing.items())}
    return {path: text for path, (text, node) in sorted(innermost.items()) if _code_or_word(node, text)}


def _holds(outer, inner) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte and outer != inner


def _code_or_word(node, text: str) -> bool:
    """A value clone-files should set: code (not a string, nor strings joined with `+`), or a one-line string
    without spaces or `${`."""
    node = unwrap(node)
    if node.type not in STRING_TYPES:
        return not list(bound_strings(node))
    inner = text[1:-1] if node.type == "string_expression" else text[2:-2]
    return len(inner) <= MAX_VALUE_TEXT and not any(c.isspace() for c in inner) and "${" not in inner


def _values(doc) -> dict[str, tuple[str, object]]:
    """Dotted binding path -> (its value's source, the value node), for paths bound to one value only."""
    found: dict[str, list[tuple[str, object]]] = defaultdict(list)
    for binding in bindings(doc):
        if None not in binding.path:
            found[binding.dotted].append((doc.text(binding.value).decode("utf-8", "surrogateescape"), binding.value))
    return {path: values[0] for path, values in found.items() if len({text for text, _ in values}) == 1}


def _change_size(change: tuple[str, str, bool]) -> int:
    """How much of a name a change touches: name tokens of `from` (a regex counts as large)."""
    return 99 if change[2] else token_count(change[0])


def _similarity(state: State, source: str, target_path: str) -> float:
    """How alike the source (with the clone's name) and TARGET's new file are, line by line."""
    before, after = state.read(source), state.comparison.target_read(target_path)
    if before is None or after is None:
        return 0.0
    before = before.replace(stem(source).encode(), stem(target_path).encode())
    return difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False).ratio()


def clone_source(state: State, target_path: str, by_directory: dict, search: bool = True) -> tuple[str, tuple] | None:
    """(source, name change) for a new TARGET file: among the current files of its directory whose name one
    change turns into its name, the smallest changes first, then the one most alike it (git's pick on a tie),
    at least half its lines alike (a new recipe of another kind is not a copy).
    Without `search` (a very large commit), only the file git says it was copied from."""
    directory, name = _directory(target_path), target_path.rpartition("/")[2]
    git_pick = state.comparison.copied.get(target_path)
    if search:
        looked_at = by_directory.get(directory, ())
    else:
        looked_at = [git_pick] if git_pick is not None and state.has(git_pick) else []
    options = []
    for path in looked_at:
        change = name_change(path.rpartition("/")[2], name)
        if change is not None:
            options.append((_change_size(change), path, change))
    if not options:
        return None
    options.sort(key=lambda o: (o[0], o[1] != git_pick, o[1]))
    looked = 0
    for size in sorted({o[0] for o in options}):
        same = [o for o in options if o[0] == size][: max(1, MAX_SOURCES - looked)]
        looked += len(same)
        scored = [(round(_similarity(state, o[1], target_path), 3), o[1] == git_pick, o) for o in same]
        similarity, _, best = max(scored, key=lambda item: item[:2])
        if similarity >= CLONE_SIMILAR:
            return best[1], best[2]
        if looked >= MAX_SOURCES:
            break
    return None  # nothing of its directory is alike enough: a new file, not a copy


def propose_clones(state: State, setting: Setting) -> list[Candidate]:
    comparison = state.comparison
    new = [p for p in sorted(set(comparison.copied) | comparison.added) if not state.has(p)]
    by_directory: dict[str, list[str]] = defaultdict(list)
    for path in state.paths():
        by_directory[_directory(path)].append(path)
    groups: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    search = sum(len(by_directory.get(_directory(p), ())) for p in new) <= MAX_PAIRS
    for target_path in new:
        found = clone_source(state, target_path, by_directory, search)
        if found is None:
            continue
        source, change = found
        values = clone_values(state, source, target_path)
        groups[(change, tuple(sorted(values.items())))].append((source, target_path))
    found_candidates = []
    for (change, values), copies in sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0])):
        params = _params(change)
        sources = {source for source, _ in copies}
        targets = {target for _, target in copies}
        existing = (set(state.paths()) | set(new)) - targets  # what the step may see when it runs
        naming = Naming(*change)
        would = {p for p in existing if matches(p, setting.recipe_files) and naming.new_name(p.rpartition("/")[2])}
        if would != sources:
            select = describe(sources, existing - sources)
            if select is None:
                continue  # no few globs say which files are copied: residue rather than a list of dozens
            params["select"] = list(select)
        if values:
            params["values"] = dict(values)
        intended = tuple(p for copy in copies for p in copy)
        found_candidates.append(Candidate("clone-files", params, clone_title(change, copies), intended,
                                          order=(copies[0][0],), detail=clone_detail(change, copies, values)))
    return found_candidates


def clone_title(change: tuple[str, str, bool], copies: list[tuple[str, str]]) -> str:
    """`Add 52 cuda12_8 variants of the cuda12_9 recipes`, `Add 3 copies whose names start with pkg-`, in words."""
    words, kind = change_words(change)
    if len(copies) == 1:
        name = copies[0][1].rpartition("/")[2]
        return f"Add {name}, copied from the {change[0]} one" if kind == "replace" else \
            f"Add {name}, a copy of {copies[0][0].rpartition('/')[2]}"
    if kind == "replace":
        return f"Add {len(copies)} {change[1]} variants of the {change[0]} recipes"
    if kind == "prefix":
        return f"Add {len(copies)} copies whose names start with {inserted_text(change)}"
    return f"Add {len(copies)} copies whose names gain {words}"


def clone_detail(change: tuple[str, str, bool], copies: list[tuple[str, str]], values) -> str:
    first = f"{copies[0][0].rpartition('/')[2]} -> {copies[0][1].rpartition('/')[2]}"
    more = f" and {len(copies) - 1} more" if len(copies) > 1 else ""
    what = _plural(len(copies), "new file")
    set_values = f"; in each copy {', '.join(f'{k} = {short(v)}' for k, v in values)}" if values else ""
    return (f"{what} copied from an existing recipe ({first}{more}), its own name in its strings and comments"
            f"{set_values}.")


def propose_removals(state: State, setting: Setting) -> list[Candidate]:
    removed = sorted(p for p in state.comparison.removed if state.has(p))
    if not removed:
        return []
    others = set(state.paths()) - set(removed)
    select = group_globs(removed, others) or exact_globs(removed)
    what = f"{len(removed)} files" if len(removed) != 1 else removed[0]
    shown = ", ".join(glob.rpartition("/")[2] for glob in select)
    title = f"Remove {what}" + (f" ({shown})" if len(removed) != 1 and len(select) <= 2 else "")
    detail = f"TARGET no longer has {_plural(len(removed), 'file')}: {', '.join(removed[:3])}" + \
        (" and more." if len(removed) > 3 else ".")
    return [Candidate("remove-files", {"select": list(select)}, title, tuple(removed), order=(removed[0],),
                      detail=detail)]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"
