"""The `toolreplay` command line (argparse). Imported only by the CLI entry points."""

from toolreplay.cli.app import main

__all__ = ["main"]
