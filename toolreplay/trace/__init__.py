"""Trace format v5 (v3 and v4 read too): the operation model, its codec, the reader and the
writer of `.trp` files."""

from toolreplay.trace.model import (
    READABLE_FORMAT_VERSIONS,
    TRACE_FORMAT,
    TRACE_FORMAT_VERSION,
    AttemptedCall,
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
    UnobservedOperation,
)
from toolreplay.trace.reader import Trace, TraceLines, check_digest, parse_trace, read_trace
from toolreplay.trace.writer import TraceWriter

__all__ = [
    "READABLE_FORMAT_VERSIONS",
    "TRACE_FORMAT",
    "TRACE_FORMAT_VERSION",
    "AttemptedCall",
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
    "TraceLines",
    "TraceMode",
    "TraceWriter",
    "UnobservedOperation",
    "check_digest",
    "parse_trace",
    "read_trace",
]
