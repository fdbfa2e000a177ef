"""The one codec between trace lines and the operation model (format v5; v3 and v4 are read
too).

Every line is one JSON object with a `kind` first: `header`, `operation` or
`footer`. Decoding is strict: unknown keys, wrong types and non-portable
numbers (`NaN`, `Infinity`, `1e400`) are errors, because a trace that is
trusted as a test fixture must mean exactly one thing.

Three steps, a module each: `encoding` (the model to a line's bytes), `lines` (a
line's bytes to a JSON object, refusing what is not portable) and `decoding` (an
object to the model, checking every key and type).
"""

from toolreplay.trace.codec.decoding import decode_footer, decode_header, decode_operation
from toolreplay.trace.codec.encoding import (
    encode_footer,
    encode_header,
    encode_operation,
    encode_operation_fields,
    encode_outcome,
    encode_raised,
    encode_returned,
    encode_value,
    operation_to_dict,
)
from toolreplay.trace.codec.lines import InvalidLine, parse_line, parse_lines, reads_strictly

__all__ = [
    "InvalidLine",
    "decode_footer",
    "decode_header",
    "decode_operation",
    "encode_footer",
    "encode_header",
    "encode_operation",
    "encode_operation_fields",
    "encode_outcome",
    "encode_raised",
    "encode_returned",
    "encode_value",
    "operation_to_dict",
    "parse_line",
    "parse_lines",
    "reads_strictly",
]
