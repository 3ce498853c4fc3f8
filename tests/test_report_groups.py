"""report/groups.py: which findings and which changes count as the same, by the rules its docstring documents."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pinshift.planning.plan import FileChange, Outcome, StepPlan, Warning
from pinshift.report.groups import (Location, change_groups, group_lines, group_text, message_key, note_groups,
                                    refused_groups, run_notes, shown_message, skipped_groups, split_location,
                                    warning_groups)

P = ".flox/pkgs/pytorch-python313-cpu-avx2.nix"


@pytest.mark.parametrize(("message", "shown", "key"), [
    # rule 1: a leading location of the item's own file goes (it is shown apart)
    (f"{P}:7: fetchTarball has no sha256", "fetchTarball has no sha256", "fetchTarball has no sha256"),
    (f"{P}:7:3: x", "x", "x"),
    (f"{P}: binary file (NUL byte); skipped", "binary file (NUL byte); skipped", "binary file (NUL byte); skipped"),
    # rule 2: other mentions of its own file, with any line and column, and its file name alone
    (f"renaming {P}:12:5 would clash", "renaming <file> would clash", "renaming <file> would clash"),
    ("see pytorch-python313-cpu-avx2.nix.", "see <file>.", "see <file>."),
    # ... but not a longer name that starts with it, nor another file
    ("see pytorch-python313-cpu-avx2.nix.bak", "see pytorch-python313-cpu-avx2.nix.bak",
     "see pytorch-python313-cpu-avx2.nix.bak"),
    ("see other.nix:3:1", "see other.nix:3:1", "see other.nix:<n>:<n>"),
    # rule 3: numbers that stand alone vary; names, versions and revisions stay
    ("2 rows for 'pytorch-2.9' and none is marked", "2 rows for 'pytorch-2.9' and none is marked",
     "<n> rows for 'pytorch-2.9' and none is marked"),
    ("python313Packages sm86 2.10 6a030d5 cudaPackages_12_9 -march=armv8.2-a",
     "python313Packages sm86 2.10 6a030d5 cudaPackages_12_9 -march=armv8.2-a",
     "python313Packages sm86 2.10 6a030d5 cudaPackages_12_9 -march=armv8.2-a"),
    ("refused (and 3 more)", "refused (and 3 more)", "refused (and <n> more)"),
])
def test_message_keys_follow_the_documented_rules(message, shown, key):
    assert shown_message(P, message) == shown
    assert message_key(P, message) == key


def test_paths_with_regex_characters_are_matched_literally():
    path = "pkgs/a+b(1).nix"
    assert split_location(path, f"{path}:3:4: oops") == (Location(path, 3, 4), "oops")
    assert split_location(path, "pkgs/aab(1).nix:3:4: oops") == (Location(path), "pkgs/aab(1).nix:3:4: oops")
    assert shown_message(path, f"see {path}") == "see <file>"
    assert split_location("", ": x") == (Location(""), ": x")


def _warned(path: str, *found: tuple[int, str]) -> FileChange:
    return FileChange(path, Outcome.UNCHANGED, warnings=[Warning(path, line, 1, message) for line, message in found])


def test_warnings_group_by_message_in_order_of_first_appearance():
    step = StepPlan(3, 4, "k", "t", {}, files=[
        _warned("a.nix", (0, "no marker"), (4, "2 rows for x")),
        _warned("b.nix", (0, "no marker"), (9, "5 rows for x"), (12, "5 rows for x")),
        _warned("c.nix", (2, "c.nix:2: odd")),
    ])
    marker, rows, odd = warning_groups(step)
    assert (marker.count, marker.files, marker.message, str(marker.first)) == (2, 2, "no marker", "a.nix")
    assert (rows.count, rows.files, rows.size) == (3, 2, "3 times in 2 files")
    assert rows.message == "<n> rows for x"  # the numbers differ within the group: the key is shown
    assert group_text(marker, with_step=True) == "step 3: 2 files: no marker (first: a.nix; --verbose lists all)"
    assert group_text(rows) == "3 times in 2 files: <n> rows for x (first: a.nix:4:1; --verbose lists all)"
    assert group_text(odd) == "c.nix:2:1: c.nix:2: odd"  # a group of one prints as it always did
    assert group_lines([marker, rows, odd], verbose=True) == [
        "a.nix: no marker", "b.nix: no marker", "a.nix:4:1: 2 rows for x", "b.nix:9:1: 5 rows for x",
        "b.nix:12:1: 5 rows for x", "c.nix:2:1: c.nix:2: odd"]


def test_skipped_and_refused_files_group_by_reason_without_their_path():
    skipped = [FileChange(p, Outcome.SKIPPED, reason=f"{p}: symlink loop; skipped") for p in ("a.nix", "b.nix")]
    refused = [FileChange("x.nix", Outcome.REFUSED, reason="x.nix:1:1: syntax error: unexpected '{'; fix it"),
               FileChange("y.nix", Outcome.REFUSED, reason="y.nix:4:2: syntax error: unexpected '{'; fix it"),
               FileChange("z.nix", Outcome.REFUSED, reason="the step refused it")]  # a reason without the path
    step = StepPlan(1, 1, "k", "t", {}, files=skipped + refused)
    [loops] = skipped_groups(step)
    assert group_text(loops) == "2 files: symlink loop; skipped (first: a.nix; --verbose lists all)"
    syntax, plain = refused_groups(step)
    assert [str(l) for l in syntax.locations] == ["x.nix:1:1", "y.nix:4:2"]
    assert syntax.message == "syntax error: unexpected '{'; fix it"
    assert group_text(plain) == "z.nix: the step refused it"


def test_file_notes_group_and_step_notes_stay_as_they_are():
    notes = [FileChange(p, Outcome.UNCHANGED, notes=[Warning(p, 1, 1, "already pinned: left alone")])
             for p in ("a.nix", "b.nix")]
    step = StepPlan(1, 1, "k", "t", {}, files=notes,
                    notes=["step kind 'k' loaded from /x/k.py", "a.nix:1:1: already pinned: left alone",
                           "b.nix:1:1: already pinned: left alone"])
    assert run_notes(step) == ["step kind 'k' loaded from /x/k.py"]
    [group] = note_groups(step)
    assert group_text(group) == "2 files: already pinned: left alone (first: a.nix:1:1; --verbose lists all)"


def _changed(path: str, before: bytes, after: bytes, **moved) -> FileChange:
    return FileChange(path, Outcome.CHANGED, before=before, after=after, **moved)


def test_files_with_the_same_changed_lines_are_one_group_whatever_surrounds_them():
    url = b'  url = "https://x/archive/OLD.tar.gz";\n'
    cuda = _changed("cuda.nix", b"# cuda\n" + url + b"cuda = 1;\n", b"# cuda\n" + url.replace(b"OLD", b"NEW") + b"cuda = 1;\n")
    cpu = _changed("cpu.nix", b"# cpu\nflags;\n" + url, b"# cpu\nflags;\n" + url.replace(b"OLD", b"NEW"))
    crlf = _changed("crlf.nix", url.replace(b"\n", b"\r\n"), url.replace(b"OLD", b"NEW").replace(b"\n", b"\r\n"))
    indented = _changed("ind.nix", b"  " + url, b"  " + url.replace(b"OLD", b"NEW"))
    groups = change_groups(StepPlan(1, 1, "k", "t", {}, files=sorted([cuda, cpu, crlf, indented], key=lambda f: f.path)))
    assert [g.paths for g in groups] == [["cpu.nix", "cuda.nix"], ["crlf.nix"], ["ind.nix"]]
    assert groups[0].representative.path == "cpu.nix"


def test_renames_group_when_their_self_references_follow_their_own_names():
    def renamed(old: str, new: str, extra: bytes = b"") -> FileChange:
        text = b'# Package name: %s\n{ pname = "%s"; }\n' % (old.encode(), old.encode()) + extra
        return _changed(f"pkgs/{new}.nix", text, text.replace(old.encode(), new.encode()), old_path=f"pkgs/{old}.nix")

    a = renamed("torch-py312-avx", "torch-py311-avx")
    b = renamed("torch-py312-avx2", "torch-py311-avx2")
    c = renamed("torch-py312-sm90", "torch-py311-sm90", extra=b"# see torch-py312-avx\n")  # names a sibling, unchanged
    odd = _changed("pkgs/odd.nix", b'{ pname = "odd"; }\n', b'{ pname = "other"; }\n', old_path="pkgs/odd-old.nix")
    groups = change_groups(StepPlan(1, 1, "rename-files", "t", {}, files=[a, b, c, odd]))
    assert [g.paths for g in groups] == [["pkgs/torch-py311-avx.nix", "pkgs/torch-py311-avx2.nix",
                                          "pkgs/torch-py311-sm90.nix"], ["pkgs/odd.nix"]]
    assert groups[0].operation == "renamed" and groups[0].edits == 0


def test_removals_are_one_group_and_never_join_edits():
    gone = [FileChange(p, Outcome.CHANGED, before=p.encode(), removed=True) for p in ("a.nix", "b.nix")]
    step = StepPlan(1, 1, "remove-files", "t", {}, files=gone + [_changed("c.nix", b"x\n", b"y\n")])
    removed, edited = change_groups(step)
    assert (removed.operation, removed.paths) == ("removed", ["a.nix", "b.nix"])
    assert edited.paths == ["c.nix"]


def _difflib_hunks(before: bytes, after: bytes) -> list[list[bytes]]:
    from pinshift.planning.unified_diff import unified_diff

    hunks: list[list[bytes]] = []
    for line in unified_diff("x", before, after, context=0).split(b"\n")[2:]:
        if line.startswith(b"@@"):
            hunks.append([])
        elif hunks and line:
            hunks[-1].append(line)
    return hunks


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_hunks_read_off_the_edits_equal_the_diffs(data):
    """groups._edited_lines (no diff) gives git's -U0 hunks for edits within lines, on real recipes."""
    from pinshift.demo.matrix import OLD_REV, render_recipe, variants
    from pinshift.edits import Edit
    from pinshift.planning.plan import AppliedEdit, FileChange, Outcome
    from pinshift.report.groups import _edited_lines

    before = render_recipe(data.draw(st.sampled_from(variants())), OLD_REV).encode()
    lines = before.split(b"\n")
    chosen = sorted(set(data.draw(st.lists(st.integers(0, len(lines) - 2), min_size=1, max_size=4))))
    edits, offset = [], 0
    starts = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines))]
    for number in chosen:
        start = starts[number]
        width = len(lines[number])
        a = data.draw(st.integers(0, width))
        b = data.draw(st.integers(a, width))
        replacement = data.draw(st.binary(max_size=5).filter(lambda x: b"\n" not in x))
        edits.append(Edit(start + a, start + b, replacement, "t"))
    edits = sorted(edits)
    parts, cursor = [], 0
    for edit in edits:
        parts += [before[cursor:edit.start], edit.replacement]
        cursor = edit.end
    after = b"".join(parts + [before[cursor:]])
    applied = [AppliedEdit("r.nix", 1, 1, before[e.start:e.end], e.replacement, "t", e.start) for e in edits]
    change = FileChange("r.nix", Outcome.CHANGED, before=before, after=after, edits=applied)
    fast = _edited_lines(change, before, after)
    if fast is not None and before != after:
        assert fast == _difflib_hunks(before, after)


