"""A local clone read and never written (a nixpkgs checkout: `pinshift hash`, pin-swap's `hash = "compute"`).

`CloneReader` resolves names in the clone itself; `ObjectStore` reads its objects through a throwaway git
directory linked to the clone by `objects/info/alternates` alone, so that none of the clone's configuration,
replace refs or attributes, nor the user's, applies and nothing is ever fetched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pinshift.errors import GitError
from pinshift.git.objects import check_entry
from pinshift.git.run import refused_by_owner, run, stream


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a commit's tree, recursively listed: `mode` as git stores it (0o100755, 0o40000...)."""

    path: bytes
    mode: int
    sha: str


class MissingObject(GitError):
    """An object the clone should have but does not (a partial or damaged clone); `sha` names it."""

    def __init__(self, sha: str, message: str):
        super().__init__(message)
        self.sha = sha


def _git_output(args: list) -> bytes | None:
    """stdout of a git command, None when it fails (the callers say what that means)."""
    done = run(args)
    return done.stdout if done.returncode == 0 else None


class CloneReader:
    """A local clone (a nixpkgs checkout, bare or not, shallow or not), read and never written.

    Names are resolved in the clone itself (`resolve`). Objects are read through
    `objects()`: a throwaway git directory outside the clone whose only link to it is
    `objects/info/alternates`, so that, as on the server that makes GitHub's archives,
    none of the clone's configuration (`core.autocrlf`, promisor remotes: nothing is
    ever fetched), replace refs, `info/attributes`, nor the user's global or system
    git configuration and attributes apply.
    """

    def __init__(self, directory: Path, common_dir: Path):
        self.directory, self.common_dir = directory, common_dir

    @classmethod
    def open(cls, directory: Path) -> "CloneReader | None":
        """The clone at `directory` (its top or any directory in it), None when it is not a git repository."""
        done = run(["-C", str(directory), "rev-parse", "--path-format=absolute", "--git-common-dir"])
        if done.returncode != 0:
            refused = refused_by_owner(done.stderr)
            if refused is not None:
                raise refused
            return None
        return cls(Path(directory), Path(done.stdout.decode().strip()))

    def shallow(self) -> bool:
        return (self.common_dir / "shallow").exists()

    def resolve(self, name: str) -> tuple[str, str | None] | None:
        """(commit id, full ref name or None for a commit id) of `name`; None when the clone has no such commit.

        `name` is anything `git rev-parse` takes (a commit id, abbreviated or not, a branch or
        a tag, annotated tags peeled); failing that, a remote-tracking branch of that name in
        exactly one remote (`nixos-unstable` is `origin/nixos-unstable` in a fresh clone).
        """
        base = ["-C", str(self.directory), "rev-parse", "--verify", "-q"]
        commit = _git_output([*base, "--end-of-options", f"{name}^{{commit}}"])
        if commit is not None:
            ref = _git_output([*base, "--symbolic-full-name", "--end-of-options", name]) or b""
            return commit.decode().strip(), ref.decode().strip() or None
        found = self.remote_branches(name)
        if len({commit for _, commit in found}) == 1:
            return found[0][1], found[0][0]
        return None

    def object_kind(self, name: str) -> str | None:
        """What `name` names once tags are peeled ("commit", "tree", "blob"); None when the clone has no such
        object."""
        peeled = _git_output(["-C", str(self.directory), "rev-parse", "--verify", "-q", "--end-of-options",
                              f"{name}^{{}}"])
        if peeled is None:
            return None
        kind = _git_output(["-C", str(self.directory), "cat-file", "-t", peeled.decode().strip()])
        return kind.decode().strip() if kind is not None else None

    def remote_branches(self, name: str) -> list[tuple[str, str]]:
        """(ref, commit) of every `refs/remotes/<remote>/<name>`."""
        output = _git_output(["-C", str(self.directory), "for-each-ref", "--format=%(refname) %(objectname)",
                              "refs/remotes/"]) or b""
        found = []
        for line in output.decode().splitlines():
            ref, _, commit = line.partition(" ")
            remote_and_name = ref.removeprefix("refs/remotes/")
            if "/" in remote_and_name and remote_and_name.split("/", 1)[1] == name:
                found.append((ref, commit))
        return found

    def objects(self) -> "ObjectStore":
        return ObjectStore(self.common_dir / "objects")


UNHASHABLE = "no hash was computed: Nix could never unpack an archive of this tree to the same files"


