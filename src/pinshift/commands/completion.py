"""`pinshift completion bash|zsh|fish`: the shell's completion script, and what it completes beyond options.

click's shell completion (`_PINSHIFT_COMPLETE=bash_source pinshift` is what the script is; the shell then
calls `pinshift` with `_PINSHIFT_COMPLETE=bash_complete` for each Tab) completes commands and options; the
callbacks here complete the values: recipe names (`migrate`, `show`: the repository's `.pinshift/recipes/`
and the bundled ones, as `pinshift recipes` lists them), step kinds (`apply`, `show --step`: as `pinshift
recipes --kinds`, read without running any repository code) and branch names (`migrate --from`, `diff`,
`infer`, `status --branches` and `--recipe`: local and remote-tracking branches, as git lists them).

A completion never fails: outside a repository, or in one pinshift cannot read, it offers nothing.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

import click
from click.shell_completion import CompletionItem

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_PINSHIFT_COMPLETE"


def _directory(ctx: click.Context) -> Path:
    """The repository the command being completed would read: its `--repo`, else the current folder."""
    repo = ctx.params.get("repo") or (ctx.params.get("repos") or (None,))[0]
    return Path(repo) if repo else Path(".")


def _root(ctx: click.Context) -> Path:
    """The work tree holding that folder (the nearest ancestor with `.git`), else the folder, as `pinshift recipes`
    finds it (commands/recipes.py imports this module, so it is not imported from here)."""
    start = _directory(ctx).resolve()
    return next((folder for folder in (start, *start.parents) if (folder / ".git").exists()), start)


def complete_recipes(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from pinshift.recipes.recipe import list_recipes

    try:
        found = list_recipes(_root(ctx), [])
    except Exception:  # noqa: BLE001 - a completion that fails offers nothing; a traceback would land in the shell
        return []
    return [CompletionItem(name, help=description) for name, _, description in found if name.startswith(incomplete)]


def complete_step_kinds(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from pinshift.steps.registry import available_kinds
    from pinshift.steps.trust import Consent

    try:
        names = list(available_kinds(_root(ctx), None, Consent(False, None)))
    except Exception:  # noqa: BLE001 - a completion that fails offers nothing; a traceback would land in the shell
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def complete_branches(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from pinshift.git.repo import Repository

    try:
        names = Repository.open(_directory(ctx)).branches()
    except Exception:  # noqa: BLE001 - a completion that fails offers nothing; a traceback would land in the shell
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for SHELL (bash, zsh or fish).

    \b
    bash:  eval "$(pinshift completion bash)"     (in ~/.bashrc)
    zsh:   eval "$(pinshift completion zsh)"      (in ~/.zshrc)
    fish:  pinshift completion fish > ~/.config/fish/completions/pinshift.fish

    Completes commands, options, recipe names, step kinds and branch names.
    """
    from click.shell_completion import get_completion_class

    script = get_completion_class(shell)(ctx.find_root().command, {}, "pinshift", COMPLETE_VAR).source()
    click.echo(script)
