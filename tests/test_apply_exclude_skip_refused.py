"""`pinshift apply --exclude GLOB` and `--skip-refused` (issue 46): files left out before anything is read, and
refused files skipped and listed while the default stays all-or-nothing."""

from __future__ import annotations

TO_STRING = ("--set", "pattern=toString $X", "--set", "replacement=builtins.toString $X")
OK = "{ a = toString 1; }\n"
REFUSED = "{ b = let builtins = { }; in toString 2; }\n"
OTHER = "{ c = toString 3; }\n"


def _tree(tmp_path):
    (tmp_path / "t/sub").mkdir(parents=True)
    (tmp_path / "t/ok.nix").write_text(OK)
    (tmp_path / "t/bad.nix").write_text(REFUSED)
    (tmp_path / "t/sub/other.nix").write_text(OTHER)
    return tmp_path / "t"


def _texts(root):
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.nix"))}


def test_exclude_leaves_files_out(run_cli, tmp_path):
    root = _tree(tmp_path)
    result = run_cli("apply", "rewrite", *TO_STRING, "--exclude", "sub/**", "--exclude", "bad.nix", str(root))
    assert result.exit_code == 0, result
    assert _texts(root) == {"bad.nix": REFUSED, "ok.nix": "{ a = builtins.toString 1; }\n", "sub/other.nix": OTHER}
    assert "1 file changed" in result.output


def test_exclude_matches_the_path_as_shown_and_named_files(run_cli, tmp_path, monkeypatch):
    root = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = run_cli("apply", "rewrite", *TO_STRING, "--exclude", "t/bad.nix", "--exclude", "t/sub/*", "t", "t/sub/other.nix")
    assert result.exit_code == 0, result
    assert _texts(root)["bad.nix"] == REFUSED and _texts(root)["sub/other.nix"] == OTHER


def test_an_invalid_exclude_glob_is_a_usage_error(run_cli, tmp_path):
    root = _tree(tmp_path)
    result = run_cli("apply", "rewrite", *TO_STRING, "--exclude", "[z-a]*.nix", str(root))
    assert result.exit_code == 2, result
    assert "--exclude [z-a]*.nix: invalid glob (bad character range z-a)" in result.output and "Traceback" not in result.output
    assert _texts(root)["ok.nix"] == OK


def test_a_refused_file_stops_everything_by_default(run_cli, tmp_path):
    root = _tree(tmp_path)
    result = run_cli("apply", "rewrite", *TO_STRING, str(root))
    assert result.exit_code == 1, result
    assert "no file written" in result.output
    assert _texts(root) == {"bad.nix": REFUSED, "ok.nix": OK, "sub/other.nix": OTHER}


def test_skip_refused_writes_the_others_and_lists_the_refused(run_cli, tmp_path):
    root = _tree(tmp_path)
    result = run_cli("apply", "rewrite", *TO_STRING, "--skip-refused", str(root))
    assert result.exit_code == 0, result
    assert _texts(root) == {"bad.nix": REFUSED, "ok.nix": "{ a = builtins.toString 1; }\n",
                            "sub/other.nix": "{ c = builtins.toString 3; }\n"}
    assert f"1 refused file skipped (--skip-refused), left as they are: {root}/bad.nix" in result.output
    assert "bad.nix:1:30: the replacement's `builtins` would be the let binding" in result.output


def test_skip_refused_in_a_dry_run_writes_nothing(run_cli, tmp_path):
    root = _tree(tmp_path)
    result = run_cli("apply", "rewrite", *TO_STRING, "--skip-refused", "--dry-run", str(root))
    assert result.exit_code == 0, result
    assert _texts(root) == {"bad.nix": REFUSED, "ok.nix": OK, "sub/other.nix": OTHER}
    assert "+{ a = builtins.toString 1; }" in result.output


def test_skip_refused_keeps_strict_warnings_fatal(run_cli, tmp_path):
    root = _tree(tmp_path)
    (root / "c.nix").write_text("{ lib, c }:\nlib.optional c # why\n  1\n")
    result = run_cli("apply", "rewrite", "--set", "pattern=lib.optional $C $X", "--set",
                     "replacement=lib.optionals $C [ $X ]", "--skip-refused", "--strict", str(root))
    assert result.exit_code == 1, result
    assert "warning under --strict" in result.output
