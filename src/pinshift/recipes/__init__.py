"""Recipes: the TOML that says which steps run in which order, validated before any file is read.

`recipe` (the model, validation with `file: step N (kind): message`, lookup in the repository's
`.pinshift/recipes/` then the bundled ones), `placeholders` (`{base}` / `{target}` in step parameters).

May import: pinshift.errors, pinshift.files, pinshift.steps, pinshift.bundled_recipes (the TOML files).
"""
