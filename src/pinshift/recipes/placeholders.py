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

`{facts.NAME}` (`FACTS`: pin, revision, python, cuda, gpus, variants, version, package) stands for what the
branch's recipes say after the steps (docs/doc-steps.md#facts-instead-of-typed-values). `expand` keeps
them as written; `fill_facts` fills them once pinshift.status.branch_facts has read the planned tree:

    expand("{facts.pin}", {})                             ->  "{facts.pin}"
    fill_facts("PyTorch {facts.version}", {"version": "2.9.1"})  ->  "PyTorch 2.9.1"
    facts_in("{facts.cuda} / {facts.python}")             ->  ("cuda", "python")
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

PLACEHOLDERS = ("base", "target")
# `{facts.NAME}`: what the recipes say after the steps (pinshift.status.branch_facts), and a value of its shape that
# a kind's Params accept, to check a step's parameters before any file is read (the real value is checked again)
FACTS = {
    "pin": ("the nixpkgs pin every recipe uses, abbreviated to 7 characters (0182a36)", "0000000"),
    "revision": ("the same pin in full, 40 hexadecimal characters", "0" * 40),
    "python": ("the Python version the recipes build for (3.13)", "3.13"),
    "cuda": ("the CUDA version of the GPU recipes (12.9)", "12.9"),
    "gpus": ("the GPU targets of the GPU recipes, lowest first (sm61 / sm75 / sm90)", "sm90"),
    "variants": ("how many build recipes the branch has (66)", "1"),
    "version": ("the version of the package the recipes build (2.9.1): as the recipes state it, else at the pin in "
                "the --nixpkgs clone", "0.0.0"),
    "package": ("the package the recipes build (pytorch)", "package"),
}
_TOKEN = re.compile(r"\{\{|\}\}|(?<!\$)\{([A-Za-z_][\w-]*)\}|(?<!\$)\{facts\.([A-Za-z_][\w-]*)\}")
_KNOWN = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
_KNOWN_FACTS = ", ".join(f"{{facts.{name}}}" for name in FACTS)


class PlaceholderError(ValueError):
    """A placeholder that cannot be filled: `name` is unknown, or known but has no value here."""

    def __init__(self, name: str, known: bool, key: str = ""):
        self.name, self.known, self.key = name, known, key
        if name.startswith("facts.") and known:
            text = f"{{{name}}} is a fact of the branch's recipes, which is not known here"
        elif name.startswith("facts."):
            text = f"unknown placeholder {{{name}}} (known facts: {_KNOWN_FACTS})"
        elif known:
            text = f"{{{name}}} stands for the migration's {name} branch, which is not known here"
        else:
            text = f"unknown placeholder {{{name}}} (known: {_KNOWN}; write {{{{ and }}}} for a literal brace)"
        super().__init__(f"'{key}': {text}" if key else text)


def expand(text: str, branches: Mapping[str, str], own: Iterable[str] = ()) -> str:
    """`text` with `{base}`/`{target}` replaced from `branches` and `{{`/`}}` unescaped; the step kind's `own`
    placeholders and `{facts.NAME}` are kept (its step, and migrate once it knows the facts, fill them); in a
    string that holds a fact, `{{`/`}}` stay doubled until `fill_facts` unescapes them."""

    def fill(match: re.Match) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token if facts_in(text) else token[0]  # kept for fill_facts, which unescapes them
        if match.group(2) is not None:
            if match.group(2) not in FACTS:
                raise PlaceholderError(f"facts.{match.group(2)}", known=False)
            return token
        name = match.group(1)
        if name in own:
            return token
        if name not in PLACEHOLDERS:
            raise PlaceholderError(name, known=False)
        if not branches.get(name):
            raise PlaceholderError(name, known=True)
        return branches[name]

    return _TOKEN.sub(fill, text)


def facts_in(value: Any) -> tuple[str, ...]:
    """The `{facts.NAME}` names `value` (a string, or strings inside lists and tables) uses, in order, once each."""
    found: list[str] = []
    if isinstance(value, str):
        found = [m.group(2) for m in _TOKEN.finditer(value) if m.group(2) is not None]
    elif isinstance(value, (list, tuple)):
        found = [name for item in value for name in facts_in(item)]
    elif isinstance(value, Mapping):
        found = [name for item in value.values() for name in facts_in(item)]
    return tuple(dict.fromkeys(found))


