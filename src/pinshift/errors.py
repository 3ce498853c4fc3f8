"""The one exception root whose message is what the user reads.

Every anticipated failure (bad input, bad recipe, git state) raises a subclass of
`PinshiftError`; the CLI prints its message on one line and exits 2 (or the
error's own `exit_code`). Anything else is a bug and shows a traceback only
with `--debug`.
"""


class PinshiftError(Exception):
    """A failure the user can act on; `str(error)` is the whole message."""

    exit_code = 2

    def __reduce__(self):
        # Errors cross process boundaries (see pinshift.planning.pool); keep subclass fields such as `key`.
        return (_restore, (type(self), self.args, dict(self.__dict__)))


def _restore(cls: type, args: tuple, state: dict) -> PinshiftError:
    error = Exception.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class UsageError(PinshiftError):
    """The invocation or configuration is wrong (bad option, unknown recipe, bad parameter)."""


class RecipeError(PinshiftError):
    """A recipe file is malformed; the message names the file, the step and the key."""


class ParamError(PinshiftError):
    """A step parameter is missing or invalid; `key` names it so the recipe loader can say where."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


class EditConflict(PinshiftError):
    """Two different edits claim overlapping bytes of one file."""

    exit_code = 1


class EditRefused(PinshiftError):
    """Applying edits would leave a file with a syntax problem it did not have."""

    exit_code = 1


class GitError(PinshiftError):
    """The repository is not in a state pinshift can work from (dirty, detached, missing branch...)."""


class StepFailed(PinshiftError):
    """A step could not complete (a refused file, a strict warning, a rejected commit)."""

    exit_code = 1


class WriteRefused(PinshiftError):
    """Files cannot be changed safely (read-only, immutable, changed since read); none was written.

    `reasons` holds one line per file; the message sums them up.
    """

    exit_code = 1

    def __init__(self, message: str, reasons: list[str] | None = None):
        super().__init__(message)
        self.reasons = list(reasons or [message])


class WriteFailed(PinshiftError):
    """The system refused a write (disk full, read-only file system); every file is as it was."""


class RestoreFailed(PinshiftError):
    """A write failed and putting back the files already replaced failed too; the message says which is which."""

    exit_code = 1


class WriteInterrupted(PinshiftError):
    """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped `apply`'s writes; the message says what state the files are in."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.exit_code = 128 + signum


class IncompleteRun(PinshiftError):
    """The command's main work is done and kept (a branch exists), but a later part failed (a push)."""

    exit_code = 1


class NotTrusted(PinshiftError):
    """A recipe or command needs a repository's own Python code, and nobody consented to running it."""


class StepScriptError(PinshiftError):
    """A step kind's Python file outside pinshift (repository or --migrations) failed or exited; names the file."""
