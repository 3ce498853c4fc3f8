"""When pinshift cannot tell, it says so: never `same`, never `broken` by default (issue 41).

- A recipe whose file, or a file it reads, changed in meaning (its tokens beyond comments and layout) but evaluates
  alike against the stand-in is `changed_untold` ("changed, stand-in cannot tell how"), exit 0. Only a change of
  comments and layout is `same`.
- A recipe the stand-in cannot evaluate for a reason of its own (a fetched source: `builtins.fetchTarball`,
  `fetchGit`, `fetchurl`, `fetchFromGitHub` of another repository, a `<name>` on NIX_PATH, a builtin that needs
  the network) is `cannot_tell` with the reason, exit 0 (the build-torchvision c1e41f4 shape).
- Real breakage stays `broken`, exit 1: an undefined name, a syntax error, infinite recursion, a companion importing
  a removed file; and a recipe cannot pass its own failure for the stand-in's (its `throw` of the same words, a
  forged trace line, a `tryEval` that caught the stand-in's reason and then failed otherwise).

Real git repositories, the real CLI, the real nix-instantiate.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from build_repos import PKGS, commit, fixture_files
from conftest import git, require_nix

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "diff-schema.json").read_text())

VLLM = """{ python3Packages, lib, config, ... }:
let
  customBitsandbytes = python3Packages.bitsandbytes.overridePythonAttrs (old: { version = "0.45.0"; });
