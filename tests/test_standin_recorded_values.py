"""What the stand-in records keeps what was done to it, wherever its value goes (issue 41).

- A recorded call keeps its arguments in a string: `"${cutlass-src}"` inside `cmakeFlags` (build-onnx-runtime
  ort-1.18 → ort-1.19: CUTLASS v3.1.0 → v3.5.0, ONNX v1.16.0 → v1.16.1 through a second fetch) shows the rev
  change, in `postPatch`, `env`, `toString`, `concatStringsSep` alike, and so does the fetcher's `.rev`; an
  overridden package keeps its overrides.
- A symbolic list's item keeps what `filter` and `map` did to it (build-vllm b276d2c: `builtins.filter (… !=
  "bitsandbytes")` → `builtins.map (… then customBitsandbytes else d)` over `propagatedBuildInputs`), through
  `builtins.filter`, `map`, `lib.filter`, `lib.remove`, `lib.subtractLists`, `lib.concatMap`.

Real git repositories, the real CLI, the real nix-instantiate.
"""

from __future__ import annotations

import json

import pytest

from build_repos import commit
from conftest import require_nix

ORT = """{ python3Packages, fetchFromGitHub, lib, ... }:
let
  cutlass-src = fetchFromGitHub {
    owner = "NVIDIA"; repo = "cutlass"; rev = "@CUTLASS@"; hash = "sha256-mpaiCxiYR1WaSSkcEPTzvcREenJWklD+HRdTT5/pD54=";
  };
  onnx-src = fetchFromGitHub {
    owner = "onnx"; repo = "onnx"; rev = "@ONNX@"; hash = "sha256-JmxnsHRrzj2QzPz3Yndw0MmgZJ8MDYxHjuQ7PQV6f4Y=";
  };
in
python3Packages.onnxruntime.overrideAttrs (old: {
  USE
})
"""


def _diff(make_repo, run_cli, before: str, after: str, fmt: str = "json"):
    require_nix()
    root = make_repo({"r.nix": before})
    commit(root, {"r.nix": after}, "next", branch="next")
    result = run_cli("diff", "main", "next", "--repo", str(root), "--format", fmt)
    assert result.exit_code == 0, result
    return json.loads(result.stdout)["recipes"][0] if fmt == "json" else result.stdout


def _ort(use: str, cutlass: str, onnx: str) -> str:
    return ORT.replace("USE", use).replace("@CUTLASS@", cutlass).replace("@ONNX@", onnx)


def test_the_onnx_runtime_bump_shows_both_fetched_revisions(make_repo, run_cli):
    use = ('cmakeFlags = (old.cmakeFlags or [ ]) ++ [\n    "-DFETCHCONTENT_SOURCE_DIR_CUTLASS=${cutlass-src}"\n'
           '    "-DFETCHCONTENT_SOURCE_DIR_ONNX=${onnx-src}"\n  ];')
    before, after = _ort(use, "v3.1.0", "v1.16.0"), _ort(use, "v3.5.0", "v1.16.1")
    recipe = _diff(make_repo, run_cli, before, after)
    assert recipe["status"] == "changed"
    [change] = recipe["changes"]
    assert change["attribute"] == "cmakeFlags"
    assert 'repo = "cutlass"; rev = "v3.1.0";' in change["before"][1] and 'rev = "v3.5.0";' in change["after"][1]
    assert 'repo = "onnx"; rev = "v1.16.0";' in change["before"][2] and 'rev = "v1.16.1";' in change["after"][2]


def test_the_text_shows_where_the_long_strings_differ(make_repo, run_cli):
    use = ('cmakeFlags = [\n    "-DFETCHCONTENT_SOURCE_DIR_CUTLASS=${cutlass-src}"\n'
           '    "-DFETCHCONTENT_SOURCE_DIR_ONNX=${onnx-src}"\n  ];')
    text = _diff(make_repo, run_cli, _ort(use, "v3.1.0", "v1.16.0"), _ort(use, "v3.5.0", "v1.16.1"), "text")
    line = text.splitlines()[1]
    assert line.startswith('changed: r.nix: cmakeFlags[0] … = "cutlass"; rev = "v3.1.0"; ')
    assert '→ … = "cutlass"; rev = "v3.5.0"; ' in line
    assert '; cmakeFlags[1] … = "onnx"; rev = "v1.16.0"; ' in line and '→ … = "onnx"; rev = "v1.16.1"; ' in line
    assert line.endswith("; nothing else") and len(line) < 300


