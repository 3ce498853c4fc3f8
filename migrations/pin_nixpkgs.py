"""pin-nixpkgs — convert a Flox function-argument recipe into a self-contained recipe on a pinned nixpkgs.

What it changes, in a file whose expression is a function of its packages
(`{ python3Packages, lib, config, cudaPackages }: ...`, as Flox calls recipes):
  - the function's formals (with any `@` name) become `signature`
    (`{ pkgs ? import <nixpkgs> {} }`);
  - `nixpkgs_pinned = import (builtins.fetchTarball { url = "..."; }) { config = ...; overlays = ...; };`
    becomes the first binding of the top-level `let` (above the comments of the binding that
    was first), or a new `let ... in` around the body when there is none; on its own lines,
    indented like the file's other bindings (tabs or spaces), after it a blank line when the
    file separates its bindings so, with the file's line endings; `comment` goes above it;
  - every reference bound to a former formal, found by lexical scope (src/pinshift/syntax/scopes.py),
    is qualified: `lib.filter` -> `nixpkgs_pinned.lib.filter`, `openblas` -> `nixpkgs_pinned.openblas`,
    also inside `${...}` of strings, `with lib;` and `inherit (python3Packages) numpy;`;
  - a formal with a default (`cudaSupport ? false`) becomes `nixpkgs_pinned.cudaSupport or false`,
    which is what callPackage gave it (the package set's attribute if it has one, else the
    default); its default is qualified the same way, and parenthesized where needed;
  - with an `@` pattern (`args@{ lib, ... }`), `args.lib` becomes `nixpkgs_pinned.lib` and
    `inherit (args) lib;` becomes `inherit (nixpkgs_pinned) lib;`;
  - a formal named in `map` becomes that expression instead (`config` -> `nixpkgs_pinned.config`).

What it never touches: a name bound again inside (a `let`, `rec` binding or function argument of
the same name shadows the formal: its references keep their name), attribute names (`lib = 1;`,
`x.lib`), comments, the literal text of strings; anything outside the function head, the new
binding and the qualified references.

A file it does not convert is left exactly as it was, with a warning at the place that stops it:
  - `inherit lib;` of a former formal (`lib = nixpkgs_pinned.lib;` is not always the same thing:
    write by hand what is meant);
  - a former formal the pinned package set does not provide by that name and `map` does not
    name: nixpkgs' own import arguments `config`, `overlays`, `crossOverlays`, `system`,
    `localSystem`, `crossSystem` (the set's `config` is what `config = ...` below says, not the
    caller's: map it explicitly, e.g. `map = { config = "nixpkgs_pinned.config" }`);
  - the `@` name used other than as `args.name` or `inherit (args) name;` (`args ? x`, `f args`:
    the pinned set is more than the arguments a caller passed);
  - a qualified reference whose new name an inner binding would capture (an inner
    `let nixpkgs_pinned = ...;`), or a name the new signature or binding would capture (a
    `pkgs` that only a `with` supplied), or a default whose names mean something else where
    it is inlined;
  - a file that is not a function of a set of arguments (`x: ...`, or no function at all).
Already pinned: a file whose top-level `let` already binds `name` is left alone with a note
(running the step twice changes nothing).

Companion recipes (torchvision, torchaudio) build on a sibling recipe of the same directory:
`customPytorch = import ./pytorch-….nix { inherit python3Packages lib config; };` passes the
Flox arguments on, or `callPackage ./pytorch-….nix { }` lets Flox's callPackage pass them. Once
the sibling is pinned, it takes `signature` and none of those arguments. `companions` says how
such calls are converted:
  "graph" (default)  the reference graph decides (pinshift.graph): a call of another file of the
        tree passes only what that file's function takes after this step: `signature`'s names
        for a file this step converts, its own head for any other (an already pinned sibling).
        A call that only passes former formals on by their own names (`inherit lib;`,
        `lib = lib;`) and passes none of them becomes `import ./pytorch-….nix {}` (an empty
        `{ }` stays as written; a former formal `callPackage` of a converted file becomes
        `import`), and the file is then converted like any other. Whether a file converts
        depends on the files it calls, so the step first works out, over the graph, which
        files convert together (a companion converts when its PyTorch recipe does). A file
        it cannot convert that calls one it converts is refused with the reason (never left
        calling it with arguments it no longer takes); a call passing some names the callee
        still takes and some it does not is left for a person (the file is not converted).
  "import"  the rule before the graph: every such call of a relative `.nix` path (by `import`
        or a former formal `callPackage`) becomes `import ./x.nix {}`, whatever that file is:
        use it when the siblings are pinned in another step or branch.
  "keep"    a call is code like any other (a pass-through `inherit` then leaves the file with
        its warning).
After the step, no call may pass an argument its callee does not take: a file outside the
step's `files` that calls a converted one with its old arguments stops the run, naming both.

Revision: `rev` is the new pin, written into `url`. Give all 40 hex digits. An abbreviated `rev`
is resolved, like pin-swap's `old`, against the full revisions the branch's own fetchers already
name (a branch with some pinned files); found nowhere or ambiguous, the run stops before any
file changes and says how to get the full one (`git -C <nixpkgs clone> rev-parse 0182a36`). It
is never resolved against a local clone: the recipe is the record of the pin, and its output
must not depend on the machine that runs it.

Parameters:
  rev        str, required. The nixpkgs revision to pin (40 hex digits, or abbreviated: see above).
  name       str, default "nixpkgs_pinned". The binding the pinned package set gets.
  config     str, optional. Nix source for the import's `config` (e.g.
             '{ allowUnfree = true; cudaSupport = true; }'); omitted: no `config` key is written.
  overlays   str, optional. Nix source for the import's `overlays`; omitted: no key written.
  signature  str, default "{ pkgs ? import <nixpkgs> {} }". The new function head (no colon).
  url        str, with a default. The tarball URL; {rev} stands for the revision and must be
             in it (default: https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz).
  hash       str, optional. A literal hash of the unpacked tarball (SRI `sha256-...=`, base32
             or hex), written as `sha256 = "...";` in the fetchTarball call; omitted: none.
  map        table, optional. Former formal -> Nix expression replacing its references,
             e.g. { config = "nixpkgs_pinned.config" }.
  comment    str, optional. One line written as a `# comment` above the new binding.
  companions  "graph" (default), "import" or "keep". How calls of other recipe files are converted (above).

Example recipe step:
    [[steps]]
    kind = "pin-nixpkgs"
    title = "Pin nixpkgs fe5e41d in the GPU recipes"
    files = [".flox/pkgs/*-cuda*.nix"]
    [steps.params]
    rev = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3"
    config = "{ allowUnfree = true; cudaSupport = true; }"
    overlays = "[ (final: prev: { cudaPackages = final.cudaPackages_12_8; }) ]"
    comment = "Import nixpkgs at a specific revision with CUDA 12.8"
    [steps.params.map]
    config = "nixpkgs_pinned.config"
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from tree_sitter import Node

from pinshift.edits import Edit
from pinshift.errors import ParamError
from pinshift.graph.references import references
from pinshift.graph.signature import signature
from pinshift.migrations._pin_nixpkgs_layout import binding_edit
from pinshift.migrations.pin_swap import pin_sites
from pinshift.steps.kind import ReferencePlan, StepContext, StepOutput
from pinshift.syntax.document import parse_document
from pinshift.syntax.queries import name_of, unwrap, walk
from pinshift.syntax.scopes import Binder, binder_of, inherited_binder
from pinshift.syntax.scopes import resolve as binder_at
from pinshift.syntax.stackless import Call, run

NAME = "pin-nixpkgs"
# What it intends to change in what a recipe builds (pinshift.evaluation.build_check; docs/writing-steps.md): the caller's nixpkgs becomes the pin: everything the recipe reads of it may change.
BUILD_CHANGES = ("*",)
PLACEHOLDERS = ("rev",)  # `url`'s `{rev}` is this step's to fill, not a recipe placeholder
LANGUAGES = ("nix",)

# nixpkgs' own import arguments: callPackage passes them, but they are not packages of the set
NOT_IN_PACKAGE_SET = ("config", "overlays", "crossOverlays", "system", "localSystem", "crossSystem")

_HEX = re.compile(r"[0-9a-f]{4,40}\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_'-]*\Z")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_'-]*(\.[A-Za-z_][A-Za-z0-9_'-]*)*\Z")
_KEYWORDS = {"if", "then", "else", "assert", "with", "let", "in", "rec", "inherit", "or"}
_HASHES = (re.compile(r"sha256-[A-Za-z0-9+/]{43}=\Z"), re.compile(r"[0-9abcdfghijklmnpqrsvwxyz]{52}\Z"),
           re.compile(r"[0-9a-f]{64}\Z"))
# expressions that stay one operand after `or` without parentheses
_SIMPLE = {"variable_expression", "integer_expression", "float_expression", "string_expression",
           "indented_string_expression", "path_expression", "hpath_expression", "spath_expression",
           "uri_expression", "list_expression", "attrset_expression", "rec_attrset_expression",
           "parenthesized_expression", "select_expression"}


def _nix_expression(key: str, source: str):
    doc = parse_document(source.encode(), key)
    if doc.problems or not source.strip():
        where = doc.problems[0].message if doc.problems and source.strip() else "it is empty"
        raise ParamError(key, f"'{key}' is not a Nix expression ({where}): {source!r}")
    return doc


@dataclass(frozen=True)
class Params:
    rev: str
    name: str = "nixpkgs_pinned"
    config: str | None = None
    overlays: str | None = None
    signature: str = "{ pkgs ? import <nixpkgs> {} }"
    url: str = "https://github.com/NixOS/nixpkgs/archive/{rev}.tar.gz"
    hash: str | None = None
    map: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    companions: Literal["graph", "import", "keep"] = "graph"

    def __post_init__(self) -> None:
        if not _HEX.match(self.rev.lower()):
            raise ParamError("rev", f"'rev' must be a revision of 4 to 40 hex digits, not {self.rev!r}")
        if not _IDENTIFIER.match(self.name) or self.name in _KEYWORDS:
            raise ParamError("name", f"'name' must be a plain Nix identifier, not {self.name!r}")
        for key in ("config", "overlays"):
            if getattr(self, key) is not None:
                _nix_expression(key, getattr(self, key))
        head = self.head
        function = _head_function(head)
        if function is None:
            raise ParamError("signature", f"'signature' must be a function head such as "
                                          f"'{{ pkgs ? import <nixpkgs> {{}} }}', not {self.signature!r}")
        if "{rev}" not in self.url or any(c in self.url for c in '"\\\n\r') or "${" in self.url:
            raise ParamError("url", f"'url' must be a plain URL containing {{rev}}, not {self.url!r}")
        if self.hash is not None and not any(p.match(self.hash) for p in _HASHES):
            raise ParamError("hash", f"'hash' must be a sha256 hash (SRI 'sha256-...=', base32 or hex), "
                                     f"not {self.hash!r}")
        for formal, value in self.map.items():
            if not _IDENTIFIER.match(formal) or formal in _KEYWORDS:
                raise ParamError("map", f"map key {formal!r} is not a plain Nix identifier")
            if not isinstance(value, str):
                raise ParamError("map", f"map.{formal} must be a string of Nix source (quote it), not {value!r}")
            _nix_expression(f"map.{formal}", value)
        if self.comment is not None and (not self.comment.strip() or any(c in self.comment for c in "\r\n")):
            raise ParamError("comment", f"'comment' must be one non-empty line of text, not {self.comment!r}")

    @property
    def head(self) -> str:
        """The signature without a trailing colon (both spellings are accepted)."""
        text = self.signature.strip()
        return text[:-1].rstrip() if text.endswith(":") else text

    @property
    def signature_names(self) -> tuple[str, ...]:
        """The names the new function head binds (its formals and its `@` name)."""
        doc = parse_document((self.head + ": null").encode())
        function = _head_function(self.head, doc)
        names = []
        formals = function.child_by_field_name("formals")
        for formal in formals.children_by_field_name("formal") if formals is not None else ():
            identifier = formal.child_by_field_name("name")
            if identifier is not None:
                names.append(doc.text(identifier).decode())
        universal = function.child_by_field_name("universal")
        if universal is not None:
            names.append(doc.text(universal).decode())
        return tuple(names)


def _head_takes(params: Params) -> tuple[str, ...] | None:
    """The names the new function head takes (None: any, with `...` or a plain argument)."""
    found = signature(parse_document((params.head + ": null").encode()))
    if found is None or not found.set_pattern or found.ellipsis:
        return None
    return found.formals


def _head_function(head: str, doc=None):
    """The function node of `head: null`, when that parses as exactly a function head."""
    doc = doc or parse_document((head + ": null").encode())
    node = doc.root.named_children[0] if doc.root.named_children else None
    if doc.problems or node is None or node.type != "function_expression" or len(doc.root.named_children) != 1:
        return None
    body = node.child_by_field_name("body")
    if body is None or doc.text(body) != b"null" or body.end_byte != len(doc.data):
        return None
    return node


# --- abbreviated revisions, resolved like pin-swap's `old` ---------------------------------------


def needs_survey(params: Params) -> bool:
    return len(params.rev) < 40


def survey(doc, params: Params | None = None) -> dict[str, list[str]]:
    """The full revisions this document's fetchers name: {revision: ["path:line", ...]}."""
    found: dict[str, list[str]] = {}
    for site in pin_sites(doc):
        if len(site.rev) == 40:
            found.setdefault(site.rev.lower(), []).append(f"{doc.path}:{doc.position(site.start)[0]}")
    return found


