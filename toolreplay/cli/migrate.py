"""`toolreplay migrate TRACE --output NEW`: a trace of an earlier adapter in today's shape."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.command import FormatOption
from toolreplay.cli.output import Output, OutputFormat, error_fields
from toolreplay.errors import TraceError
from toolreplay.migrate import migrate_trace

__all__ = ["migrate"]


def migrate(
    source: Annotated[Path, typer.Argument(metavar="TRACE", help="The trace to convert.")],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", metavar="PATH", help="Where to write the converted trace."),
    ],
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing file at --output.")
    ] = False,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """Converts the operations of the first OpenAI adapter (`openai.responses.create`)
    into a new trace. The source is never changed. Exit 0 when the new trace was
    written, 2 when nothing could be converted or written.
    """
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
