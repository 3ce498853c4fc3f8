"""`pinshift hash REV`: the sha256 of nixpkgs' GitHub archive at REV, computed offline from a local clone.

stdout is the hash alone (scriptable, as `nix-prefetch-url --unpack` prints it);
stderr says which commit REV named and whether the hash was computed or cached.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

from pathlib import Path

import click


@click.command()
@click.argument("rev")
@click.option("--nixpkgs", type=click.Path(file_okay=False, path_type=Path), envvar="PINSHIFT_NIXPKGS",
              help="A local nixpkgs git clone that has REV (read, never written). Default: $PINSHIFT_NIXPKGS.")
@click.option("--format", "fmt", type=click.Choice(["base32", "sri"]), default="base32", show_default=True,
              help="base32 as nix-prefetch-url prints it (fetchTarball's sha256), or SRI sha256-… (a `hash`).")
def hash_command(rev: str, nixpkgs: Path | None, fmt: str) -> None:
    """Print the sha256 that `nix-prefetch-url --unpack` gives for GitHub's archive of nixpkgs at REV
    (a commit id, abbreviated or full, a branch such as nixos-unstable, or a tag), without the network."""
    from pinshift.nixpkgs.nar import render_sha256
    from pinshift.nixpkgs.clone import NixpkgsClone

    clone = NixpkgsClone.given(nixpkgs, "pinshift hash")
    revision = clone.revision(rev)
    result = clone.archive_hash(revision.commit)
    click.echo(render_sha256(result.digest, fmt))
    how = "cached" if result.cached else f"computed from {result.files:,} files in {result.seconds:.1f} s"
    from pinshift.report.display import echo_fitted

    echo_fitted(f"{revision.describe()}: {how}", err=True)
    for note in result.notes:
        echo_fitted(f"note: {note}", err=True)
