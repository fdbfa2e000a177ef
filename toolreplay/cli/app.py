"""The command line (argparse). Each command lives in its own module; this one names them."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from toolreplay._version import __version__
from toolreplay.cli.command import Command, UsageError
from toolreplay.cli.output import terminal_safe_streams

__all__ = ["load_commands", "main"]

# Each command's module, imported only when that command runs (or `--help` lists them
# all): a command pays for its own imports and nobody else's (`toolreplay find` never
# loads the runtime, Rich tables or the diff engine). In the order `--help` lists them.
_COMMANDS: dict[str, str] = {
    "show": "toolreplay.cli.show",
    "record": "toolreplay.cli.run",
    "replay": "toolreplay.cli.run",
    "fork": "toolreplay.cli.run",
    "diff": "toolreplay.cli.diff",
    "promote": "toolreplay.cli.cases",
    "verify": "toolreplay.cli.cases",
    "tui": "toolreplay.cli.tui",
    "migrate": "toolreplay.cli.migrate",
    "find": "toolreplay.cli.find",
    "scan": "toolreplay.cli.privacy",
    "redact": "toolreplay.cli.privacy",
    "schema": "toolreplay.cli.schema",
}

_SUMMARY = "Record, replay, fork and compare what an AI application's effects did."


def _command(name: str) -> Command:
    """The command `name`, from its module's `COMMANDS`."""
    commands: tuple[Command, ...] = importlib.import_module(_COMMANDS[name]).COMMANDS
    return next(command for command in commands if command.name == name)


def load_commands() -> None:
    """Import every command's module now, and the models of the documents runs read (a
    fork's patch file: pydantic): the warm runner pays for them once, before it forks
    runs."""
    for module in dict.fromkeys(_COMMANDS.values()):
        importlib.import_module(module)
    importlib.import_module("toolreplay.documents.patches")


class _RootParser(argparse.ArgumentParser):
    """`toolreplay` itself: `--version`, and `--help` listing every command."""

    def format_help(self) -> str:
        # Only the help needs every command's summary, and so every command's module.
        import shutil  # here, as in argparse, so that only the help pays for these imports
        import textwrap

        width = max(shutil.get_terminal_size().columns - 2, 40)
        column = max(map(len, _COMMANDS)) + 4
        lines = ["commands:"]
        for name in _COMMANDS:
            lines += textwrap.wrap(
                _command(name).summary,
                width,
                initial_indent=f"  {name}".ljust(column),
                subsequent_indent=" " * column,
            )
        lines += [
            "",
            "Run `toolreplay COMMAND --help` for a command's arguments and exit statuses.",
        ]
        self.epilog = "\n".join(lines)
        return super().format_help()


def _root_parser() -> argparse.ArgumentParser:
    parser = _RootParser(
        prog="toolreplay",
        usage="%(prog)s [-h] [--version] COMMAND [ARGUMENTS ...]",
        description=_SUMMARY,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"toolreplay {__version__}",
        help="Print the version and exit.",
    )
    parser.add_argument(
        "command", metavar="COMMAND", choices=list(_COMMANDS), help="One of the commands below."
    )
    return parser


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run `toolreplay ARGV` (by default `sys.argv[1:]`) and exit with its status.

    The entry point of the `toolreplay` script, of `python -m toolreplay` and of the
    warm runner's forked runs. Usage errors exit 2, after argparse's message.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    # Everything printed may quote a trace (an error, a traceback): escaped, always.
    with terminal_safe_streams():
        if not arguments:
            _root_parser().print_help()
            sys.exit(2)
        if arguments[0] not in _COMMANDS:
            # `--help`, `--version` or a usage error, each of which exits, or a command
            # after `--`: the command's own arguments are left to its parser.
            parsed, rest = _root_parser().parse_known_args(arguments)
            arguments = [parsed.command, *rest]
        command = _command(arguments[0])
        parser = command.parser()
        values = vars(parser.parse_args(arguments[1:]))
        try:
            status = command.run(**values)
        except UsageError as error:
            parser.error(str(error))
        except Exception:
            # What the interpreter would print and exit with, but through the escaping
            # stream: an unexpected error's message may quote a trace.
            import traceback

            traceback.print_exc()
            sys.exit(1)
        sys.exit(status)
