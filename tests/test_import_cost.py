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
