"""Step kinds from Python files that do not come with pinshift: found without running them.

A repository's `.pinshift/migrations/*.py` and the files of `--migrations DIR` are somebody's
code. pinshift reads them *statically* to know which kind each file defines (the rule below),
imports one only when a step needs its kind and the user consented (see pinshift.steps.trust), and
runs it under `script_call`: while it is imported and while its hooks run, whatever it prints
goes to stderr (so reports on stdout stay clean), and whatever it raises or exits with becomes a
`StepScriptError` naming the file (exit 2), never a silent exit or pinshift's internal error.

Which file defines which kind, without importing it:

- every `*.py` file directly in the directory whose name does not start with `_` (those are helpers);
- the kind's name is the string of the file's top-level `NAME = "..."` assignment, read with
  `ast` (the file is parsed, never executed), when it is a plain name (letters, digits, `-`, `_`, `.`);
- a file without such a literal (its NAME is computed, or it does not parse) is taken by its file
  name, the way the bundled kinds are named: `foo_bar.py` is kind `foo-bar`.

After an import the module's `NAME` must be the name found statically, or the load is refused.

A script is run from its source only: its bytes are read once (a regular file below its directory,
never through a link, at most 1 MiB: `pinshift.files.tree.read_inside`), compiled with `compile()`
and executed in a fresh module. No `__pycache__` is consulted (a committed `.pyc` compiled from other
source never runs in place of the `.py` the user read and consented to) and none is written.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import re
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pinshift.errors import PinshiftError, StepScriptError
from pinshift.files.tree import SkippedFile, read_inside

STATIC_READ_LIMIT = 1 << 20  # larger files are known by their file name only
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class StepScript:
    """A Python file that defines a step kind, as read without running it."""

    kind: str  # the kind it defines
    path: Path
    summary: str  # the first line of its docstring
    named_by: str  # "NAME" (a literal assignment) or "file name"
    root: Path | None = None  # no link is followed below it (the repository); None: the script's directory

    def source(self) -> bytes:
        """The file's bytes, read as `read_inside` reads (a regular file, no link, at most 1 MiB); StepScriptError."""
        root, relative = _place(self.path, self.root)
        try:
            return read_inside(root, relative, STATIC_READ_LIMIT)
        except SkippedFile as reason:
            raise StepScriptError(f"{root / str(reason)}; pinshift runs step code only from a regular file of at "
                                  "most 1 MiB, never through a link") from None


def _place(path: Path, root: Path | None) -> tuple[Path, str]:
    if root is not None and path.is_relative_to(root):
        return root, path.relative_to(root).as_posix()
    return path.parent, path.name


def kind_from_file_name(path: Path) -> str:
    """`foo_bar.py` -> `foo-bar` (the bundled kinds' convention)."""
    return path.stem.replace("_", "-")


def _static_facts(path: Path, root: Path | None) -> tuple[str | None, str]:
    """(the literal of a top-level `NAME = "..."` or None, the docstring's first line), read without executing."""
    try:
        tree = ast.parse(read_inside(*_place(path, root), STATIC_READ_LIMIT), filename=str(path))
    except (SkippedFile, SyntaxError, ValueError, RecursionError, MemoryError):
        return None, ""
    name = None
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and target.id == "NAME":
            literal = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
            name = literal if literal and _PLAIN_NAME.fullmatch(literal) else None  # the last one wins, as at import
    doc = ast.get_docstring(tree) or ""
    return name, (doc.strip().splitlines() or [""])[0]


def find_scripts(directory: Path, root: Path | None = None) -> list[StepScript]:
    """The step scripts of `directory`, in file-name order (see the module docstring for the rule); `root`: the
    folder below which no link is followed when they are read (the repository's root)."""
    found = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_") or (path.is_dir() and not path.is_symlink()):
            continue  # a link, a fifo... are listed, so that loading one is refused with the reason (StepScript.source)
        name, summary = _static_facts(path, root)
        found.append(StepScript(name or kind_from_file_name(path), path, summary, "NAME" if name else "file name",
                                root))
    return found


# --- running somebody else's code -----------------------------------------------------------------


def _flush(stream) -> None:
    try:
        if stream is not None:
            stream.flush()
    except (OSError, ValueError):
        pass


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout to stderr for a while: `print`, `sys.__stdout__`, file descriptor 1
    (also of subprocesses the code starts). Works in forked pool workers as in the main process."""
    _flush(sys.stdout)
    _flush(sys.__stdout__)
    saved_stream = sys.stdout
    try:
        saved_fd = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no file descriptor 1 or 2 (an embedding host): the Python-level redirect still holds
        saved_fd = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _flush(sys.stdout)
        _flush(sys.__stdout__)
        _flush(sys.stderr)
        sys.stdout = saved_stream
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def _where(error: BaseException, path: Path) -> str:
    """`path:line` of the innermost frame of the script's own file, else the path."""
    line = None
    real = os.path.realpath(path)
    for frame in traceback.extract_tb(error.__traceback__):
        if os.path.realpath(frame.filename) == real:
            line = frame.lineno
    return f"{path}:{line}" if line else str(path)


def _exit_code(error: SystemExit) -> str:
    return repr(error.code) if error.code is not None else ""


@contextlib.contextmanager
def script_call(path: Path, kind: str, doing: str) -> Iterator[None]:
    """Run a step script's code: its output to stderr, its failures as a `StepScriptError` naming `path`.

    `doing` says what pinshift asked of it (`loading`, `planning pkgs/a.nix`...). A PinshiftError
    (ParamError from Params, an error the script raises on purpose) passes through as the script's
    message; Ctrl-C stays Ctrl-C.
    """
    try:
        with stdout_to_stderr():
            yield
    except (PinshiftError, KeyboardInterrupt):
        raise
    except SystemExit as error:
        raise _failure(error, f"{_where(error, path)}: step kind '{kind}' called sys.exit({_exit_code(error)}) while "
                              f"{doing}; a step kind returns its result or raises an error, it never exits") from None
    except BaseException as error:  # noqa: BLE001 - anything else the script raises is the script's failure
        text = str(error).strip()
        described = f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__  # shown through printable
        raise _failure(error, f"{_where(error, path)}: step kind '{kind}' failed while {doing}: {described}") from None


def _failure(error: BaseException, message: str) -> StepScriptError:
    """The error pinshift reports; `details` keeps the script's traceback for `--debug` (also across processes)."""
    failure = StepScriptError(message)
    failure.details = "".join(traceback.format_exception(error))
    return failure


def import_script(script: StepScript) -> types.ModuleType:
    """Execute a step script as a module (the caller has checked consent); errors name the file.

    From source only: the `.py` bytes read here are what is compiled and run (never a `.pyc` from a
    `__pycache__` beside it, and none is written there)."""
    source = script.source()
    digest = hashlib.sha1(str(script.path.resolve()).encode()).hexdigest()[:8]
    module_name = f"pinshift_user_step_{script.path.stem}_{digest}"
    module = types.ModuleType(module_name)
    module.__file__ = str(script.path)
    sys.modules[module_name] = module  # dataclasses and typing look the module up by name; pickle too
    try:
        with script_call(script.path, script.kind, "loading"):
            code = compile(source, str(script.path), "exec", dont_inherit=True)
            exec(code, module.__dict__)  # noqa: S102 - consented repository code, the point of this function
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def guarded(path: Path, kind: str, doing: str, function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` under `script_call`."""
    with script_call(path, kind, doing):
        return function(*args)
