"""The command tree. Each command lives in its own module; this one only names them."""

from __future__ import annotations

import functools
import importlib
from typing import Annotated

import typer

# Typer vendors click and names its types only there: the override must use them.
from typer import _click as click  # pyright: ignore[reportPrivateUsage]
from typer.core import TyperCommand, TyperGroup

from toolreplay._version import __version__
from toolreplay.cli.coercion import convert_without_pydantic

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
}


@functools.cache
def _command(name: str) -> click.Command | None:
    """The command `name`, built from its module's function once per process."""
    module = _COMMANDS.get(name)
    if module is None:
        return None
    function = getattr(importlib.import_module(module), name)
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    single.command(name=name, cls=_Command)(function)
    return typer.main.get_command(single)


def load_commands() -> None:
    """Build every command now: the warm runner pays for it once, before it forks runs."""
    for name in _COMMANDS:
        _command(name)


class _Command(TyperCommand):
    """A command whose options convert their values without pydantic (`coercion`)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)  # `--help` too, which is made on first use
        convert_without_pydantic(params)
        return params


class _LazyCommands(TyperGroup):
    """The command group: builds a command from its module when click asks for it."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        convert_without_pydantic(params)
        return params

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _command(cmd_name)


app = typer.Typer(
    cls=_LazyCommands,
    name="toolreplay",
    help="Record, replay, fork and compare what an AI application's effects did.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"toolreplay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Record, replay and inspect what an AI application's effects did."""


def main() -> None:
    """Entry point of the `toolreplay` script and of `python -m toolreplay`."""
    app()
