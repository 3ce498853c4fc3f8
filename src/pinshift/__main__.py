"""`python -m pinshift`: the same command as the `pinshift` script (pinshift.cli.run), for an environment whose
scripts folder is not on PATH."""

from pinshift.cli import run

if __name__ == "__main__":
    run()
