"""One module per CLI command; each holds only option parsing and output, never the logic."""
