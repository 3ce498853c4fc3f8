"""The reference graph of a tree of recipes: which file imports, calls or names which, passing what.

`references` (the references one parsed Nix file makes: `import ./x.nix`, `import ./x.nix { … }`,
`callPackage ./x.nix { … }`, a bare path literal such as `./x.nix`, each with the argument set a call
passes, and computed ones such as `import (./. + "/x.nix")` marked as such; read from the syntax tree in
one pass linear in the file), `signature` (the arguments a file's value takes when it is a function),
`paths` (a path literal resolved against the tree it sits in: relative to the file, `./dir` meaning
`./dir/default.nix` when imported or called; and the literal that names a moved file from where it is
written), `tree` (`ReferenceGraph`: the references of a whole tree, read lazily from its bytes; who refers
to a file; a reference's problems: it names no file, a call passes an argument the callee does not take).

Reads trees, never git, files on disk or the terminal: pinshift.planning builds a graph from the files
as the steps so far left them and hands it to the step kinds' pure hooks; `pinshift lint` builds one
over the directories it reads.

May import: pinshift.errors, pinshift.syntax, pinshift.files.
"""
