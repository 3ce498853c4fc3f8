"""Candidates for the kinds that read other languages: readme-branch-table (Markdown), python-constant (Python).

readme-branch-table: a row TARGET adds to a README's branch table, right below the row it was
cloned from (or a row already there that takes the "this branch" marker from another). `base` and `target` are the branch names in those rows (`{base}`/`{target}` when
they are the branches BASE and TARGET, so the recipe follows the branches it runs on); `columns`
are the cells whose visible text differs from the template row's; `revision` is a full revision
the new row links to and the template row does not. The step itself moves the "this branch"
marker and rewrites the banner, so those changes need no parameter.

python-constant: module-level `NAME = "..."` constants and `assert <expr> == "..."` literals
whose string TARGET changed.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict

from pinshift import languages
from pinshift.infer.candidates import Candidate, Setting
from pinshift.infer.state import State
from pinshift.languages.markdown import plain_text
from pinshift.migrations.readme_branch_table import branch_name, strip_marks

_FULL_HEX = re.compile(rb"(?<![0-9A-Za-z])[0-9a-fA-F]{40}(?![0-9A-Za-z])")


# --- readme-branch-table ----------------------------------------------------------------------


def _branch_column(doc, table) -> int | None:
    for index, cell in enumerate(table.header.cells):
        if "branch" in plain_text(doc.cell_text(cell)).lower():
            return index
    return None


def _visible(doc, cell) -> str:
    return plain_text(strip_marks(doc.cell_text(cell))[0]).strip()


def _marked(doc, row) -> bool:
    return any(strip_marks(doc.cell_text(cell), False)[1].signal for cell in row.cells)


def _rows(doc, table, target_doc, target_table, column: int, setting: Setting):
    """(base name, target name, the row TARGET's cells are compared with, TARGET's row) for this table, or None.

    A row TARGET adds right below the row it was cloned from (compared with that row); else a row both
    have that took the "this branch" marker from another row (compared with its own earlier cells).
    """
    names = [branch_name(doc.cell_text(r.cells[column])) if column < len(r.cells) else "" for r in table.rows]
    target_names = [branch_name(target_doc.cell_text(r.cells[column])) if column < len(r.cells) else ""
                    for r in target_table.rows]
    for index, name in enumerate(target_names):
        if index and name and name not in names and target_names[index - 1] in names:
            base = target_names[index - 1]
            return base, name, table.rows[names.index(base)], target_table.rows[index]
    lost = [n for n, r in zip(names, table.rows) if _marked(doc, r) and n in target_names
            and not _marked(target_doc, target_table.rows[target_names.index(n)])]
    gained = [n for n, r in zip(target_names, target_table.rows) if _marked(target_doc, r) and n in names
              and not _marked(doc, table.rows[names.index(n)])]
    if len(lost) == 1 and len(gained) == 1:
        row = table.rows[names.index(gained[0])]
        return lost[0], gained[0], row, target_table.rows[target_names.index(gained[0])]
    return None


def readme_params(state: State, path: str, target_path: str, setting: Setting) -> dict | None:
    """readme-branch-table params for the row TARGET adds to (or moves the marker to in) this README's branch
    tables (None: there is none)."""
    doc, target_doc = state.doc(path), state.target_doc(target_path)
    if doc is None or target_doc is None or not hasattr(doc, "tables") or len(doc.tables) != len(target_doc.tables):
        return None
    found: dict = {"columns": {}}
    for table, target_table in zip(doc.tables, target_doc.tables):
        column = _branch_column(target_doc, target_table)
        if column is None or _branch_column(doc, table) != column:
            continue
        rows = _rows(doc, table, target_doc, target_table, column, setting)
        if rows is None:
            continue
        base, name, template, row = rows
        if found.setdefault("base", base) != base or found.setdefault("target", name) != name:
            return None
        header = plain_text(target_doc.cell_text(target_table.header.cells[column])).strip()
        if header.lower() != "branch":
            found["branch-column"] = header
        for cell_index, cell in enumerate(row.cells):
            if cell_index == column or cell_index >= len(template.cells) or cell_index >= len(target_table.header.cells):
                continue
            if strip_marks(target_doc.cell_text(cell))[1].whole:
                continue  # a cell saying only "This branch": the marker, moved by the step itself
            old, new = _visible(doc, template.cells[cell_index]), _visible(target_doc, cell)
            if old != new:
                title = plain_text(target_doc.cell_text(target_table.header.cells[cell_index])).strip()
                found["columns"].setdefault(title, new)
        template_raw = doc.data[template.start : template.end]
        for match in _FULL_HEX.finditer(target_doc.data, row.start, row.end):
            if match.group(0) not in template_raw:
                found.setdefault("revision", match.group(0).decode())
    if "base" not in found:
        return None
    params = {"base": "{base}" if found["base"] == setting.branches.get("base") else found["base"],
              "target": "{target}" if found["target"] == setting.branches.get("target") else found["target"]}
    for key in ("revision", "branch-column"):
        if key in found:
            params[key] = found[key]
    if found["columns"]:
        params["columns"] = found["columns"]
    return params


def propose_readme_tables(state: State, setting: Setting) -> list[Candidate]:
    found = []
    for path, target_path in state.pairs():
        if languages.language_for(path) != "markdown":
            continue
        params = readme_params(state, path, target_path, setting)
        if params is not None:
            found.append(Candidate("readme-branch-table", params, "README: add the {target} row to the branch tables"
                                   if params["target"] == "{target}" else
                                   f"README: add the {params['target']} row to the branch tables", (path,),
                                   order=(path,), detail=_readme_detail(params),
                                   templated=("base", "target", "title", "detail")))
    return found


def _readme_detail(params: dict) -> str:
    columns = ", ".join(f"{k} {v}" for k, v in params.get("columns", {}).items())
    return (f"The branch tables get a row for {params['target']}, cloned from the row of {params['base']}"
            + (f" with {columns}" if columns else "") + '; the "this branch" marker and the banner move to it.')


# --- python-constant ----------------------------------------------------------------------------


def _string(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def python_values(source: bytes) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(module-level NAME -> string, [(asserted expression without spaces, string)...]) of a Python file."""
    try:
        text = source.decode("utf-8")
        module = ast.parse(text)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return {}, []
    constants = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            target, value = statement.targets[0].id, statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            target, value = statement.target.id, statement.value
        else:
            continue
        if _string(value) is not None:
            constants[target] = _string(value)
    asserts = []
    for node in ast.walk(module):
        test = node.test if isinstance(node, ast.Assert) else None
        if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
            continue
        for side, literal in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
            if _string(literal) is not None and _string(side) is None:
                expression = ast.get_source_segment(text, side) or ""
                asserts.append(("".join(expression.split()), _string(literal)))
    return constants, asserts


