"""python-constant — set string constants and asserted string literals in Python files (libcst).

A smoke test pins the version it expects: `EXPECTED_TORCH_VERSION = "2.9.1"`
at module level, or `assert torch.__version__ == "2.9.1"` anywhere. This step
rewrites only the characters between the literal's quotes; the quotes, the
prefix, formatting and comments stay as they were. A constant or assertion
that is not found is a warning, as is one whose value is not a plain string
literal (an f-string, a number, a call), which is left alone.

A value may be a fact of the branch, `{facts.version}` (docs/doc-steps.md): what its recipes say after the
steps. A typed `torch.__version__` assertion is checked against the version the recipes build (contradicted:
no branch); a typed constant cannot be checked, and migrate's report names it unchecked.

Parameters:
    constants  table of NAME = new value (module-level `NAME = "..."` or `NAME: str = "..."`)
    asserts    table of expression = new value, for `assert <expression> == "..."`
               (either side of `==`; the expression is compared without spaces)

Example:
    [[steps]]
    kind = "python-constant"
    files = ["tests/**/*.py"]
    [steps.params.constants]
    EXPECTED_TORCH_VERSION = "2.10.0"
    [steps.params.asserts]
    "torch.__version__" = "2.10.0"
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pinshift.edits import Edit
from pinshift.errors import ParamError
from pinshift.steps.kind import Claim, StepContext, StepOutput

if TYPE_CHECKING:  # libcst loads only when a Python file is planned (keeps Nix-only runs light)
    import libcst as cst

    from pinshift.languages.python import PythonDocument

NAME = "python-constant"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): Python files only: no recipe builds anything else.
BUILD_CHANGES = ()
LANGUAGES = ("python",)


@dataclass(frozen=True)
class Params:
    constants: dict[str, str] = field(default_factory=dict)
    asserts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.constants and not self.asserts:
            raise ParamError("constants", "give at least one of 'constants' or 'asserts'")
        for key in ("constants", "asserts"):
            for name, value in getattr(self, key).items():
                if not isinstance(value, str):
                    raise ParamError(key, f"{key}.{name} must be a string (quote it: \"{value}\")")
        for name in self.constants:
            if not name.isidentifier():
                raise ParamError("constants", f"constants.{name} is not a Python name")


def claims(params: Params) -> list[Claim]:
    """Each typed value, for migrate to hold to the branch's facts (docs/doc-steps.md): an assertion on a package's
    `__version__` (`torch.__version__`) states that package's version; a constant states nothing a fact can check,
    and is named unchecked. A value written as `{facts.version}` is the fact itself."""
    found = []
    for expression, value in params.asserts.items():
        if "{facts." in value:
            continue
        package, dot, rest = expression.replace(" ", "").partition(".")
        is_version = dot and rest == "__version__"
        found.append(Claim(f"asserts.{expression}", value, "version" if is_version else None,
                           package.lower() if is_version else ""))
    found += [Claim(f"constants.{name}", value, None) for name, value in params.constants.items()
              if "{facts." not in value]
    return found


def needles(params: Params) -> tuple[bytes, ...]:
    names = list(params.constants) + [expr.rsplit(".", 1)[-1].strip() for expr in params.asserts]
    return tuple(name.encode() for name in names)


def _literal(doc: PythonDocument, node: cst.BaseExpression, new: str) -> bytes | None:
    """The bytes to write between the quotes of `node` so that it spells `new`; None if impossible."""
    import libcst as cst

    if not isinstance(node, cst.SimpleString) or "b" in node.prefix.lower():
        return None
    quote = node.quote
    if "r" in node.prefix.lower():
        if quote[0] in new or new.endswith("\\"):
            return None
        text = new
    else:
        text = new.replace("\\", "\\\\").replace(quote[0], "\\" + quote[0])
    encoding = doc.module.encoding.replace("-sig", "").replace("_sig", "")
    return text.encode(encoding)


def _set(doc: PythonDocument, node: cst.BaseExpression, new: str, what: str, out: StepOutput) -> None:
    start, _ = doc.byte_range(node)
    try:
        replacement = _literal(doc, node, new)
    except UnicodeEncodeError as error:
        character = error.object[error.start]
        out.refuse(start, f"{what}: the file's declared encoding ({doc.module.encoding}) cannot hold {character!r} "
                          f"of {new!r}; the file is left as it was (declare a UTF-8 encoding in it, or choose a value "
                          "that encoding can hold)")
        return
    if replacement is None:
        out.warn(start, f"{what} is not a plain string literal that can spell {new!r}; left alone")
        return
    content_start, content_end = doc.string_content(node)
    if doc.data[content_start:content_end] != replacement:
        out.edits.append(Edit(content_start, content_end, replacement, f"{NAME}: {what} = {new!r}"))


def _assigned(statement: cst.BaseSmallStatement) -> tuple[str, cst.BaseExpression] | None:
    import libcst as cst

    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        if isinstance(target, cst.Name):
            return target.value, statement.value
    if isinstance(statement, cst.AnnAssign) and isinstance(statement.target, cst.Name) and statement.value is not None:
        return statement.target.value, statement.value
    return None


def _compact(code: str) -> str:
    return "".join(code.split())


def plan(doc: PythonDocument, params: Params, context: StepContext) -> StepOutput:
    import libcst as cst

    out = StepOutput()
    found: set[str] = set()
    for line in doc.module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for statement in line.body:
            assigned = _assigned(statement)
            if assigned and assigned[0] in params.constants:
                found.add(assigned[0])
                _set(doc, assigned[1], params.constants[assigned[0]], assigned[0], out)
    wanted = {_compact(expr): (expr, value) for expr, value in params.asserts.items()}
    for node in doc.nodes(cst.Assert):
        test = node.test
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            continue
        target = test.comparisons[0]
        if not isinstance(target.operator, cst.Equal):
            continue
        for side, literal in ((test.left, target.comparator), (target.comparator, test.left)):
            key = _compact(doc.code(side))
            if key in wanted:
                expr, value = wanted[key]
                found.add(expr)
                _set(doc, literal, value, f"assert {expr} ==", out)
    if not any(needle in doc.data for needle in needles(params)):
        return out  # a file naming none of them is not theirs (what `needles` skips)
    for name in list(params.constants) + list(params.asserts):
        if name not in found:
            what = "constant" if name in params.constants else "assertion on"
            out.warn(-1, f"{what} {name} not found; nothing changed for it")
    return out
