"""`toolreplay diff SOURCE TARGET`: the first observable difference between two traces."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.command import FormatOption
from toolreplay.cli.output import Output, OutputFormat, error_fields
from toolreplay.diff import diff as diff_traces
from toolreplay.errors import DiffError, TraceError

__all__ = ["diff"]


def diff(
    source: Annotated[Path, typer.Argument(metavar="SOURCE", help="The reference trace.")],
    target: Annotated[Path, typer.Argument(metavar="TARGET", help="The trace to compare.")],
    output_format: FormatOption = OutputFormat.text,
    fail_on_difference: Annotated[
        bool,
        typer.Option("--fail-on-difference", help="Exit 1 when the traces differ at all."),
    ] = False,
) -> int:
    """Exit 0 whether or not they differ (1 with --fail-on-difference), 2 when
    they cannot be compared.
    """
    try:
        report = diff_traces(source, target)
    except (TraceError, DiffError) as error:
        Output.error(str(error), (*error_fields(error), source, target))
        return 2
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(report.render_text())
    return 1 if fail_on_difference and not report.identical else 0
