"""`pinshift lint`: findings about recipe files, read from their names, contents and references; nothing changed.

`lint` (names against contents: the L rules), `lint_references` (the reference graph's findings: R001-R003),
`lint_config` (which rules apply where: `--select`, `--ignore`, the `[lint]` table), `findings` (`Finding`,
one per line, JSON or Markdown; `pinshift verify` and `pinshift parse` report theirs the same way),
`annotations` (findings as GitHub workflow commands and SARIF).

May import: pinshift.errors, pinshift.syntax, pinshift.languages, pinshift.files, pinshift.git,
pinshift.graph, pinshift.facts.
"""
