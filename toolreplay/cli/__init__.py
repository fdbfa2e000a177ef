"""The `toolreplay` command line (typer). Imported only by the CLI entry points."""

from toolreplay.cli.app import app, main

__all__ = ["app", "main"]
