"""nixpkgs itself: its archives' hashes computed offline and a local clone asked for names and commits.

`nar` (Nix archives streamed into sha256, Nix base32 / SRI; pure), `archive` (the tree `git archive`
writes, as NAR nodes: what `nix-prefetch-url --unpack` prints), `clone` (a local nixpkgs clone: names to
commits, hashes cached per commit), `checkout` (`NixpkgsCheckout`: a revision of a clone read through git's
objects, which package sets, attributes, parameters and versions it has; parsed with pinshift.syntax, nothing
evaluated).

May import: pinshift.errors, pinshift.syntax, pinshift.files, pinshift.git.
"""
