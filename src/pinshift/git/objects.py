"""Reading one commit's files from git's object store: `CommitTree` (no worktree, nothing written), and the
archive of a commit (`write_archive`: `verify --eval`'s export of a nixpkgs revision).

Its tree is listed once (`git ls-tree`), every path checked before anything is read (`check_entry`:
pinshift.git.entry_names); blobs come through `git cat-file --batch`, many at a time (`prefetch`,
`contents`) or one at a time (`read`).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import weakref
from collections.abc import Iterator, Sequence

from pinshift.errors import GitError
from pinshift.files.content import DEFAULT_MAX_BYTES, SkippedFile, check_content
from pinshift.git import entry_names
from pinshift.git.run import ENGLISH, GitFailed, first_line, run, stream

# what to do when git cannot read an object of a commit (a partial clone whose remote is gone, a damaged clone)
UNREADABLE = ("fetch the objects the clone lacks (git fetch --refetch, or a full clone without --filter) and run "
              "pinshift again")


def check_entry(commit: str, path: str, listed: bool, folders: set[str],
                outcome: str = "nothing was written") -> None:
    """Refuse (entry_names.UnsafeEntry) a path of `commit` that must not be written: git's rules
    (`entry_names.reason`), a path listed twice, or one whose folder is not a tree of the commit (an entry
    whose own name holds `/`); `folders` holds the trees listed so far (`ls-tree -t` lists a tree first)."""
    why = entry_names.reason(path)
    if why is None and listed:
        why = "listed twice: the tree names it more than once"
    if why is None and path.rpartition("/")[0] not in folders:
        why = "a name holding '/': git's fsck refuses it"
    if why is not None:
        raise entry_names.UnsafeEntry(commit, path, why, outcome)


def write_archive(repo, commit: str, output) -> None:
    """`git archive --format=tar` of `commit` written to `output` (an open file), never held in memory; `repo` as
    for CommitTree. GitFailed when git cannot."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: git's messages can never block it
        process = stream(["--git-dir", str(repo.git_dir), "archive", "--format=tar", "--", commit],
                         env=dict(os.environ, **ENGLISH), stdin=subprocess.DEVNULL, stdout=output, stderr=errors)
        code = process.wait()
        errors.seek(0)
        if code != 0:
            raise GitFailed(("archive", commit), subprocess.CompletedProcess(process.args, code, b"", errors.read()))


