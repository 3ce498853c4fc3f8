"""The git layer: every git call pinshift makes; it speaks branches, commits and trees, never steps.

One way to run git: the `git` command, started only by pinshift.git.run (`run`, `stream`; `Git`: a
repository's commands, with the environment and options they always had), never through a library.
GitPython was dropped (issue 43): what pinshift asked of it, a command wrapper, finding a repository and a
`git cat-file --batch` reader, is the plain command, and importing it cost every command that opened a
repository about 80 ms (docs/performance.md). Nothing here needs it.

`repo` (`Repository`, what callers hold: opening a repository where git finds it, its methods from `refs`
(branches and names: resolve, check a new name, move, push), `history` (commits, what changed between two,
a migration branch's trailers) and `config` (identity, signing, hooks); `listed_files`), `objects`
(`CommitTree`: a commit's files read through `ls-tree` and `cat-file`), `clone` (`CloneReader`/
`ObjectStore`: a clone read through its objects only), `commit` (a step's commit: blobs streamed into `git
fast-import` and `commit-tree`, or `git commit` in a scratch worktree when the repository has hooks),
`worktree` (that scratch worktree, and the worktrees of killed runs), `entry_names` (which paths from a tree
may become files: git's `verify_path` rules; a commit holding another is refused).

May import: pinshift.errors, pinshift.interrupts, pinshift.files.
"""
