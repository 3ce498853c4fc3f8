"""pinshift.nixpkgs.nar against Nix itself: NAR bytes equal `nix-store --dump`, hashes equal `nix-hash`, notations round-trip."""

from __future__ import annotations

import base64
import os
import stat
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import require_nix_tool
from pinshift.nixpkgs.nar import (
    Directory, File, Symlink, from_base32, hash_format, leaves, nar_bytes, nar_sha256, parse_sha256, render_sha256,
    to_base32,
)


def tree_on_disk(path: bytes):
    """A NAR tree of a real directory; leaf keys are the paths (the test reads them itself)."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return Symlink(path)
    if stat.S_ISDIR(mode):
        return Directory({name: tree_on_disk(os.path.join(path, name)) for name in os.listdir(path)})
    return File(path, executable=bool(mode & stat.S_IXUSR))


def contents(root):
    for leaf in leaves(root):
        yield os.readlink(leaf.key) if isinstance(leaf, Symlink) else open(leaf.key, "rb").read()


@pytest.fixture
def sample(tmp_path):
    """Every kind of entry, names that sort differently bytewise and by path, sizes around the 8-byte padding."""
    root = tmp_path / "sample"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a-b").write_bytes(b"x")  # sorts after "a" bytewise: NAR sorts names, not paths
    (root / "a.b").mkdir()
    (root / "a.b" / "eight___").write_bytes(b"12345678")
    (root / "a" / "b" / "nine").write_bytes(b"123456789")
    (root / "empty-file").write_bytes(b"")
    (root / "empty-dir").mkdir()
    (root / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "only-group-x").write_bytes(b"g")
    (root / "only-group-x").chmod(0o650)  # NAR records the owner's x bit only
    (root / "link").symlink_to("a/b/nine")
    (root / "dangling").symlink_to("nowhere/at/all")
    (root / "Zed").write_bytes(b"upper case sorts first")
    (root / "ünï").write_bytes("ü".encode())
    return root


def test_nar_bytes_equal_nix_store_dump(sample):
    root = tree_on_disk(bytes(sample))
    dump = subprocess.run([require_nix_tool("nix-store"), "--dump", str(sample)], capture_output=True, check=True)
    assert nar_bytes(root, contents(root)) == dump.stdout


def test_nar_sha256_equals_nix_hash_in_every_notation(sample):
    root = tree_on_disk(bytes(sample))
    digest = nar_sha256(root, contents(root))
    nix_hash = require_nix_tool("nix-hash")
    for flag, fmt in (("--base32", "base32"), ("", "base16")):
        printed = subprocess.run([nix_hash, "--type", "sha256", *filter(None, [flag]), str(sample)],
                                 capture_output=True, text=True, check=True).stdout.strip()
        assert render_sha256(digest, fmt) == printed
        assert parse_sha256(printed) == digest


def test_a_single_file_and_a_single_symlink_are_nars_too(tmp_path):
    (tmp_path / "f").write_bytes(b"contents")
    (tmp_path / "l").symlink_to("f")
    dump = require_nix_tool("nix-store")
    for name in ("f", "l"):
        root = tree_on_disk(bytes(tmp_path / name))
        expected = subprocess.run([dump, "--dump", str(tmp_path / name)], capture_output=True, check=True).stdout
        assert nar_bytes(root, contents(root)) == expected


def test_contents_must_match_the_leaves():
    root = Directory({b"a": File("a"), b"b": File("b")})
    with pytest.raises(ValueError, match="fewer contents"):
        nar_bytes(root, [b"only one"])
    with pytest.raises(ValueError, match="more contents"):
        nar_bytes(root, [b"1", b"2", b"3"])


@given(st.binary(min_size=32, max_size=32))
def test_base32_round_trips(digest):
    text = to_base32(digest)
    assert len(text) == 52 and from_base32(text) == digest
    assert parse_sha256(text) == digest and parse_sha256("sha256:" + text) == digest
    sri = render_sha256(digest, "sri")
    assert base64.b64decode(sri.removeprefix("sha256-")) == digest and parse_sha256(sri) == digest
    assert parse_sha256(digest.hex()) == digest


def test_base32_agrees_with_nix_hash_to_base32():
    nix_hash = require_nix_tool("nix-hash")
    for digest in (bytes(32), bytes(range(32)), bytes([255] * 32), bytes.fromhex("ab" * 16 + "01" * 16)):
        printed = subprocess.run([nix_hash, "--type", "sha256", "--to-base32", digest.hex()],
                                 capture_output=True, text=True, check=True).stdout.strip()
        assert to_base32(digest) == printed


@pytest.mark.parametrize("text, found", [
    ("0" * 52, ("base32", False)),
    ("sha256:" + "0" * 52, ("base32", True)),
    ("ab" * 32, ("base16", False)),
    ("sha256-" + "A" * 43 + "=", ("sri", False)),
    ("z" * 52, None),  # 260 bits: Nix rejects what does not fit 256
    ("e" * 52, None),  # not in Nix's alphabet (no e, o, u, t)
    ("0" * 51, None),
    ("sha256-" + "A" * 42 + "==", None),
    ("", None),
    ("sha512-" + "A" * 86 + "==", None),
])
def test_hash_format_recognises_what_nix_accepts(text, found):
    assert hash_format(text) == found
