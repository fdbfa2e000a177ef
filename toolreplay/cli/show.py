"""`toolreplay show TRACE`: what a trace holds, for people (text) and programs (json)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from toolreplay.cli.command import FormatOption
from toolreplay.cli.output import Output, OutputFormat, error_fields
from toolreplay.cli.traces import is_url, trace_file
from toolreplay.errors import ObjectStoreError, TraceError
from toolreplay.portable import preview
from toolreplay.summaries import fit_to_width, summarize_call
from toolreplay.trace.codec import operation_to_dict
from toolreplay.trace.model import TRACE_FORMAT, Operation, Raised
from toolreplay.trace.reader import Trace, read_trace

__all__ = ["SHOW_FORMAT_VERSION", "show", "trace_summary"]

SHOW_FORMAT_VERSION = 1
_DEFAULT_TEXT_LIMIT = 50
_PREVIEW = 60


def trace_summary(
    trace: Trace, *, limit: int | None = None, shown_as: str | None = None
) -> dict[str, Any]:
    """The `--format json` document: header, completeness and operations.

    `shown_as` is what `path` says instead of the file read (a trace's URL).
    """
    footer = trace.footer
    operations = trace.operations if limit is None else trace.operations[:limit]
    return {
        "format_version": SHOW_FORMAT_VERSION,
        "path": str(trace.path) if shown_as is None else shown_as,
        "trace_format": TRACE_FORMAT,
        "trace_format_version": trace.header.format_version,
        "trace_id": trace.header.trace_id,
        "mode": trace.header.mode,
        "library_version": trace.header.library_version,
        "source_trace_id": trace.header.source_trace_id,
        "metadata": trace.header.metadata,
        "complete": trace.complete,
        "torn_line": trace.torn_line,
        "ending": None
        if footer is None
        else {
            "status": footer.ending.status,
            "error_type": footer.ending.error_type,
            "message": footer.ending.message,
        },
        "operation_count": len(trace),
        "operations": [
            {**{k: v for k, v in operation_to_dict(op).items() if k != "kind"}, "line": op.line}
            for op in operations
        ],
    }


def _result(operation: Operation) -> str:
    outcome = operation.outcome
    if isinstance(outcome, Raised):
        return f"{outcome.error_type}: {outcome.message}"[:_PREVIEW]
    return preview(outcome.value, _PREVIEW, compact=True)


def _columns(operation: Operation) -> tuple[str, str]:
    """The inputs and result columns: a model call by its last message and its answer
    (`summarize_call`), any other call by its inputs and outcome as JSON."""
    summary = summarize_call(operation.effect, operation.inputs, operation.outcome)
    if summary is None:
        return preview(operation.inputs, _PREVIEW, compact=True), _result(operation)
    return fit_to_width(summary.asked, _PREVIEW), fit_to_width(summary.answered, _PREVIEW)


def _state(trace: Trace) -> str:
    footer = trace.footer
    if footer is None:
        return trace.describe_state()
    ending = footer.ending
    if ending.status == "completed":
        return f"{trace.describe_state()}; the session completed"
    return f"{trace.describe_state()}; the session raised {ending.error_type}: {ending.message}"


def show(
    trace_path: Annotated[
        str,
        typer.Argument(
            metavar="TRACE",
            help="A .trp trace file, or the URL of one (s3://, gs://, az://, file://).",
        ),
    ],
    output_format: FormatOption = OutputFormat.text,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=0,
            metavar="N",
            help=f"Operations to list (text default {_DEFAULT_TEXT_LIMIT}, json default all; "
            "0 = all).",
        ),
    ] = None,
) -> int:
    """Exit 0 when the trace was read (complete or not), 2 when it cannot be read
    (missing, malformed, or of an unsupported format version; for a URL, also not
    found, refused, unreachable, or not matching its footer digest), as every command.
    """
    out = Output()
    # A URL is shown as given; the copy read is in the cache.
    shown_as = trace_path if is_url(trace_path) else None
    try:
        trace = read_trace(trace_file(trace_path))
    except (TraceError, ObjectStoreError) as error:
        out.error(str(error), (*error_fields(error), trace_path))
        return 2
    if limit == 0:
        limit = None
    elif limit is None and output_format is OutputFormat.text:
        limit = _DEFAULT_TEXT_LIMIT

    if output_format is OutputFormat.json:
        print(
            json.dumps(
                trace_summary(trace, limit=limit, shown_as=shown_as), ensure_ascii=False, indent=2
            )
        )
        return 0

    header = trace.header
    out.fields(
        [
            ("trace", shown_as or str(trace.path)),
            (
                "format",
                f"{TRACE_FORMAT} v{header.format_version}, written by toolreplay "
                f"{header.library_version}",
            ),
            ("trace id", header.trace_id),
            ("mode", header.mode),
            ("runner", header.runner or "(not recorded)"),
            ("state", _state(trace)),
        ]
    )
    shown = trace.operations if limit is None else trace.operations[:limit]
    if not shown:
        return 0
    out.line()
    out.table(
        ["#", "effect", "occ", "status", "origin", "inputs", "result"],
        [
            [
                str(op.logical_id),
                op.effect,
                str(op.identity.occurrence),
                op.outcome.status,
                op.origin,
                *_columns(op),
            ]
            for op in shown
        ],
    )
    hidden = len(trace) - len(shown)
    if hidden:
        out.line(f"... {hidden} more operations (--limit 0 lists all)")
    return 0
