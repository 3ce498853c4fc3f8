"""The bundled example: a demo recipe repository built from scratch in a temporary directory (`pinshift demo`).

May import: pinshift.errors, pinshift.git.
"""
