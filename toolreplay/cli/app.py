"""The command line (Typer): names the commands and runs one.

Each command lives in its own module as a function (`toolreplay.cli.command` says how
one is declared); this one names them, with the line `toolreplay --help` and shell
completion show for each, and imports a command's module only when that command runs.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Annotated, Any

import typer
import typer.main

# Typer vendors click and names these classes only there.
from typer._click import ClickException, Context  # pyright: ignore[reportPrivateUsage]
from typer._click import Command as ClickCommand  # pyright: ignore[reportPrivateUsage]
from typer._click.exceptions import NoSuchOption  # pyright: ignore[reportPrivateUsage]
from typer._click.shell_completion import (  # pyright: ignore[reportPrivateUsage]
    CompletionItem,
)
from typer.core import TyperGroup

from toolreplay._version import __version__
from toolreplay.cli.command import Command, ToolReplayCommand, help_markup
from toolreplay.cli.output import drawn_by_the_ui, terminal_safe_streams
from toolreplay.terminal import terminal_safe

__all__ = ["PROGRAM", "load_commands", "run"]

PROGRAM = "toolreplay"
"""The program's name in usage lines, and so the completion variable `_TOOLREPLAY_COMPLETE`,
however it was started (`python -m toolreplay` too)."""

# Each command: its module, imported only when that command runs (or `--help` lists
# them all), and its one-line summary (at most 79 characters), which is also the first
# line of its `--help` and what completing its name shows. In the order `--help` lists
# them. A command's function in its module has the command's name.
_COMMANDS: dict[str, tuple[str, str]] = {
    "show": (
        "toolreplay.cli.show",
        "Summarise a trace: its header, whether it is complete, and its operations.",
    ),
    "record": (
        "toolreplay.cli.run",
        "Run an application and record every effect it calls to a new trace.",
    ),
    "replay": (
        "toolreplay.cli.run",
        "Run an application against a trace, strictly: no effect body runs.",
    ),
    "fork": ("toolreplay.cli.run", "Replay a trace with patches applied, writing a branch."),
    "diff": (
        "toolreplay.cli.diff",
        "Compare two traces and show where they first differ, observably.",
    ),
    "promote": (
        "toolreplay.cli.cases",
        "Turn a trace into a self-contained pytest case, verified before publishing.",
    ),
    "verify": (
        "toolreplay.cli.cases",
        "Find promoted cases under PATH (recursively) and verify each one.",
    ),
    "tui": ("toolreplay.cli.tui", "Browse, fork, diff and promote a trace in the terminal UI."),
    "migrate": (
        "toolreplay.cli.migrate",
        "Convert a trace an earlier adapter recorded into what today's adapter records.",
    ),
    "find": (
        "toolreplay.cli.find",
        "List the traces in LOCATION (a folder or bucket) that match, newest first.",
    ),
    "capture": (
        "toolreplay.cli.capture",
        "Work with what a capture left behind: flush its spool to object storage.",
    ),
    "scan": (
        "toolreplay.cli.privacy",
        "Scan files for secrets: API keys, tokens, private keys, JWTs, card numbers.",
    ),
    "redact": (
        "toolreplay.cli.privacy",
        "Write a redacted copy of a trace: placeholders instead of the selected values.",
    ),
    "schema": (
        "toolreplay.cli.schema",
        "Print the JSON Schema of a case manifest, a patch file or a command's JSON.",
    ),
}

_SUMMARY = "Record, replay, fork and compare what an AI application's effects did."
_EPILOG = "Run `toolreplay COMMAND --help` for a command's arguments and exit statuses."
_CONTEXT = {"help_option_names": ["--help", "-h"]}


@functools.cache
def _command(name: str) -> ClickCommand:
    """The command `name`, built from its module's function once per process."""
    module, summary = _COMMANDS[name]
    function = getattr(importlib.import_module(module), name)
    if isinstance(function, typer.Typer):  # a group of commands (`capture flush`)
        group = typer.main.get_command(function)
        group.help, group.short_help = f"{summary}\n\n{group.help or ''}".strip(), summary
        return group
    single = typer.Typer(add_completion=False, rich_markup_mode=help_markup())
    single.command(
        name=name,
        cls=Command,
        help=f"{summary}\n\n{inspect.cleandoc(function.__doc__ or '')}",
        short_help=summary,
    )(function)
    return typer.main.get_command(single)


