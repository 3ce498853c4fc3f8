"""Planning: a recipe's steps run over the files in memory, giving a Plan; nothing is written here.

`plan` (`Plan`, `StepPlan`, `FileChange`, `Outcome`: plain values), `runner` (`plan_step`, `plan_recipe`
over a `WorkingSet`, file-major), `pool` (files shared out to forked workers), `memo` (a file's plan
remembered across runs), `changed_lines` (a change's -U0 hunks, the key that groups identical changes),
`unified_diff` (a change as `git diff` shows it), `references` (the reference graph handed to the step kinds
that read it, and the check after every step: no reference left naming a missing file, no call passing what its
callee does not take).

May import: pinshift.errors, pinshift.interrupts, pinshift.edits, pinshift.languages, pinshift.files,
pinshift.graph, pinshift.steps, pinshift.recipes, and pinshift.migrations (the memo's code fingerprint reads their sources).
"""