def resolve(params: Params, surveys: Iterable[dict[str, list[str]]]) -> Params:
    """`params` with `rev` completed from the revisions the files already pin."""
    if len(params.rev) == 40:
        return params
    prefix = params.rev.lower()
    found: dict[str, list[str]] = {}
    for one in surveys:
        for rev, places in one.items():
            if rev.startswith(prefix):
                found.setdefault(rev, []).extend(places)
    if len(found) == 1:
        return dataclasses.replace(params, rev=next(iter(found)))
    if not found:
        raise ParamError("rev", f"pin-nixpkgs: 'rev' {params.rev} is abbreviated and no file pins a full revision "
                                f"starting with it; give all 40 hex digits (git -C <nixpkgs clone> rev-parse "
                                f"{params.rev})")
    listing = "; ".join(f"{rev} at {places[0]}" for rev, places in sorted(found.items()))
    raise ParamError("rev", f"pin-nixpkgs: 'rev' {params.rev} is ambiguous (matches: {listing}); give all 40 hex digits")


def prepare(params: Params, docs: Iterable) -> Params:
    return resolve(params, (survey(doc, params) for doc in docs))


# --- the conversion ---------------------------------------------------------------------------


class _LeaveFile(Exception):
    """Raised inside the conversion: warn at `offset` and leave the file as it was."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset, self.message = offset, message


def _top_expression(doc):
    return unwrap(doc.root.child_by_field_name("expression") or next(
        (c for c in doc.root.named_children if c.type != "comment"), None))


def _binds(doc, let, name: str) -> bool:
    binding_set = next((c for c in let.named_children if c.type == "binding_set"), None)
    for item in binding_set.named_children if binding_set is not None else ():
        if item.type == "binding":
            first = item.child_by_field_name("attrpath").child_by_field_name("attr")
            if first is not None and name_of(doc, first) == name:
                return True
        elif item.type in ("inherit", "inherit_from"):
            attrs = item.child_by_field_name("attrs")
            if attrs is not None and any(name_of(doc, a) == name for a in attrs.children_by_field_name("attr")):
                return True
    return False


def _same(a: Binder, b: Binder) -> bool:
    key = lambda x: (x.kind, x.scope.id if x.scope is not None else None, x.name_node.id if x.name_node else None)
    return key(a) == key(b)


def _inside(node, outer) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


class _Conversion:
    """The edits turning one Flox-style file into a pinned one (or _LeaveFile)."""

    def __init__(self, doc, params: Params, function, top_let, callees=None):
        self.doc, self.params, self.function, self.top_let = doc, params, function, top_let
        self.callees: dict[int, Callee] = callees or {}  # companions = "graph": path literal's start -> its callee
        self.body = function.child_by_field_name("body")
        self.formals = {}
        formals = function.child_by_field_name("formals")
        for formal in formals.children_by_field_name("formal") if formals is not None else ():
            identifier = formal.child_by_field_name("name")
            if identifier is not None and not identifier.is_missing:
                self.formals[doc.text(identifier).decode()] = formal
        self.universal = function.child_by_field_name("universal")
        self.inlining: set[str] = set()
        self.skipped: list = []  # sibling calls' arguments (companions = "import"): taken out of the conversion
        self._skipped_ids: set | None = None

    # which names a replacement brings in, and whether they still mean the same at a site

    def _check_name(self, name: str, site, meant: Binder | None) -> None:
        """`name`, written at `site`, must resolve to `meant` (None: to nothing inside the function)."""
        found = binder_at(self.doc, name, site)
        if meant is not None:
            captured = not _same(found, meant)
        else:
            captured = (found.lexical and found.scope is not None and found.scope != self.function
                        and found.scope != self.top_let and _inside(found.scope, self.function))
        if captured:
            if found.kind == "free":
                raise _LeaveFile(site.start_byte, f"{name} would be unbound here (it comes from a `with` around "
                                                  "the default): file not converted")
            what = f"an inner {found.kind}" if found.lexical else "a `with`"
            raise _LeaveFile(site.start_byte, f"{name} would be captured here by {what}: file not converted "
                                              f"(rename that binding, or choose another 'name')")

    def _member(self, formal: str, site) -> str:
        """`nixpkgs_pinned.formal`, or its `map` expression; _LeaveFile when neither fits."""
        params = self.params
        if formal in params.map:
            value = params.map[formal].strip()
            value_doc = parse_document(value.encode())
            for variable in walk(value_doc.root, "variable_expression"):
                if not binder_of(value_doc, variable).lexical:
                    self._check_name(value_doc.text(variable).decode(), site, None)
            return value if _DOTTED.match(value) else f"({value})"
        if formal in NOT_IN_PACKAGE_SET:
            raise _LeaveFile(site.start_byte, f"{formal} is not a package of {params.name} (it is an argument of "
                                              f"nixpkgs' import): name its replacement in map.{formal}, e.g. "
                                              f'"{params.name}.{formal}"; file not converted')
        self._check_name(params.name, site, None)
        return f"{params.name}.{formal}"

    def _reference(self, variable) -> str:
        """The text replacing one reference to a former formal."""
        return run(self._referenced(variable))

    # `_referenced` and `_qualified` recurse along a chain of defaults (`{ a ? b, b ? c, … }`), as long as the
    # file makes it: generators that yield each call they make, run by stackless.run (issue 36).

    def _referenced(self, variable) -> Call[str]:
        name = self.doc.text(variable).decode()
        formal = self.formals[name]
        member = self._member(name, variable)
        default = formal.child_by_field_name("default")
        if default is None or name in self.params.map:
            return member
        if name in self.inlining:
            raise _LeaveFile(default.start_byte, f"the default of {name} leads back to {name} (a cycle of defaults): "
                                                 "file not converted")
        self.inlining.add(name)
        try:
            text = yield self._qualified(default, variable)
        finally:
            self.inlining.discard(name)
        if unwrap(default).type not in _SIMPLE:
            text = f"({text})"
        text = f"{member} or {text}"
        parent = self.doc.ancestry.parent(variable)
        if parent is not None and (parent.type == "apply_expression" or (
                parent.type in ("select_expression", "has_attr_expression")
                and parent.child_by_field_name("expression") == variable)):
            text = f"({text})"  # `(x.a or d).b`, `f (x.a or d)`, `(x.a or d) arg`: read as meant
        return text

    def _qualified(self, default, site) -> Call[str]:
        """A formal's default as it reads when inlined at `site`: its own references qualified."""
        doc = self.doc
        edits = []
        for variable in walk(default, "variable_expression"):
            name = doc.text(variable).decode()
            binder = binder_of(doc, variable)
            if binder.scope is not None and _inside(binder.scope, default):
                continue  # bound inside the default itself (`x: x`): travels with it
            if binder.scope == self.function and binder.kind == "formal":
                edits.append((variable.start_byte, variable.end_byte, (yield self._referenced(variable))))
            elif binder.scope == self.function:
                raise _LeaveFile(variable.start_byte, f"the default refers to the whole argument set {name}: "
                                                      "file not converted")
            else:
                self._check_name(name, site, binder)
        text = doc.data[default.start_byte : default.end_byte]
        for start, end, replacement in sorted(edits, reverse=True):
            start, end = start - default.start_byte, end - default.start_byte
            text = text[:start] + replacement.encode() + text[end:]
        return text.decode("utf-8", "surrogateescape")

    def _universal_edit(self, variable) -> Edit:
        """`args.lib` -> `nixpkgs_pinned.lib` for the `@` name; anything else leaves the file."""
        name = self.doc.text(variable).decode()
        parent = self.doc.ancestry.parent(variable)
        if parent is not None and parent.type == "select_expression" and parent.child_by_field_name("expression") == variable:
            first = parent.child_by_field_name("attrpath").child_by_field_name("attr")
            member = name_of(self.doc, first)
            if member is not None:
                text = self._member(member, variable)
                return Edit(variable.start_byte, first.end_byte, text.encode(), f"{NAME}: {name}.{member} -> {text}")
        if parent is not None and parent.type == "inherit_from" and parent.child_by_field_name("expression") == variable:
            attrs = parent.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                member = name_of(self.doc, attr) or ""
                if member in self.params.map or member in NOT_IN_PACKAGE_SET:
                    raise _LeaveFile(attr.start_byte, f"inherit ({name}) {member}: {member} is not "
                                                      f"{self.params.name}.{member}; rewrite it by hand; "
                                                      "file not converted")
            self._check_name(self.params.name, variable, None)
            return Edit(variable.start_byte, variable.end_byte, self.params.name.encode(),
                        f"{NAME}: inherit ({name}) -> inherit ({self.params.name})")
        raise _LeaveFile(variable.start_byte, f"{name} is the whole argument set here, not {name}.<name>: "
                                              f"the pinned set is more than what a caller passed; file not converted")

    def _path_calls(self) -> Iterator[tuple[Node, Node, Node]]:
        """(caller, path, arguments) of each `caller ./path { … }` in the body (parentheses looked through)."""
        for call in walk(self.body, "apply_expression"):
            inner = unwrap(call.child_by_field_name("function"))
            arguments = unwrap(call.child_by_field_name("argument"))
            if inner is None or inner.type != "apply_expression" or arguments is None \
                    or arguments.type != "attrset_expression":
                continue
            caller = unwrap(inner.child_by_field_name("function"))
            path = unwrap(inner.child_by_field_name("argument"))
            if caller is not None and path is not None and path.type == "path_expression":
                yield caller, path, arguments

    def _sibling_calls(self) -> list[Edit]:
        """`import ./x.nix { inherit lib; }` / `callPackage ./x.nix { }` -> `import ./x.nix {}` (companions = "import");
        the arguments (and a callPackage formal) are taken out of the rest of the conversion."""
        doc, edits = self.doc, []
        for caller, path, arguments in self._path_calls():
            if caller.type != "variable_expression":
                continue
            text = doc.text(path).decode("utf-8", "surrogateescape")
            if not (text.startswith("./") or text.startswith("../")) or not text.endswith(".nix"):
                continue
            name = doc.text(caller).decode("utf-8", "surrogateescape")
            binder = binder_of(doc, caller)
            by_import = name == "import" and binder.kind == "free"
            by_formal = name == "callPackage" and binder.scope == self.function and binder.kind == "formal"
            if not (by_import or by_formal) or not self._passes_formals_on(arguments):
                continue
            why = f"{NAME}: {name} {text} -> import {text} (a sibling pinned like this file)"
            if by_formal:
                edits.append(Edit(caller.start_byte, caller.end_byte, b"import", why))
                self.skipped.append(caller)
            if arguments.named_children:
                edits.append(Edit(arguments.start_byte, arguments.end_byte, b"{}", why))
                self.skipped.append(arguments)
        return edits

    def _fitted_calls(self) -> list[Edit]:
        """companions = "graph": a call of a file of the tree passing former formals on passes only what that
        file takes after this step (`import ./x.nix {}`); the arguments are taken out of the conversion."""
        doc, edits = self.doc, []
        for caller, path, arguments in self._path_calls():
            fact = self.callees.get(path.start_byte)
            passed = self._forwarded(arguments) if fact is not None and fact.takes is not None else None
            if passed is None:
                continue  # any other call is code like the rest of the file
            dropped = [name for name in passed if name not in fact.takes]
            if dropped and len(dropped) < len(passed):
                kept = [name for name in passed if name in fact.takes]
                raise _LeaveFile(arguments.start_byte, f"the call passes {', '.join(kept)}, which {fact.target} takes, "
                                                       f"and {', '.join(dropped)}, which it does not take after this "
                                                       "step: rewrite the call by hand; file not converted")
            text = doc.text(path).decode("utf-8", "surrogateescape")
            name = doc.text(caller).decode("utf-8", "surrogateescape")
            binder = binder_of(doc, caller) if caller.type == "variable_expression" else None
            by_formal = name == "callPackage" and binder is not None and binder.scope == self.function \
                and binder.kind == "formal"
            why = f"{NAME}: {name} {text} passes what {fact.target} takes after this step"
            if by_formal and fact.converted:
                edits.append(Edit(caller.start_byte, caller.end_byte, b"import", why))
                self.skipped.append(caller)
            if dropped:
                edits.append(Edit(arguments.start_byte, arguments.end_byte, b"{}", why))
                self.skipped.append(arguments)
        return edits

    def _forwarded(self, arguments) -> list[str] | None:
        """The names an argument set passes when it only passes former formals on by their own names, else None."""
        if not self._passes_formals_on(arguments):
            return None
        doc, names = self.doc, []
        binding_set = arguments.named_children[0] if arguments.named_children else None
        for item in binding_set.named_children if binding_set is not None else ():
            if item.type == "inherit":
                attrs = item.child_by_field_name("attrs")
                names.extend(name_of(doc, a) or "" for a in attrs.children_by_field_name("attr"))
            elif item.type == "binding":
                names.append(doc.text(item.child_by_field_name("attrpath")).decode("utf-8", "surrogateescape"))
        return names

    def _passes_formals_on(self, arguments) -> bool:
        """Whether an argument set only passes former formals on by their own names (or is empty)."""
        doc = self.doc
        binding_set = arguments.named_children[0] if arguments.named_children else None
        for item in binding_set.named_children if binding_set is not None else ():
            if item.type == "inherit":
                attrs = item.child_by_field_name("attrs")
                for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                    if inherited_binder(doc, item, attr).scope != self.function:
                        return False
            elif item.type == "binding":
                value = unwrap(item.child_by_field_name("expression"))
                attrpath = item.child_by_field_name("attrpath")
                if value is None or value.type != "variable_expression" or doc.text(value) != doc.text(attrpath) \
                        or binder_of(doc, value).scope != self.function:
                    return False
            elif item.type != "comment":
                return False
        return True

    def _skipped(self, node) -> bool:
        """Whether `node` is inside a sibling call's arguments (ids gathered once: linear in the file)."""
        if self._skipped_ids is None:
            self._skipped_ids = {n.id for outer in self.skipped
                                 for n in walk(outer, "variable_expression", "inherit")}
        return node.id in self._skipped_ids

    def _inherit_checks(self) -> None:
        for inherit in walk(self.body, "inherit"):
            if self._skipped(inherit):
                continue
            attrs = inherit.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                binder = inherited_binder(self.doc, inherit, attr)
                if binder.scope == self.function:
                    name = name_of(self.doc, attr)
                    raise _LeaveFile(attr.start_byte, f"inherit {name}; takes argument {name}, which "
                                                      f"{self.params.name} replaces, and `{name} = "
                                                      f"{self.params.name}.{name};` is not always the same: "
                                                      "rewrite it by hand; file not converted")

    def _capture_checks(self) -> None:
        """Names the new head or binding would bind must not be free or `with`-supplied in the body."""
        new_names = set(self.params.signature_names) | {self.params.name}
        for variable in walk(self.body, "variable_expression"):
            name = self.doc.text(variable).decode("utf-8", "surrogateescape")
            if name in new_names and not binder_of(self.doc, variable).lexical:
                raise _LeaveFile(variable.start_byte, f"{name} here comes from a `with` or is free; the new "
                                                      f"signature or binding would bind it: file not converted")

    def edits(self) -> list[Edit]:
        doc, params = self.doc, self.params
        if params.companions == "graph":
            edits = self._fitted_calls()
        else:
            edits = self._sibling_calls() if params.companions == "import" else []
        self._inherit_checks()
        self._capture_checks()
        for variable in walk(self.body, "variable_expression"):
            if self._skipped(variable):
                continue
            binder = binder_of(doc, variable)
            if binder.scope != self.function:
                continue
            if binder.kind == "formal":
                text = self._reference(variable)
                edits.append(Edit(variable.start_byte, variable.end_byte, text.encode(),
                                  f"{NAME}: {doc.text(variable).decode()} -> {text}"))
            else:
                edits.append(self._universal_edit(variable))
        head = [n for n in (self.universal, self.function.child_by_field_name("formals")) if n is not None]
        start, end = min(n.start_byte for n in head), max(n.end_byte for n in head)
        edits.append(Edit(start, end, params.head.encode(), f"{NAME}: signature"))
        why = f"{NAME}: bind {params.name} to nixpkgs {params.rev[:7]}"
        edits.append(binding_edit(doc.data, params, self.function, self.top_let, why))
        return edits


