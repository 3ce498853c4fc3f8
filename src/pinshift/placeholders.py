"""`{base}` and `{target}` in step parameters: the migration's actual base and target branch names.

A recipe names the branches it was written for (`base = "pytorch-2.9"`), but
`pinshift migrate --from B --branch T` runs it from another base onto another
target. A step parameter that says `{base}` or `{target}` follows the run:

    expand("{base}", {"base": "pytorch-2.9-python313"})  ->  "pytorch-2.9-python313"
    expand("{{base}}", {})                                ->  "{base}"   (doubled braces are literal)
    expand("{ x = 1; }", {})                              ->  "{ x = 1; }"   (not a placeholder: left alone)
    expand("v${version}", {})                             ->  "v${version}"  (Nix/shell interpolation: left alone)

Only `{name}` (a name right between two braces) is a placeholder; any other
brace is text, so Nix expressions and regular expressions pass unchanged. A step kind
may have placeholders of its own (pin-nixpkgs' `url` says `{rev}`: its module's
`PLACEHOLDERS`); those are left as written, for the step to fill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

PLACEHOLDERS = ("base", "target")
_TOKEN = re.compile(r"\{\{|\}\}|(?<!\$)\{([A-Za-z_][\w-]*)\}")  # `${version}` is Nix's or the shell's
_KNOWN = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)


class PlaceholderError(ValueError):
    """A placeholder that cannot be filled: `name` is unknown, or known but has no value here."""

    def __init__(self, name: str, known: bool, key: str = ""):
        self.name, self.known, self.key = name, known, key
        if known:
            text = f"{{{name}}} stands for the migration's {name} branch, which is not known here"
        else:
            text = f"unknown placeholder {{{name}}} (known: {_KNOWN}; write {{{{ and }}}} for a literal brace)"
        super().__init__(f"'{key}': {text}" if key else text)


def expand(text: str, branches: Mapping[str, str], own: Iterable[str] = ()) -> str:
    """`text` with `{base}`/`{target}` replaced from `branches` and `{{`/`}}` unescaped; the step kind's `own`
    placeholders are kept (its step fills them)."""

    def fill(match: re.Match) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        if name in own:
            return token
        if name not in PLACEHOLDERS:
            raise PlaceholderError(name, known=False)
        if not branches.get(name):
            raise PlaceholderError(name, known=True)
        return branches[name]

    return _TOKEN.sub(fill, text)


def expand_value(value: Any, branches: Mapping[str, str], own: Iterable[str] = ()) -> Any:
    """Strings expanded inside lists and table values (keys stay as written); other values unchanged."""
    if isinstance(value, str):
        return expand(value, branches, own)
    if isinstance(value, list):
        return [expand_value(item, branches, own) for item in value]
    if isinstance(value, tuple):
        return tuple(expand_value(item, branches, own) for item in value)
    if isinstance(value, Mapping):
        return {key: expand_value(item, branches, own) for key, item in value.items()}
    return value


def expand_params(params: Mapping[str, Any], branches: Mapping[str, str], own: Iterable[str] = ()) -> dict[str, Any]:
    """Every parameter expanded; a PlaceholderError names the parameter's key."""
    out = {}
    for key, value in params.items():
        try:
            out[key] = expand_value(value, branches, own)
        except PlaceholderError as error:
            raise PlaceholderError(error.name, error.known, key) from None
    return out


def migration_branches(repository, base: str, target: str, recipe_base: str = "") -> dict[str, str]:
    """What `{base}` and `{target}` mean in a migration from `base` (as given to --from) onto `target`.

    `{base}` is a branch name, as a README's branch table spells it: a local branch as it is,
    `origin/pytorch-2.9` (a remote-tracking branch) or `refs/heads/pytorch-2.9` as `pytorch-2.9`;
    a commit that is no branch (`--from "$HEAD_SHA"` in CI) falls back to the recipe's own base.
    `repository` needs `branch_commit(name)` and `remotes()` (pinshift.gitrepo.Repository).
    """
    return {"base": branch_name(repository, base, recipe_base), "target": target}


def branch_name(repository, given: str, recipe_base: str = "") -> str:
    """The branch name `given` (as --from takes it) stands for: see `migration_branches`."""
    if repository.branch_commit(given) is not None:
        return given
    for prefix in ("refs/heads/", "refs/remotes/", ""):
        if not given.startswith(prefix):
            continue
        rest = given[len(prefix):]
        if prefix == "refs/heads/":
            return rest
        remote, slash, name = rest.partition("/")
        if slash and name and remote in repository.remotes():
            return name
    return recipe_base or given
