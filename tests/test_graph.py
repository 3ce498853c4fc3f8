"""The reference graph (pinshift.graph): what one file refers to, what a file takes, what a tree's references name.

Expected values are written by hand from Nix's rules (a relative path is resolved against the directory of
the file it is written in, `import ./dir` is `./dir/default.nix`, a set-pattern function without `...`
refuses an argument it does not list); the oracle tests at the end ask nix-instantiate the same.
"""

from __future__ import annotations

import subprocess

import pytest

from conftest import require_nix
from pinshift.files.tree import DirectoryTree
from pinshift.graph.paths import PathIndex, moved_literal, resolve, target
from pinshift.graph.references import references
from pinshift.graph.signature import signature
from pinshift.graph.tree import ReferenceGraph
from pinshift.syntax.document import parse_document


def refs(text: str) -> list[tuple]:
    """(literal, how, passed names or None, open, computed) of each reference, in order."""
    found = []
    for reference in references(parse_document(text.encode())):
        arguments = reference.arguments
        found.append((reference.literal, reference.how, arguments.names if arguments else None,
                      arguments.open if arguments else None, reference.computed))
    return found


# --- one file's references ----------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("import ./x.nix", [("./x.nix", "import", None, None, False)]),
    ("import ./x.nix { inherit lib; c = 1; }", [("./x.nix", "import", ("lib", "c"), False, False)]),
    ("import ./x.nix {}", [("./x.nix", "import", (), False, False)]),
    ("(import ./x.nix) { a = 1; }", [("./x.nix", "import", ("a",), False, False)]),
    ("builtins.import ../up/x.nix { }", [("../up/x.nix", "import", (), False, False)]),
    ("scopedImport { } ./x.nix { b = 2; }", [("./x.nix", "import", ("b",), False, False)]),
    ("let p = callPackage ./x.nix { }; in p", [("./x.nix", "callPackage", (), False, False)]),
    ("pkgs.python3Packages.callPackage ./dir { inherit (lib) f g; }",
     [("./dir", "callPackage", ("f", "g"), False, False)]),
    ('callPackage ./x.nix { "quoted" = 1; ${dyn} = 2; }', [("./x.nix", "callPackage", ("quoted",), True, False)]),
    ("import ./x.nix args", [("./x.nix", "import", (), True, False)]),
    ("import ./x.nix (args // { a = 1; })", [("./x.nix", "import", (), True, False)]),
    ("{ src = ./.; patches = [ ./fix.patch ]; }", [("./.", "path", None, None, False),
                                                    ("./fix.patch", "path", None, None, False)]),
    ("builtins.readFile pkgs/x.nix", [("pkgs/x.nix", "path", None, None, False)]),
    ('import (./. + "/x.nix")', [('(./. + "/x.nix")', "import", None, None, True)]),
    ('import ./${name}.nix { }', [("./${name}.nix", "import", (), False, True)]),
    ('import "${./.}/x.nix"', [('"${./.}/x.nix"', "import", None, None, True)]),
])
def test_references_of_each_shape(text, expected):
    assert refs(text) == expected


@pytest.mark.parametrize("text", [
    '{ url = "https://github.com/NixOS/nixpkgs/archive/abc.tar.gz"; }',  # a URL in a string
    "{ a = /abs/x.nix; b = ~/x.nix; c = <nixpkgs/lib>; }",  # nothing a tree holds
    '# see ./x.nix\n{ d = "RTX 3090/A40"; e = "${lib}/x"; f = "$out/lib"; }',  # text, comments
    "x: x",
])
def test_what_is_not_a_reference(text):
    assert refs(text) == []


def test_positions_are_where_the_literal_and_each_name_are():
    doc = parse_document(b"{ lib }:\nlet\n  t = import ./t.nix {\n    inherit lib;\n  };\nin t\n")
    [reference] = references(doc)
    assert (reference.line, reference.column) == (3, 14)
    assert reference.arguments.place("lib") == (4, 13)


# --- what a file takes --------------------------------------------------------------------------


@pytest.mark.parametrize("text, formals, required, ellipsis, set_pattern", [
    ("{ python3Packages, lib ? null }:\nlib", ("python3Packages", "lib"), ("python3Packages",), False, True),
    ("# c\nargs@{ a, ... }: a", ("a",), ("a",), True, True),
    ("{ pkgs ? import <nixpkgs> {} }: pkgs", ("pkgs",), (), False, True),
    ("let x = 1; in with x; assert true; ({ a }: a)", ("a",), ("a",), False, True),
    ("x: x", (), (), False, False),
])
def test_signature_of_a_function_file(text, formals, required, ellipsis, set_pattern):
    head = signature(parse_document(text.encode()))
    assert (head.formals, head.required, head.ellipsis, head.set_pattern) == (formals, required, ellipsis, set_pattern)


