"""File-level steps piece by piece: self-references, names, the WorkingSet overlay, tree changes, writes, reports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git

from pinshift.errors import GitError, PinshiftError, StepFailed
from pinshift.files.fileops import FileOp, check_file_ops, clone, remove, rename
from pinshift.files.tree import DirectoryTree
from pinshift.migrations._file_names import Naming, self_reference_edits
from pinshift.planning.plan import FileChange, Outcome, Plan, StepPlan, TreeChange, tree_changes
from pinshift.planning.jobs import RunOptions
from pinshift.planning.runner import plan_step
from pinshift.planning.working_set import WorkingSet
from pinshift.steps.registry import bundled_kinds
from pinshift.syntax.document import parse_document

STEM = "pytorch-python312-cpu-avx"


# --- self-references ----------------------------------------------------------------------------


def renamed_text(source: str) -> str:
    doc = parse_document(source.encode(), f"pkgs/{STEM}.nix")
    edits = self_reference_edits(doc, f"pkgs/{STEM}.nix", "pkgs/pytorch-python311-cpu-avx.nix", "test")
    data = doc.data
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        data = data[: edit.start] + edit.replacement + data[edit.end :]
    return data.decode()


@pytest.mark.parametrize("source, expected", [
    # strings and comments: whole tokens change
    (f'{{ pname = "{STEM}"; }}', '{ pname = "pytorch-python311-cpu-avx"; }'),
    (f"# Package name: {STEM}\n{{ }}", "# Package name: pytorch-python311-cpu-avx\n{ }"),
    (f"/* see {STEM}.nix */ {{ }}", "/* see pytorch-python311-cpu-avx.nix */ { }"),
    (f"{{ d = ''\n  build {STEM} (AVX)\n''; }}", "{ d = ''\n  build pytorch-python311-cpu-avx (AVX)\n''; }"),
    (f'{{ u = "flox/{STEM}@2.9"; }}', '{ u = "flox/pytorch-python311-cpu-avx@2.9"; }'),
    (f'{{ "{STEM}" = 1; }}', '{ "pytorch-python311-cpu-avx" = 1; }'),  # a quoted attribute name is a string
    (f'{{ x = "${{f "{STEM}"}}"; }}', '{ x = "${f "pytorch-python311-cpu-avx"}"; }'),  # a string inside ${...}
    # not whole tokens: left alone
    (f'{{ a = "{STEM}2"; b = "my-{STEM}"; c = "{STEM}_old"; d = "x{STEM}"; e = "{STEM}-extra"; }}', None),
    # not strings or comments: identifiers and paths never change
    (f"let {STEM} = 1; in {{ x = {STEM}; }}", None),
    (f"{{ src = ./{STEM}.patch; }}", None),
    (f'{{ x = "${{{STEM}}}"; }}', None),  # an identifier inside an interpolation
])
def test_self_references_are_whole_tokens_in_strings_and_comments(source, expected):
    assert renamed_text(source) == (source if expected is None else expected)


def test_naming_changes_the_name_never_the_directory():
    assert Naming("python312", "python311", False).targets(
        ["a/python312/x-python312.nix", "y.nix", "python312-python312.nix"]) == [
        ("a/python312/x-python312.nix", "a/python312/x-python311.nix"),
        ("python312-python312.nix", "python311-python311.nix"),
    ]
    assert Naming(r"sm(\d)(\d)", r"sm\2\1", True).targets(["p/t-sm75.nix"]) == [("p/t-sm75.nix", "p/t-sm57.nix")]
    assert Naming("q", "y", True).targets(["a.nix"]) == []  # no match, no operation


# --- checks ---------------------------------------------------------------------------------------


def test_a_new_path_under_an_existing_file_is_refused():
    with pytest.raises(StepFailed, match="cannot rename a/b.nix to a/b.nix/c.nix: a/b.nix is a file"):
        check_file_ops([rename("a/b.nix", "a/b.nix/c.nix")], ["a/b.nix"], ["**"], "s")


def test_renames_onto_paths_the_step_vacates_and_removals_pass():
    check_file_ops([rename("a", "b"), rename("b", "c"), remove("d")], ["a", "b", "d"], ["*"], "s")


# --- the WorkingSet overlay -------------------------------------------------------------------------


class Tree:
    def __init__(self, files: dict[str, bytes]):
        self.files = files

    def paths(self):
        return sorted(self.files)

    def read(self, path):
        return self.files[path]


def test_working_set_moves_paths_as_one_step_and_refuses_removed_reads():
    files = WorkingSet(Tree({"a": b"A", "b": b"B", "c": b"C"}))
    files.changed["a"] = b"A2"
    files.apply_ops([rename("a", "b"), rename("b", "d"), clone("c", "e"), remove("c")], lambda op: f"was taken by a {op.action}")
    assert files.paths() == ["b", "d", "e"]
    assert (files.read("b"), files.read("d"), files.read("e")) == (b"A2", b"B", b"C")
    with pytest.raises(PinshiftError, match="c was taken by a remove; a later step cannot read it"):
        files.read("c")
    with pytest.raises(PinshiftError, match="a was taken by a rename"):
        files.read("a")


# --- what a commit records -----------------------------------------------------------------------


def test_tree_changes_write_first_and_delete_only_paths_not_written():
    step = StepPlan(1, 1, "k", "t", {})
    step.files = [
        FileChange("b", Outcome.CHANGED, after=b"from a", old_path="a", mode="100755"),
        FileChange("a", Outcome.CHANGED, after=b"from b", old_path="b", mode="100644"),  # a swap
        FileChange("c2", Outcome.CHANGED, after=b"copy", source="c", mode="100644"),
        FileChange("d", Outcome.CHANGED, removed=True),
        FileChange("e", Outcome.CHANGED, after=b"edited"),
        FileChange("f", Outcome.UNCHANGED, source="c"),  # an identical clone: nothing to write
    ]
    assert tree_changes(step) == [
        TreeChange("b", b"from a", "100755"), TreeChange("a", b"from b", "100644"), TreeChange("c2", b"copy", "100644"),
        TreeChange("e", b"edited", None), TreeChange("d", None, None),
    ]


def test_writes_creations_and_removals_are_all_or_nothing(tmp_path):
    """apply's writer (pinshift.files.replace) takes renames' and clones' new files and removals with the rest."""
    from pinshift.errors import WriteFailed
    from pinshift.files.replace import Replacement, replace_all

    (tmp_path / "a.nix").write_bytes(b"old")
    (tmp_path / "gone.nix").write_bytes(b"bye")
    items = [Replacement("a.nix", tmp_path / "a.nix", b"old", b"new"),
             Replacement("gone.nix", tmp_path / "gone.nix", b"bye", None),
             Replacement("b.nix", tmp_path / "b.nix", None, b"x", "100755")]
    bad = items + [Replacement("missing-dir/c.nix", tmp_path / "missing-dir" / "c.nix", None, b"y", "100644")]
    with pytest.raises(WriteFailed, match="missing-dir/c.nix: its directory .* does not exist; no file was changed"):
        replace_all(bad)
    assert sorted(os.listdir(tmp_path)) == ["a.nix", "gone.nix"]
    assert (tmp_path / "a.nix").read_bytes() == b"old"
    assert replace_all(items) == []
    assert sorted(os.listdir(tmp_path)) == ["a.nix", "b.nix"]
    assert (tmp_path / "a.nix").read_bytes() == b"new"
    assert os.stat(tmp_path / "b.nix").st_mode & 0o100


