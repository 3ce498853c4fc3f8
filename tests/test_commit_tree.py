"""CommitTree: a commit's files from git's object store, read one by one or prefetched in one batch."""

from __future__ import annotations

import git as gitpython

from pinshift.demo.matrix import OLD_REV, render_recipe, variants
from pinshift.files.tree import SkippedFile
from pinshift.git.repo import CommitTree
from pinshift.recipes.recipe import find_recipe, validate_recipe
from pinshift.planning.jobs import RunOptions
from pinshift.planning.runner import plan_recipe
from pinshift.steps.registry import available_kinds


def _repo(make_repo, count: int):
    matrix = variants()
    files = {f".flox/pkgs/r{n:04}.nix": render_recipe(matrix[n % len(matrix)], OLD_REV) for n in range(count)}
    files["README.md"] = "# recipes\n"
    files[".flox/pkgs/binary.nix"] = b"\x00\x01 not text"
    return gitpython.Repo(make_repo(files, branch="pytorch-2.9"))


def test_prefetched_bytes_equal_single_reads(make_repo):
    repo = _repo(make_repo, 30)
    single, batched = CommitTree(repo, "HEAD"), CommitTree(repo, "HEAD")
    paths = single.paths()
    batched.prefetch(paths)
    for path in paths:
        try:
            expected = single.read(path)
        except SkippedFile as skipped:
            assert str(skipped) and path.endswith("binary.nix")
            continue
        assert batched.read(path) == expected


def test_parallel_plan_from_a_commit_equals_the_serial_one(make_repo):
    repo = _repo(make_repo, 450)
    recipe = find_recipe("pytorch-2.10-cuda12_9")
    resolved = validate_recipe(recipe, available_kinds())
    serial = plan_recipe(CommitTree(repo, "HEAD"), recipe, resolved, RunOptions(jobs=1))
    parallel = plan_recipe(CommitTree(repo, "HEAD"), recipe, resolved, RunOptions(jobs=2))
    assert serial == parallel
    assert len(serial.steps[0].changed) == 450


def _read_in_child(tree, path, queue):
    queue.put(tree.read(path))


def test_a_forked_worker_reads_without_gitpython(make_repo):
    """After a fork, a read that was not prefetched goes through a git cat-file of the child's own."""
    import multiprocessing

    repo = _repo(make_repo, 3)
    tree = CommitTree(repo, "HEAD")
    path = ".flox/pkgs/r0001.nix"
    expected = tree.read(path)  # the parent's GitPython reader is now running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_in_child, args=(tree, path, queue))
    child.start()
    data = queue.get(timeout=30)
    child.join(timeout=30)
    assert child.exitcode == 0 and data == expected
