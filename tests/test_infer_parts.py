"""Issue 17: the pieces `pinshift infer` is built from, each against expectations written by hand.

Token hunks, the proof's "between BASE and TARGET" test, globs for groups of files, name
changes, replacements that stay idempotent, braces that would read as placeholders,
abbreviated revisions and the recipe TOML read back exactly.
"""

from __future__ import annotations

import tomllib

import pytest

from pinshift.infer.candidates import literal, replacement, writable
from pinshift.infer.group_globs import exact_globs, group_globs
from pinshift.infer.token_hunks import distance, hunks, lcs_length, overreach
from pinshift.infer.names import name_change
from pinshift.infer.propose_pins import abbreviation
from pinshift.infer.recipe_toml import render
from pinshift.recipes.placeholders import expand


# --- hunks --------------------------------------------------------------------------------------


def test_a_changed_word_is_one_hunk_with_its_byte_ranges():
    old = b'let\n  url = "https://x/archive/6a030d5.tar.gz";\n  n = 1;\nin n\n'
    new = b'let\n  url = "https://x/archive/0182a36.tar.gz";\n  n = 1;\nin n\n'
    [hunk] = hunks(old, new)
    assert (hunk.old, hunk.new) == (b"6a030d5", b"0182a36")
    assert old[hunk.start : hunk.end] == b"6a030d5" and new[hunk.new_start : hunk.new_end] == b"0182a36"


def test_whole_lines_deleted_inside_a_block_stay_one_hunk_apart_from_the_changed_word():
    old = b"  - Python: 3.12\n\n  Python 3.12 builds share a pin.\n'';\n"
    new = b"  - Python: 3.11\n'';\n"
    assert [(h.old, h.new) for h in hunks(old, new)] == [
        (b"12", b"11"), (b"\n  Python 3.12 builds share a pin.\n", b"")]


def test_identical_bytes_have_no_hunks():
    assert hunks(b"same\n", b"same\n") == []


def test_an_inserted_line_is_a_pure_insertion():
    [hunk] = hunks(b"a\nc\n", b"a\nb\nc\n")
    assert (hunk.start, hunk.end, hunk.old, hunk.new) == (2, 2, b"", b"b\n")


@pytest.mark.parametrize("a, b, common", [
    ([], [1], 0), ([1, 2, 3], [1, 2, 3], 3), ([1, 2, 3], [3, 2, 1], 1),
    (list("python3Packages.pytorch"), list("nixpkgs_pinned.python313Packages.torch"), 21),
    (list("ABCBDAB"), list("BDCABA"), 4),  # the textbook example
])
def test_lcs_length(a, b, common):
    assert lcs_length(a, b) == common == lcs_length(b, a)
    assert distance(a, b) == len(a) + len(b) - 2 * common


# --- the proof's test ---------------------------------------------------------------------------


def test_a_step_doing_part_of_what_target_did_is_between():
    before = b"x = python3Packages.pytorch;\n"
    target = b"x = nixpkgs_pinned.python313Packages.torch;\n"
    assert overreach(before, b"x = nixpkgs_pinned.python3Packages.pytorch;\n", target) == []
    assert overreach(before, b"x = python313Packages.pytorch;\n", target) == []
    assert overreach(before, target, target) == []


def test_a_step_changing_what_target_left_is_caught_on_its_line():
    before = b"a = 1;\nb = 1;\n"
    found = overreach(before, b"a = 2;\nb = 2;\n", b"a = 2;\nb = 1;\n")
    assert [(f.before, f.after, f.target) for f in found] == [(b"b = 1;\n", b"b = 2;\n", b"b = 1;\n")]


def test_a_step_writing_another_value_than_target_is_caught():
    found = overreach(b"echo 1 > $out\n", b"echo 2 > $out\n", b"echo 5 > $out\n")
    assert len(found) == 1 and found[0].target == b"echo 5 > $out\n"


def test_an_insertion_target_did_not_make_is_caught():
    found = overreach(b"a\nb\n", b"a\nnew\nb\n", b"a\nb\nc\n")
    assert found and found[0].after.count(b"new") == 1


# --- groups of files ----------------------------------------------------------------------------

