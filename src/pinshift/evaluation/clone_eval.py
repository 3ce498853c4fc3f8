"""`verify --eval`: evaluate each recipe's pname and version with Nix, offline, against the local checkout.

How: the pinned revision is exported once (`git archive`: pinshift.git.objects.write_archive) into
a temporary directory, and the recipe is imported with `scopedImport`, which
shadows `fetchTarball` and `builtins.fetchTarball` inside the recipe with a
function returning that directory. The recipe's bytes are never rewritten, and the
checkout's work tree is not touched. Recipes that pin nixpkgs with another
fetcher (fetchFromGitHub, fetchGit) cannot be shadowed this way and are
reported as not evaluated.

Every call runs in a NixSandbox (pinshift.sandbox.nix_process) as the stand-in's do:
restricted evaluation whose only readable places are the export (`-I nixpkgs=EXPORT`)
and the folder of the verified files (pinshift.verify.verify writes the bytes it read there: a recipe
imports the companions verified with it, no other file), no environment, no network, the memory and time
limits, `--store dummy://`.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
from pathlib import Path

from pinshift.sandbox.nix_process import NixSandbox, configured_timeout, eval_command, memory_message
from pinshift.git.objects import write_archive

_EXPRESSION = """
let
  nixpkgs = _: {export};
  recipe = scopedImport {{ builtins = builtins // {{ fetchTarball = nixpkgs; }}; fetchTarball = nixpkgs; }} {recipe};
  value = if builtins.isFunction recipe then recipe {{ }} else recipe;
in {{ pname = value.pname or null; version = value.version or null; }}
"""


def nix_string(text: str) -> str:
    """A Nix string literal for `text` (paths with spaces or quotes stay one value)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("${", "\\${") + '"'


def export_revision(repo, commit: str, into: Path) -> Path:
    """The files of `commit` written under `into` (a scratch directory), read from git's objects."""
    archive = into / "nixpkgs.tar"
    with open(archive, "wb") as stream:
        write_archive(repo, commit, stream)
    target = into / f"nixpkgs-{commit[:12]}"
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    archive.unlink()
    return target


def evaluate(nix: str, recipe: Path, export: Path, sandbox: NixSandbox | None = None,
             readable: Path | None = None) -> tuple[dict | None, str | None]:
    """({"pname", "version"}, None) or (None, the error Nix gave); in `sandbox` (else one of its own). Nix may read
    the export and `readable` (a folder holding the recipe; default: the recipe file alone)."""
    if sandbox is None:
        with NixSandbox() as own:
            return evaluate(nix, recipe, export, own, readable)
    expression = _EXPRESSION.format(export=f"(/. + {nix_string(str(export))})",
                                    recipe=f"(/. + {nix_string(str(recipe))})")
    done = sandbox.run(eval_command(nix, [f"nixpkgs={export}", readable or recipe], expression))
    if done.timed_out:
        return None, f"evaluation did not finish in {configured_timeout():g} s"
    if done.status != 0:
        return None, memory_message(_error_line(done.stderr), sandbox.memory)
    try:
        return json.loads(done.stdout), None
    except ValueError:
        return None, "nix-instantiate printed no JSON value"


def _error_line(stderr: str) -> str:
    """The most telling line of a Nix error: the last `error:` line, without the prefix."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    line = (errors[-1] if errors else (lines[-1] if lines else "nix-instantiate failed"))
    return line.removeprefix("error:").strip()


def scratch() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="pinshift-verify-")
