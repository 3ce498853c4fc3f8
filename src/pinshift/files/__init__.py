"""Files on disk and the bytes pinshift agrees to read: one part, below git and every step.

`content` (what pinshift agrees to parse: size, binary), `tree` (`SourceTree`, `DirectoryTree`,
`write_atomic`), `globs` (recipe globs with `**`), `fileops` (rename / clone / remove operations, checked
before anything is planned), `replace` (several files replaced all or nothing), `cache_dir` (pinshift's own
directories under `$XDG_CACHE_HOME`, opened without following a link), `record_store` (an append-only
store of keyed records in one of them: the facts and summary memos), `data_codec` (what the caches hold:
allowlisted values as JSON, never a pickle). Knows nothing of git: a caller
that wants git's file list passes it in (`DirectoryTree(root, listing=git.repo.listed_files)`).

May import: pinshift.errors, pinshift.interrupts.
"""
