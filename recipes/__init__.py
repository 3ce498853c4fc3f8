"""Bundled recipes (TOML). This file only makes the folder importable so it ships in the wheel."""
