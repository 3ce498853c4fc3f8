"""Views across branches and repositories: `pinshift status`, `pinshift scan`, and a planned branch's facts.

`status` (a `BranchStatus` row per repository × branch: pins, packages and their versions, CUDA, GPU, Python,
pattern, drift, alignment; `align_recipe`), `status_report` (those rows as a text table fitted to the terminal,
Markdown or JSON `pinshift.status/3`), `status_real` (each branch's build recipes evaluated at the pins they
fetch, with `--nixpkgs`), `scan_report` (`pinshift scan`'s variant matrix as text, Markdown or JSON),
`branch_facts` (a planned branch's facts for `{facts.…}`, and typed values judged by them).

May import: pinshift.errors, pinshift.syntax, pinshift.languages, pinshift.git, pinshift.nixpkgs,
pinshift.steps, pinshift.facts, pinshift.evaluation.
"""