class ObjectStore:
    """Objects of a clone seen through a private, empty git directory (see CloneReader); use as a context manager."""

    def __init__(self, objects: Path):
        self.objects = objects
        self.git_dir: Path | None = None

    def __enter__(self) -> "ObjectStore":
        self.git_dir = Path(tempfile.mkdtemp(prefix="pinshift-objects-"))
        (self.git_dir / "objects" / "info").mkdir(parents=True)
        (self.git_dir / "refs").mkdir()
        (self.git_dir / "HEAD").write_text("ref: refs/heads/none\n")
        (self.git_dir / "objects" / "info" / "alternates").write_text(f"{self.objects.resolve()}\n")
        clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self.env = dict(clean, GIT_DIR=str(self.git_dir), GIT_INDEX_FILE=str(self.git_dir / "index"),
                        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_ATTR_NOSYSTEM="1",
                        GIT_NO_REPLACE_OBJECTS="1", GIT_TERMINAL_PROMPT="0", GIT_LITERAL_PATHSPECS="1")
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.git_dir, ignore_errors=True)

    def _run(self, args: list, data: bytes | None = None) -> subprocess.CompletedProcess:
        return run(["-c", f"core.attributesFile={os.devnull}", *args], env=self.env, data=data)

    def tree(self, commit: str) -> list[TreeEntry]:
        """Every entry of the commit's tree, directories included, in git's order; an entry_names.UnsafeEntry when
        one of its paths is one git refuses to check out (see `_check_entry`)."""
        done = self._run(["ls-tree", "-r", "-t", "-z", "--full-tree", commit])
        if done.returncode != 0:
            raise MissingObject(commit, f"cannot list the tree of {commit}: {done.stderr.decode(errors='replace').strip()}")
        entries, listed, folders = [], set(), {""}
        for record in done.stdout.split(b"\0"):
            if record:
                meta, path = record.split(b"\t", 1)
                mode, _, sha = meta.split(b" ")
                name = path.decode("utf-8", "surrogateescape")
                check_entry(commit, name, name in listed, folders, UNHASHABLE)
                listed.add(name)
                if mode == b"040000":
                    folders.add(name)
                entries.append(TreeEntry(path, int(mode, 8), sha.decode()))
        return entries

    def attributes(self, commit: str, paths: list[bytes], names: tuple[str, ...]) -> dict[bytes, dict[str, str]]:
        """`git check-attr` of `names` for `paths` ("dir/" for a directory), read from the commit's own
        .gitattributes files as `git archive` reads them: {path: {name: "set"|"unset"|value}}, unspecified left out.
        """
        if self._run(["read-tree", commit]).returncode != 0:
            raise MissingObject(commit, f"cannot read the tree of {commit} into an index")
        done = self._run(["check-attr", "--cached", "-z", "--stdin", *names], b"".join(p + b"\0" for p in paths))
        if done.returncode != 0:
            raise GitError(f"git check-attr failed: {done.stderr.decode(errors='replace').strip()}")
        fields = done.stdout.split(b"\0")
        found: dict[bytes, dict[str, str]] = {}
        for index in range(0, len(fields) - 2, 3):
            path, name, value = fields[index : index + 3]
            if value != b"unspecified":
                found.setdefault(path, {})[name.decode()] = value.decode(errors="replace")
        return found

    def archived(self, commit: str, paths: list[bytes], chunk: int = 500) -> dict[bytes, bytes]:
        """The bytes `git archive` writes for these regular files (export-subst, eol, ident... applied)."""
        import io
        import tarfile

        found: dict[bytes, bytes] = {}
        for start in range(0, len(paths), chunk):
            done = self._run(["archive", "--format=tar", commit, "--", *paths[start : start + chunk]])
            if done.returncode != 0:
                raise GitError(f"git archive failed: {done.stderr.decode(errors='replace').strip()}")
            with tarfile.open(fileobj=io.BytesIO(done.stdout), mode="r:", encoding="utf-8",
                              errors="surrogateescape") as archive:
                for member in archive:
                    if member.isfile():
                        name = member.name.encode("utf-8", "surrogateescape")
                        found[name] = archive.extractfile(member).read()
        return found

    def blobs(self, shas: list[str]) -> Iterator[bytes]:
        """The contents of `shas`, in order, through one `git cat-file --batch` (streamed, never all in memory)."""
        import threading

        process = stream(["cat-file", "--batch", "--buffer"], env=self.env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def feed() -> None:
            try:
                for sha in shas:
                    process.stdin.write(sha.encode() + b"\n")
                process.stdin.close()
            except (BrokenPipeError, ValueError):
                pass  # the reader stopped early (an error, or the consumer let go)

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for sha in shas:
                header = process.stdout.readline()
                parts = header.split()
                if len(parts) != 3 or parts[1] != b"blob":
                    raise MissingObject(sha, f"object {sha} is missing ({header.decode(errors='replace').strip() or 'no answer'})")
                size = int(parts[2])
                data = process.stdout.read(size)
                process.stdout.read(1)
                if len(data) != size:
                    raise MissingObject(sha, f"object {sha} was cut short")
                yield data
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            writer.join()
            process.stdout.close()