GPU = [f".flox/pkgs/p-cuda12_8-sm{sm}-{isa}.nix" for sm in ("61", "90") for isa in ("avx2", "armv9")]
CPU = [f".flox/pkgs/p-cpu-{isa}.nix" for isa in ("avx2", "armv9")]
DARWIN = [".flox/pkgs/p-darwin-mps.nix"]


def test_a_group_gets_the_name_part_only_it_has():
    assert group_globs(GPU, CPU + DARWIN + ["README.md"]) == (".flox/pkgs/*-cuda12_8-*.nix",)


def test_a_group_of_two_kinds_gets_one_glob_per_kind():
    assert group_globs(CPU + DARWIN, GPU) == (".flox/pkgs/*-cpu-*.nix", ".flox/pkgs/*-darwin-*.nix")


def test_a_group_no_glob_describes_has_no_globs_and_one_file_is_its_own_path():
    # (two parts together say it: the CUDA 12.8 AVX2 recipes and the CPU ARMv9 one, issue 34)
    assert group_globs([GPU[0], CPU[1]], [GPU[1], CPU[0]]) == (".flox/pkgs/*-cpu-armv9.nix",
                                                               ".flox/pkgs/*-cuda12_8-*-avx2.nix")
    more = [".flox/pkgs/p-cuda12_8-sm90-avx2.nix", ".flox/pkgs/q-cuda12_9-sm61-avx2.nix"]
    assert group_globs([GPU[0], CPU[1]], [GPU[1], CPU[0]] + more) is None
    assert group_globs(["pkgs/a[1].nix"], ["pkgs/b.nix"]) == ("pkgs/a[[]1[]].nix",)
    assert exact_globs(["b", "a*"]) == ("a[*]", "b")


# --- names, replacements, placeholders ------------------------------------------------------------


@pytest.mark.parametrize("old, new, expected", [
    ("pytorch-python312-cpu-avx2.nix", "pytorch-python311-cpu-avx2.nix", ("python312", "python311", False)),
    ("x-cuda12_8-sm90.nix", "x-cuda12_9-sm90.nix", ("cuda12_8", "cuda12_9", False)),
    ("a.nix", "pkg-a.nix", (r"^(?!pkg\-)", "pkg-", True)),
    ("same.nix", "same.nix", None),
])
def test_name_change(old, new, expected):
    assert name_change(old, new) == expected


def test_replacement_is_literal_unless_new_contains_old():
    assert replacement("Python: 3.12", "Python: 3.11") == ("Python: 3.12", "Python: 3.11", False)
    old, new, regex = replacement("3.13", "3.13 (CUDA build)")
    assert regex and new == "3.13 (CUDA build)"
    import re

    once = re.sub(old, new, "Python 3.13")
    assert once == "Python 3.13 (CUDA build)" and re.sub(old, new, once) == once  # a second run changes nothing
    assert replacement("", "x") is None and replacement("b", "abc") is None


def test_literal_doubles_braces_only_where_they_would_be_placeholders():
    for text in ("{ pkgs ? import <nixpkgs> {} }", '[ "-j32" ]', "${version}", "https://x/{rev}.tar.gz", "{base}"):
        assert expand(literal(text), {"base": "B", "target": "T"}) == text
    assert literal("{ x = 1; }") == "{ x = 1; }"
    assert not writable("\udcff") and not writable({"k": ["a\0"]}) and writable({"k": ["é"]})


def test_abbreviation_takes_seven_digits_unless_another_revision_shares_them():
    full = "6a030d535719c5190187c4cec156f335e95e3211"
    assert abbreviation(full, {full, "6a030d5"}) == "6a030d5"
    assert abbreviation(full, {full, "6a030d5000000000000000000000000000000000"}) == "6a030d53"


# --- the recipe's TOML --------------------------------------------------------------------------


