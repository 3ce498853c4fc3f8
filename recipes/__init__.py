"""Bundled recipes (TOML), shipped as package `pinshift.bundled_recipes` so they travel in the wheel."""