@pytest.mark.parametrize("text", ["{ a = 1; }", "import ./x.nix { }", "let f = { a }: a; in f"])
def test_a_file_that_is_no_function_has_no_signature(text):
    assert signature(parse_document(text.encode())) is None


def test_what_a_signature_refuses():
    head = signature(parse_document(b"{ a, b ? 1 }: a"))
    assert head.unexpected(["a", "c", "d"]) == ["c", "d"] and head.missing(["b"]) == ["a"]
    assert signature(parse_document(b"{ a, ... }: a")).unexpected(["z"]) == []


# --- paths ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("source, literal, expected", [
    ("pkgs/a.nix", "./b.nix", "pkgs/b.nix"),
    ("pkgs/a.nix", "../lib/x.nix", "lib/x.nix"),
    ("pkgs/a.nix", "./sub/../b.nix", "pkgs/b.nix"),
    ("pkgs/a.nix", "./.", "pkgs"),
    ("a.nix", "./.", ""),
    ("pkgs/a.nix", "../../x.nix", "../x.nix"),
    ("pkgs/a.nix", "/abs.nix", None),
    ("pkgs/a.nix", "~/x.nix", None),
])
def test_resolve(source, literal, expected):
    assert resolve(source, literal) == expected


def test_a_directory_means_its_default_nix_when_imported_or_called():
    index = PathIndex(["pkgs/a.nix", "pkgs/dir/default.nix", "pkgs/empty/x.txt"])
    assert target("pkgs/a.nix", "./dir", "import", index) .path == "pkgs/dir/default.nix"
    assert target("pkgs/a.nix", "./dir", "callPackage", index).state == "file"
    assert target("pkgs/a.nix", "./dir", "path", index).state == "directory"
    missing = target("pkgs/a.nix", "./empty", "import", index)
    assert (missing.path, missing.state) == ("pkgs/empty/default.nix", "missing")
    assert target("pkgs/a.nix", "../../x.nix", "import", index).state == "outside"


@pytest.mark.parametrize("literal, new_target, new_source, expected", [
    ("./pytorch-python313-cpu.nix", "pkgs/pytorch-python312-cpu.nix", "pkgs/t.nix", "./pytorch-python312-cpu.nix"),
    ("../pkgs/old.nix", "pkgs/new.nix", "other/t.nix", "../pkgs/new.nix"),
    ("./dir", "pkgs/dir/new.nix", "pkgs/t.nix", "./dir/new.nix"),
    ("./.", "pkgs/new.nix", "pkgs/t.nix", "./new.nix"),
])
def test_the_literal_naming_a_moved_file_keeps_its_directory_part(literal, new_target, new_source, expected):
    assert moved_literal(literal, new_target, new_source) == expected


# --- a whole tree -----------------------------------------------------------------------------------


def _tree(tmp_path, files: dict[str, str]) -> ReferenceGraph:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return ReferenceGraph(DirectoryTree(tmp_path))


def test_referrers_follow_relative_paths_from_every_directory(tmp_path):
    graph = _tree(tmp_path, {
        "pkgs/torch.nix": "{ pkgs ? null }: 1",
        "pkgs/vision.nix": "{ }: import ./torch.nix { }",
        "pkgs/sub/audio.nix": "{ }: import ../torch.nix { }",
        "other/x.nix": "import ../pkgs/torch.nix",
        "pkgs/unrelated.nix": "{ t = ./vision.nix; }",
    })
    found = sorted((source, reference.literal) for source, reference, _ in graph.referrers(["pkgs/torch.nix"]))
    assert found == [("other/x.nix", "../pkgs/torch.nix"), ("pkgs/sub/audio.nix", "../torch.nix"),
                     ("pkgs/vision.nix", "./torch.nix")]


def test_a_file_importing_itself_and_two_files_importing_each_other(tmp_path):
    graph = _tree(tmp_path, {"self.nix": "let me = import ./self.nix; in 1",
                             "a.nix": "{ }: import ./b.nix { }", "b.nix": "{ }: import ./a.nix { }"})
    assert [s for s, _, _ in graph.referrers(["self.nix"])] == ["self.nix"]
    assert sorted(s for s, _, _ in graph.referrers(["a.nix", "b.nix"])) == ["a.nix", "b.nix"]
    assert graph.problems("a.nix") == graph.problems("b.nix") == graph.problems("self.nix") == []