def test_worktree_never_creates_a_file_through_a_symlinked_directory(make_repo, tmp_path):
    from pinshift.git.commit import add_worktree
    from pinshift.git.repo import Repository

    outside = tmp_path / "outside"
    outside.mkdir()
    root = make_repo({"pkgs/a.nix": "{ }\n"})
    os.symlink(outside, root / "linked")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a directory link")
    worktree = add_worktree(Repository.open(root), git(root, "rev-parse", "HEAD").strip())
    try:
        with pytest.raises(GitError, match="cannot write linked/x.nix: linked is a symlink"):
            worktree.create("linked/x.nix", b"{ }\n", "100644")
        worktree.create("new/dir/x.nix", b"{ }\n", "100755")
        assert oct((worktree.path / "new/dir/x.nix").stat().st_mode & 0o777) == "0o755"
        worktree.delete("new/dir/x.nix")
        assert not (worktree.path / "new").exists()  # emptied directories go too
    finally:
        worktree.remove()
    assert os.listdir(outside) == []


# --- the step kinds through the runner -------------------------------------------------------------


def plan_kind(tmp_path: Path, files: dict[str, str], kind: str, params: dict, globs=("**/*.nix",)):
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    step_kind = bundled_kinds()[kind]
    return plan_step(WorkingSet(DirectoryTree(tmp_path)), step_kind, step_kind.parse_params(params),
                     globs, options=RunOptions())


