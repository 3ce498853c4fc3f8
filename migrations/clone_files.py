"""clone-files — add new recipe files copied from existing ones (new variants), with their own name and values.

What it changes: each file the step's `files` globs and `select` both select, whose name
contains `from` (with `regex = true`: matches the regular expression `from`), is copied
next to itself under the name with `from` replaced by `to`. In the copy, its
*self-references* follow the new name, as with rename-files: each whole-token occurrence
of the source's stem (the name without `.nix`) in the literal text of a string or in a
comment becomes the new stem (`pname`, the `# Package name:` header). Then `values` sets
bindings in the copy by binding path, anywhere in the file (a `let` binding such as
`gpuArchNum` included), with set-binding's rules: the value is Nix source, parsed
before anything runs; every binding at that path gets it; where the file has none, it
is inserted into the attrset `overrideAttrs` returns, or a warning says it could not be.

References: in a copy, a path literal naming a file cloned in the same step names that file's
copy (`import ./pytorch-…-sm75-avx.nix` in the SM70 torchvision copy becomes `import
./pytorch-…-sm70-avx.nix`: the clone of the same variant); one naming a file not cloned stays
as it is (the copy uses the original), and the report says so once, grouped (`3 files: refers
to a recipe this step does not clone: the clone refers to the original`). Files that refer to a source
keep referring to it. After the step, no reference may name a missing file.

What it never touches: the source file, and every other byte of the copy.

A target that already exists: byte-identical to the planned copy, it is left as it is
(so running the recipe again changes nothing); otherwise the step is refused before
anything is written, naming both paths (exit 1). Also refused: two copies onto one
name, a new name outside the step's `files` globs, a name that is not plain (letters,
digits, `.`, `_`, `+`, `-`). Symlinks, binary and oversized sources are skipped.
Later steps of the recipe see (and edit) the copies.

Idempotence: `to` may not contain `from` (literal mode), so the copies are never copied
again; a second run finds every target byte-identical and changes nothing.

Parameters:
  from    str, required. Text to find in file names (a Python regular expression with `regex`).
  to      str, required. Its replacement (`\\1` and `\\g<name>` refer to groups with `regex`).
  select  list of str, default ["**"] (everything the step's files select). Globs of the sources.
  regex   bool, default false. Treat `from` as a regular expression.
  values  table of binding path = Nix source, optional. Bindings to set in each copy.

Example recipe step (SM70/Volta variants from the SM75 ones):
    [[steps]]
    kind = "clone-files"
    title = "Add SM70 (Volta) variants"
    [steps.params]
    from = "sm75"
    to = "sm70"
    select = [".flox/pkgs/*-sm75-*.nix"]
    values = { gpuArchNum = '"70"', gpuArchSM = '"7.0"' }

  .flox/pkgs/pytorch-python313-cuda12_9-sm75-avx2.nix ⇒ .flox/pkgs/pytorch-python313-cuda12_9-sm70-avx2.nix, with
  -# Package name: pytorch-python313-cuda12_9-sm75-avx2   +# Package name: pytorch-python313-cuda12_9-sm70-avx2
  -  gpuArchNum = "75";                                   +  gpuArchNum = "70";
  -  gpuArchSM = "7.5";                                   +  gpuArchSM = "7.0";
  -    pname = "pytorch-python313-cuda12_9-sm75-avx2";     +    pname = "pytorch-python313-cuda12_9-sm70-avx2";

The same without git: pinshift apply clone-files --set from=sm75 --set to=sm70 \\
    --set 'values.gpuArchNum="70"' --set 'values.gpuArchSM="7.0"' .flox/pkgs
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pinshift.files import fileops
from pinshift.edits import Edit
from pinshift.errors import ParamError
from pinshift.files.globs import matches
from pinshift.migrations import set_binding
from pinshift.migrations._file_names import Naming, self_reference_edits, stem
from pinshift.migrations._references import cloned_references, rewrite_edits
from pinshift.steps.kind import ReferencePlan, StepContext, StepOutput
from pinshift.syntax.queries import find_bindings

NAME = "clone-files"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): a copy is a new recipe (added); its values are what the step is for.
BUILD_CHANGES = ("*",)
LANGUAGES = ("nix",)  # the files whose self-references and values it edits; any selected file is copied


@dataclass(frozen=True)
class Params:
    from_: str
    to: str
    select: tuple[str, ...] = ("**",)
    regex: bool = False
    values: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        Naming(self.from_, self.to, self.regex)
        if not self.select or any(not glob for glob in self.select):
            raise ParamError("select", f"'select' must list globs of the files to clone, not {list(self.select)!r}")
        for path, value in self.values.items():
            if not isinstance(value, str):
                raise ParamError("values", f"'values.{path}' must be Nix source as a string (e.g. '\"70\"'), "
                                           f"not {value!r}")
            try:
                set_binding.Params(path=path, value=value)
            except ParamError as error:
                raise ParamError("values", f"'values.{path}': {error}") from None

    @property
    def naming(self) -> Naming:
        return Naming(self.from_, self.to, self.regex)


def plan_paths(paths, params: Params) -> list[fileops.FileOp]:
    sources = [path for path in paths if matches(path, params.select)]
    return [fileops.clone(path, target) for path, target in params.naming.targets(sources)]


def plan_references(graph, params: Params, ops, selected) -> ReferencePlan:
    """A copy's references to files cloned with it name their copies; others stay, noted."""
    return cloned_references(graph, ops)


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    out = StepOutput()
    if not context.source:
        return out
    reason = f"{NAME}: {stem(context.source)} -> {stem(context.path)}"
    out.edits.extend(self_reference_edits(doc, context.source, context.path, reason))
    rewrite_edits(out, context, NAME)
    for path, value in params.values.items():
        found = find_bindings(doc, path)
        for binding in found:
            if doc.text(binding.value) != value.encode():
                out.edits.append(Edit(binding.value.start_byte, binding.value.end_byte, value.encode(), f"{NAME}: {path}"))
        if not found:
            inserted = set_binding.plan(doc, set_binding.Params(path=path, value=value), context)
            out.edits.extend(inserted.edits)
            out.warnings.extend(inserted.warnings)
    return out
