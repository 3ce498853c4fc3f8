"""`pinshift verify`: would these recipes evaluate on their pin? Checked against a real nixpkgs checkout.

`verify` (the V rules: syntax, then what the recipes select and override exists at the revision they pin, read
statically by pinshift.nixpkgs.checkout; each hash against the pin's archive from the clone; with `--eval`,
`pname` and `version` evaluated by pinshift.evaluation.clone_eval in pinshift.sandbox). Its findings are
pinshift.lint's `Finding`s; `pinshift migrate --verify` runs it on the planned recipes.

May import: pinshift.errors, pinshift.files, pinshift.nixpkgs, pinshift.migrations, pinshift.sandbox,
pinshift.facts, pinshift.lint, pinshift.evaluation.
"""