def test_the_recipe_toml_reads_back_exactly_with_comments_on_top():
    recipe = {"name": "n", "description": "d", "base": "b", "target": "", "files": [".flox/pkgs/**/*.nix"]}
    steps = [{"kind": "replace-in-strings", "title": "T", "message": "T\n\nBody \"quoted\" \\ back\n",
              "files": ["a.nix"], "params": {"paths": ["meta.longDescription"], "old": "\n  Python 3.12\r\n",
                                             "new": "", "regex": True}},
             {"kind": "readme-branch-table", "title": "R", "params": {"base": "{base}", "columns": {"Min Driver": "560+"}}},
             {"kind": "metadata-rev", "title": "M", "params": {"value": 3, "missing": "skip", "old": r"\d+"}}]
    text = render(recipe, steps, ["first line", "", "control \x1b[2J"])
    assert text.startswith("# first line\n#\n# control \\x1b[2J\n")
    data = tomllib.loads(text)
    assert data["steps"][0]["params"]["old"] == "\n  Python 3.12\r\n"
    assert data["steps"][1]["params"]["columns"] == {"Min Driver": "560+"}
    assert "old = '\\d+'" in text  # a backslash reads best in a literal string
    assert "target" not in data  # empty keys are left out


# --- titles in words (issue 34) ------------------------------------------------------------------


def test_long_texts_show_the_words_where_they_differ_so_titles_stay_apart():
    from pinshift.infer.propose_strings import replacement_title

    old = "Built as pytorch-python311-cuda12_8-sm90-avx2 for the H100 cluster"
    titles = {replacement_title(["meta.description"], old, old.replace(part, new), False)
              for part, new in (("sm90", "sm89"), ("avx2", "avx512"), ("H100", "H200"))}
    assert titles == {"Say '…sm89…' instead of '…sm90…' in meta.description",
                      "Say '…avx512…' instead of '…avx2…' in meta.description",
                      "Say '…H200…' instead of '…H100…' in meta.description"}


def test_a_regex_replacement_is_titled_by_what_it_adds():
    from pinshift.infer.propose_strings import replacement_title

    assert replacement_title(["preConfigure"], '"', ' $CXXFLAGS"', True) == \
        "Add '$CXXFLAGS' before '\"' in preConfigure"
    assert replacement_title(["meta.longDescription", "#comments"], "3.13", "3.13 (CUDA build)", True) == \
        "Add '(CUDA build)' after '3.13' in comments and meta.longDescription"


def test_titles_alike_are_told_apart_by_their_files_then_numbered():
    from pinshift.infer.candidates import Candidate
    from pinshift.infer.engine import distinct_titles
    from pinshift.infer.prove import Accepted

    def step(title, files):
        return Accepted(Candidate("metadata-rev", {}, title, ("a", "b")), files, None)

    titles = distinct_titles([step("Bump", ("pkgs/*-cpu-*.nix",)), step("Bump", ("pkgs/*-gpu-*.nix",)),
                              step("Pin", None), step("Pin", None)])
    assert titles == ["Bump (*-cpu-*.nix)", "Bump (*-gpu-*.nix)", "Pin (the recipe's files) (first)",
                      "Pin (the recipe's files) (second)"]


@pytest.mark.parametrize("subject, name", [
    ("Add CUDA 12.x variants", "add-cuda-12.x-variants"),
    ("vLLM 0.16.0: bump (#42)", "vllm-0.16.0-bump-42"),
    ("   ", ""),
])
def test_a_recipe_is_named_after_the_commit_subject(subject, name):
    from pinshift.infer.engine import recipe_name

    assert recipe_name(subject) == name


@pytest.mark.parametrize("change, words", [
    (("cuda12_9", "cuda12_8", False), ("cuda12_9 to cuda12_8", "replace")),
    ((r"^(?!pkg\-)", "pkg-", True), ("the prefix pkg-", "prefix")),
    ((r"(?<!\-old)\.", "-old.", True), ("-old", "insert")),
])
def test_a_name_change_in_words(change, words):
    from pinshift.infer.names import change_words

    assert change_words(change) == words


def test_binding_names_that_differ_in_digits_make_one_pattern():
    from pinshift.infer.propose_nix import name_pattern

    assert name_pattern(["python312Custom", "python313Custom"]) == r"python3\d+Custom"
    assert name_pattern(["py39", "py312"]) == r"py3\d+" and name_pattern(["py27", "py312"]) == r"py\d+"
    assert name_pattern(["a1", "b2"]) is None
