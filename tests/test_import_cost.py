"""Commands import only what they use: no GitPython or libcst for `--help` or for parsing Nix files."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("git", "libcst", "tomlkit", "markdown_it", "concurrent.futures.process")


def modules_after(args: list[str], cwd) -> set[str]:
    script = (
        "import sys, json\n"
        "from pinshift.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_imports_nothing_heavy(tmp_path):
    loaded = modules_after(["--help"], tmp_path)
    assert "click" in loaded
    assert not [m for m in HEAVY if m in loaded]
    assert "tree_sitter" not in loaded


def test_parsing_nix_files_needs_neither_git_nor_libcst(tmp_path):
    (tmp_path / "a.nix").write_text("{ a, b, }: a\n")
    loaded = modules_after(["parse", str(tmp_path / "a.nix")], tmp_path)
    assert "tree_sitter" in loaded
    assert not [m for m in HEAVY if m in loaded]


def test_planning_nix_steps_loads_no_libcst(tmp_path):
    """Every bundled kind is loaded to validate a recipe; the Python-only ones must not drag libcst in."""
    (tmp_path / "a.nix").write_text(
        'import (builtins.fetchTarball { url = "https://x/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz"; }) { }\n'
    )
    script = (
        "import sys, json\n"
        "from pinshift.files.tree import DirectoryTree\n"
        "from pinshift.planning.runner import plan_step\n"
        "from pinshift.planning.working_set import WorkingSet\n"
        "from pinshift.steps.registry import bundled_kinds\n"
        "kind = bundled_kinds()['pin-swap']\n"
        "params = kind.parse_params({'old': '6a030d5', 'new': '0182a361324364ae3f436a63005877674cf45efb'})\n"
        f"files = WorkingSet(DirectoryTree({str(tmp_path)!r}))\n"
        "plan = plan_step(files, kind, params, ['**/*.nix'])\n"
        "print(len(files.changed), json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    changed, modules = done.stdout.split(" ", 1)
    assert changed == "1"
    loaded = set(json.loads(modules))
    assert not [m for m in ("git", "libcst", "tomlkit") if m in loaded]