def fill_facts(value: Any, facts: Mapping[str, str]) -> Any:
    """`value` with every `{facts.NAME}` replaced by `facts[NAME]` (and `{{`/`}}` unescaped in strings that hold a
    fact); strings inside lists and tables too, keys as written. A name missing from `facts` is a PlaceholderError."""
    if isinstance(value, str):
        if not facts_in(value):
            return value

        def fill(match: re.Match) -> str:
            token = match.group(0)
            if token in ("{{", "}}"):
                return token[0]
            if match.group(2) is None:
                return token
            if match.group(2) not in facts:
                raise PlaceholderError(f"facts.{match.group(2)}", known=True)
            return facts[match.group(2)]

        return _TOKEN.sub(fill, value)
    if isinstance(value, list):
        return [fill_facts(item, facts) for item in value]
    if isinstance(value, tuple):
        return tuple(fill_facts(item, facts) for item in value)
    if isinstance(value, Mapping):
        return {key: fill_facts(item, facts) for key, item in value.items()}
    return value


def sample_facts() -> dict[str, str]:
    """A value of each fact's shape, to check a step's parameters before the facts are known."""
    return {name: sample for name, (_, sample) in FACTS.items()}


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
    """What `{base}` and `{target}` mean in a step of a migration from `base` (as given to --from) onto `target`.

    `{base}` is a branch name, as a README's branch table spells it: the branch `base_name` finds
    (`origin/pytorch-2.9` and `refs/heads/pytorch-2.9` are `pytorch-2.9`, `HEAD` the checked-out
    branch); a tag or commit that is no branch (`--from "$HEAD_SHA"` in CI) falls back to the
    recipe's own base, whose row the README has.
    """
    return {"base": branch_name(repository, base, recipe_base), "target": target}


def branch_name(repository, given: str, recipe_base: str = "") -> str:
    """The branch `given` (as --from takes it) stands for in step parameters: see `migration_branches`."""
    name, is_branch = _named(repository, given)
    return name if is_branch else recipe_base or name


def base_name(repository, given: str) -> str:
    """What `{base}` in a target template (`--branch '{base}-x'`, a recipe's `target`) stands for: the name
    the user gave, so that two bases never make one branch unless they name one branch.

    - a local branch: its name (`refs/heads/x` is `x`);
    - a remote-tracking branch: its name without the remote (`origin/x`, `refs/remotes/origin/x`: `x`);
    - a tag: its name (`v2`, `tags/v2`, `refs/tags/v2`: `v2`);
    - `HEAD` (or `@`): the branch it points at; a detached HEAD: the commit's short id;
    - a commit id: as typed (`781a13f`); any other revision (`main~2`): its commit's short id;
    - a name that is none of these (a missing base): as typed, for the base's own error to name.

    `repository` is a pinshift.git.repo.Repository.
    """
    return _named(repository, given)[0]


def _named(repository, given: str) -> tuple[str, bool]:
    """(the name `given` stands for, whether it is a branch); the order follows `Repository.commit_of`."""
    if given in ("HEAD", "@"):
        branch = repository.current_branch()
        if branch is not None:
            return branch, True
        commit = repository.commit_of(given)
        return (repository.short(commit) if commit else given), False
    if repository.branch_commit(given) is not None:
        return given, True
    for prefix in ("", "refs/remotes/", "remotes/"):
        rest = given[len(prefix):] if given.startswith(prefix) else None
        if rest is None or not repository.has_ref(f"refs/remotes/{rest}"):
            continue
        remote, slash, name = rest.partition("/")
        if slash and name and remote in repository.remotes():
            return name, True
    if given.startswith("refs/heads/") and repository.branch_commit(given[len("refs/heads/"):]) is not None:
        return given[len("refs/heads/"):], True
    for prefix in ("", "tags/", "refs/tags/"):
        if given.startswith(prefix) and given != prefix and repository.has_ref(f"refs/tags/{given[len(prefix):]}"):
            return given[len(prefix):], False
    commit = repository.commit_of(given) if not given.startswith("-") and given.strip() else None
    if commit is None or _HEX.fullmatch(given) and commit.startswith(given.lower()):
        return given, False
    return repository.short(commit), False


_HEX = re.compile(r"[0-9a-fA-F]{4,64}")