def test_clone_values_are_inserted_where_no_binding_exists_and_warned_without_override_attrs(tmp_path):
    step = plan_kind(tmp_path, {
        "a-sm75.nix": "(t.override { }).overrideAttrs (old: {\n  pname = \"a-sm75\";\n})\n",
        "b-sm75.nix": "{ pname = \"b-sm75\"; }\n",
    }, "clone-files", {"from": "sm75", "to": "sm70", "values": {"gpuArchNum": '"70"'}})
    changes = {c.path: c for c in step.files}
    assert changes["a-sm70.nix"].after == b'(t.override { }).overrideAttrs (old: {\n  pname = "a-sm70";\n  gpuArchNum = "70";\n})\n'
    assert changes["b-sm70.nix"].after == b'{ pname = "b-sm70"; }\n'
    assert [str(w) for w in step.warnings] == ["b-sm70.nix: found no overrideAttrs attrset: gpuArchNum not set"]


def test_a_file_that_is_not_nix_is_moved_as_it_is_with_a_note(tmp_path):
    step = plan_kind(tmp_path, {"docs/old-guide.md": "# old-guide\n"}, "rename-files", {"from": "old", "to": "new"},
                     globs=("docs/*",))
    (change,) = step.files
    assert (change.path, change.old_path, change.after, change.edits) == ("docs/new-guide.md", "docs/old-guide.md",
                                                                          b"# old-guide\n", [])
    assert step.notes == ["docs/new-guide.md: not a nix file: moved as it is, self-references not updated"]


def test_a_source_with_syntax_errors_is_refused_not_renamed_silently(tmp_path):
    step = plan_kind(tmp_path, {"a-x.nix": "{ a = ; }\n"}, "rename-files", {"from": "-x", "to": "-y"})
    (change,) = step.files
    assert (change.outcome, change.path, change.old_path) == (Outcome.REFUSED, "a-y.nix", "a-x.nix")


@pytest.mark.parametrize("kind", ["rename-files", "clone-files", "remove-files"])
def test_show_step_documents_each_kind_with_a_worked_example(run_cli, kind):
    result = run_cli("show", "--step", kind)
    assert result.exit_code == 0, result
    assert f'kind = "{kind}"' in result.stdout and "Example recipe step" in result.stdout
    assert "Parameters:" in result.stdout and "pinshift apply " + kind in result.stdout
    files = "any" if kind == "remove-files" else "any, self-references in nix"
    assert result.stdout.splitlines()[0] == f"step kind {kind} (bundled; files: {files})"


# --- reports ----------------------------------------------------------------------------------------


def moving_plan() -> Plan:
    step = StepPlan(1, 2, "rename-files", "Rename", {"from": "x", "to": "y"})
    step.files = [FileChange("p/a-y.nix", Outcome.CHANGED, before=b"a-x\n", after=b"a-x\n", old_path="p/a-x.nix",
                             mode="100644")]
    gone = StepPlan(2, 2, "remove-files", "Remove", {"select": ["p/b.nix"]})
    gone.files = [FileChange("p/b.nix", Outcome.CHANGED, removed=True)]
    return Plan(recipe="r", steps=[step, gone], base="main", base_commit="1" * 40, target="t")


def test_text_report_lists_renames_without_a_diff_when_nothing_inside_changed_and_removals():
    from pinshift.report.text import render_text

    text = render_text(moving_plan())
    assert "step 1/2 rename-files: Rename — 1 file changed (1 renamed), 0 edits, 0 warnings\n" \
           "parsed with: tree-sitter-nix (p/a-y.nix)\nrenamed: p/a-x.nix → p/a-y.nix\n\n" in text
    assert "step 2/2 remove-files: Remove — 1 file changed (1 removed), 0 edits, 0 warnings\n" \
           "removed: p/b.nix\n\n" in text


def test_markdown_report_names_moved_files_without_empty_diffs():
    from pinshift.report.markdown import render_markdown

    text = render_markdown(moving_plan())
    assert "- renamed 1 file: `a-x.nix` → `a-y.nix`\n" in text and "- removed 1 file: `p/b.nix`\n" in text
    assert "#### Step 1: `p/a-x.nix` → `p/a-y.nix` — no change inside\n" in text
    assert "#### Step 2: removed `p/b.nix`\n" in text
    assert "```diff" not in text


def test_json_report_adds_the_operations_and_validates():
    jsonschema = pytest.importorskip("jsonschema")
    from pinshift.report.json import render_json

    data = json.loads(render_json(moving_plan()))
    schema = json.loads((Path(__file__).parent.parent / "docs" / "report-schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    first, second = data["steps"]
    assert first["renamed"] == [{"from": "p/a-x.nix", "to": "p/a-y.nix"}] and first["files_changed"] == ["p/a-y.nix"]
    assert second["removed"] == ["p/b.nix"] and second["parsers"] == {} and "renamed" not in second