def test_the_hunks_the_runner_records_equal_the_ones_the_report_would_compute(tmp_path):
    """file_edits.process_file records each change's hunks where it plans the file (in a worker, from the bytes it
    holds); they must equal hunks.changed_lines of the finished change, on the demo and the python311 renames."""
    import dataclasses

    from pinshift.demo.build import build_demo
    from pinshift.demo.python_branch import RECIPE_FILE, build_python312_demo
    from pinshift.planning.changed_lines import changed_lines
    from pinshift.branches.migrate import MigrateOptions, plan, prepare

    seen = 0
    for repo, recipe in ((build_demo(tmp_path / "demo"), "pytorch-2.10-cuda12_9"),
                         (build_python312_demo(tmp_path / "py312"), str(RECIPE_FILE))):
        planned = plan(prepare(MigrateOptions(recipe=recipe, repo=repo, dry_run=True)))
        for step in planned.steps:
            for change in step.changed:
                if change.hunks is None:
                    assert change.removed or step.kind == "readme-branch-table"
                    continue
                seen += 1
                assert change.hunks == changed_lines(dataclasses.replace(change, hunks=None)), change.path
    assert seen > 300


def test_a_hunk_that_a_diff_could_slide_is_left_to_the_diff():
    """An edit that empties a line next to a blank one: the diff may pair the new blank line with the old
    one and put the hunk elsewhere; the hunks read off the edits must then defer to the diff (found by the
    property test above, 1 run in several hundred)."""
    from pinshift.planning.plan import AppliedEdit, FileChange, Outcome
    from pinshift.report.groups import _edited_lines

    before = b"  x = 1;\n    '';\n\n    meta = 1;\n"
    edits = [(9, 16, b""), (18, 22, b"   ")]
    parts, cursor = [], 0
    for start, end, replacement in edits:
        parts += [before[cursor:start], replacement]
        cursor = end
    after = b"".join(parts + [before[cursor:]])
    assert after == b"  x = 1;\n\n\n   meta = 1;\n"
    applied = [AppliedEdit("r.nix", 1, 1, before[s:e], r, "t", s) for s, e, r in edits]
    change = FileChange("r.nix", Outcome.CHANGED, before=before, after=after, edits=applied)
    fast = _edited_lines(change, before, after)
    assert fast is None or fast == _difflib_hunks(before, after)
