"""The `toolreplay` command line (Typer). Imported only by the CLI entry points."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run `toolreplay ARGV` (by default `sys.argv[1:]`) and exit with its status.

    The entry point of the `toolreplay` script, of `python -m toolreplay` and of the
    warm runner's forked runs (`toolreplay.cli.app.run` does the work).
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--version"]:
        # One line, without importing Typer and the command tree for it (about 60 ms).
        from toolreplay._version import __version__

        sys.stdout.write(f"toolreplay {__version__}\n")
        sys.exit(0)
    from toolreplay.cli.app import run

    sys.exit(run(arguments))
