"""The JSON report: schema pinshift.report/1, validated against docs/report-schema.json, and golden snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_plans import build_plan, demo_files, fixture_files, write_tree, assert_golden

from pinshift.demo.matrix import NEW_REV, OLD_REV
from pinshift.planning.plan import AppliedEdit, FileChange, Outcome, Plan, StepPlan
from pinshift.report.json import SCHEMA, render_json

jsonschema = pytest.importorskip("jsonschema")
SCHEMA_FILE = Path(__file__).parent.parent / "docs" / "report-schema.json"


def validate(text: str) -> dict:
    data = json.loads(text)
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    return data


@pytest.fixture
def fixture_plan(tmp_path):
    return build_plan(write_tree(tmp_path, fixture_files()))


def test_fixture_report_matches_golden_and_schema(fixture_plan):
    text = render_json(fixture_plan)
    data = validate(text)
    assert data["schema"] == SCHEMA == "pinshift.report/1"
    assert_golden("fixture.json", text)


def test_committed_report_carries_commit_ids(tmp_path):
    data = validate(render_json(build_plan(write_tree(tmp_path, fixture_files()), committed=True)))
    assert data["dry_run"] is False
    assert [s["commit"] for s in data["steps"]] == ["2" * 40, "3" * 40]
    assert data["target"] == {"ref": "pytorch-2.10-cuda12_9", "commit": "3" * 40}
    assert data["base"]["commit"] == "1" * 40


def test_demo_report_matches_golden_and_schema(tmp_path):
    text = render_json(build_plan(write_tree(tmp_path, demo_files())))
    data = validate(text)
    assert data["totals"] == {"steps": 2, "files_changed": 66, "edits": 132, "warnings": 66, "skipped": 0, "refused": 0}
    assert_golden("demo.json", text)


def test_steps_list_edits_outcomes_and_totals_from_the_plan(fixture_plan):
    data = validate(render_json(fixture_plan))
    first, second = data["steps"]
    assert first["files_changed"] == [
        ".flox/pkgs/latin1-comment.nix",
        ".flox/pkgs/pytorch-python313-cuda12_9-sm90-avx512.nix",
        ".flox/pkgs/pytorch-python313-darwin-mps.nix",
    ]
    assert first["refused"][0]["path"] == ".flox/pkgs/broken.nix"
    assert "syntax error" in first["refused"][0]["reason"]
    assert first["skipped"] == [{"path": ".flox/pkgs/blob.nix", "reason": ".flox/pkgs/blob.nix: binary file (NUL byte); skipped"}]
    assert {w["line"] for w in first["warnings"]} == {8}
    edit = second["edits"][1]
    assert (edit["line"], edit["column"]) == (32, 4)
    assert edit["before"] == "nixpkgs_pinned.python3Packages.torch"
    assert edit["after"] == "nixpkgs_pinned.python313Packages.torch"
    assert first["params"]["new"] == "0182a361324364ae3f436a63005877674cf45efb"
    assert data["totals"]["edits"] == sum(len(s["edits"]) for s in data["steps"])
    assert data["would_change"] is True


def test_undecodable_bytes_become_replacement_characters():
    change = FileChange(
        "a.nix", Outcome.CHANGED, before=b"x = \"caf\xe9\";\n", after=b"x = \"caf\xc3\xa9\";\n",
        edits=[AppliedEdit("a.nix", 1, 6, b"caf\xe9", b"caf\xc3\xa9", "fix encoding")],
    )
    plan = Plan("r", [StepPlan(1, 1, "k", "t", {}, files=[change])])
    data = validate(render_json(plan))
    assert data["steps"][0]["edits"][0]["before"] == "caf\ufffd"
    assert data["steps"][0]["edits"][0]["after"] == "café"


def test_a_plan_that_changes_nothing_is_valid_and_says_so():
    plan = Plan("r", [StepPlan(1, 1, "k", "t", {"when": __import__("datetime").date(2026, 1, 2)})])
    data = validate(render_json(plan))
    assert data["would_change"] is False
    assert data["steps"][0]["params"] == {"when": "2026-01-02"}  # TOML dates are shown as text
    assert data["base"] == {"ref": "", "commit": None}


def test_changed_files_still_parse_as_nix(fixture_plan, nix_oracle):
    for step in fixture_plan.steps:
        for change in step.changed:
            ok, canonical = nix_oracle(change.after)
            assert ok, f"{change.path}: {canonical}"


def test_each_changed_file_names_the_parser_that_read_it(tmp_path, run_cli):
    """A pin swap over a recipe, a README and a helper script: each file's parser is in every format."""
    docs = Path(__file__).parent / "fixtures" / "docs"
    (tmp_path / "README.md").write_bytes((docs / "README.md").read_bytes())
    (tmp_path / "fetch_pin.py").write_text(f'URL = "https://github.com/NixOS/nixpkgs/archive/{OLD_REV}.tar.gz"\n')
    (tmp_path / "a.nix").write_text(f'import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{OLD_REV}.tar.gz") {{ }}\n')
    args = ["apply", "pin-swap", "--set", "old=6a030d5", "--set", f"new={NEW_REV}", "--dry-run",
            "--files", "*.nix", "--files", "*.md", "--files", "*.py", str(tmp_path)]
    report = json.loads(run_cli(*args, "--format", "json").stdout)
    parsers = {path.rsplit("/", 1)[-1]: name for path, name in report["steps"][0]["parsers"].items()}
    assert parsers == {"a.nix": "tree-sitter-nix", "README.md": "markdown-it-py", "fetch_pin.py": "libcst"}
    line = next(l for l in run_cli(*args).stdout.splitlines() if l.startswith("parsed with: "))
    assert sorted(part.split(" (")[0] for part in line.removeprefix("parsed with: ").split("; ")) == [
        "libcst", "markdown-it-py", "tree-sitter-nix"]


