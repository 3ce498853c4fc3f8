"""Candidates for the file-level kinds, from git's rename and copy detection: rename-files, clone-files, remove-files.

A renamed file's old and new names differ in one stretch of name tokens
(`pytorch-python312-cpu-avx2.nix` -> `pytorch-python311-cpu-avx2.nix`: `python312` -> `python311`);
files renamed the same way make one rename-files step. A file git reports as a copy of a file
that is still there is a clone: the same name change, and the bindings whose values differ
from the source's (other than the clone's own name) become clone-files `values`. Files TARGET
no longer has make one remove-files step, selected by globs of their names.
"""

from __future__ import annotations

from collections import defaultdict

from pinshift.globs import matches
from pinshift.infer.candidates import Candidate, Setting, short
from pinshift.infer.groups import exact_globs, group_globs
from pinshift.infer.names import name_change
from pinshift.infer.state import State
from pinshift.migrations._file_names import Naming, stem
from pinshift.syntax.queries import bindings

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
        title = f"Rename the files from {change[0]} to {change[1]}" if not change[2] else \
            f"Rename {first}" + (" and the like" if len(moves) > 1 else "")
        intended = tuple(p for move in moves for p in move)
        detail = (f"{_plural(len(moves), 'file')} renamed ({moves[0][0]} -> {moves[0][1]}"
                  f"{' and the like' if len(moves) > 1 else ''}); each file's references to its own name in "
                  "strings and comments (pname, the header comment) follow it.")
        found.append(Candidate("rename-files", params, title, intended, order=(moves[0][0],), detail=detail))
    return found


def clone_values(state: State, source: str, target_path: str) -> dict[str, str]:
    """Binding path -> TARGET's value for the bindings a clone has of its own: those that differ from its
    source's, in TARGET and now, beyond the clone's name. A binding TARGET changed in the source too (a
    description every file got) is not the clone's own: a later step makes it in both."""
    clone = state.target_doc(target_path)
    if clone is None or not hasattr(clone, "root"):
        return {}
    old_stem, new_stem = stem(source), stem(target_path)
    sources = [doc for doc in (state.doc(source), state.target_doc(source)) if doc is not None and hasattr(doc, "root")]
    if not sources:
        return {}
    mine = _values(clone)
    theirs = [_values(doc) for doc in sources]
    differing = {path: text for path, text in mine.items()
                 if all(path in other and other[path] != text and other[path].replace(old_stem, new_stem) != text
                        for other in theirs)}
    return {path: text for path, text in sorted(differing.items())
            if not any(other.startswith(path + ".") for other in differing)}


def _values(doc) -> dict[str, str]:
    """Dotted binding path -> its value's source, for paths bound to one value only."""
    found: dict[str, list[str]] = defaultdict(list)
    for binding in bindings(doc):
        if None not in binding.path:
            found[binding.dotted].append(doc.text(binding.value).decode("utf-8", "surrogateescape"))
    return {path: texts[0] for path, texts in found.items() if len(set(texts)) == 1}


def propose_clones(state: State, setting: Setting) -> list[Candidate]:
    groups: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    for target_path, source in sorted(state.comparison.copied.items()):
        if not state.has(source) or state.has(target_path) or _directory(source) != _directory(target_path):
            continue
        change = name_change(source.rpartition("/")[2], target_path.rpartition("/")[2])
        if change is None:
            continue
        values = clone_values(state, source, target_path)
        groups[(change, tuple(sorted(values.items())))].append((source, target_path))
    found = []
    for (change, values), copies in sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0])):
        params = _params(change)
        sources = {source for source, _ in copies}
        naming = Naming(*change)
        would = {p for p in state.paths() if matches(p, setting.recipe_files) and naming.new_name(p.rpartition("/")[2])}
        if would != sources:
            others = set(state.paths()) - sources
            params["select"] = list(group_globs(sources, others) or exact_globs(sources))
        if values:
            params["values"] = dict(values)
        title = f"Add {change[1]} variants copied from the {change[0]} ones" if not change[2] else \
            f"Add {len(copies)} copies of {short(copies[0][0].rpartition('/')[2])} and the like"
        intended = tuple(p for copy in copies for p in copy)
        detail = (f"{_plural(len(copies), 'new file')}, each a copy of its {change[0]} file named {change[1]}"
                  + (f", with {', '.join(f'{k} = {short(v)}' for k, v in values)}" if values else "") + ".")
        found.append(Candidate("clone-files", params, title, intended, order=(copies[0][0],), detail=detail))
    return found


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
