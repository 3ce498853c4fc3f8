"""`--format github` and `--format sarif` of `lint`, `verify` and `parse`, and `lint --format json`'s schema.

The GitHub lines are read back the way GitHub's runner reads them (a line that starts with `::` is a command;
`%25`, `%0D`, `%0A`, `%3A`, `%2C` unescaped): a hostile file name or message (a newline, `::`, `%`, `,`, `:`,
a terminal escape) yields exactly one command per finding, naming the real file.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent
CHECKS = FIXTURES / "checks"
LINT_SCHEMA = json.loads((ROOT / "docs" / "lint-schema.json").read_text())
COMMAND = re.compile(r"::(\w+)(?: ([^:]*))?::(.*)")

# The part of SARIF 2.1.0 pinshift writes, as the standard's schema states it (required members and types).
SARIF_SUBSET = {
    "type": "object",
    "required": ["$schema", "version", "runs"],
    "properties": {
        "$schema": {"const": "https://json.schemastore.org/sarif-2.1.0.json"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
            "type": "object", "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name", "version", "rules"],
                    "properties": {"name": {"const": "pinshift"}, "version": {"type": "string"},
                                   "rules": {"type": "array", "items": {
                                       "type": "object", "required": ["id", "shortDescription"],
                                       "properties": {"shortDescription": {
                                           "type": "object", "required": ["text"]}}}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["ruleId", "level", "message", "locations"],
                    "properties": {
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": {"type": "object", "required": ["text"]},
                        "locations": {"type": "array", "minItems": 1, "items": {
                            "type": "object", "required": ["physicalLocation"],
                            "properties": {"physicalLocation": {
                                "type": "object", "required": ["artifactLocation", "region"],
                                "properties": {
                                    "artifactLocation": {"type": "object", "required": ["uri"],
                                                         "properties": {"uri": {"type": "string",
                                                                                "pattern": "^[^/]"}}},
                                    "region": {"type": "object", "required": ["startLine", "startColumn"],
                                               "properties": {"startLine": {"type": "integer", "minimum": 1},
                                                              "startColumn": {"type": "integer",
                                                                              "minimum": 1}}}}}}}}}}}}}}},
}


def unescape(value: str, prop: bool) -> str:
    """GitHub runner's unescaping of a command's data (`prop`: a property value)."""
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else []) + [("%25", "%")]
    for escaped, raw in pairs:
        value = value.replace(escaped, raw)
    return value


def commands(output: str) -> list[tuple[str, dict[str, str], str]]:
    """Every workflow command GitHub's runner would obey in `output` (stdout and stderr alike)."""
    found = []
    for line in output.splitlines():
        if not line.startswith("::"):
            continue
        match = COMMAND.fullmatch(line)
        assert match, line
        name, properties, data = match.groups()
        props = {}
        for pair in (properties or "").split(","):
            key, _, value = pair.partition("=")
            props[key] = unescape(value, True)
        found.append((name, props, unescape(data, False)))
    return found


def test_lint_json_has_its_schema_id_and_validates_against_the_schema_file(run_cli):
    result = run_cli("lint", "--format", "json", "recipes", cwd=CHECKS)
    report = json.loads(result.stdout)
    assert list(report)[0] == "schema" and report["schema"] == "pinshift.lint/1"
    jsonschema.validate(report, LINT_SCHEMA)
    assert report["findings"]
    statistics = json.loads(run_cli("lint", "--statistics", "--format", "json", "recipes", cwd=CHECKS).stdout)
    jsonschema.validate(statistics, LINT_SCHEMA)
    assert statistics["schema"] == "pinshift.lint/1" and statistics["statistics"][0]["count"] >= 1
    broken = dict(report, findings=[dict(report["findings"][0], line=0)])
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail
        jsonschema.validate(broken, LINT_SCHEMA)


def test_lint_github_is_one_command_per_finding_at_the_text_formats_place(run_cli):
    text = run_cli("lint", "recipes", cwd=CHECKS)
    github = run_cli("lint", "--format", "github", "recipes", cwd=CHECKS)
    assert github.exit_code == text.exit_code == 1
    found = commands(github.stdout)
    assert len(found) == len(text.stdout.splitlines()) == 8
    for (name, props, message), line in zip(found, text.stdout.splitlines()):
        assert line == f"{props['file']}:{props['line']}:{props['col']}: {props['title'].split()[-1]} {message}"
        assert name in ("error", "warning") and props["title"].startswith("pinshift lint L")
    assert github.stderr == text.stderr == "10 files linted, 8 findings\n"  # the summary stays on stderr
    severity = {f["code"]: f["severity"] for f in json.loads(run_cli("lint", "--format", "json", "recipes",
                                                                      cwd=CHECKS).stdout)["findings"]}
    assert [name for name, *_ in found] == [{"error": "error", "warning": "warning"}[severity[props["title"][-4:]]]
                                            for _, props, _ in found]
    assert {name for name, *_ in found} == {"error", "warning"}


