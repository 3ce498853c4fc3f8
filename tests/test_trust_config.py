"""The trust list is used only when this user alone can change it; a symlinked config stays a link (issue 45 §5).

Whoever can write `~/.config/pinshift/config.toml` decides which repository's code runs. A config (or its folder,
or the file a symlinked config leads to, or that file's folder) writable by group or others, or owned by another
user, is refused in one line with the fix. `pinshift trust` writes through a dotfiles link to its target,
atomically in the target's folder, and the link stays.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import FIXTURES

WORD_SWAP = (FIXTURES / "migrations" / "word_swap.py").read_bytes()
APPLY = ("apply", "word-swap", "--set", "old=alpha", "--set", "new=beta", ".")


@pytest.fixture
def config_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "config"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture
def repo(make_repo) -> Path:
    return make_repo({".pinshift/migrations/word_swap.py": WORD_SWAP, "x.nix": "{ alpha = 1; }\n"})


def _trusted_config(config_home: Path, repo: Path) -> Path:
    folder = config_home / "pinshift"
    folder.mkdir(mode=0o700)
    config = folder / "config.toml"
    config.write_text(f'trusted = ["{repo}"]\n')
    config.chmod(0o600)
    return config


def test_a_private_config_lets_the_listed_repository_run(run_cli, config_home, repo):
    _trusted_config(config_home, repo)
    result = run_cli(*APPLY, cwd=repo)
    assert result.exit_code == 0, result
    assert (repo / "x.nix").read_bytes() == b"{ beta = 1; }\n"


@pytest.mark.parametrize("where, mode, who", [
    ("file", 0o666, "others"), ("file", 0o620, "its group"),
    ("folder", 0o777, "others"), ("folder", 0o770, "its group"),
])
def test_a_config_others_can_change_is_refused_in_one_line_with_the_fix(run_cli, config_home, repo, where, mode, who):
    config = _trusted_config(config_home, repo)
    path = config if where == "file" else config.parent
    path.chmod(mode)
    what = "config" if where == "file" else "config's folder"
    expected = (f"pinshift: error: {path}: the pinshift {what} is writable by {who} (mode {mode:04o}), so the trust "
                f"list is not used; run `chmod go-w {path}`")
    for args in (APPLY, ("trust", "--list"), ("trust", ".")):
        result = run_cli(*args, cwd=repo)
        assert result.exit_code == 2, result
        assert result.stderr.splitlines() == [expected], result
    assert (repo / "x.nix").read_bytes() == b"{ alpha = 1; }\n"  # the repository's code never ran
    assert config.read_text() == f'trusted = ["{repo}"]\n'
    path.chmod(0o700 if where == "folder" else 0o600)  # the fix the line names
    assert run_cli(*APPLY, cwd=repo).exit_code == 0


@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_config_owned_by_another_user_is_refused(run_cli, config_home, repo, where):
    if os.geteuid() != 0:
        pytest.skip("giving the config to another uid needs root (chown)")
    config = _trusted_config(config_home, repo)
    path = config if where == "file" else config.parent
    os.chown(path, 12345, 12345)
    result = run_cli(*APPLY, cwd=repo)
    assert result.exit_code == 2, result
    [line] = result.stderr.splitlines()
    assert line.startswith(f"pinshift: error: {path}: the pinshift config") and "belongs to uid 12345" in line
    assert (repo / "x.nix").read_bytes() == b"{ alpha = 1; }\n"


def test_trust_makes_a_new_config_only_its_owner_can_change(run_cli, config_home, repo):
    result = run_cli("trust", ".", cwd=repo)
    assert result.exit_code == 0, result
    config = config_home / "pinshift" / "config.toml"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700


# --- a config that is a symbolic link (dotfiles) ------------------------------------------------------------


def _linked_config(config_home: Path, tmp_path: Path, text: str = "") -> tuple[Path, Path]:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir(mode=0o700)
    target = dotfiles / "pinshift.toml"
    target.write_text(text)
    target.chmod(0o600)
    (config_home / "pinshift").mkdir(mode=0o700)
    link = config_home / "pinshift" / "config.toml"
    link.symlink_to(target)
    return link, target


def test_trust_writes_through_a_dotfiles_link_and_keeps_it(run_cli, config_home, repo, tmp_path):
    link, target = _linked_config(config_home, tmp_path, "# my dotfiles\n")
    result = run_cli("trust", ".", cwd=repo)
    assert result.exit_code == 0, result
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("# my dotfiles\n") and str(repo) in target.read_text()
    assert sorted(os.listdir(target.parent)) == ["pinshift.toml"]  # written atomically, no temporary file left
    assert run_cli(*APPLY, cwd=repo).exit_code == 0  # the link is the config: the repository is trusted
    removed = run_cli("trust", "--remove", ".", cwd=repo)
    assert removed.exit_code == 0, removed
    assert link.is_symlink() and str(repo) not in target.read_text()


def test_a_dangling_config_link_is_refused_and_left_alone(run_cli, config_home, repo, tmp_path):
    (config_home / "pinshift").mkdir(mode=0o700)
    link = config_home / "pinshift" / "config.toml"
    link.symlink_to(tmp_path / "gone.toml")
    result = run_cli("trust", ".", cwd=repo)
    assert result.exit_code == 2, result
    assert result.stderr.splitlines() == [
        f"pinshift: error: {link} is a symbolic link to {tmp_path / 'gone.toml'}, which is not a file; pinshift "
        f"will not replace the link: create {tmp_path / 'gone.toml'} or remove the link"]
    assert link.is_symlink() and not (tmp_path / "gone.toml").exists()


def test_the_linked_files_folder_must_be_private_too(run_cli, config_home, repo, tmp_path):
    link, target = _linked_config(config_home, tmp_path, f'trusted = ["{repo}"]\n')
    target.parent.chmod(0o777)
    result = run_cli(*APPLY, cwd=repo)
    assert result.exit_code == 2, result
    assert result.stderr.splitlines() == [
        f"pinshift: error: {target.parent}: the pinshift config's folder is writable by others (mode 0777), so the "
        f"trust list is not used; run `chmod go-w {target.parent}`"]
    assert (repo / "x.nix").read_bytes() == b"{ alpha = 1; }\n"