def check_groups(data: dict) -> None:
    """What the schema cannot say: every changed file in exactly one change group, counts that add up."""
    for step in data["steps"]:
        groups = step["groups"]
        grouped = [path for group in groups["changes"] for path in group["files"]]
        assert sorted(grouped) == sorted(step["files_changed"])
        assert sum(group["edits"] for group in groups["changes"]) == len(step["edits"])
        for kind in ("warnings", "skipped", "refused"):
            locations = [loc for group in groups[kind] for loc in group["locations"]]
            assert len(locations) == len(step[kind])
            for group in groups[kind]:
                assert group["count"] == len(group["locations"])
                assert group["files"] == len({loc["path"] for loc in group["locations"]})


def test_groups_account_for_every_detail(tmp_path, fixture_plan):
    check_groups(validate(render_json(fixture_plan)))
    demo = validate(render_json(build_plan(write_tree(tmp_path / "demo", demo_files()))))
    check_groups(demo)
    assert [len(g["files"]) for s in demo["steps"] for g in s["groups"]["changes"]] == [66, 7, 59]


def test_the_schema_checks_the_groups_and_keeps_them_optional(fixture_plan):
    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    data = json.loads(render_json(fixture_plan))
    older = json.loads(render_json(fixture_plan))
    for step in older["steps"]:
        del step["groups"]  # a report written before the key existed is still a valid pinshift.report/1
    validator.validate(older)
    broken = [
        ("count", lambda g: g["groups"]["warnings"][0].update(count=0)),
        ("locations", lambda g: g["groups"]["warnings"][0].update(locations=[])),
        ("unknown key", lambda g: g["groups"]["warnings"][0].update(where="x")),
        ("operation", lambda g: g["groups"]["changes"][0].update(operation="moved")),
        ("no files", lambda g: g["groups"]["changes"][0].update(files=[])),
        ("missing list", lambda g: g["groups"].pop("notes")),
    ]
    for name, spoil in broken:
        copy = json.loads(json.dumps(data))
        spoil(copy["steps"][0])
        assert not validator.is_valid(copy), name


def test_the_fast_encoder_writes_exactly_what_json_dumps_writes(tmp_path):
    """report.json.dumps_indented is json.dumps(indent=2, ensure_ascii=False, default=str), byte for byte."""
    import datetime
    import json as json_module

    from pinshift.report.json import dumps_indented

    values = [
        {}, [], {"a": [], "b": {}, "c": [{}], "d": [[1, 2], {"e": None}]},
        {"text": "caf\u00e9 \x1b[31m \"quoted\" back\\slash \u2028 tab\t", "n": -3, "f": 0.1, "big": 10**30,
         "t": True, "fl": False, "nan": float("nan"), "date": datetime.date(2026, 11, 23), 7: "int key",
         True: "bool key", None: "null key", 1.5: "float key"},
        [datetime.time(12, 30), ("tuple", 1)],
        ["pkgs/a.nix", "caf\u00e9\u2028\x00\"", ""], {"files": ["x", "y"], "nested": [["p", "q"], []]},
    ]
    for value in values:
        assert dumps_indented(value) == json_module.dumps(value, indent=2, ensure_ascii=False, default=str)


def test_the_streamed_report_is_the_whole_report_in_pieces(tmp_path):
    """iter_json writes each step's edits as they are made (a 40,000-file report is never held whole);
    joined, the pieces are json.dumps of the plain report data, byte for byte."""
    import json as json_module

    from pinshift.report.json import iter_json, report_data

    plan = build_plan(write_tree(tmp_path, demo_files()))
    pieces = list(iter_json(plan))
    assert "".join(pieces) == json_module.dumps(report_data(plan), indent=2, ensure_ascii=False, default=str) + "\n"
    assert len(pieces) > len(plan.steps) * 3  # the steps' members come one by one, not as one text
    assert max(len(piece) for piece in pieces) < len("".join(pieces)) / 2