def test_lint_sarif_names_rules_results_and_relative_places(run_cli):
    result = run_cli("lint", "--format", "sarif", "recipes", cwd=CHECKS)
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    jsonschema.validate(log, SARIF_SUBSET)
    run = log["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert {"L000", "L007", "R001", "R002"} <= set(rules)
    expected = json.loads(run_cli("lint", "--format", "json", "recipes", cwd=CHECKS).stdout)["findings"]
    assert [(r["ruleId"], r["level"], r["message"]["text"]) for r in run["results"]] == \
        [(f["code"], f["severity"], f["message"]) for f in expected]
    for result_, finding in zip(run["results"], expected):
        place = result_["locations"][0]["physicalLocation"]
        assert place["artifactLocation"] == {"uri": finding["path"], "uriBaseId": "%SRCROOT%"}
        assert place["region"] == {"startLine": finding["line"], "startColumn": finding["column"]}
        assert rules[result_["ruleIndex"]] == result_["ruleId"]


def test_statistics_refuses_the_annotation_formats(run_cli):
    for fmt in ("github", "sarif"):
        result = run_cli("lint", "--statistics", "--format", fmt, "recipes", cwd=CHECKS)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr == (f"pinshift lint: error: --statistics counts findings per rule; use it with --format "
                                 f"text, markdown or json, not {fmt}; see 'pinshift lint --help'\n")


HOSTILE_NAMES = [
    "evil\n::error file=x.nix::injected.nix",        # a newline, then a command of its own
    "a,line=99,col=1,title=x.nix",                    # a property of its own
    "b::warning::c.nix",                              # `::` closing the properties
    "pct%0A::error::d.nix",                           # an escape GitHub would undo
    "cr\r::error::e.nix",                             # a carriage return
    "esc\x1b[2Jf.nix",                                # a terminal escape
]


@pytest.mark.parametrize("command", ["parse", "verify", "lint"])
def test_hostile_names_and_messages_give_one_command_each_naming_the_real_file(run_cli, tmp_path, command):
    for name in HOSTILE_NAMES:
        # a syntax error (parse, verify) and a pname that contradicts the name with a command of its own (lint)
        (tmp_path / name).write_bytes(b'{ pkgs }:\nlet x = ; in pkgs.python313Packages.torch.overrideAttrs (o: {\n'
                                      b'  pname = "y\\n::error::from-the-message%0A";\n})\n')
    (tmp_path / "pytorch-python313-cpu-avx2.nix").write_bytes(
        b'{ pkgs }:\npkgs.python313Packages.torch.overrideAttrs (o: {\n  pname = "z\n::error::in-a-string,:%";\n})\n')
    result = run_cli(command, "--format", "github", ".", cwd=tmp_path)
    found = commands(result.stdout + "\n" + result.stderr)
    files = sorted(props["file"] for _, props, _ in found)
    shown = sorted(n.replace("\x1b", "\\x1b") for n in HOSTILE_NAMES)  # a terminal escape is made visible
    if command == "lint":  # L000 for each hostile name, L001 and L006 for the recipe whose pname holds a command
        assert files == sorted(shown + ["pytorch-python313-cpu-avx2.nix"] * 2), found
        assert [message for _, props, message in found if props["title"] == "pinshift lint L001"] == \
            ["file name 'pytorch-python313-cpu-avx2' differs from pname 'z\n::error::in-a-string,:%'; rename one of them"]
        text = run_cli(command, ".", cwd=tmp_path)
        assert len(text.stdout.splitlines()) == len(found) == 8  # the text format too: one line per finding
        assert all(line.startswith("note: ") for line in text.stderr.splitlines()[:-1])
    else:
        assert files == shown, found
        assert all((name, props["line"], props["col"]) == ("error", "2", "8") for name, props, _ in found)
    assert result.stdout.count("\n") == len(found)


def test_sarif_uris_keep_every_byte_of_a_hostile_name(run_cli, tmp_path):
    name = "odd name%,\n\udcff.nix"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / name).write_bytes(b"{ a = ; }\n")
    result = run_cli("parse", "--format", "sarif", "sub", cwd=tmp_path)
    log = json.loads(result.stdout)
    jsonschema.validate(log, SARIF_SUBSET)
    [found] = log["runs"][0]["results"]
    uri = found["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "sub/odd%20name%25%2C%0A%FF.nix"
    from urllib.parse import unquote_to_bytes

    assert unquote_to_bytes(uri) == b"sub/" + name.encode("utf-8", "surrogateescape")


def test_verify_sarif_and_github_carry_v001(run_cli, tmp_path):
    (tmp_path / "bad.nix").write_bytes(b"{ pkgs }:\npkgs.python313Packages.torch.override { x = ; }\n")
    sarif = run_cli("verify", "--format", "sarif", ".", cwd=tmp_path)
    assert sarif.exit_code == 1
    log = json.loads(sarif.stdout)
    jsonschema.validate(log, SARIF_SUBSET)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["V001"]
    assert {"V001", "V002", "V104", "V201"} <= {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert "static compatibility not checked" in sarif.stderr  # the notes stay on stderr
    github = run_cli("verify", "--format", "github", ".", cwd=tmp_path)
    [(name, props, message)] = commands(github.stdout)
    assert (name, props["file"], props["line"], props["title"]) == ("error", "bad.nix", "2", "pinshift verify V001")


@pytest.mark.nix
def test_parse_nix_asks_nix_instantiate_and_names_its_place(run_cli, tmp_path):
    from pinshift.sandbox.nix_process import NixSandbox, nix_parse_verdict

    nix = shutil.which("nix-instantiate")
    assert nix, "nix-instantiate is the oracle and must be installed"
    with NixSandbox() as sandbox:
        assert nix_parse_verdict(sandbox, nix, b"{ a = 1; }\n") is None
        assert nix_parse_verdict(sandbox, nix, b"let x = 1; in\n  x +") == (2, 5, "syntax error, unexpected end of file")
    (tmp_path / "good.nix").write_bytes(b"{ a = 1; }\n")
    result = run_cli("parse", "--nix", "good.nix", cwd=tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "1 file parsed, 0 problems, 0 skipped\n")


def test_parse_nix_without_nix_on_path_is_one_line(run_cli, tmp_path, monkeypatch):
    (tmp_path / "good.nix").write_bytes(b"{ a = 1; }\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = run_cli("parse", "--nix", "good.nix", cwd=tmp_path)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == ("pinshift: error: --nix: nix-instantiate is not on PATH; install Nix (Debian: nix-bin) "
                             "or leave out --nix\n")