@dataclass(frozen=True)
class Callee:
    """companions = "graph": a call in a file of the step, as the graph sees it before the step.

    `start` is the first byte of the called path literal, `target` the file it names, `takes` the
    names that file's function takes after this step (None: any, or not known), `converted` whether
    this step converts it.
    """

    start: int
    target: str
    takes: tuple[str, ...] | None
    converted: bool


_CALLS = re.compile(rb"\b(?:import|callPackage)\b")


def needs_references(params: Params) -> bool:
    return params.companions == "graph"


def plan_references(graph, params: Params, ops, selected) -> ReferencePlan:
    """Which files of the step convert, worked out together over the graph, and each call's callee.

    A file converts when its own conversion succeeds given what its callees take after the step;
    a callee converts when it is selected and converts. The largest set consistent with that is
    found by taking every involved file first and dropping, one at a time, those that fail (then
    re-checking only the files that call a dropped one): each file is converted at most once per
    callee it loses.
    """
    found = ReferencePlan()
    trial = dataclasses.replace(params, rev=params.rev.ljust(40, "0")) if len(params.rev) < 40 else params
    head = _head_takes(params)
    chosen = [p for p in selected if p.endswith(".nix")]
    wanted = set(chosen)
    graph.prefetch(chosen)
    calls: dict[str, list] = {}
    for path in chosen:
        data = graph.data(path)
        if data is None or not _CALLS.search(data):
            continue
        for reference in graph.references(path):
            if reference.how == "path" or reference.computed or reference.arguments is None:
                continue
            named = graph.target(path, reference)
            if named.state == "file":
                calls.setdefault(path, []).append((reference, named.path))
    if not calls:
        return found
    involved = set(calls) | {target for pairs in calls.values() for _, target in pairs if target in wanted}
    callers_of: dict[str, set[str]] = {}
    for path, pairs in calls.items():
        for _, target in pairs:
            callers_of.setdefault(target, set()).add(path)
    converting = set(involved)

    def facts(path: str) -> tuple[Callee, ...]:
        out = []
        for reference, target in calls.get(path, ()):
            if target in converting:
                out.append(Callee(reference.start, target, head, True))
            else:
                own = graph.signature(target)
                takes = own.formals if own is not None and own.set_pattern and not own.ellipsis else None
                out.append(Callee(reference.start, target, takes, False))
        return tuple(out)

    def converts(path: str) -> bool:
        doc = graph.document(path)
        if doc is None:
            return False
        out = _conversion(doc, trial, {fact.start: fact for fact in facts(path)})
        return bool(out.edits) and not out.warnings

    pending = sorted(involved)
    while pending:
        path = pending.pop()
        if path in converting and not converts(path):
            converting.discard(path)
            pending.extend(sorted(callers_of.get(path, set()) & converting))
    for path in calls:
        found.files[path] = facts(path)
    return found


