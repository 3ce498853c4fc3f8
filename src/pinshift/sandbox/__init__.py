"""How every Nix call runs: restricted, its own configuration and environment, no network, bounded, in private folders.

`nix_process` (`NixSandbox`: `nix-instantiate` with `-I` only the folders it needs, a `nix.conf`, `PATH` and
`HOME` of pinshift's own, nothing else of the environment, a network namespace, memory and time limits, killed
with pinshift), `scratch_dirs` (the private temporary folders, locked while their run lives and removed by a
later run when it died), `tree_writer` (`SnapshotWriter`: a tree's files written through folder descriptors,
never following a link, each path checked again with git's rules). Knows nothing of recipes: pinshift.evaluation
and pinshift.verify decide what is evaluated.

May import: pinshift.errors, pinshift.interrupts, pinshift.git.
"""