def test_problems_of_a_tree(tmp_path):
    graph = _tree(tmp_path, {
        "torch.nix": "{ pkgs ? import <nixpkgs> {} }: 1",
        "flox.nix": "{ python3Packages, lib }: 1",
        "vision.nix": ("{ python3Packages, lib }:\n{\n  a = import ./torch.nix { inherit python3Packages lib; };\n"
                       "  b = import ./flox.nix { inherit lib; };\n  c = callPackage ./flox.nix { };\n"
                       "  d = import ./gone.nix;\n  e = callPackage ./dir { };\n  f = import (./. + \"/x.nix\");\n"
                       "  g = ./torch.nix;\n}\n"),
    })
    assert [str(p) for p in graph.problems("vision.nix")] == [
        "vision.nix:3:36: imports torch.nix with arguments 'python3Packages', 'lib', which torch.nix:1:1 "
        "({ pkgs ? import <nixpkgs> {} }:) does not take",
        "vision.nix:4:14: imports flox.nix without argument 'python3Packages', which flox.nix:1:1 "
        "({ python3Packages, lib }:) requires",
        "vision.nix:6:14: imports ./gone.nix, which names no file (gone.nix does not exist)",
        "vision.nix:7:19: calls ./dir, which names no file (dir does not exist)",
        'vision.nix:8:14: import (./. + "/x.nix"): a computed path, not followed (pinshift cannot tell which file '
        "it names)",
    ]


def test_a_directory_without_default_nix_is_named(tmp_path):
    graph = _tree(tmp_path, {"a.nix": "callPackage ./dir { }", "dir/x.nix": "1"})
    assert [p.message for p in graph.problems("a.nix")] == ["calls ./dir, which names no file: dir has no default.nix"]


def test_only_files_spelling_a_name_are_parsed(tmp_path):
    graph = _tree(tmp_path, {f"r{n}.nix": f"{{ a{n} = ./x{n}.nix; }}" for n in range(20)} | {"t.nix": "1"})
    assert graph.referrers(["t.nix"]) == []
    assert graph._graphs == {}  # no file spells t.nix: none was parsed


# --- Nix agrees -------------------------------------------------------------------------------------


def _eval(tmp_path, files: dict[str, str], main: str) -> subprocess.CompletedProcess:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return subprocess.run([require_nix(), "--eval", "--strict", str(tmp_path / main)], capture_output=True, text=True)


@pytest.mark.nix
@pytest.mark.parametrize("files, ok", [
    ({"m.nix": "import ./dir { }", "dir/default.nix": "{ }: 1"}, True),
    ({"m.nix": "import ./f.nix { a = 1; }", "f.nix": "{ }: 1"}, False),  # unexpected argument
    ({"m.nix": "import ./f.nix { }", "f.nix": "{ a }: 1"}, False),  # required argument missing
    ({"m.nix": "import ./f.nix { a = 1; b = 2; }", "f.nix": "{ a, ... }: a"}, True),
    ({"m.nix": "import sub/f.nix { }", "sub/f.nix": "{ }: 1"}, True),  # a relative path without ./
    ({"sub/m.nix": "import ../f.nix { }", "f.nix": "{ }: 1"}, True),
])
def test_nix_agrees_with_the_graph(tmp_path, files, ok):
    main = next(iter(files))
    graph = _tree(tmp_path / "tree", files)
    result = _eval(tmp_path / "tree", {}, main)
    assert (result.returncode == 0) is ok, result.stderr
    assert (graph.problems(main) == []) is ok


# --- what the runner records, cheaply ---------------------------------------------------------------


def test_a_file_graph_is_carried_over_edits_that_cannot_change_it():
    from pinshift.edits import Edit
    from pinshift.graph.tree import file_graph

    text = b'{ lib }:\nlet\n  v = "1.0";\n  t = import ./t.nix { inherit lib; };\nin t\n'
    doc = parse_document(text)
    graph = file_graph(doc, placed=False)
    version = text.index(b"1.0")
    moved = graph.moved([Edit(version, version + 3, b"2.0.1")])  # elsewhere: the spans move by 2 bytes
    assert moved == graph and moved.spans == tuple((s + 2, e + 2) if s > version else (s, e) for s, e in graph.spans)
    assert graph.spans[0] == (0, 9) and moved.spans[1][0] == graph.spans[1][0] + 2
    lib = text.index(b"lib;")
    assert graph.moved([Edit(lib, lib + 3, b"lib2")]) is None  # inside the call's argument set
    assert graph.moved([Edit(2, 5, b"lib, x")]) is None  # the function head
    assert graph.moved([Edit(version, version + 3, b"./x")]) is None  # a `/` may start a new path literal
