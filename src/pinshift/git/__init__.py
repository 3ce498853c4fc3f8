"""The git layer: every git call pinshift makes; it speaks branches, commits and trees, never steps.

`repo` (`Repository`, reading commits and trees through their objects, refs, worktrees, a clone read
through its objects only), `commit` (a step's commit: blobs streamed into `git fast-import` and
`commit-tree`, or `git commit` in a scratch worktree when the repository has hooks).

May import: pinshift.errors, pinshift.interrupts, pinshift.files.
"""
