"""Issue 46: `pinshift infer` proposes a `rewrite` where no other kind explains a change.

Each repository is written here by hand (BASE, then TARGET as a maintainer edits it); the real CLI infers the
recipe, `pinshift migrate` replays it from BASE, and the replayed tree must be TARGET's byte for byte, every
replayed Nix file parsed by the real `nix-instantiate --parse`. The negatives: a change made once or
differently everywhere is no pattern (the file stays "edit by hand"), and a rule that would also rewrite a
place TARGET kept in the old form is not proposed (or narrowed with `inside`, or to the files where it is
right).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from conftest import git
from pinshift.files.globs import matches
from infer_shapes import make_repository

DOC = Path(__file__).resolve().parent.parent / "docs" / "rewrite.md"
MODULE = """{{ config, lib, pkgs, ... }}:
let
  cfg = config.programs.{name};
in
{{
  options.programs.{name} = {{
    enable = lib.mkEnableOption "{name}";
    enableMcpIntegration = lib.mkOption {{
      type = lib.types.bool;
      default = false;
      description = "Whether to enable the MCP integration of {name}.";
    }};
    debug = lib.mkOption {{ default = false; }};
  }};

  config = lib.mkIf cfg.enable {{
    home.packages = lib.optional cfg.enableMcpIntegration pkgs.{name}-mcp
      ++ lib.optional cfg.debug (pkgs.gdb.override {{ python = null; }});
    home.file.".{name}".text = "port=${{toString cfg.port}} # toString here is text";
    home.sessionVariables.{upper}_LEVEL = toString (cfg.level + 1);
  }};
}}
"""


def module(name: str) -> str:
    return MODULE.format(name=name, upper=name.upper())


def infer_and_replay(run_cli, root: Path, nix_oracle) -> tuple[int, str, dict]:
    """infer base target (recipe written with --output), then migrate it from base onto `replay`: (infer's exit
    code, its summary, the recipe). The replayed tree is checked against TARGET's here, byte for byte."""
    recipe = root.parent / "inferred.toml"
    result = run_cli("infer", "base", "target", "--repo", str(root), "--output", str(recipe))
    assert "Traceback" not in result.output, result.output
    assert result.exit_code in (0, 1), result.output
    if not recipe.exists():
        return result.exit_code, result.stdout, {}
    written = tomllib.loads(recipe.read_text())
    migrated = run_cli("migrate", str(recipe), "--repo", str(root), "--from", "base", "--branch", "replay")
    assert migrated.exit_code == 0, migrated.output
    if result.exit_code == 0:
        assert git(root, "rev-parse", "replay^{tree}") == git(root, "rev-parse", "target^{tree}")
    for path in git(root, "ls-tree", "-r", "--name-only", "replay").split():
        if path.endswith(".nix"):
            data = git(root, "show", f"replay:{path}").encode()
            accepted, why = nix_oracle(data)
            assert accepted, f"{path}: {why}"
    return result.exit_code, result.stdout, written


def rewrites(recipe: dict) -> list[dict]:
    return [step for step in recipe.get("steps", []) if step["kind"] == "rewrite"]


def test_tostring_calls_become_builtins_tostring(tmp_path, run_cli, nix_oracle):
    base = {f"modules/programs/{name}.nix": module(name) for name in ("foo", "bar")}
    # a module that binds toString itself: TARGET leaves it, and the scope-aware rule does too
    base["modules/programs/own.nix"] = ('{ lib, ... }:\nlet\n  toString = x: "own-${x}";\nin\n'
                                        '{ config.home.file.".own".text = toString "x"; }\n')
    target = dict(base)
    for name in ("foo", "bar"):
        target[f"modules/programs/{name}.nix"] = base[f"modules/programs/{name}.nix"].replace(
            "${toString cfg.port}", "${builtins.toString cfg.port}").replace(
            "= toString (cfg.level", "= builtins.toString (cfg.level")
    root = make_repository(tmp_path / "repo", base, target, "Call toString by its full name")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0, summary
    assert [(s["params"]["pattern"], s["params"]["replacement"]) for s in recipe["steps"]] == \
        [("toString $A", "builtins.toString $A")]
    assert "files" not in recipe["steps"][0] and "inside" not in recipe["steps"][0]["params"]
    assert "rewrite             Rewrite 'toString $A' as 'builtins.toString $A' — 2 files" in summary
    assert git(root, "show", "replay:modules/programs/own.nix") == base["modules/programs/own.nix"]


