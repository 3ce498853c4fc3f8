"""How pinshift runs Nix: every `nix-instantiate` call (the stand-in's evaluations, `verify --eval`, `verify`'s
`--parse`) goes through a `NixSandbox`, isolated and bounded whatever the evaluated files ask.

A commit is written by anyone who can open a pull request, so the boundary is Nix's own options and the
operating system, never the stand-in's shadowing of a builtin:

- Options on the command line, which win over any nix.conf: `--store dummy://` (no store is opened, nothing
  built or written), `--readonly-mode`, `restrict-eval = true` with `-I` naming only the folders the call needs
  (files elsewhere, `getEnv` and every URI are refused), `allowed-uris` empty,
  `allow-unsafe-native-code-during-evaluation = false` (no `exec`), `allow-import-from-derivation = false`,
  `substituters` empty. Pure evaluation cannot be used: it refuses every absolute path, even one named by `-I`,
  and the snapshots are files on disk (docs/diff.md).
- A folder of pinshift's own (`pinshift-nix-*`, mkdtemp, 0700, outside every tree pinshift writes): an empty
  nix.conf that NIX_CONF_DIR and NIX_USER_CONF_FILES name, an empty `bin` that is the whole PATH (no `git` nor
  any other program can be found from a fetcher), a private HOME holding XDG_CACHE_HOME, XDG_CONFIG_HOME,
  XDG_DATA_HOME and TMPDIR. Nothing else of pinshift's environment is passed (no token): NIX_PATH is empty, and
  git, should Nix run it, reads no configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null) and finds
  no repository above the private folder (GIT_CEILING_DIRECTORIES).
- No network: each call runs in a new network namespace (`unshare --net`, or `unshare --map-root-user --net`
  for a user without the privilege), tried once per run; where neither works, `network_note()` says so (the
  CLI prints it with --verbose) and the options above are what keeps evaluation offline.
- A memory limit (RLIMIT_AS, `configured_memory()` MiB: $PINSHIFT_EVAL_MEMORY, else MEMORY): a call over it
  fails with Nix's "out of memory". A time limit per call (`configured_timeout()`: $PINSHIFT_EVAL_TIMEOUT
  seconds, else TIMEOUT). Each child is killed by the kernel when the pinshift thread that started it dies
  (PR_SET_PDEATHSIG, SIGKILL), `kill -9` included.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pinshift import interrupts
from pinshift.sandbox.scratch_dirs import LockedDirectory, remove_dead

TIMEOUT = 120.0  # seconds a call may run ($PINSHIFT_EVAL_TIMEOUT)
MEMORY = 2048  # MiB of address space a call may use ($PINSHIFT_EVAL_MEMORY)

OPTIONS = ("--store", "dummy://", "--readonly-mode",
           "--option", "restrict-eval", "true",
           "--option", "allowed-uris", "",
           "--option", "allow-unsafe-native-code-during-evaluation", "false",
           "--option", "allow-import-from-derivation", "false",
           "--option", "substituters", "")


def configured_timeout() -> float:
    """TIMEOUT, or $PINSHIFT_EVAL_TIMEOUT seconds when it is a positive number."""
    try:
        value = float(os.environ.get("PINSHIFT_EVAL_TIMEOUT", ""))
    except ValueError:
        return TIMEOUT
    return value if value > 0 else TIMEOUT


def configured_memory() -> int:
    """MEMORY, or $PINSHIFT_EVAL_MEMORY MiB when it is a positive whole number (anything else: MEMORY)."""
    try:
        value = int(os.environ.get("PINSHIFT_EVAL_MEMORY", "").strip())
    except ValueError:
        return MEMORY
    return value if value > 0 else MEMORY


def eval_command(nix: str, roots: Sequence[str | Path], expression: str, show_trace: bool = False) -> list[str]:
    """`nix-instantiate --eval --strict --json` of `expression`, restricted to `roots` (each `-I`: a folder, a
    file, or `name=folder`)."""
    words = [nix, *OPTIONS]
    for root in roots:
        words += ["-I", str(root)]
    words += ["--eval", "--strict", "--json"]
    if show_trace:
        words.append("--show-trace")
    return words + ["--expr", expression]


def parse_command(nix: str) -> list[str]:
    """`nix-instantiate --parse -` (the file on stdin): nothing is evaluated, still run in the sandbox."""
    return [nix, *OPTIONS, "--parse", "-"]


_STDIN_AT = re.compile(r"at «stdin»:(\d+):(\d+)")


def nix_parse_verdict(sandbox: "NixSandbox", nix: str, data: bytes) -> tuple[int, int, str] | None:
    """None when `nix-instantiate --parse` accepts `data`, else (line, column, Nix's first error line): the place
    is the one Nix names (`at «stdin»:3:5`), 1:1 when it names none (a time-out, a crash)."""
    parsed = sandbox.run(parse_command(nix), input=data)
    if parsed.status == 0 and not parsed.timed_out:
        return None
    lines = parsed.stderr.strip().splitlines() or ["rejected"]
    message = "timed out" if parsed.timed_out else lines[0].removeprefix("error: ")
    at = _STDIN_AT.search(parsed.stderr)
    return (int(at.group(1)), int(at.group(2)), message) if at else (1, 1, message)


# --- the network namespace, tried once per run ------------------------------------------------------------------

_network: dict[str, tuple[list[str], str | None]] = {}
_network_lock = threading.Lock()


def network_prefix(nix: str, sandbox: "NixSandbox") -> list[str]:
    """The words that put a call in a new network namespace ([] where the kernel or the user cannot)."""
    with _network_lock:
        if nix not in _network:
            _network[nix] = _try_namespaces(nix, sandbox)
        return _network[nix][0]


def network_note() -> str | None:
    """What --verbose says when calls could not be put in a network namespace (None: they were, or none ran)."""
    with _network_lock:
        notes = [note for _, note in _network.values() if note]
    return notes[0] if notes else None


def _try_namespaces(nix: str, sandbox: "NixSandbox") -> tuple[list[str], str | None]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return [], ("Nix ran without a network namespace of its own (`unshare` is not on PATH; install "
                    "util-linux): restricted evaluation alone kept it offline")
    reason = ""
    for prefix in ([unshare, "--net", "--"], [unshare, "--map-root-user", "--net", "--"]):
        try:
            done = subprocess.run([*prefix, nix, "--version"], env=sandbox.environment(), cwd=sandbox.home,
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                                  preexec_fn=sandbox.limits)
        except (OSError, subprocess.SubprocessError) as error:
            reason = str(error)
            continue
        if done.returncode == 0:
            return prefix, None
        reason = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return [], (f"Nix ran without a network namespace of its own (unshare --net: {reason}): restricted "
                "evaluation alone kept it offline")


# --- the sandbox -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finished:
    stdout: bytes
    stderr: str
    status: int
    timed_out: bool


class NixSandbox:
    """Pinshift's own folder for Nix (configuration, PATH, HOME) and the way every call is started; `close`
    (or the garbage collector, or the end of the run) removes the folder."""

    def __init__(self, memory: int | None = None):
        remove_dead()
        self.memory = memory if memory is not None else configured_memory()
        self._directory = LockedDirectory("pinshift-nix-")
        self.path = self._directory.path
        self.conf = self.path / "conf"
        self.bin = self.path / "bin"
        self.home = self.path / "home"
        for folder in (self.conf, self.bin, self.home / ".cache", self.home / ".config",
                       self.home / ".local" / "share", self.home / "tmp"):
            folder.mkdir(parents=True, mode=0o700)
        (self.conf / "nix.conf").write_bytes(b"")
        interrupts.prepare_die_with_parent()  # libc found here, not in the forked child
        self._finalizer = weakref.finalize(self, self._directory.close)

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> "NixSandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def environment(self) -> dict[str, str]:
        """The whole environment of a call: nothing of pinshift's own."""
        home = str(self.home)
        return {
            "PATH": str(self.bin),
            "HOME": home,
            "XDG_CACHE_HOME": f"{home}/.cache",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_DATA_HOME": f"{home}/.local/share",
            "TMPDIR": f"{home}/tmp",
            "NIX_PATH": "",
            "NIX_CONF_DIR": str(self.conf),
            "NIX_USER_CONF_FILES": str(self.conf / "nix.conf"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CEILING_DIRECTORIES": str(self.path),
        }

    def limits(self) -> None:
        """In the child, before Nix starts: the memory limit, and death with the thread that started it."""
        limit = self.memory * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        interrupts.die_with_parent(signal.SIGKILL)

    def start(self, words: list[str], stdin: int | None = subprocess.DEVNULL) -> subprocess.Popen:
        """`words` (an eval_command or parse_command) started in the sandbox; stderr piped, stdout piped."""
        prefix = network_prefix(words[0], self)
        return subprocess.Popen([*prefix, *words], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=self.environment(), cwd=self.home, preexec_fn=self.limits, close_fds=True)

    def run(self, words: list[str], input: bytes | None = None, timeout: float | None = None) -> Finished:
        """`words` run to the end, or killed after `timeout` seconds (configured_timeout() when None)."""
        process = self.start(words, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL)
        return finish(process, timeout if timeout is not None else configured_timeout(), input)


def finish(process: subprocess.Popen, timeout: float, input: bytes | None = None) -> Finished:
    """Wait for `process` (killed after `timeout` seconds)."""
    try:
        out, err = process.communicate(input, timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        timed_out = True
    except BaseException:
        process.kill()
        process.wait()
        raise
    return Finished(out, err.decode("utf-8", "replace"), process.returncode, timed_out)


def memory_message(message: str, memory: int) -> str:
    """Nix's "out of memory" with the limit that caused it and how to raise it."""
    if "out of memory" in message:
        return f"{message} (the limit is {memory} MiB; $PINSHIFT_EVAL_MEMORY sets it)"
    return message