@pytest.mark.parametrize("use, attribute", [
    ('postPatch = "cp -r ${cutlass-src}/include third_party/cutlass";', "postPatch"),
    ('env.CUTLASS_PATH = "${cutlass-src}";', "env.CUTLASS_PATH"),
    ("CUTLASS = toString cutlass-src;", "CUTLASS"),
    ('configureFlags = [ (lib.concatStringsSep "," [ "${cutlass-src}" "${onnx-src}" ]) ];', "configureFlags"),
    ('preConfigure = old.preConfigure + "ln -s ${cutlass-src} cutlass";', "preConfigure"),
    ('CUTLASS_TAG = "${cutlass-src.rev}";', "CUTLASS_TAG"),  # a fetcher's result keeps what it was given
    ("version = cutlass-src.rev;", "version"),
])
def test_a_recorded_call_keeps_its_arguments_wherever_its_value_goes(make_repo, run_cli, use, attribute):
    recipe = _diff(make_repo, run_cli, _ort(use, "v3.1.0", "v1.16.0"), _ort(use, "v3.5.0", "v1.16.0"))
    assert recipe["status"] == "changed", recipe
    [change] = recipe["changes"]
    assert change["attribute"] == attribute
    assert "v3.1.0" in json.dumps(change["before"]) and "v3.5.0" in json.dumps(change["after"])


def test_an_overridden_package_keeps_its_overrides_in_a_string(make_repo, run_cli):
    recipe = """{ python3Packages, ... }:
let torch = python3Packages.torch.overrideAttrs (old: { version = "VERSION"; }); in
python3Packages.torchvision.overrideAttrs (old: { preBuild = "export TORCH=${torch}/lib"; })
"""
    found = _diff(make_repo, run_cli, recipe.replace("VERSION", "2.9.0"), recipe.replace("VERSION", "2.10.0"))
    assert found["status"] == "changed"
    [change] = found["changes"]
    assert change["attribute"] == "preBuild" and "2.9.0" in change["before"] and "2.10.0" in change["after"]


VLLM = """{ python3Packages, lib, ... }:
let
  customBitsandbytes = python3Packages.bitsandbytes.overridePythonAttrs (old: { version = "0.45.0"; });
in
python3Packages.vllm.overridePythonAttrs (old: {
  propagatedBuildInputs = BODY;
})
"""
FILTER = 'builtins.filter (d: d.pname != "bitsandbytes") old.propagatedBuildInputs'
MAP = 'builtins.map (d: if d.pname == "bitsandbytes" then customBitsandbytes else d) old.propagatedBuildInputs'


@pytest.mark.parametrize("before, after, shown_before, shown_after", [
    (FILTER, MAP, "| filter»", "| map»"),
    (FILTER, MAP.replace("builtins.map", "map"), "| filter»", "| map»"),
    (FILTER.replace("builtins.filter", "lib.filter"), MAP.replace("builtins.map", "lib.map"), "| filter»", "| map»"),
    ("old.propagatedBuildInputs", 'lib.remove python3Packages.bitsandbytes old.propagatedBuildInputs',
     "propagatedBuildInputs»", "| filter»"),
    ("old.propagatedBuildInputs", "lib.subtractLists [ python3Packages.bitsandbytes ] old.propagatedBuildInputs",
     "propagatedBuildInputs»", "| filter»"),
    ("old.propagatedBuildInputs", "lib.concatMap (d: [ d ]) old.propagatedBuildInputs",
     "propagatedBuildInputs»", "| map»"),
    ('old.propagatedBuildInputs ++ [ customBitsandbytes ]', f'({FILTER}) ++ [ customBitsandbytes ]',
     "propagatedBuildInputs»", "| filter»"),
])
def test_a_symbolic_list_keeps_what_was_done_to_it(make_repo, run_cli, before, after, shown_before, shown_after):
    recipe = _diff(make_repo, run_cli, VLLM.replace("BODY", before), VLLM.replace("BODY", after))
    assert recipe["status"] == "changed", recipe
    [change] = recipe["changes"]
    before, after = change["before"], change["after"]
    if change["attribute"] == "propagatedBuildInputs":  # a list of plain values is one value
        before, after = before[0], after[0]
    else:  # a list holding a package's summary is compared item by item
        assert change["attribute"] == "propagatedBuildInputs[0]"
    assert before.endswith(shown_before) and after.endswith(shown_after), change
    assert before.startswith("«python3Packages.vllm.propagatedBuildInputs")


def test_mapping_an_item_to_something_else_shows_what_it_became(make_repo, run_cli):
    after = 'map (d: d.overridePythonAttrs (o: { doCheck = false; })) old.propagatedBuildInputs'
    recipe = _diff(make_repo, run_cli, VLLM.replace("BODY", FILTER), VLLM.replace("BODY", after))
    assert recipe["status"] == "changed"
    assert recipe["changes"][0]["attribute"].startswith("propagatedBuildInputs")
    assert "doCheck" in json.dumps(recipe["changes"])


def test_a_package_naming_itself_in_passthru_or_meta_still_evaluates(make_repo, run_cli):
    """`passthru` and `meta` are not part of a derivation (real Nix evaluates a package that names itself there): a
    string of the package leaves them out, so it is no infinite recursion."""
    recipe = """{ stdenv, ... }:
stdenv.mkDerivation (finalAttrs: {
  pname = "x";
  version = "VERSION";
  passthru.self = "${finalAttrs.finalPackage}";
  meta.description = "x ${finalAttrs.finalPackage}";
})
"""
    found = _diff(make_repo, run_cli, recipe.replace("VERSION", "1"), recipe.replace("VERSION", "2"))
    assert found["status"] == "changed", found
    assert {c["attribute"] for c in found["changes"]} >= {"version"}