def test_lib_optional_becomes_lib_optionals_of_a_list(tmp_path, run_cli, nix_oracle):
    base = {f"modules/programs/{name}.nix": module(name) for name in ("foo", "bar", "baz")}
    target = {path: text.replace("lib.optional cfg.enableMcpIntegration pkgs.", "lib.optionals "
                                 "cfg.enableMcpIntegration [ pkgs.").replace("-mcp\n", "-mcp ]\n").replace(
        "lib.optional cfg.debug (pkgs.gdb.override { python = null; })",
        "lib.optionals cfg.debug [ (pkgs.gdb.override { python = null; }) ]") for path, text in base.items()}
    assert target != base
    root = make_repository(tmp_path / "repo", base, target, "lib.optional -> lib.optionals")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0, summary
    # one step for the whole change: no rename-attr took `optional` -> `optionals` and left the brackets
    assert [(s["kind"], s["params"]) for s in recipe["steps"]] == \
        [("rewrite", {"pattern": "lib.optional $A $B", "replacement": "lib.optionals $A [ $B ]"})]
    assert "at 6 places in 3 files" in " ".join(recipe["steps"][0]["message"].split())


def test_default_false_becomes_true_inside_one_option(tmp_path, run_cli, nix_oracle):
    base = {f"modules/programs/{name}.nix": module(name) for name in ("foo", "bar")}
    target = {path: text.replace("      default = false;\n      description", "      default = true;\n"
                                 "      description") for path, text in base.items()}
    root = make_repository(tmp_path / "repo", base, target, "Enable the MCP integration by default")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0, summary
    [step] = rewrites(recipe)
    # `default = false;` alone would also set the `debug` option's default: narrowed to the option TARGET changed
    assert step["params"] == {"pattern": "default = false;", "replacement": "default = true;",
                              "inside": ["*.enableMcpIntegration"]}
    assert "in *.enableMcpIntegration" in step["title"]
    replayed = git(root, "show", "replay:modules/programs/foo.nix")
    assert "debug = lib.mkOption { default = false; };" in replayed and "default = true;" in replayed


def test_the_three_refactorings_in_one_commit(tmp_path, run_cli, nix_oracle):
    """docs/rewrite.md's "Learned by pinshift infer": the three steps, in this order, from one hand-made commit."""
    base = {f"modules/programs/{name}.nix": module(name) for name in ("foo", "bar")}
    target = {}
    for path, text in base.items():
        text = text.replace("${toString", "${builtins.toString").replace("= toString (", "= builtins.toString (")
        text = text.replace("lib.optional cfg.enableMcpIntegration pkgs.", "lib.optionals cfg.enableMcpIntegration "
                            "[ pkgs.").replace("-mcp\n", "-mcp ]\n").replace(
            "lib.optional cfg.debug (pkgs.gdb.override { python = null; })",
            "lib.optionals cfg.debug [ (pkgs.gdb.override { python = null; }) ]")
        target[path] = text.replace("      default = false;\n      description", "      default = true;\n"
                                    "      description")
    root = make_repository(tmp_path / "repo", base, target, "Modernise the modules")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0, summary
    blocks = [block.split("```")[0] for block in DOC.read_text().split("```toml\n")[1:]]
    [documented] = [block for block in blocks if "$A" in block]
    assert recipe["steps"] == [{**step, "message": recipe["steps"][index]["message"]} for index, step in
                               enumerate(tomllib.loads(documented)["steps"])]


