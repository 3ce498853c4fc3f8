"""Planning: a recipe's steps run over the files in memory, giving a Plan; nothing is written here.

`plan` (`Plan`, `StepPlan`, `FileChange`, `Outcome`: plain values), `runner` (`plan_step`, `plan_recipe`:
ties the stages, file-major), in the order data flows: `jobs` (a recipe step as the pipeline runs it,
`RunOptions`), `working_set` (the files as the steps so far left them), `segments` (steps cut where one needs
every file first; a segment's files planned), `prepare` (a file-level step's paths, a step's reference facts,
before contents), `survey` (a `prepare` hook's look at every file, or a guess checked against all),
`file_edits` (one file through a segment's steps: edits planned, applied, re-parsed), `memo_lookup` (files
looked up in the memo before they are planned), `pool` (files shared out to forked workers), `memo` (a file's plan
remembered across runs), `changed_lines` (a change's -U0 hunks, the key that groups identical changes), `unified_diff` (a change as
`git diff` shows it),
`references` (the reference graph handed to the step kinds that read it, and the check after every step: no
reference left naming a missing file, no call passing what its callee does not take).

May import: pinshift.errors, pinshift.interrupts, pinshift.edits, pinshift.languages, pinshift.files,
pinshift.graph, pinshift.steps, pinshift.recipes, and pinshift.migrations (the memo's code fingerprint reads their sources).
"""
