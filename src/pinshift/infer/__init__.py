"""`pinshift infer BASE TARGET`: learn a recipe from two commits and prove it (docs/infer.md).

Reads two trees, writes a recipe; every step it proposes is planned by the same runner
`pinshift migrate` uses, and kept only if it changes nothing TARGET did not change.
The flow is in `engine`; the command is `pinshift.commands.infer`.

May import: pinshift.errors, pinshift.edits, pinshift.syntax, pinshift.languages, pinshift.files, pinshift.git,
pinshift.nixpkgs, pinshift.steps, pinshift.migrations, pinshift.recipes, pinshift.planning, pinshift.report.
"""

