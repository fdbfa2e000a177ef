"""Trace format v4 (v3 read too): the operation model, its codec, the reader and the writer."""

from toolreplay.trace.model import (
    TRACE_FORMAT,
    TRACE_FORMAT_VERSION,
    Operation,
    OperationIdentity,
    Origin,
    Outcome,
    Raised,
    Returned,
    SessionEnding,
    TraceFooter,
    TraceHeader,
    TraceMode,
)
from toolreplay.trace.reader import Trace, parse_trace, read_trace
from toolreplay.trace.writer import TraceWriter

__all__ = [
    "TRACE_FORMAT",
    "TRACE_FORMAT_VERSION",
    "Operation",
    "OperationIdentity",
    "Origin",
    "Outcome",
    "Raised",
    "Returned",
    "SessionEnding",
    "Trace",
    "TraceFooter",
    "TraceHeader",
    "TraceMode",
    "TraceWriter",
    "parse_trace",
    "read_trace",
]
