"""The operation model as trace lines: one JSON object a line, keys in the schema's order."""

from __future__ import annotations

import json.encoder
from collections.abc import Callable
from typing import Any

from toolreplay.portable import JsonValue, compact_json_chunks
from toolreplay.trace.model import (
    TRACE_FORMAT,
    TRACE_FORMAT_VERSION,
    Operation,
    OperationIdentity,
    Outcome,
    Returned,
    TraceFooter,
    TraceHeader,
)

__all__ = [
    "encode_footer",
    "encode_header",
    "encode_operation",
    "encode_value",
    "operation_to_dict",
]


# Not canonical (key order is the schema's, for readability), but deterministic.
_encode_chunks = compact_json_chunks(sort_keys=False, allow_nan=False)
_string: Callable[[str], str] = (
    json.encoder.encode_basestring
)  # a JSON string, as _encode_chunks writes one


def _dump(obj: dict[str, Any]) -> bytes:
    return ("".join(_encode_chunks(obj, 0)) + "\n").encode("utf-8")


def encode_header(header: TraceHeader) -> bytes:
    return _dump(
        {
            "kind": "header",
            "format": TRACE_FORMAT,
            "format_version": TRACE_FORMAT_VERSION,
            "trace_id": header.trace_id,
            "mode": header.mode,
            "library_version": header.library_version,
            "source_trace_id": header.source_trace_id,
            "metadata": header.metadata,
        }
    )


def _encode_outcome(outcome: Outcome) -> dict[str, Any]:
    if isinstance(outcome, Returned):
        return {"status": "ok", "value": outcome.value}
    return {"status": "error", "error": outcome.to_dict()}


def encode_value(value: JsonValue) -> str:
    """A portable value as an operation line holds it (compact, keys in their order)."""
    return "".join(_encode_chunks(value, 0))


def encode_operation(operation: Operation, value_text: str | None = None) -> bytes:
    """The line of an operation: `_dump(operation_to_dict(operation))`, byte for byte.

    Written field by field, since every operation a recording keeps passes here and the
    encoder spends most of its time on the fields it could not know are plain; only the
    inputs and the outcome go through it. `value_text` is the returned value already
    encoded by `encode_value` (a recording scans that text for secrets first).
    """
    identity = operation.identity
    outcome = operation.outcome
    if isinstance(outcome, Returned):
        if value_text is None:
            value_text = "".join(_encode_chunks(outcome.value, 0))
        encoded_outcome = '{"status":"ok","value":' + value_text + "}"
    else:
        encoded_outcome = (
            '{"status":"error","error":' + "".join(_encode_chunks(outcome.to_dict(), 0)) + "}"
        )
    # The optional fields inline, not through a helper: a call each was a tenth of the cost.
    patch_id, source, lane = (
        operation.patch_id,
        operation.source_logical_operation_id,
        operation.lane,
    )
    start, end = operation.start_ns, operation.end_ns
    return (
        f'{{"kind":"operation","logical_id":{operation.logical_id:d},'
        f'"namespace":{_string(identity.namespace)},"name":{_string(identity.name)},'
        f'"fingerprint":{_string(identity.fingerprint)},"occurrence":{identity.occurrence:d},'
        f'"inputs":{"".join(_encode_chunks(operation.inputs, 0))},"outcome":{encoded_outcome},'
        f'"origin":{_string(operation.origin)},'
        f'"patch_id":{"null" if patch_id is None else _string(patch_id)},'
        f'"source_logical_operation_id":{"null" if source is None else f"{source:d}"},'
        f'"lane":{"null" if lane is None else _string(lane)},'
        f'"start_ns":{"null" if start is None else f"{start:d}"},'
        f'"end_ns":{"null" if end is None else f"{end:d}"}}}\n'
    ).encode()


def operation_to_dict(operation: Operation) -> dict[str, Any]:
    """The JSON object of an operation, exactly as its trace line holds it."""
    identity = operation.identity
    return {
        "kind": "operation",
        "logical_id": operation.logical_id,
        "namespace": identity.namespace,
        "name": identity.name,
        "fingerprint": identity.fingerprint,
        "occurrence": identity.occurrence,
        "inputs": operation.inputs,
        "outcome": _encode_outcome(operation.outcome),
        "origin": operation.origin,
        "patch_id": operation.patch_id,
        "source_logical_operation_id": operation.source_logical_operation_id,
        "lane": operation.lane,
        "start_ns": operation.start_ns,
        "end_ns": operation.end_ns,
    }


def _identity_fields(identity: OperationIdentity) -> dict[str, Any]:
    return {
        "namespace": identity.namespace,
        "name": identity.name,
        "fingerprint": identity.fingerprint,
        "occurrence": identity.occurrence,
    }


def encode_footer(footer: TraceFooter) -> bytes:
    ending = footer.ending
    attempted = footer.attempted
    return _dump(
        {
            "kind": "footer",
            "operation_count": footer.operation_count,
            "digest": footer.digest,
            "ending": {
                "status": ending.status,
                "error_type": ending.error_type,
                "message": ending.message,
            },
            "unobserved": [
                {
                    "source_logical_operation_id": item.source_logical_operation_id,
                    **_identity_fields(item.identity),
                }
                for item in footer.unobserved
            ],
            "attempted": None
            if attempted is None
            else {**_identity_fields(attempted.identity), "inputs": attempted.inputs},
        }
    )
