"""Facts about recipes, each with its source: what one recipe says and what a branch's recipes say, read from commits.

`facts` (every notation a recipe file spells, with where it spells it), `built` (the package set or interpreter
the result expression reaches, and the package's own version), `resolve` (let-bound names followed through
pinshift.syntax's scopes), `notation` (sm<N>, CUDA X.Y, Python 3.XY, ISAs, file-name tokens, normalised),
`recipe_set` (which `.nix` files are recipes and which are helpers), `collect` (the recipes a check command reads,
parsed once), `matrix` (the variant matrix and drift over many recipes), `facts_memo` (the facts of each (path,
blob id) remembered across runs), `branch_recipes` (the recipe facts of local branches, read from their commits),
`alignment` (the one pin a branch uses), `pin_inputs` (what steps ask of a nixpkgs clone or of another
repository's branch, answered before planning so steps stay pure). Nothing here changes a file.

May import: pinshift.errors, pinshift.syntax, pinshift.files, pinshift.git, pinshift.nixpkgs, pinshift.steps,
pinshift.migrations, pinshift.planning.
"""
