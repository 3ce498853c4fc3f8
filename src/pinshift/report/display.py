"""`printable`, the rule for everything printed that comes from a file (pinshift.languages.display), here for the
report modules and the commands that print."""

from pinshift.languages.display import printable

__all__ = ["printable"]
