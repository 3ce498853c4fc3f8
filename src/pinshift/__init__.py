"""pinshift: syntax-aware refactoring of Nix recipes and per-step migrations between nixpkgs pins."""

__version__ = "0.1.0"
