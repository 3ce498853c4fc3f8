"""Bundled step kinds: one module per kind; see src/pinshift/steps.py for the protocol."""
