"""Commits whose trees hold entries git refuses to check out, written object by object (git mktree and
`git hash-object --literally` take what `git add` never makes: `..`, `.git`, a name holding `/` or a NUL).

`HOSTILE` names each case; `hostile_commit(root, base, case, victim)` adds the case's entry to the tree of
commit `base` and returns the new commit. Cases that climb (`..`) aim at `victim`, a file outside the
repository, through as many `..` as any snapshot folder could need (the root stops the climb).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

CLIMB = 64  # `..` components: more than any temporary folder is deep; past the root, `..` stays at `/`


def _git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(["git", *args], cwd=root, input=data, capture_output=True)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def _sort_key(entry: tuple[bytes, bytes, str]) -> bytes:
    mode, name, _ = entry
    return name + b"/" if mode == b"40000" else name


def write_tree(root: Path, entries: list[tuple[bytes, bytes, str]]) -> str:
    """A tree object of (mode, name, sha) entries, exactly as given (sorted as git sorts), unchecked."""
    data = b"".join(mode + b" " + name + b"\0" + bytes.fromhex(sha) for mode, name, sha in sorted(entries, key=_sort_key))
    return _git(root, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", data=data).decode().strip()


def read_tree(root: Path, tree: str) -> list[tuple[bytes, bytes, str]]:
    found = []
    for record in _git(root, "ls-tree", "-z", tree).split(b"\0"):
        if record:
            meta, name = record.split(b"\t", 1)
            mode, _, sha = meta.split(b" ")
            found.append((b"40000" if mode == b"040000" else mode, name, sha.decode()))
    return found


def blob(root: Path, data: bytes) -> str:
    return _git(root, "hash-object", "-w", "--stdin", data=data).decode().strip()


def chain(root: Path, names: list[bytes], leaf: tuple[bytes, str]) -> tuple[bytes, bytes, str]:
    """The entry of `names[0]`: trees nested along `names`, the last holding `leaf` (name, blob sha)."""
    entry = (b"100644", leaf[0], leaf[1])
    for name in reversed(names):
        entry = (b"40000", name, write_tree(root, [entry]))
    return entry


def insert(root: Path, tree: str, folder: list[bytes], entry: tuple[bytes, bytes, str]) -> str:
    """`tree` with `entry` added in its sub-folder `folder` (made when missing)."""
    entries = read_tree(root, tree)
    if not folder:
        return write_tree(root, [e for e in entries if e[1] != entry[1]] + [entry])
    inner = next((e for e in entries if e[1] == folder[0] and e[0] == b"40000"), None)
    inner_tree = inner[2] if inner else write_tree(root, [])
    updated = insert(root, inner_tree, folder[1:], entry)
    return write_tree(root, [e for e in entries if e[1] != folder[0]] + [(b"40000", folder[0], updated)])


def _climb(victim: Path) -> list[bytes]:
    return [b".."] * CLIMB + [part.encode() for part in victim.parent.parts[1:]]


PAYLOAD = b"{ }: throw \"pwned\"\n"

# case -> (folder of the repository it goes in, how the entry is made); the entry is what is refused
HOSTILE = {
    "dotdot": "..",
    "dot": ".",
    "dotgit": ".git",
    "DOTGIT": ".GIT",
    "Dotgit": ".Git",
    "dotgit-trailing-dot": ".git.",
    "dotgit-trailing-space": ".git ",
    "ntfs-short-name": "git~1",
    "ntfs-stream": ".git::$INDEX_ALLOCATION",
    "hfs-ignorable": ".g\u200cit",
    "backslash-dotgit": "sub\\.git",
    "slash-in-name": "sub/x.nix",
    "slash-climbing": "climb/",
    "newline-dotgit": "new\nline",
    "escape-dotdot": "\x1b[2J",
    "nul": "ev\0il.nix",
    "nested-dotdot": ".flox/pkgs/..",
    "duplicate": "twice.nix",
}


def hostile_commit(root: Path, base: str, case: str, victim: Path) -> str:
    """A commit whose tree is `base`'s plus the hostile entry of `case` (see HOSTILE)."""
    tree = _git(root, "rev-parse", f"{base}^{{tree}}").decode().strip()
    leaf = (victim.name.encode(), blob(root, PAYLOAD))
    name = HOSTILE[case]
    if case in ("dotdot", "nested-dotdot"):
        folder = [b".flox", b"pkgs"] if case == "nested-dotdot" else []
        entry = chain(root, _climb(victim), leaf)
    elif case == "slash-climbing":  # one entry whose name is the whole climb
        folder, entry = [], (b"100644", b"/".join(_climb(victim) + [leaf[0]]), leaf[1])
    elif case == "newline-dotgit":  # the name's newline must show escaped in the one-line refusal
        config = blob(root, b"[core]\n\tfsmonitor = \"touch pwned\"\n")
        folder, entry = [], chain(root, [name.encode(), b".git"], (b"config", config))
    elif case == "escape-dotdot":  # likewise an escape sequence, before a climb
        folder, entry = [], chain(root, [name.encode()] + _climb(victim), leaf)
    elif case == "duplicate":  # two entries of one name: which one a checkout writes is git's choice, not ours
        entries = read_tree(root, tree) + [(b"100644", b"twice.nix", leaf[1]), (b"100644", b"twice.nix", blob(root, b"2"))]
        tree = write_tree(root, entries)
        folder, entry = [], None
    elif case in ("slash-in-name", "nul"):
        folder, entry = [], (b"100644", name.encode(), leaf[1])
    else:  # a folder by that name holding a git directory's config (core.fsmonitor runs a command)
        config = blob(root, b"[core]\n\tfsmonitor = \"touch pwned\"\n")
        folder, entry = [b".flox", b"pkgs"], (b"40000", name.encode(), write_tree(root, [(b"100644", b"config", config)]))
    if entry is not None:
        tree = insert(root, tree, folder, entry)
    return _git(root, "commit-tree", "-p", base, "-m", f"hostile: {case}", tree).decode().strip()


def shown_name(case: str) -> str:
    """What the refusal names for `case` (the entry's path as pinshift shows it, first characters)."""
    return {"dotdot": "'..'", "nested-dotdot": "'.flox/pkgs/..'", "slash-climbing": "'../../../", "dot": "'.flox/pkgs/.'",
            "newline-dotgit": "'new\\nline/.git'", "escape-dotdot": "'\\x1b[2J/..'", "slash-in-name": "'sub/x.nix'",
            "hfs-ignorable": "'.flox/pkgs/.g\\u200cit'", "backslash-dotgit": "'.flox/pkgs/sub\\\\.git'",
            "duplicate": "'twice.nix' (listed twice",
            }.get(case, f"'.flox/pkgs/{HOSTILE[case]}'")
