"""Bundled step kinds (shipped as pinshift.migrations): one module per kind, its docstring its user docs.

The protocol is pinshift.steps.kind; docs/writing-steps.md says how to write one. A step kind returns
edits and warnings: it never writes a file, runs git or prints.

May import: pinshift.errors, pinshift.edits, pinshift.syntax, pinshift.graph, pinshift.languages,
pinshift.files, pinshift.nixpkgs, pinshift.steps.
"""

