"""`toolreplay migrate TRACE --output NEW`: a trace of an earlier adapter in today's shape."""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from pathlib import Path

from toolreplay.cli.command import Command
from toolreplay.cli.output import Output, OutputFormat, add_format_option, error_fields
from toolreplay.errors import TraceError
from toolreplay.migrate import migrate_trace

__all__ = ["COMMANDS", "MIGRATE", "migrate"]


def _add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("source", type=Path, metavar="TRACE", help="The trace to convert.")
    parser.add_argument(
        "--output",
        "-o",
        type=Path,
        required=True,
        metavar="PATH",
        help="Where to write the converted trace.",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="Replace an existing file at --output."
    )
    add_format_option(parser)


def migrate(source: Path, output: Path, overwrite: bool, output_format: OutputFormat) -> int:
    """Run `toolreplay migrate` (`MIGRATE`); return the exit status."""
    try:
        migrated = migrate_trace(source, output, overwrite=overwrite)
    except TraceError as error:
        Output.error(str(error), (*error_fields(error), source, output))
        return 2
    if output_format is OutputFormat.json:
        document = {
            "output": str(migrated.path),
            "converted": migrated.converted,
            "operations": migrated.operations,
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write(
            f"converted {migrated.converted} of {migrated.operations} operations; "
            f"wrote {migrated.path}\n"
        )
    return 0


MIGRATE = Command(
    name="migrate",
    summary="Convert a trace an earlier adapter recorded into what today's adapter records.",
    description="""
        Converts the operations of the first OpenAI adapter (`openai.responses.create`)
        into a new trace. The source is never changed. Exit 0 when the new trace was
        written, 2 when nothing could be converted or written.
    """,
    add_arguments=_add_arguments,
    run=migrate,
)
COMMANDS = (MIGRATE,)
