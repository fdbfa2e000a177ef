"""How the command line prints: rich on a terminal, plain text otherwise.

Plain text is the contract for logs, pipes and snapshots: no colour, no box
drawing, no wrapping at a guessed width. `NO_COLOR` is honoured on a terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Generator, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from toolreplay.cli.command import choice_of

if TYPE_CHECKING:
    from argparse import ArgumentParser

    from rich.console import Console

__all__ = ["Output", "OutputFormat", "add_format_option", "application_output_to_stderr"]


class OutputFormat(StrEnum):
    """`--format` of every command: text for people and logs, json for programs."""

    text = "text"
    json = "json"


def add_format_option(parser: ArgumentParser) -> None:
    """The `--format/-f` option (keyword `output_format`), declared once for every command."""
    parser.add_argument(
        "--format",
        "-f",
        dest="output_format",
        type=choice_of(OutputFormat),
        default=OutputFormat.text,
        metavar="{" + ",".join(OutputFormat) + "}",
        help="text for people and logs, json for programs (default: %(default)s).",
    )


class Output:
    """Writes a command's result to stdout and its errors to stderr."""

    def __init__(self) -> None:
        self.rich = sys.stdout.isatty()
        self._console: Console | None = None
        if self.rich:  # Rich only for a terminal: piped output starts faster without it
            from rich.console import Console

            self._console = Console(no_color="NO_COLOR" in os.environ, highlight=False)

    def line(self, text: str = "", *, style: str | None = None) -> None:
        if self._console is not None:
            self._console.print(text, style=style, markup=False)
        else:
            sys.stdout.write(text + "\n")

    def fields(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Aligned `label  value` lines."""
        width = max((len(label) for label, _ in pairs), default=0)
        for label, value in pairs:
            if self._console is not None:
                self._console.print(f"[bold]{label.ljust(width)}[/bold]  ", end="")
                self._console.print(value, markup=False)
            else:
                sys.stdout.write(f"{label.ljust(width)}  {value}\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        if self._console is not None:
            from rich.table import Table
            from rich.text import Text

            table = Table(*headers, box=None, header_style="bold", pad_edge=False)
            for row in rows:
                table.add_row(*(Text(cell) for cell in row))
            self._console.print(table)
            return
        widths = [len(header) for header in headers]
        for row in rows:
            for index, cell in enumerate(row):
                widths[index] = max(widths[index], len(cell))
        for row in (headers, *rows):
            cells = [cell.ljust(widths[index]) for index, cell in enumerate(row)]
            sys.stdout.write("  ".join(cells).rstrip() + "\n")

    @staticmethod
    def error(message: str) -> None:
        sys.stderr.write(f"error: {message}\n")


@contextlib.contextmanager
def application_output_to_stderr() -> Generator[None]:
    """Send everything written to stdout (fd 1 included) to stderr while the app runs."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
