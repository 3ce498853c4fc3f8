"""Knowing a recipe repository: facts (scan), naming rules (lint), compatibility with a pin (verify)."""
