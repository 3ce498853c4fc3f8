"""The syntax layer: a Nix file as its bytes plus a lossless tree-sitter tree, and what Nix itself checks.

`document` (parse, positions, incremental re-parse), `problems` and `parse_rules` (what `nix-instantiate
--parse` rejects), `scopes` (the binder of a name), `queries` (typed views: selects, bindings, functions,
strings, fetchers), `package_sets` (which attrsets define a package set's attributes), `ancestry` (parents
without tree-sitter's O(depth) `.parent`), `meaning` (a file's tokens without comments and layout, digested). Every check here is linear in the tree's size (docs/syntax.md).
Reads trees, never files, git or the terminal.

May import: nothing of pinshift outside this package.
"""
