"""The folder list is the architecture: one package per part of the flow, no import cycle, each package's
imports what its docstring says (docs/architecture.md).

Read from the source with `ast`, every import counted: at module level, inside functions, and under
`if TYPE_CHECKING:` (an import only a type checker runs is still a dependency a reader must follow).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"pinshift": ROOT / "src" / "pinshift", "pinshift.migrations": ROOT / "migrations",
           "pinshift.bundled_recipes": ROOT / "recipes"}
TOP_LEVEL = 6  # modules beside the packages in src/pinshift, __init__.py included
LAZY = "# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py)."


def modules() -> dict[str, Path]:
    found = {}
    for package, base in SOURCES.items():
        for path in base.rglob("*.py"):
            parts = [package, *path.relative_to(base).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = modules()


def _resolve(name: str) -> str | None:
    """The module of ours `name` is, or is inside (`pinshift.files.tree.DirectoryTree` -> `pinshift.files.tree`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported module of ours, line, inside a function) for every import in `module`."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    in_function = {id(node) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for node in ast.walk(fn)}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            names = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in MODULES else origin for alias in node.names]
        for name in names:
            target = _resolve(name) if name.startswith("pinshift") else None
            if target and target != module:
                found.append((target, node.lineno, id(node) in in_function))
    return found


GRAPH = {module: imports(module) for module in MODULES}


def part(module: str) -> str:
    """The part a module belongs to: its package under pinshift (`pinshift.files.tree` -> `files`), a top-level
    module itself (`pinshift.edits` -> `edits`), `migrations` for the bundled step kinds, `pinshift` for the root."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "pinshift"


def test_no_import_cycle_between_modules():
    """Tarjan's strongly connected components over every import: each component is one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    counter = 0
    for start in GRAPH:  # iterative Tarjan: the graph is small, but recursion is not what this suite teaches
        if start in index:
            continue
        work = [(start, iter(GRAPH[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target, _, _ in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(GRAPH[target])))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    assert cycles == []


def test_the_source_tree_has_few_modules_beside_its_packages():
    top = sorted(p.name for p in SOURCES["pinshift"].glob("*.py"))
    assert len(top) <= TOP_LEVEL, top


def _allowed(docstring: str) -> set[str]:
    match = re.search(r"May import: (.*?)(?:\n\n|\Z)", docstring, re.S)
    assert match, "the docstring says what the package may import ('May import: ...')"
    text = match.group(1)
    if text.startswith("any part of pinshift"):
        return {"*"}
    if text.startswith("nothing of pinshift"):
        return set()
    return {name.split(".")[1] for name in re.findall(r"pinshift\.\w+", text)}


PACKAGES = sorted({part(m) for m in MODULES if MODULES[m].name == "__init__.py" and m != "pinshift"} - {"bundled_recipes"})


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_only_what_its_docstring_allows(package):
    init = SOURCES["pinshift.migrations"] / "__init__.py" if package == "migrations" else \
        SOURCES["pinshift"] / package / "__init__.py"
    docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert len(docstring.splitlines()[0]) > 20, f"{package}: the first line says what the part does"
    allowed = _allowed(docstring)
    if "*" in allowed:
        return
    wrong = sorted({f"{source} -> {target} (line {line})" for source in MODULES if part(source) == package
                    for target, line, _ in GRAPH[source]
                    if part(target) not in allowed | {package}
                    and target != "pinshift"})  # the root package: its version and where it is installed
    assert wrong == []


def test_a_module_with_imports_inside_functions_says_why():
    """Lazy imports stay for start-up time (tests/test_import_cost.py), with the comment that says so; the
    graph above has no cycle, so none of them hides one."""
    missing = sorted(str(MODULES[m].relative_to(ROOT)) for m, found in GRAPH.items()
                     if any(inside for _, _, inside in found) and LAZY not in MODULES[m].read_text())
    assert missing == []


def test_the_architecture_page_names_every_package():
    page = (ROOT / "docs" / "architecture.md").read_text()
    absent = [package for package in PACKAGES if f"{package}/" not in page]
    assert absent == []


def _section(page: str, package: str) -> str:
    found = re.search(rf"^### `{package}/`\n(.*?)(?=^##)", page, re.S | re.M)
    return found.group(1) if found else ""


def test_the_architecture_page_names_every_module():
    """Each module of src/pinshift by its path (`facts/matrix.py`), or by its name in its package's section
    (`` `matrix` ``, `matrix.py`, `` `propose_*` ``): a reader finds where every module lives from one page."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    absent = []
    for module, path in MODULES.items():
        pieces = module.split(".")
        if len(pieces) < 2 or pieces[1] in ("migrations", "bundled_recipes") or path.name == "__init__.py":
            continue
        if len(pieces) == 2:
            if f"{pieces[1]}.py" not in page:
                absent.append(module)
            continue
        package, name = pieces[1], pieces[-1]
        section = _section(page, package)
        stars = [prefix for prefix in re.findall(r"`(\w+)_\*`", section) if name.startswith(prefix + "_")]
        if not (f"{package}/{name}.py" in page or f"`{name}`" in section or f"{name}.py" in section or stars):
            absent.append(module)
    assert sorted(absent) == []
