"""`toolreplay diff SOURCE TARGET`: the first observable difference between two traces."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Annotated

import typer

from toolreplay.cli.command import FormatOption
from toolreplay.cli.output import Output, OutputFormat, error_fields
from toolreplay.cli.traces import is_url, trace_file
from toolreplay.comparison import diff as diff_traces
from toolreplay.errors import DiffError, ObjectStoreError, TraceError

__all__ = ["diff"]


def diff(
    source: Annotated[
        str,
        typer.Argument(metavar="SOURCE", help="The reference trace (a file, or its URL)."),
    ],
    target: Annotated[
        str, typer.Argument(metavar="TARGET", help="The trace to compare (a file, or its URL).")
    ],
    output_format: FormatOption = OutputFormat.text,
    fail_on_difference: Annotated[
        bool,
        typer.Option("--fail-on-difference", help="Exit 1 when the traces differ at all."),
    ] = False,
) -> int:
    """Exit 0 whether or not they differ (1 with --fail-on-difference), 2 when
    they cannot be compared (or a URL cannot be fetched).
    """
    try:
        report = diff_traces(trace_file(source), trace_file(target))
    except (TraceError, DiffError, ObjectStoreError) as error:
        Output.error(str(error), (*error_fields(error), source, target))
        return 2
    # A URL is named as given, not by its copy in the cache.
    if is_url(source):
        report = replace(report, source_label=source)
    if is_url(target):
        report = replace(report, target_label=target)
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(report.render_text())
    return 1 if fail_on_difference and not report.identical else 0
