"""Knowing recipe repositories: what each recipe says and whether it fits a pin, never changing a file.

Facts (`facts`, `built`, `resolve`, `notation`: every notation with its source), `status` across branches and
repositories, `branch_facts` (a planned branch's facts for `{facts.…}`, and typed values judged by them),
`scan` (the variant matrix), `lint` (names against contents; `lint_references`: the reference graph's findings;
`annotations`: findings as GitHub workflow commands and SARIF), `verify` (against a nixpkgs checkout),
`alignment` (the one pin a branch uses),
`pin_inputs` (what steps ask of a nixpkgs clone or a sibling repository, answered before planning so steps
stay pure), and what the recipes build: `evaluation` (the real nix-instantiate against the stand-in nixpkgs
in `standin/`), `snapshots` (written by `tree_writer` through folder descriptors), `summary_memo`,
`build_changes`, `build_diff` (`pinshift diff`) and `build_check` (migrate's check after planning); with a
nixpkgs clone, at the real pins: `real_build` (each recipe evaluated at the commit it fetches, exported from the
clone), `real_changes` (rebuild or not, broken, cannot tell), `real_check` (migrate) and `status_real`.
`nix_process` owns how every Nix call runs (restricted, its own configuration and environment, no network,
bounded), `scratch_dirs` the temporary folders a later run removes when their run died.

May import: pinshift.errors, pinshift.syntax, pinshift.languages, pinshift.files, pinshift.git,
pinshift.graph, pinshift.nixpkgs, pinshift.steps, pinshift.migrations, pinshift.planning, pinshift.interrupts.
"""