def _conversion(doc, params: Params, callees: dict) -> StepOutput:
    """The conversion of one file (edits), or why it is left (a warning) or already pinned (a note)."""
    out = StepOutput()
    top = _top_expression(doc)
    function = top if top is not None and top.type == "function_expression" else None
    body = unwrap(function.child_by_field_name("body")) if function is not None else top
    top_let = body if body is not None and body.type == "let_expression" else None
    if top_let is not None and _binds(doc, top_let, params.name):
        out.note(top_let.start_byte, f"already pinned (its let binds {params.name}): left alone")
        return out
    if function is None:
        out.warn(-1, "not a function of its packages ({ lib, ... }: ...): not converted")
        return out
    if function.child_by_field_name("formals") is None:
        argument = doc.text(function.child_by_field_name("universal")).decode("utf-8", "replace")
        out.warn(function.start_byte, f"the function takes one argument {argument}, not a set of packages: "
                                      "not converted")
        return out
    try:
        out.edits.extend(_Conversion(doc, params, function, top_let, callees).edits())
    except _LeaveFile as leave:
        out.warn(leave.offset, leave.message)
    return out


def plan(doc, params: Params, context: StepContext) -> StepOutput:
    if len(params.rev) < 40:
        params = prepare(params, [doc])
    callees = {fact.start: fact for fact in context.references if isinstance(fact, Callee)}
    out = _conversion(doc, params, callees)
    if out.edits or not out.warnings or not callees:
        return out
    stuck = _calling_a_converted_file(doc, callees)
    if stuck:
        reason = out.warnings[0]
        out.warnings.clear()
        out.refuse(reason.offset, f"{reason.message}, yet it {stuck}: a file this step cannot convert is never left "
                                  "calling a converted one; fix it by hand, or leave the called file out of the step")
    return out


def _calling_a_converted_file(doc, callees: dict) -> str:
    """`imports x.nix (at 5:19) with python3Packages, lib, which it converts to take { pkgs }`, or ""."""
    for reference in references(doc):
        fact = callees.get(reference.start)
        if fact is None or not fact.converted or reference.arguments is None:
            continue
        names = reference.arguments.names
        extra = [n for n in names if fact.takes is not None and n not in fact.takes]
        if reference.arguments.open or extra:
            passed = ", ".join(extra) if extra else "arguments it cannot read"
            takes = "{ " + ", ".join(fact.takes) + " }" if fact.takes is not None else "its new head"
            return (f"{reference.verb} {fact.target} (at {reference.line}:{reference.column}) with {passed}, which "
                    f"this step converts to take {takes}")
    return ""
