"""The git layer: every git call pinshift makes; it speaks branches, commits and trees, never steps.

`repo` (`Repository`, reading commits and trees through their objects, refs, worktrees, a clone read
through its objects only), `commit` (a step's commit: blobs streamed into `git fast-import` and
`commit-tree`, or `git commit` in a scratch worktree when the repository has hooks), `entry_names` (which paths
from a tree may become files: git's `verify_path` rules; a commit holding another is refused).

May import: pinshift.errors, pinshift.interrupts, pinshift.files.
"""