class _CommandTable(MutableMapping[str, ClickCommand]):
    """The commands by name, each built when it is looked up (Typer's group reads its
    commands from such a mapping: a lookup runs one command, the names suggest one)."""

    def __getitem__(self, name: str) -> ClickCommand:
        if name not in _COMMANDS:
            raise KeyError(name)
        return _command(name)

    def __iter__(self) -> Iterator[str]:
        return iter(_COMMANDS)

    def __len__(self) -> int:
        return len(_COMMANDS)

    def __setitem__(self, name: str, command: ClickCommand) -> None:
        raise TypeError(f"the commands are named in {__name__}._COMMANDS, not added")

    def __delitem__(self, name: str) -> None:
        raise TypeError(f"the commands are named in {__name__}._COMMANDS, not removed")


class _Commands(ToolReplayCommand, TyperGroup):
    """`toolreplay` itself: its own options and the lazily built commands."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _CommandTable()

    def list_commands(self, ctx: Context) -> list[str]:
        return list(_COMMANDS)

    def shell_complete(self, ctx: Context, incomplete: str) -> list[CompletionItem]:
        # The names and summaries from the table: completing a name imports no command.
        names = [
            CompletionItem(name, help=summary)
            for name, (_, summary) in _COMMANDS.items()
            if name.startswith(incomplete)
        ]
        return names + ClickCommand.shell_complete(self, ctx, incomplete)


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"{PROGRAM} {__version__}\n")
        raise typer.Exit()


def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """`toolreplay`'s own options, before the command."""


@functools.cache
def _root() -> ClickCommand:
    root = typer.Typer(
        cls=_Commands,
        name=PROGRAM,
        help=_SUMMARY,
        epilog=_EPILOG,
        context_settings=_CONTEXT,
        rich_markup_mode=help_markup(),
        pretty_exceptions_enable=False,
    )
    root.callback()(_options)
    return typer.main.get_command(root)


def load_commands() -> None:
    """Build every command now, and import the models of the documents runs read (a
    fork's patch file: pydantic): the warm runner pays for them once, before it forks
    runs."""
    _root()
    for name in _COMMANDS:
        _command(name)
    importlib.import_module("toolreplay.documents.patches")


def _misplaced(error: NoSuchOption, arguments: Sequence[str]) -> str | None:
    """When `toolreplay OPTION COMMAND ...` gave `toolreplay` an option of COMMAND: where
    it goes instead."""
    if error.ctx is None or error.ctx.parent is not None:
        return None  # a command's own unknown option: its usage line says which
    name = next((argument for argument in arguments if argument in _COMMANDS), None)
    if name is None:
        return None
    options = {opt for param in _command(name).params for opt in param.opts}
    if error.option_name not in options:
        return None
    return f"It is an option of `{PROGRAM} {name}`: give it after the command's name."


def _show_usage_error(error: ClickException, arguments: Sequence[str]) -> None:
    """Typer's report of a usage error (the usage line, what to try, the error), with
    whatever was typed escaped: Rich's panel on a terminal, plain text otherwise."""
    hint = _misplaced(error, arguments) if isinstance(error, NoSuchOption) else None
    if hint is not None:
        error.message = f"{error.message}. {hint}"
    error.message = terminal_safe(error.message, keep="\n\t")
    if not sys.stderr.isatty():
        error.show(file=sys.stderr)
        return
    from typer import rich_utils  # Rich only when a terminal shows the error

    with drawn_by_the_ui():  # Rich writes its own styles; the message is escaped
        rich_utils.rich_format_error(error)


def run(arguments: Sequence[str]) -> int:
    """Run `toolreplay ARGUMENTS`; return the exit status.

    Usage errors exit 2 after Typer's report of them; `toolreplay` alone prints the help
    and exits 2. Everything printed may quote a trace (an error, a traceback): escaped,
    always (`toolreplay.cli.output.terminal_safe_streams`).
    """
    with terminal_safe_streams():
        root = _root()
        if not arguments and f"_{PROGRAM.upper()}_COMPLETE" not in os.environ:
            root.main(["--help"], prog_name=PROGRAM, standalone_mode=False)
            return 2
        try:
            status = root.main(list(arguments), prog_name=PROGRAM, standalone_mode=False)
        except ClickException as error:
            _show_usage_error(error, arguments)
            return error.exit_code
        except Exception:
            # What the interpreter would print and exit with, but through the escaping
            # stream: an unexpected error's message may quote a trace.
            import traceback  # only when a command crashed

            traceback.print_exc()
            return 1
        return status if isinstance(status, int) else 0
