"""What the recipes build: each evaluated offline by the real `nix-instantiate`, and two trees compared.

Against the stand-in nixpkgs in `standin/` (written in Nix, shipped as package data): `evaluation` (many recipes
per call, calls in parallel, in pinshift.sandbox), `snapshots` (commits and planned trees written to a private
folder only when something must be evaluated), `summary_memo` (summaries remembered across runs),
`build_changes` (two summaries compared; statuses and groups), `build_diff` (`pinshift diff`), `build_check`
(migrate's check after planning). With a nixpkgs clone, at the real pins: `clone_eval` (a revision exported from
the clone, a recipe's `pname` and `version` evaluated there: `verify --eval`), `real_build` (each recipe
evaluated at the commit it fetches), `real_changes` (rebuild or not, broken, cannot tell), `real_check`
(migrate's check at the real pins).

May import: pinshift.errors, pinshift.syntax, pinshift.files, pinshift.git (a revision exported from a clone),
pinshift.nixpkgs, pinshift.planning,
pinshift.sandbox, pinshift.facts.
"""