def test_a_change_made_once_or_differently_everywhere_stays_edit_by_hand(tmp_path, run_cli, nix_oracle):
    base = {"a.nix": "{ lib }:\n{\n  x = lib.foo 1;\n  y = [ 1 2 ];\n}\n",
            "b.nix": "{ lib }:\n{\n  z = lib.bar \"s\";\n}\n"}
    target = {"a.nix": "{ lib }:\n{\n  x = lib.baz [ 1 2 ] { };\n  y = [ 1 2 ];\n}\n",
              "b.nix": "{ lib }:\n{\n  z = if lib.bar then \"s\" else null;\n}\n"}
    for text in [*base.values(), *target.values()]:
        assert nix_oracle(text.encode())[0]
    root = make_repository(tmp_path / "repo", base, target, "Two unrelated hand edits")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 1 and not rewrites(recipe)
    assert "edit by hand: 2 files a maintainer still edits" in summary
    assert "not reproduced: a.nix, b.nix" in summary


def test_a_rule_that_would_rewrite_a_place_target_kept_is_not_proposed(tmp_path, run_cli, nix_oracle):
    # toString a -> builtins.toString a in both files, but each file keeps another `toString` as it was:
    # `toString $A` would change them too, and no binding path holds the changed places without the kept ones
    base = {"one.nix": "{ a, c }:\n{\n  x = toString a;\n  y = toString c;\n}\n",
            "two.nix": "{ b, d }:\n{\n  z = toString b;\n  w = toString d;\n}\n"}
    target = {"one.nix": "{ a, c }:\n{\n  x = builtins.toString a;\n  y = toString c;\n}\n",
              "two.nix": "{ b, d }:\n{\n  z = builtins.toString b;\n  w = toString d;\n}\n"}
    root = make_repository(tmp_path / "repo", base, target, "Some toString calls by their full name")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 1 and recipe == {}, summary
    assert "no recipe written" in summary and "rewrite" not in summary
    assert "not reproduced: one.nix, two.nix" in summary


def test_the_same_old_form_kept_elsewhere_in_the_file_is_not_rewritten(tmp_path, run_cli, nix_oracle):
    # the kept place spells exactly what the changed one spelled, and no binding holds either: no rule says it
    base = {f"{name}.nix": "{ v }:\n[ (toString v) (toString v) ]\n" for name in ("one", "two")}
    target = {f"{name}.nix": "{ v }:\n[ (builtins.toString v) (toString v) ]\n" for name in ("one", "two")}
    root = make_repository(tmp_path / "repo", base, target, "Half the toString calls")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 1 and recipe == {}, summary


def test_a_kept_place_in_another_binding_narrows_the_rule_with_inside(tmp_path, run_cli, nix_oracle):
    base = {f"{name}.nix": "{ v }:\n{\n  a.x = toString v;\n  b.y = toString v;\n}\n" for name in ("one", "two")}
    target = {f"{name}.nix": "{ v }:\n{\n  a.x = builtins.toString v;\n  b.y = toString v;\n}\n"
              for name in ("one", "two")}
    root = make_repository(tmp_path / "repo", base, target, "toString by its full name in x")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0, summary
    [step] = rewrites(recipe)
    assert step["params"] == {"pattern": "toString v", "replacement": "builtins.toString v", "inside": ["*.x"]}


def test_a_file_target_did_not_change_is_left_out_of_the_steps_files(tmp_path, run_cli, nix_oracle):
    changed = "{ a, b }:\n[ (toString a) (toString b) ]\n"
    base = {"mods/one.nix": changed, "mods/two.nix": changed.replace("a", "c"),
            "legacy/old.nix": "{ x }:\ntoString x\n"}
    target = {**base, "mods/one.nix": changed.replace("(toString", "(builtins.toString"),
              "mods/two.nix": changed.replace("a", "c").replace("(toString", "(builtins.toString")}
    root = make_repository(tmp_path / "repo", base, target, "toString by its full name in mods")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0, summary
    [step] = rewrites(recipe)
    assert step["params"] == {"pattern": "toString $A", "replacement": "builtins.toString $A"}
    selected = {path for path in base if matches(path, step["files"])}
    assert selected == {"mods/one.nix", "mods/two.nix"}
    assert git(root, "show", "replay:legacy/old.nix") == base["legacy/old.nix"]