in
python3Packages.vllm.overridePythonAttrs (old: {
  pname = "vllm";
  propagatedBuildInputs = BODY;
})
"""

# the line every diff without --nixpkgs ends with (issue 40: what was not checked is said)
UNCHECKED = "unchecked: the real pins' versions and rebuilds (pass --nixpkgs DIR or set PINSHIFT_NIXPKGS)"


def _repo(make_repo, before: dict, after: dict, name: str = "repo") -> Path:
    require_nix()
    root = make_repo(before, name=name)
    commit(root, after, "next", branch="next")
    return root


def _json(run_cli, root: Path, code: int = 0) -> dict:
    result = run_cli("diff", "main", "next", "--repo", str(root), "--format", "json")
    assert result.exit_code == code, result
    data = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    return data


def _status(run_cli, root: Path, path: str = "r.nix", code: int = 0) -> dict:
    data = _json(run_cli, root, code)
    return next(recipe for recipe in data["recipes"] if recipe["path"] == path)


# --- changed in meaning, evaluated alike: never `same` -------------------------------------------------------------------


@pytest.mark.parametrize("before, after", [
    # the predicate of a map changed: the stand-in's probe takes the same branch on both
    ('map (d: if d.pname == "bitsandbytes" then customBitsandbytes else d) old.propagatedBuildInputs',
     'map (d: if d.pname == "bitsandbytes-cuda" then customBitsandbytes else d) old.propagatedBuildInputs'),
    # two filters with different predicates
    ('builtins.filter (d: d.pname != "bitsandbytes") old.propagatedBuildInputs',
     'builtins.filter (d: d.pname != "triton") old.propagatedBuildInputs'),
    # a condition only the real nixpkgs knows, which the stand-in takes as true on both sides
    ("old.propagatedBuildInputs ++ lib.optionals config.cudaSupport [ customBitsandbytes ]",
     "old.propagatedBuildInputs ++ lib.optionals config.rocmSupport [ customBitsandbytes ]"),
    # an operator that the stand-in's symbolic values cannot tell apart
    ('old.propagatedBuildInputs ++ (if lib.versionAtLeast python3Packages.python.version "3.12" then [ ] else [ ])',
     'old.propagatedBuildInputs ++ (if lib.versionOlder python3Packages.python.version "3.12" then [ ] else [ ])'),
])
def test_a_change_in_meaning_that_evaluates_alike_is_not_same(make_repo, run_cli, before, after):
    root = _repo(make_repo, {"r.nix": VLLM.replace("BODY", before)}, {"r.nix": VLLM.replace("BODY", after)})
    recipe = _status(run_cli, root)
    assert recipe["status"] == "changed_untold", recipe
    assert recipe["reason"] == ("its file changed in meaning (more than comments and layout) but it evaluates alike "
                                "against the stand-in")
    assert recipe["changes"] == []
    text = run_cli("diff", "main", "next", "--repo", str(root))
    assert text.exit_code == 0
    assert text.stdout.splitlines()[1:] == [
        "changed, stand-in cannot tell how: r.nix: its file changed in meaning (more than comments and layout) but it "
        "evaluates alike against the stand-in; what it builds may differ (verify --eval or a build tells)",
        "1 recipe: 1 changed (stand-in cannot tell how)", UNCHECKED]
    markdown = run_cli("diff", "main", "next", "--repo", str(root), "--format", "markdown").stdout
    assert "- **changed, stand-in cannot tell how** — `r.nix`: `its file changed in meaning" in markdown


def test_comments_and_layout_alone_are_same(make_repo, run_cli):
    body = 'map (d: if d.pname == "bitsandbytes" then customBitsandbytes else d) old.propagatedBuildInputs'
    before = VLLM.replace("BODY", body)
    after = ("# vLLM with our bitsandbytes\n" + before.replace("in\n", "in  # the package\n")
             .replace("(d: if", "(d: /* each */\n      if").replace("  pname", "\tpname   "))
    root = _repo(make_repo, {"r.nix": before, "old.nix": before},
                 {"r.nix": after, "old.nix": None, "new.nix": before.replace("  pname", "  pname ") + "# moved\n"})
    data = _json(run_cli, root)
    assert {r["path"]: r["status"] for r in data["recipes"]} == {"r.nix": "same", "new.nix": "same"}


def test_a_rename_with_a_change_in_meaning_is_told(make_repo, run_cli):
    body = 'builtins.filter (d: d.pname != "bitsandbytes") old.propagatedBuildInputs'
    before = VLLM.replace("BODY", body)
    root = _repo(make_repo, {f"{PKGS}/a-vllm.nix": before},
                 {f"{PKGS}/a-vllm.nix": None, f"{PKGS}/b-vllm.nix": before.replace('"bitsandbytes"', '"triton"')})
    recipe = _status(run_cli, root, f"{PKGS}/b-vllm.nix")
    assert (recipe["status"], recipe["old_path"]) == ("changed_untold", f"{PKGS}/a-vllm.nix")


@pytest.mark.parametrize("helper_after", [
    '{ lib }: { flags = lib.optionals true [ "-mavx512f" ]; }\n',  # changed in meaning
    None,  # unchanged bytes: same
    '# the flags\n{ lib }:\n{\n  flags = lib.optionals true [ "-mavx2" ];  # the same\n}\n',  # comments and layout only
])
def test_a_file_it_imports_that_changed_in_meaning_is_named(make_repo, run_cli, helper_after):
    helper = '{ lib }: { flags = lib.optionals true [ "-mavx2" ]; }\n'
    recipe = ("{ python3Packages, lib, ... }:\nlet isa = import ../../lib/cpu-isa.nix { inherit lib; }; in\n"
              "python3Packages.torch.override { cudaSupport = builtins.length isa.flags > 0; }\n")
    after = {"lib/cpu-isa.nix": helper_after} if helper_after else {f"{PKGS}/other.nix": "{ }\n"}
    root = _repo(make_repo, {f"{PKGS}/torch.nix": recipe, "lib/cpu-isa.nix": helper}, after)
    found = _status(run_cli, root, f"{PKGS}/torch.nix")
    if helper_after is None or "# the flags" in helper_after:
        assert found["status"] == "same", found
    else:
        assert found["status"] == "changed_untold", found
        assert found["reason"] == ("lib/cpu-isa.nix, which it reads, changed in meaning (more than comments and layout) "
                                   "but it evaluates alike against the stand-in")


# --- the stand-in's own limits: cannot tell, exit 0 ----------------------------------------------------------------------

TORCHVISION = """{ python3Packages, callPackage, fetchFromGitHub, ... }:
let
  torch = TORCH;
