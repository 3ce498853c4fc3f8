"""One module per CLI command; each holds only option parsing and output, never the logic.

May import: any part of pinshift (this is the top of the flow; only pinshift.cli imports it).
"""

