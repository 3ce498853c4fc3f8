"""rename-files — rename recipe files, and the references each file makes to its own name.

What it changes: every file the step's `files` globs select whose name contains `from`
(with `regex = true`: whose name the regular expression `from` matches) is renamed in
its directory, every occurrence of `from` in the name becoming `to`. In the renamed
file, its *self-references* follow: each occurrence of the old stem (the name without
`.nix`) as a whole token in the literal text of a string or in a comment becomes the new
stem: `pname = "pytorch-python312-cpu-avx2";` and `# Package name: pytorch-python312-cpu-avx2`.
A whole token is not preceded or followed by a letter, digit, `_` or `-`, so
`pytorch-python312-cpu-avx` never matches inside `pytorch-python312-cpu-avx2`.

What it never touches: the directory, every other byte of the file (identifiers, paths,
attribute names written without quotes, `${...}` code, other files' names), and files
whose name does not match. Files that are not Nix are moved as they are (noted).
Symlinks, binary and oversized files are skipped with their reason.

References follow: every file of the recipe's files (also those the step's `files` globs do
not select) that imports, calls or names a renamed file by a path literal (`import
./pytorch-python313-….nix { … }`, `callPackage ./x.nix { }`, `./x.nix`) gets the new name in
that literal, in the same commit; files renamed together keep referring to each other (a
companion renamed with its PyTorch recipe imports the renamed recipe). Only the literal's
file name changes (`./x.nix`, `../pkgs/x.nix`: the directory part stays; `./dir` for a renamed
`dir/default.nix` becomes `./dir/<new name>`). The report groups them under the step:
`4 files: import of a renamed recipe follows it`. Never touched: text that names a renamed
file outside Nix (a README row, a Flox manifest): noted once, grouped, for a later step; a
computed path (`import (./. + "/x.nix")`), which pinshift never guesses at (noted: check it by
hand). A file outside the
recipe's files that refers to a renamed file is refused, naming both (exit 1): add it to the
recipe's files. After the step, no reference may name a missing file (docs/migration-steps.md).

Refused before anything is written, naming both paths (exit 1): a new name that is
already taken by a file this step does not move away; two files renamed to one name;
a new name outside the step's `files` globs; a name that is not plain (letters,
digits, `.`, `_`, `+`, `-`). Later steps of the recipe see the new paths; a later
step whose `files` glob names only paths this step renamed away is a recipe error
(exit 2). Git records each file as renamed (`git diff -M --stat`: `old => new`).

Idempotence: `to` may not contain `from` (literal mode), so a second run renames
nothing. With `regex = true` write a pattern that does not match its own output.

Parameters:
  from    str, required. Text to find in file names (a Python regular expression with `regex`).
  to      str, required. Its replacement (`\\1` and `\\g<name>` refer to groups with `regex`).
  regex   bool, default false. Treat `from` as a regular expression.

Example recipe step (the pytorch-2.9-python311 branch, made from a python312 branch):
    [[steps]]
    kind = "rename-files"
    title = "Rename the recipes to python311"
    [steps.params]
    from = "python312"
    to = "python311"

  .flox/pkgs/pytorch-python312-cpu-avx2.nix → .flox/pkgs/pytorch-python311-cpu-avx2.nix, with
  -# Package name: pytorch-python312-cpu-avx2      +# Package name: pytorch-python311-cpu-avx2
  -    pname = "pytorch-python312-cpu-avx2";        +    pname = "pytorch-python311-cpu-avx2";

The same as one command on a directory, without git:
    pinshift apply rename-files --set from=python312 --set to=python311 .flox/pkgs
"""

from __future__ import annotations

from dataclasses import dataclass

from pinshift.files import fileops
from pinshift.migrations._file_names import Naming, self_reference_edits, stem
from pinshift.migrations._references import computed_references, renamed_references, rewrite_edits, text_mentions
from pinshift.steps.kind import ReferencePlan, StepContext, StepOutput

NAME = "rename-files"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): a renamed recipe's self-references (pname, descriptions) follow its new name.
BUILD_CHANGES = ("*",)
LANGUAGES = ("nix",)  # the files whose self-references it edits; any selected file is renamed


@dataclass(frozen=True)
class Params:
    from_: str
    to: str
    regex: bool = False

    def __post_init__(self) -> None:
        Naming(self.from_, self.to, self.regex)

    @property
    def naming(self) -> Naming:
        return Naming(self.from_, self.to, self.regex)


def plan_paths(paths, params: Params) -> list[fileops.FileOp]:
    return [fileops.rename(path, target) for path, target in params.naming.targets(paths)]


def plan_references(graph, params: Params, ops, selected) -> ReferencePlan:
    """The files referring to a renamed file follow it (see the docstring); text mentions are noted."""
    found = renamed_references(graph, ops)
    renamed = [op.path for op in ops if op.action == "rename"]
    if renamed:
        found.notes.extend(text_mentions(graph, renamed, "renamed"))
        found.notes.extend(computed_references(graph, "renames"))
    return found


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    if context.source:
        reason = f"{NAME}: {stem(context.source)} -> {stem(context.path)}"
        out.edits.extend(self_reference_edits(doc, context.source, context.path, reason))
    rewrite_edits(out, context, NAME)
    return out
