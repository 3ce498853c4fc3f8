"""One module per CLI command; each holds only option parsing and output, never the logic.

May import: any part of pinshift (this is the top of the flow; only pinshift.cli imports it).
"""


def counted(count: int, noun: str) -> str:
    """`1 file`, `2 files`: a count and its noun, singular only for one (every summary line says it so).

    Examples:
        >>> counted(1, "finding"), counted(0, "file")
        ('1 finding', '0 files')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
