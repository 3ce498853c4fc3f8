"""The `pinshift` command: a thin click group that loads each subcommand only when it runs.

Exit codes (docs/cli.md, with `python -m pinshift` and shell completion): 0 success; 1 the command ran and
found something (syntax problems, a refused file, strict warnings, `--check` with pending changes); 2 usage,
recipe or repository errors (one line on stderr); 3 an internal error (a bug: the traceback is shown with
`--debug`).
"""

from __future__ import annotations

# Imports inside functions are lazy, for start-up time; none hides an import cycle (tests/test_layout.py).

import importlib
import importlib.util
import sys

import click

from pinshift import __version__
from pinshift.errors import PinshiftError

# command name -> ("module:function", one-line help); modules are imported only when their command runs,
# so `pinshift --help` lists every command without importing tree-sitter or libcst.
COMMANDS = {
    "demo": ("pinshift.commands.demo:demo", "Build a demo recipe repository and migrate it, as a user would."),
    "migrate": ("pinshift.commands.migrate:migrate", "Migrate a branch with a recipe: new branch, one commit per step."),
    "infer": ("pinshift.commands.infer:infer", "Learn a recipe from two commits (BASE -> TARGET) and prove it."),
    "apply": ("pinshift.commands.apply:apply", "Run one step kind on files in place (or --dry-run)."),
    "recipes": ("pinshift.commands.recipes:recipes", "List the recipes available here."),
    "show": ("pinshift.commands.recipes:show", "Show a recipe's steps or a step kind's documentation."),
    "trust": ("pinshift.commands.trust:trust", "Allow a repository's own step kinds to run (like direnv allow)."),
    "parse": ("pinshift.commands.parse:parse", "Check that Nix files parse; print problems as path:line:col."),
    "scan": ("pinshift.commands.scan:scan", "Report pins, package sets and the variant matrix of recipes."),
    "status": ("pinshift.commands.status:status", "Where every branch stands: pins, PyTorch, CUDA, Python, alignment."),
    "lint": ("pinshift.commands.lint:lint", "Check recipe names against their contents."),
    "verify": ("pinshift.commands.verify:verify", "Check recipes against a local nixpkgs checkout at their pin."),
    "diff": ("pinshift.commands.diff:diff", "What each recipe builds on two commits, evaluated offline."),
    "hash": ("pinshift.commands.hash:hash_command", "Print the sha256 of nixpkgs' archive at a revision, offline."),
    "completion": ("pinshift.commands.completion:completion", "Print the shell completion script (bash, zsh, fish)."),
}


class CarriedInterrupt(Exception):
    """A Ctrl-C (or SIGTERM, SIGHUP) carried past click, which would print an empty line before `main`'s one."""

    def __init__(self, stop: KeyboardInterrupt):
        super().__init__(str(stop))
        self.stop = stop


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use (keeps `--help` fast)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as stop:
            raise CarriedInterrupt(stop) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._exists(name)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    @staticmethod
    def _exists(name: str) -> bool:
        module_name = COMMANDS[name][0].split(":")[0]
        return importlib.util.find_spec(module_name) is not None

    @staticmethod
    def _load(name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module_name, attribute = COMMANDS[name][0].split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:
                return None  # a command whose module is not written yet
            raise
        return getattr(module, attribute)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pinshift")
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Refactor Nix recipes and migrate recipe branches between nixpkgs pins, one commit per step."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: run the CLI and turn errors into one line and an exit code."""
    from pinshift.interrupts import handling_signals

    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        with handling_signals():
            result = cli.main(args=args, prog_name="pinshift", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.UsageError as error:
        # one line, like every other error: what is wrong, and where to look
        where = error.ctx.command_path if error.ctx is not None else "pinshift"
        click.echo(f"{where}: error: {error.format_message().rstrip('.')}; see '{where} --help'", err=True)
        return 2
    except click.ClickException as error:
        click.echo(f"pinshift: error: {error.format_message()}", err=True)
        return 2 if error.exit_code in (1, 2) else error.exit_code
    except CarriedInterrupt as carried:  # a command was interrupted
        return interrupted(carried.stop)
    except click.exceptions.Abort as abort:  # click turns Ctrl-C (and our SIGTERM/SIGHUP) into Abort
        return interrupted(abort.__cause__)
    except PinshiftError as error:
        from pinshift.report.display import printable

        click.echo(f"pinshift: error: {printable(str(error))}", err=True)
        if debug and getattr(error, "details", ""):  # a step script's own traceback
            click.echo(error.details, err=True, nl=False)
        return error.exit_code
    except KeyboardInterrupt as stop:
        return interrupted(stop)
    except Exception as error:  # a bug: say so, and show the traceback only when asked
        if debug:
            raise
        click.echo(f"pinshift: internal error: {type(error).__name__}: {error} (rerun with --debug for a traceback)", err=True)
        return 3
    # click returns the exit code of a command that raised click.exceptions.Exit
    return result if isinstance(result, int) else 0


def interrupted(stop: BaseException | None) -> int:
    """One line for an interrupt, and its exit code: 128 + the signal (`Interrupted`), else 130.

    On a terminal the line starts on a line of its own (after the `^C` the terminal echoed); pipes and
    logs get the one line only.
    """
    from pinshift.interrupts import Interrupted

    if sys.stderr.isatty():
        click.echo(err=True)
    if isinstance(stop, Interrupted):
        click.echo(f"pinshift: interrupted ({stop})", err=True)
        return stop.exit_code
    click.echo("pinshift: interrupted", err=True)
    return 130


def run(argv: list[str] | None = None) -> None:
    sys.exit(main(argv))
