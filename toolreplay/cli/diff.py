"""`toolreplay diff SOURCE TARGET`: the first observable difference between two traces."""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from pathlib import Path

from toolreplay.cli.command import Command
from toolreplay.cli.output import Output, OutputFormat, add_format_option, error_fields
from toolreplay.diff import diff as diff_traces
from toolreplay.errors import DiffError, TraceError

__all__ = ["COMMANDS", "DIFF", "diff"]


def _add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("source", type=Path, metavar="SOURCE", help="The reference trace.")
    parser.add_argument("target", type=Path, metavar="TARGET", help="The trace to compare.")
    add_format_option(parser)
    parser.add_argument(
        "--fail-on-difference",
        action="store_true",
        help="Exit 1 when the traces differ at all.",
    )


def diff(source: Path, target: Path, output_format: OutputFormat, fail_on_difference: bool) -> int:
    """Run `toolreplay diff` (`DIFF`); return the exit status."""
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


DIFF = Command(
    name="diff",
    summary="Compare two traces and show where they first differ, observably.",
    description="""
        Exit 0 whether or not they differ (1 with --fail-on-difference), 2 when
        they cannot be compared.
    """,
    add_arguments=_add_arguments,
    run=diff,
)
COMMANDS = (DIFF,)