@pytest.mark.parametrize("shape", ["swap", "interleaved"])
def test_the_other_kinds_keep_what_they_explain(tmp_path, run_cli, nix_oracle, shape):
    """A pure rename stays rename-attr's, never a rewrite (the rewrite phases leave words to the renames)."""
    base = {f"{name}.nix": "{ nixpkgs_pinned }:\n{\n  a = nixpkgs_pinned.python3Packages.torch;\n"
                           "  b = nixpkgs_pinned.python3Packages.numpy;\n}\n" for name in ("one", "two")}
    target = {path: text.replace("python3Packages", "python313Packages") for path, text in base.items()}
    if shape == "interleaved":  # and a change of shape beside it: a rewrite for that, the rename for the words
        target = {path: text.replace("b = nixpkgs_pinned.python313Packages.numpy;",
                                     "b = [ nixpkgs_pinned.python313Packages.numpy ];")
                  for path, text in target.items()}
    root = make_repository(tmp_path / "repo", base, target, "python313Packages")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0, summary
    kinds = [step["kind"] for step in recipe["steps"]]
    assert kinds == (["rename-attr"] if shape == "swap" else ["rewrite", "rename-attr"])


@pytest.mark.parametrize("count, proposed", [(200, True), (300, False)])
def test_the_changed_places_read_per_file_are_bounded(tmp_path, run_cli, nix_oracle, count, proposed):
    """At most 256 changed node pairs are read per file (changed_nodes.MAX_REGIONS): 200 changes of one shape are
    one rule; a file changed in 300 places is not read, and stays to edit by hand (docs/infer.md says so)."""
    names = [f"a{index}" for index in range(count)]
    # each changed line beside one kept as it was: the line diff finds them apart (infer's token diff of one block
    # of hundreds of changed lines is quadratic: hunks.py)
    text = "{ " + ", ".join(names) + " }:\n[\n" + "".join(f"  (toString {name})\n  {name}\n" for name in names) + "]\n"
    base = {"one.nix": text, "two.nix": text.replace("(toString a1)", "(toString a1 )")}
    target = {path: data.replace("(toString", "(builtins.toString") for path, data in base.items()}
    root = make_repository(tmp_path / "repo", base, target, "toString by its full name, everywhere")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert (code, [s["params"] for s in rewrites(recipe)]) == \
        ((0, [{"pattern": "toString $A", "replacement": "builtins.toString $A"}]) if proposed else (1, []))


def test_code_nobody_vetted_is_escaped_where_shown_and_never_read_as_a_metavariable(tmp_path, run_cli, nix_oracle):
    """The pattern is code from a commit: a terminal escape in a string it holds is escaped in the summary and
    written as TOML escapes (the replay gives TARGET's bytes); a `$NAME` in a string would read as a metavariable,
    so no rule holding one is proposed (docs/infer.md: a rule a recipe cannot hold)."""
    shown = {f"{name}.nix": '{ }:\n{ x = toString "\x1b[2Jred"; }\n' for name in ("one", "two")}
    root = make_repository(tmp_path / "escape", shown, {path: text.replace("toString", "builtins.toString")
                                                          for path, text in shown.items()}, "escape")
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 0 and "\x1b" not in summary, summary
    assert [s["params"]["pattern"] for s in rewrites(recipe)] == ['toString "\x1b[2Jred"']
    assert "\\u001b" in (root.parent / "inferred.toml").read_text()
    dollar = {f"{name}.nix": '{ }:\n{ x = toString "$HOME/red"; }\n' for name in ("one", "two")}
    root = make_repository(tmp_path / "dollar", dollar, {path: text.replace("toString", "builtins.toString")
                                                         for path, text in dollar.items()}, "dollar")
    (tmp_path / "inferred.toml").unlink()
    code, summary, recipe = infer_and_replay(run_cli, root, nix_oracle)
    assert code == 1 and recipe == {}, summary
