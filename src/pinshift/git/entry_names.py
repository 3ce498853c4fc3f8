"""Which paths from a git tree may become files: git's own `verify_path` rules, and a few more.

A tree is written by whoever made the commit, and `git fetch` does not check it: `git mktree` or a
hand-written tree object can name an entry `..`, `.git` or `a/b`. Every path pinshift lists from a
commit (`CommitTree`, `ObjectStore.tree`) passes `reason` before anything is read or written, and the
snapshot writer checks again. A path is refused when one of its `/`-separated components is

- empty (`/etc/passwd`, `a//b`, `a/`), `.` or `..` (git's `verify_dotfile`);
- a name git reads as `.git` (`is_ntfs_dotgit`, `is_hfs_dotgit`): in any case, followed only by dots or
  spaces (NTFS drops them: `.git.`, `.GIT `), `git~1` likewise (the NTFS short name of `.git`), `.git`
  with an NTFS stream (`.git::$INDEX_ALLOCATION`), `.git` holding code points HFS+ ignores
  (`.g\\u200cit`), and each of these as a backslash-separated part of a component (`a\\.git`).

A name with control characters (a newline, an escape) is not refused: git checks such names out, and every
report shows them escaped (`pinshift.report.display`), as `shown` does in the refusal itself.

`CommitTree` also refuses an entry whose name holds `/` (`git fsck`'s `fullPathname`) when the folder its
path names is not a tree of the commit, and a path listed twice.
"""

from __future__ import annotations

import re

from pinshift.errors import GitError

# code points HFS+ ignores when it compares names (git's utf8.c, next_hfs_char)
_HFS_IGNORED = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])
# what HFS+ ignores: a name holding one could be `.git` there
_SPECIAL = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _is_dotgit(part: str) -> bool:
    """Whether NTFS or HFS+ would open `part` (no `/` or `\\` in it) as `.git`."""
    lowered = part.lower()
    for name in (".git", "git~1"):
        rest = lowered[len(name):]
        if lowered.startswith(name) and (rest.startswith(":") or rest.strip(". ") == ""):
            return True
    folded = part.translate(_HFS_IGNORED)
    return folded != part and folded.isascii() and folded.lower() == ".git"


def reason(path: str) -> str | None:
    """Why `path` (a path from a git tree, `/`-separated, str as git output decodes it) must not be written,
    or None when it is safe."""
    wrapped = f"/{path}/"
    lowered = wrapped.lower()
    if ("//" not in wrapped and "/./" not in wrapped and "/../" not in wrapped and "/.g" not in lowered
            and "/git~" not in lowered and "\\" not in path
            and (path.isascii() or _SPECIAL.search(path) is None)):
        return None  # the common case, in a few string scans: nothing below could refuse it
    if path.startswith("/"):
        return "an absolute path"
    for component in path.split("/"):
        if component == "":
            return "an empty name"
        if component in (".", ".."):
            return f"a '{component}' component: git refuses to check it out"
        if any(_is_dotgit(part) for part in component.split("\\")):
            return "a name git reads as '.git': git refuses to check it out"
    return None


def shown(path: str) -> str:
    """`path` quoted, each character a terminal could act on or hide escaped (`\\n`, `\\x1b`, `\\u202e`), and each
    byte that is not UTF-8 shown as `\\xNN`: one line, whatever the name."""
    out = []
    for char in path:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte git's output held that is not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char in "\\'":
            out.append("\\" + char)
        elif char in _NAMED:
            out.append(_NAMED[char])
        elif char.isprintable():
            out.append(char)
        else:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "'" + "".join(out) + "'"


class UnsafeEntry(GitError):
    """A commit holds a tree entry pinshift will not write (see the module docstring); nothing was written."""

    def __init__(self, commit: str, path: str, why: str, outcome: str = "nothing was written"):
        super().__init__(f"commit {commit[:12]} holds an unsafe tree entry: {shown(path)} ({why}); "
                         f"{outcome}")
        self.path = path


def check(commit: str, path: str) -> None:
    """Refuse `path` of `commit` (UnsafeEntry) when `reason` finds it unsafe."""
    why = reason(path)
    if why is not None:
        raise UnsafeEntry(commit, path, why)