def propose_python_constants(state: State, setting: Setting) -> list[Candidate]:
    groups: dict[tuple, list[str]] = defaultdict(list)
    for path, target_path in state.pairs():
        if languages.language_for(path) != "python":
            continue
        before, after = state.read(path), state.comparison.target_read(target_path)
        constants, asserts = python_values(before or b"")
        new_constants, new_asserts = python_values(after or b"")
        changed = {name: value for name, value in new_constants.items() if constants.get(name, value) != value}
        asserted = {}
        if len(asserts) == len(new_asserts):
            asserted = {expr: value for (expr, old), (new_expr, value) in zip(asserts, new_asserts)
                        if expr == new_expr and old != value}
        if changed or asserted:
            groups[(tuple(sorted(changed.items())), tuple(sorted(asserted.items())))].append(path)
    found = []
    for (constants, asserted), paths in sorted(groups.items(), key=lambda item: item[1][0]):
        params: dict = {}
        if constants:
            params["constants"] = dict(constants)
        if asserted:
            params["asserts"] = dict(asserted)
        names = [name for name, _ in constants] + [expr for expr, _ in asserted]
        shown = ", ".join(f"{k} = {v!r}" for k, v in list(constants) + list(asserted))
        found.append(Candidate("python-constant", params, f"Set {', '.join(names[:3])} in the Python files",
                               tuple(paths), order=(paths[0],), detail=f"{shown} in {len(paths)} Python file{'s' if len(paths) != 1 else ''}."))
    return found