class BlobReader:
    """One `git cat-file --batch` answering reads one blob at a time, for the process that started it.

    It lives as long as the tree that asked for it (closed when that tree is dropped, and by no other
    process: a forked worker inherits it but never uses nor closes it).
    """

    def __init__(self, git_dir: str):
        self._pid = os.getpid()
        self._process = stream(["--git-dir", git_dir, "cat-file", "--batch"], env=dict(os.environ, **ENGLISH),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def read(self, sha: str) -> bytes | None:
        """The bytes of blob `sha`; None when git does not have it (or stopped answering)."""
        try:
            self._process.stdin.write(sha.encode() + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError):
            return None
        header = self._process.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            return None
        size = int(header[2])
        data = self._process.stdout.read(size)
        self._process.stdout.read(1)
        return data if len(data) == size else None

    def close(self) -> None:
        if os.getpid() != self._pid:
            return
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._process.stdin.close()
        self._process.stdout.close()


class CommitTree:
    """The files of one commit, read from git's object store: no worktree, nothing written.

    `repo` is the repository's (pinshift.git.repo.Repository, or anything whose `git_dir` names its git
    directory). Symlinks and submodules are skipped with a reason: pinshift never edits through a link. A tree
    holding a path git refuses to check out (`..`, `.git`: pinshift.git.entry_names) is refused when it is
    listed, before anything is read or written (`check_entry`).
    `prefetch(paths)` reads many blobs through one `git cat-file --batch` (one process
    instead of a round trip per file); pinshift.planning.pool calls it for each chunk of files, in
    the process that reads them. A file not prefetched is read through one `git cat-file --batch` kept
    by the process that opened the tree (`BlobReader`) and through a `git cat-file` of its own in any
    other, so forked workers never share a reader with their parent.
    """

    fork_safe = True

    def __init__(self, repo, commit: str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.max_bytes = max_bytes
        self._git_dir = str(repo.git_dir)
        self._pid = os.getpid()
        self._reader: BlobReader | None = None
        self._blobs: dict[str, bytes] = {}
        # path -> (mode, size, sha); sizes are asked of git only when a file is read (`_sizes`): `ls-tree --long`
        # makes git read every object's header, a quarter of a second at 10,000 files, for files that a run
        # answered from its plan memo never reads
        self._entries: dict[str, tuple[str, int | None, str]] = {}
        folders: set[str] = {""}  # the trees listed so far: every path's folder must be one
        done = run(["--git-dir", self._git_dir, "ls-tree", "-r", "-t", "-z", "--full-tree", commit],
                   env=dict(os.environ, **ENGLISH))
        if done.returncode != 0:  # a missing, damaged or hand-made tree git cannot read
            raise GitError(f"cannot read the files of {commit[:12]}: {first_line(done)}; {UNREADABLE}")
        for record in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, kind, sha = meta.split()
            check_entry(commit, path, path in self._entries or path in folders, folders)
            if kind == "tree":
                folders.add(path)
            else:
                self._entries[path] = (mode, None if kind == "blob" else 0, sha)

    def _sizes(self, paths) -> None:
        """Learn the sizes of `paths` (blobs whose size is not known yet) with one `git cat-file --batch-check`."""
        unknown = [p for p in paths if p in self._entries and self._entries[p][1] is None]
        if not unknown:
            return
        for path, line in zip(unknown, self._cat_file("--batch-check", unknown).split(b"\n")):
            fields = line.split()
            if len(fields) != 3:
                raise self._missing(path)
            mode, _, sha = self._entries[path]
            self._entries[path] = (mode, int(fields[2]), sha)

    def _cat_file(self, option: str, paths: Sequence[str]) -> bytes:
        """What `git cat-file OPTION` prints for the blobs of `paths`, asked in one process."""
        shas = b"".join(self._entries[p][2].encode() + b"\n" for p in paths)
        done = run(["--git-dir", self._git_dir, "cat-file", option], data=shas)
        if done.returncode != 0:
            raise GitError(f"git cat-file failed: {first_line(done.stderr.decode(errors='replace'))}; {UNREADABLE}")
        return done.stdout

    def _missing(self, path: str) -> GitError:
        return GitError(f"{path}: object {self._entries[path][2]} is missing from {self._git_dir} "
                        f"(a partial or damaged clone); {UNREADABLE}")

    def _size(self, path: str) -> int:
        if self._entries[path][1] is None:  # a read without a prefetch: learn every size at once, not one by one
            self._sizes([p for p, entry in self._entries.items() if entry[1] is None])
        return self._entries[path][1]

    def paths(self) -> list[str]:
        return sorted(self._entries)

    def blob_id(self, path: str) -> str | None:
        """The object id of `path` in this commit (equal ids: equal bytes), None when it has no such path."""
        entry = self._entries.get(path)
        return entry[2] if entry else None

    def memo_id(self, path: str) -> str | None:
        """The blob id of a regular file, else None; its size is not asked (a plan memo's key holds `max_bytes`:
        a blob it remembers was read within the same limit)."""
        entry = self._entries.get(path)
        if entry is None or entry[0] not in ("100644", "100755"):
            return None
        return entry[2]

    def prefetch(self, paths) -> None:
        """Read the blobs of `paths` (regular files within the size limit) in one batch."""
        candidates = [p for p in paths if p not in self._blobs and p in self._entries
                      and self._entries[p][0] not in ("120000", "160000")]
        self._sizes(candidates)
        wanted = [p for p in candidates if self._entries[p][1] <= self.max_bytes]
        if not wanted:
            return
        for path, data in self._read_batch(wanted):
            self._blobs[path] = data

    def contents(self, paths, chunk: int = 256) -> Iterator[tuple[str, bytes]]:
        """(path, bytes) of the regular files of `paths` within the size limit, read in batches of `chunk` through
        `git cat-file --batch` and never kept (a 40,000-file tree is never held whole); others are left out."""
        wanted = [p for p in paths if p in self._entries and self._entries[p][0] in ("100644", "100755")]
        for start in range(0, len(wanted), chunk):
            part = wanted[start:start + chunk]
            self._sizes(part)
            part = [p for p in part if self._entries[p][1] <= self.max_bytes]
            if not part:
                continue
            yield from self._read_batch(part)

    def _read_batch(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        """(path, bytes) of each of `paths`, from one `git cat-file --batch`."""
        output, position = self._cat_file("--batch", paths), 0
        for path in paths:
            header_end = output.index(b"\n", position)
            header = output[position:header_end].split()
            if len(header) != 3:
                raise self._missing(path)
            size = int(header[2])
            yield path, output[header_end + 1 : header_end + 1 + size]
            position = header_end + 1 + size + 1

    def mode(self, path: str) -> str | None:
        """The git mode of `path` ("100644", "100755", "120000"...), None when the commit has no such path."""
        entry = self._entries.get(path)
        return entry[0] if entry else None

    def read(self, path: str) -> bytes:
        mode, _, sha = self._entries[path]
        if mode == "120000":
            raise SkippedFile(f"{path}: symlink; skipped")
        if mode == "160000":
            raise SkippedFile(f"{path}: submodule; skipped")
        if path not in self._blobs and self._size(path) > self.max_bytes:
            raise SkippedFile(f"{path}: larger than {self.max_bytes} bytes; skipped (raise --max-bytes to include it)")
        data = self._blobs.get(path)
        if data is None and os.getpid() == self._pid:
            if self._reader is None:
                self._reader = BlobReader(self._git_dir)
                weakref.finalize(self, self._reader.close)
            data = self._reader.read(sha)
        elif data is None:
            done = run(["--git-dir", self._git_dir, "cat-file", "blob", sha])
            data = done.stdout if done.returncode == 0 else None
        if data is None:
            raise self._missing(path)
        check_content(path, data, self.max_bytes)
        return data
