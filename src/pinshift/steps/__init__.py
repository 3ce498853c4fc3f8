"""What a step is: the protocol every step kind follows, which kinds exist, and the consent to run one.

`kind` (`StepKind`, typed `Parameter`s, what a step is given and returns: edits and warnings, never a
write, a git call or a print), `registry` (bundled kinds in pinshift.migrations, then `--migrations DIR`,
then the repository's `.pinshift/migrations/`), `scripts` (kinds from files outside pinshift, imported and
called guarded), `trust` (consent to run repository code), `layout` (the file's own habits for code a step
inserts).

May import: pinshift.errors, pinshift.edits, pinshift.syntax, pinshift.languages, pinshift.files, and
pinshift.migrations (the registry: where the bundled kinds are).
"""
