"""The inferred recipe as TOML a reviewer reads like the bundled ones (written with tomlkit).

Top-level keys first (name, description, base, target, files), then one `[[steps]]` table per
step: kind, title, files when the step has its own, message, and `[steps.params]` (nested
tables such as `columns` as `[steps.params.columns]`). A one-line string with a backslash or a
double quote and no apostrophe is a literal string ('\\d+', '[ "-j32" ]'), as people write
them; a multi-line string is a \"\"\"...\"\"\" string. A comment block at the top says where the
recipe comes from and what the proof found.

`render` checks its own output: the text is read back with tomllib and must give exactly the
data it was made from (an internal error otherwise: a recipe must mean what infer proved).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

import tomlkit

from pinshift.report.display import printable


def _value(value: Any):
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, str):
        controls = any(ord(c) < 32 and c not in "\n\t" or ord(c) == 127 for c in value)
        if "\n" in value and not controls:
            return tomlkit.string(value, multiline=True)
        if ("\\" in value or '"' in value) and "'" not in value and not controls and "\n" not in value \
                and "\t" not in value:
            return tomlkit.string(value, literal=True)  # '[ "-j32" ]', '\d+': as people write them
        return tomlkit.string(value)
    if isinstance(value, (list, tuple)):
        array = tomlkit.array()
        for item in value:
            array.append(_value(item))
        return array
    if isinstance(value, Mapping):
        table = tomlkit.table()
        for key, item in value.items():
            table[key] = _value(item)
        return table
    raise TypeError(f"cannot write {type(value).__name__} in a recipe")


def render(recipe: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], comments: Sequence[str] = ()) -> str:
    """TOML text of a recipe: `recipe` holds the top-level keys, each of `steps` a `[[steps]]` table."""
    document = tomlkit.document()
    for line in comments:
        document.add(tomlkit.comment(printable(line)) if line else tomlkit.comment(""))
    if comments:
        document.add(tomlkit.nl())
    for key in ("name", "description", "base", "target", "files"):
        if recipe.get(key):
            document[key] = _value(recipe[key])
    array = tomlkit.aot()
    for step in steps:
        table = tomlkit.table()
        for key in ("kind", "title", "files", "message"):
            if step.get(key):
                table[key] = _value(step[key])
        table["params"] = _value(dict(step.get("params") or {}))
        array.append(table)
    document["steps"] = array
    text = tomlkit.dumps(document)
    expected = {key: (list(recipe[key]) if key == "files" else recipe[key])
                for key in ("name", "description", "base", "target", "files") if recipe.get(key)}
    expected["steps"] = [{key: (list(step[key]) if key == "files" else step[key])
                          for key in ("kind", "title", "files", "message") if step.get(key)}
                         | {"params": _plain(step.get("params") or {})} for step in steps]
    if tomllib.loads(text) != expected:
        raise AssertionError("the inferred recipe's TOML does not read back as written")
    return text


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
