"""`pinshift trust [DIR]`: let a repository's own step kinds run without `--trust-repo` (like `direnv allow`).

Writes the repository's root into the user's pinshift config (see pinshift.steps.trust);
`--remove` takes it out, `--list` prints what is trusted. Nothing of the repository runs here.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

import click

from pinshift.report.display import echo_fitted


def _kinds_there(root: Path) -> str:
    from pinshift.steps.registry import REPOSITORY_MIGRATIONS
    from pinshift.report.display import printable
    from pinshift.steps.scripts import find_scripts

    directory = root / REPOSITORY_MIGRATIONS
    scripts = find_scripts(directory) if directory.is_dir() else []
    if not scripts:
        return f"it has no {REPOSITORY_MIGRATIONS.as_posix()}/*.py step kinds (yet)"
    listed = ", ".join(f"{printable(s.kind)} ({printable(s.path.name)})" for s in scripts)
    return f"its step kinds: {listed}"


@click.command()
@click.argument("directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path), default=".")
@click.option("--remove", is_flag=True, help="Stop trusting the repository.")
@click.option("--list", "list_all", is_flag=True, help="Print the trusted repositories.")
def trust(directory: Path, remove: bool, list_all: bool) -> None:
    """Trust the repository at DIRECTORY (default: the one around .): a recipe step that needs one of its
    .pinshift/migrations/*.py step kinds may run it without --trust-repo.
    """
    from pinshift.steps import trust as consent
    from pinshift.commands.recipes import repository_root

    config = consent.config_path()
    if list_all:
        if remove:
            from pinshift.errors import UsageError

            raise UsageError("--list and --remove exclude each other")
        entries = consent.trusted_paths(config)
        echo_fitted("\n".join(entries) if entries else f"no trusted repositories ({config})")
        return
    root = repository_root(directory)
    if remove:
        changed = consent.distrust(root, config)
        echo_fitted(f"no longer trusted: {root} ({config})" if changed else f"not trusted: {root}; nothing to remove")
        return
    changed = consent.trust(root, config)
    verb = "trusted" if changed else "already trusted"
    echo_fitted(f"{verb}: {root} ({config}); {_kinds_there(root)}")
