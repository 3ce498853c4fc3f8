"""The stand-in's `lib` holds values of the types real nixpkgs gives them, so a recipe that works on nixpkgs
evaluates: `lib.platforms.*` are lists (`platforms.linux ++ platforms.darwin`, the build-comfyui shape, also
`unix`, `all`, `x86_64` …), `lib.licenses.*`, `lib.maintainers.*`, `lib.teams.*` are sets with their string,
boolean and list fields, a package's `meta.platforms`/`meta.maintainers` are lists and `meta.description` a string,
and `import <nixpkgs/lib>` is the same lib. Run through the real CLI on real git repositories.
"""

from __future__ import annotations

import json

import pytest

from build_repos import commit
from conftest import require_nix

COMFY = """{ lib, stdenv, python3Packages, fetchFromGitHub, ... }:
python3Packages.buildPythonPackage {
  pname = "comfyui";
  version = "0.3.40";
  src = fetchFromGitHub { owner = "comfyanonymous"; repo = "ComfyUI"; rev = "v0.3.40"; hash = "sha256-A"; };
  meta = with lib; {
    description = "node-based UI";
    license = licenses.gpl3Only;
    platforms = PLATFORMS;
  };
}
"""


def _diff(make_repo, run_cli, before: str, after: str) -> dict:
    require_nix()
    root = make_repo({"r.nix": before})
    commit(root, {"r.nix": after}, "next", branch="next")
    result = run_cli("diff", "main", "next", "--repo", str(root), "--format", "json")
    assert result.exit_code == 0, result
    [recipe] = json.loads(result.stdout)["recipes"]
    return recipe


@pytest.mark.parametrize("before, after, attribute", [
    ("platforms.linux ++ platforms.darwin", "platforms.linux", "meta.platforms"),
    ("platforms.unix", "platforms.all", "meta.platforms"),
    ("lib.platforms.x86_64 ++ lib.platforms.aarch64", "lib.intersectLists platforms.linux platforms.x86_64",
     "meta.platforms"),
    ("(import <nixpkgs/lib>).platforms.linux", "lib.systems.doubles.darwin", "meta.platforms"),
    ("[ \"x86_64-linux\" ] ++ python3Packages.torch.meta.platforms", "python3Packages.torch.meta.platforms",
     "meta.platforms"),
])
def test_platform_lists_concatenate_and_their_change_is_seen(make_repo, run_cli, before, after, attribute):
    recipe = _diff(make_repo, run_cli, COMFY.replace("PLATFORMS", before), COMFY.replace("PLATFORMS", after))
    assert recipe["status"] == "changed", recipe
    [change] = recipe["changes"]
    assert change["attribute"] == attribute
    assert isinstance(change["before"], list) and isinstance(change["after"], list)
    if "darwin" in before and "darwin" not in after:
        assert "x86_64-darwin" in change["before"] and "x86_64-darwin" not in change["after"]


@pytest.mark.parametrize("expression, shown", [
    ('"${lib.maintainers.alice.email}"', "«lib.maintainers.alice.email»"),
    ("lib.teams.cuda.members ++ [ lib.maintainers.bob ]", ["«lib.teams.cuda.members»", "«lib.maintainers.bob»"]),
    ("if lib.licenses.mit.free then lib.licenses.mit else lib.licenses.unfree", "«lib.licenses.mit»"),
    ("if lib.licenses.unfree.free then 1 else 2", 2),
    ('python3Packages.torch.meta.description + " (cuda)"', "«python3Packages.torch.meta.description» (cuda)"),
    ("python3Packages.torch.meta.maintainers ++ [ ]", ["«python3Packages.torch.meta.maintainers»"]),
    ("lib.licenses.bsd3 // { free = false; }", {"//": "«lib.licenses.bsd3»", "free": False}),
])
def test_licenses_maintainers_teams_and_meta_fields_have_nixpkgs_types(make_repo, run_cli, expression, shown):
    before = COMFY.replace("PLATFORMS", "platforms.linux").replace("license = licenses.gpl3Only;", "license = 0;")
    after = before.replace("license = 0;", f"license = {expression};")
    recipe = _diff(make_repo, run_cli, before, after)
    assert recipe["status"] == "changed", recipe
    assert recipe["changes"] == [{"attribute": "meta.license", "before": 0, "after": shown}]


@pytest.mark.parametrize("expression", [
    'builtins.filter (d: d.pname != "bitsandbytes") python3Packages.vllm.propagatedBuildInputs',
    "python3Packages.torch.buildInputs ++ python3Packages.torch.nativeBuildInputs",
    'if lib.versionAtLeast stdenv.cc.version "12" then [ ] else [ 1 ]',
    'lib.concatStringsSep " " python3Packages.torch.cmakeFlags',
    'python3Packages.torch.pname + "-" + python3Packages.torch.src.rev',
])
def test_a_packages_list_and_string_attributes_have_those_types(make_repo, run_cli, expression):
    """Not only through `old.…` in an override: a package's own attribute (`pkg.propagatedBuildInputs`) is a list
    and `stdenv.cc.version` a string, so a recipe using them evaluates (it did not: `value is a set while a list was
    expected`, a false `broken`)."""
    before = COMFY.replace("PLATFORMS", "platforms.linux").replace("license = licenses.gpl3Only;", "license = 0;")
    after = before.replace("license = 0;", f"license = {expression};")
    recipe = _diff(make_repo, run_cli, before, after)
    assert recipe["status"] == "changed", recipe
    [change] = recipe["changes"]
    assert change["attribute"] == "meta.license" and change["after"] is not None