in
python3Packages.torchvision.override { inherit torch; }
"""
ARCHIVE = 'builtins.fetchTarball { url = "https://github.com/flox/build-pytorch/archive/7d1e0a3.tar.gz"; sha256 = "0a"; }'


@pytest.mark.parametrize("torch, words", [
    (f'import "${{{ARCHIVE}}}/.flox/pkgs/pytorch-python313-darwin-mps.nix"', "a file of a fetched source"),
    (f'callPackage ({ARCHIVE} + "/.flox/pkgs/pytorch-python313-darwin-mps.nix") {{ }}', "a file of a fetched source"),
    (f"(import ({ARCHIVE}) {{ }}).pytorch", "it imports a fetched source (builtins.fetchTarball https://github.com/flox"),
    ('(import (builtins.fetchGit { url = "https://github.com/flox/build-pytorch"; rev = "7d1e0a3"; }) { }).torch',
     "it imports a fetched source (builtins.fetchGit https://github.com/flox/build-pytorch 7d1e0a3)"),
    ('import (fetchFromGitHub { owner = "flox"; repo = "build-pytorch"; rev = "v2"; hash = ""; })',
     "it imports a fetched source (fetchFromGitHub github:flox/build-pytorch v2)"),
    ('builtins.fromJSON (builtins.readFile (builtins.fetchurl "https://example.org/torch.json"))',
     "a file of a fetched source"),
    ("import <build-pytorch>", "<build-pytorch> is looked up on NIX_PATH"),
    ('builtins.fetchMercurial "https://example.org/torch"', "builtins.fetchMercurial needs the network"),
])
def test_a_fetched_source_is_cannot_tell_with_the_reason_and_exit_0(make_repo, run_cli, torch, words):
    before = TORCHVISION.replace("TORCH", "python3Packages.torch")
    root = _repo(make_repo, {"r.nix": before}, {"r.nix": TORCHVISION.replace("TORCH", torch)})
    recipe = _status(run_cli, root)
    assert recipe["status"] == "cannot_tell", recipe
    assert words in recipe["reason"], recipe["reason"]
    assert "pinshift's stand-in cannot tell what this builds" in recipe["error"]
    text = run_cli("diff", "main", "next", "--repo", str(root))
    assert text.exit_code == 0
    assert text.stdout.splitlines()[1].startswith(f"cannot tell: r.nix: not evaluated by the stand-in: {recipe['reason']}")
    assert text.stdout.endswith(f"1 recipe: 1 cannot tell\n{UNCHECKED}\n")
    # the other way round (BASE fetched it, TARGET does not): still nothing to compare with
    back = _repo(make_repo, {"r.nix": TORCHVISION.replace("TORCH", torch)}, {"r.nix": before}, name="back")
    recipe = _status(run_cli, back)
    assert recipe["status"] == "cannot_tell" and recipe["reason"].startswith("on BASE, ")


def test_an_added_recipe_the_stand_in_cannot_evaluate_says_why(make_repo, run_cli):
    root = _repo(make_repo, {"a.nix": "{ }\n"}, {"r.nix": TORCHVISION.replace("TORCH", f"import ({ARCHIVE})")})
    recipe = _status(run_cli, root)
    assert recipe["status"] == "added" and "it imports a fetched source" in recipe["reason"]
    assert "r.nix: added, not evaluated by the stand-in: it imports a fetched source" in run_cli(
        "diff", "main", "next", "--repo", str(root)).stdout


# --- real breakage stays broken: exit 1 -------------------------------------------------------------------------------


@pytest.mark.parametrize("torch, error", [
    ("removedTorch", "undefined variable 'removedTorch'"),
    ("python3Packages.torch.override {", "syntax error"),
    ("let t = t; in t", "infinite recursion encountered"),
    ('throw "pinshift\'s stand-in cannot tell what this builds: it imports a fetched source (x)"', "cannot tell"),
    # a trace that looks like the stand-in's (but for the run's secret, which no file can know)
    ('builtins.trace (builtins.toJSON [ "0123" "cannot" "x" ]) (throw "pinshift\'s stand-in cannot tell what this '
     'builds: x")', "cannot tell what this builds: x"),
    # the stand-in's own reason caught, then a failure of the recipe's own
    (f'let t = builtins.tryEval (import ({ARCHIVE})); in if t.success then t.value else throw "a real failure"',
     "a real failure"),
])
def test_real_breakage_stays_broken_and_exits_1(make_repo, run_cli, torch, error):
    before = TORCHVISION.replace("TORCH", "python3Packages.torch")
    root = _repo(make_repo, {"r.nix": before}, {"r.nix": TORCHVISION.replace("TORCH", torch)})
    recipe = _status(run_cli, root, code=1)
    assert recipe["status"] == "broken", recipe
    assert error in recipe["error"] and "reason" not in recipe


def test_a_companion_importing_a_removed_file_stays_broken(make_repo, run_cli):
    files = fixture_files("companions")
    pytorch = f"{PKGS}/pytorch-python313-cuda12_9-sm75-avx2.nix"
    root = _repo(make_repo, files, {pytorch: None})
    data = _json(run_cli, root, code=1)
    assert {r["path"]: r["status"] for r in data["recipes"]} == {
        pytorch: "removed", f"{PKGS}/torchaudio-python313-cuda12_9-sm75-avx2.nix": "broken",
        f"{PKGS}/torchvision-python313-cuda12_9-sm75-avx2.nix": "broken"}


def test_target_failing_for_its_own_reason_after_a_fetched_base_is_broken(make_repo, run_cli):
    root = _repo(make_repo, {"r.nix": TORCHVISION.replace("TORCH", f"import ({ARCHIVE})")},
                 {"r.nix": TORCHVISION.replace("TORCH", "removedTorch")})
    recipe = _status(run_cli, root, code=1)
    assert recipe["status"] == "broken" and "undefined variable 'removedTorch'" in recipe["error"]
    assert "it imports a fetched source" in recipe["base_error"]


@pytest.mark.parametrize("entry", ["symbolic link", "submodule"])
def test_a_recipe_reading_an_entry_pinshift_does_not_write_is_cannot_tell(make_repo, run_cli, monkeypatch, entry):
    """A symbolic link (never followed) or a submodule (never read) in TARGET: its importer is `cannot tell`, not
    `broken`; BASE, with a regular file there, evaluated. The summary cache keeps the answer by what the entry was:
    a regular file in its place again is evaluated again."""
    require_nix()
    monkeypatch.setenv("PINSHIFT_CACHE", "on")
    recipe = "{ python3Packages, ... }:\npython3Packages.torch.override (import ./shared/args.nix)\n"
    root = make_repo({"r.nix": recipe, "shared/args.nix": "{ cudaSupport = true; }\n", "real.nix": "{ }\n"})
    git(root, "checkout", "-q", "-b", "next")
    git(root, "rm", "-q", "-r", "shared")
    if entry == "symbolic link":
        (root / "shared").mkdir()
        (root / "shared" / "args.nix").symlink_to("../real.nix")
        git(root, "add", "shared/args.nix")
        why = "shared/args.nix, a symbolic link, which pinshift does not follow"
    else:
        sha = git(root, "rev-parse", "HEAD").strip()
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},shared")
        why = "shared/args.nix, a submodule, which pinshift does not read"
    git(root, "commit", "-qm", entry)
    recipe = _status(run_cli, root)
    assert recipe["status"] == "cannot_tell", recipe
    assert recipe["reason"] == f"it reads {why}"
    # the other way round
    back = run_cli("diff", "next", "main", "--repo", str(root), "--format", "json")
    assert back.exit_code == 0
    assert json.loads(back.stdout)["recipes"][0]["status"] == "cannot_tell"
    # a regular file in its place again: evaluated again, not the remembered answer
    git(root, "rm", "-q", "-r", "--cached", "shared")
    if (root / "shared").is_symlink() or (root / "shared").is_file():
        (root / "shared").unlink()
    elif (root / "shared" / "args.nix").is_symlink():
        (root / "shared" / "args.nix").unlink()
    commit(root, {"shared/args.nix": "{ cudaSupport = true; }\n"}, "regular again")
    again = _status(run_cli, root)
    assert again["status"] == "same", again
