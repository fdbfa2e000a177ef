"""The command tree. Each command lives in its own module; this one only wires them."""

from __future__ import annotations

from typing import Annotated

import typer

from toolreplay._version import __version__
from toolreplay.cli.cases import promote, verify
from toolreplay.cli.diff import diff
from toolreplay.cli.find import find
from toolreplay.cli.migrate import migrate
from toolreplay.cli.privacy import redact, scan
from toolreplay.cli.run import fork, record, replay
from toolreplay.cli.show import show
from toolreplay.cli.tui import tui

app = typer.Typer(
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


app.command(name="show")(show)
app.command(name="record")(record)
app.command(name="replay")(replay)
app.command(name="fork")(fork)
app.command(name="diff")(diff)
app.command(name="promote")(promote)
app.command(name="verify")(verify)
app.command(name="tui")(tui)
app.command(name="migrate")(migrate)
app.command(name="find")(find)
app.command(name="scan")(scan)
app.command(name="redact")(redact)


def main() -> None:
    """Entry point of the `toolreplay` script and of `python -m toolreplay`."""
    app()
