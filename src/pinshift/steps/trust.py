"""Consent to run Python code that does not come with pinshift (a repository's own step kinds).

pinshift imports a repository's `.pinshift/migrations/*.py` only when a recipe step (or
`apply KIND`, `show --step KIND`) needs a kind that is not bundled, and only with consent:

- `--trust-repo` for one run;
- the repository's path in the user's config file, which `pinshift trust [DIR]` writes (like
  `direnv allow`); `pinshift trust --remove [DIR]` takes it out again;
- `--migrations DIR` is consent for the files of DIR itself.

The config file is `$XDG_CONFIG_HOME/pinshift/config.toml` (default `~/.config/pinshift/config.toml`):

    trusted = ["/home/me/src/pytorch-recipes"]

Entries are absolute paths of repository roots (`~` is expanded); a repository is trusted when
its root, with symbolic links resolved, is one of them. Trust is by path, not by content: a
trusted repository's step kinds run as they are when a recipe needs them.

Whoever can write the config decides what runs, so it is used only when this user alone can
change it (`check_private`): the file and its folder (and, for a config that is a symbolic link,
the file it leads to and that file's folder) belong to this user or root and are writable by
neither group nor others. Anything else is refused in one line that says why and how to fix it
(`chmod go-w PATH`). `pinshift trust` makes a new folder 0700 and a new file 0600. A config that is
a symbolic link (a dotfiles checkout) stays one: the file it leads to is replaced atomically in its
own folder.
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import os
import shlex
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pinshift.errors import UsageError

_CONFIG_KEYS = ("trusted",)


@dataclass(frozen=True)
class Consent:
    """What the command line allows: `--trust-repo`, and the `--migrations DIR` it names."""

    trust_repo: bool = False
    migrations: Path | None = None


def config_path() -> Path:
    """`$XDG_CONFIG_HOME/pinshift/config.toml`, or `~/.config/pinshift/config.toml` (XDG: a relative value is ignored)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "pinshift" / "config.toml"


def _same_place(path: Path) -> str:
    return os.path.realpath(os.path.expanduser(str(path)))


def _private(path: Path, what: str) -> None:
    """UsageError unless `path` (followed) belongs to this user or root and neither group nor others can write it."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise UsageError(f"{path}: cannot check the pinshift {what} ({error.strerror or error})") from None
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid not in (os.geteuid(), 0):
        raise UsageError(f"{path}: the pinshift {what} belongs to uid {info.st_uid}, not to you (uid {os.geteuid()}), "
                         f"so the trust list is not used; make it yours (chown) or remove it")
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UsageError(f"{path}: the pinshift {what} is writable by {'others' if mode & stat.S_IWOTH else 'its group'}"
                         f" (mode {mode:04o}), so the trust list is not used; run `chmod go-w {shlex.quote(str(path))}`")


def check_private(path: Path) -> None:
    """UsageError (one line: why, and the chmod that fixes it) unless only this user can change the config `path`:
    the file and its folder, and for a symbolic link the file it leads to and that file's folder."""
    _private(path.parent, "config's folder")
    _private(path, "config")
    if path.is_symlink():
        _private(Path(os.path.realpath(path)).parent, "config's folder")


def _read_config(path: Path) -> dict:
    if not os.path.exists(path):
        return {}
    check_private(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise UsageError(f"{path}: cannot read the pinshift config ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: the pinshift config is not UTF-8 text; fix or remove it") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path}: invalid TOML in the pinshift config: {error}; fix or remove it") from None
    unknown = sorted(set(data) - set(_CONFIG_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown key '{unknown[0]}' in the pinshift config (known: {', '.join(_CONFIG_KEYS)})")
    return data


def trusted_paths(path: Path | None = None) -> list[str]:
    """The `trusted` entries of the config file, as written; raises UsageError on a malformed file."""
    path = path or config_path()
    entries = _read_config(path).get("trusted", [])
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise UsageError(f"{path}: 'trusted' must be a list of absolute paths, like trusted = [\"/home/me/repo\"]")
    for entry in entries:
        if not os.path.isabs(os.path.expanduser(entry)):
            raise UsageError(f"{path}: 'trusted' entry {entry!r} is not an absolute path")
    return entries


def is_trusted(root: Path, path: Path | None = None) -> bool:
    """Whether the repository at `root` is listed in the config file."""
    wanted = _same_place(root)
    return any(_same_place(Path(entry)) == wanted for entry in trusted_paths(path))


def consent_for_repository(root: Path, consent: Consent) -> str | None:
    """Why the repository's own step kinds may run (`--trust-repo`, `listed in CONFIG`), or None."""
    if consent.trust_repo:
        return "--trust-repo"
    config = config_path()
    if is_trusted(root, config):
        return f"listed in {config}"
    return None


def how_to_consent(root: Path) -> str:
    """The hint a refusal ends with."""
    return f"rerun with --trust-repo, or trust this repository with `pinshift trust {shlex.quote(str(root))}`"


# --- pinshift trust: the config file, edited -----------------------------------------------------


def _edit_trusted(root: Path, add: bool, path: Path | None = None) -> bool:
    """Add or remove `root` in the config file, keeping the rest of it as written; True if it changed."""
    import tomlkit

    from pinshift.files.tree import write_atomic

    path = path or config_path()
    written = _written_file(path)
    trusted_paths(path)  # refuse to rewrite a file we cannot read, or one others could change
    if written.parent.is_dir():
        _private(written.parent, "config's folder")
    try:
        document = tomlkit.parse(path.read_text("utf-8"))
    except FileNotFoundError:
        document = tomlkit.document()
    wanted = _same_place(root)
    entries = document.get("trusted")
    if entries is None:
        entries = tomlkit.array()
        entries.multiline(True)
        document["trusted"] = entries
    matching = [i for i, entry in enumerate(entries) if _same_place(Path(str(entry))) == wanted]
    if add == bool(matching):
        return False
    if add:
        entries.append(wanted)
    else:
        for index in reversed(matching):
            del entries[index]
    try:
        if not path.parent.is_dir():
            path.parent.mkdir(mode=0o700, parents=True)
        new = not os.path.lexists(written)
        write_atomic(written, tomlkit.dumps(document).encode("utf-8"))
        if new:
            os.chmod(written, 0o600)
    except OSError as error:
        raise UsageError(f"{written}: cannot write the pinshift config ({error.strerror or error})") from None
    return True


def _written_file(path: Path) -> Path:
    """The file `pinshift trust` replaces: `path`, or for a symbolic link the file it leads to (which stays linked)."""
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    if not target.is_file():
        raise UsageError(f"{path} is a symbolic link to {target}, which is not a file; pinshift will not replace the "
                         f"link: create {target} or remove the link")
    return target


def trust(root: Path, path: Path | None = None) -> bool:
    """List `root` as trusted; False when it already was."""
    return _edit_trusted(root, True, path)


def distrust(root: Path, path: Path | None = None) -> bool:
    """Take `root` off the trusted list; False when it was not on it."""
    return _edit_trusted(root, False, path)
