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
    Origin,
    Outcome,
    Raised,
    Returned,
    TraceFooter,
    TraceHeader,
)

__all__ = [
    "encode_footer",
    "encode_header",
    "encode_operation",
    "encode_operation_fields",
    "encode_outcome",
    "encode_raised",
    "encode_returned",
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

    `value_text` is the returned value already encoded by `encode_value` (a recording
    scans that text for secrets first).
    """
    return encode_operation_fields(
        operation.logical_id,
        operation.identity,
        "".join(_encode_chunks(operation.inputs, 0)),
        encode_outcome(operation.outcome, value_text),
        operation.origin,
        operation.patch_id,
        operation.source_logical_operation_id,
        operation.lane,
        operation.start_ns,
        operation.end_ns,
    )


def encode_operation_fields(
    logical_id: int,
    identity: OperationIdentity,
    inputs_text: str,
    outcome_text: str,
    origin: Origin,
    patch_id: str | None,
    source_logical_operation_id: int | None,
    lane: str | None,
    start_ns: int | None,
    end_ns: int | None,
) -> bytes:
    """The line of the operation with these fields, as `encode_operation` writes it:
    `inputs_text` from `encode_value`, `outcome_text` from `encode_outcome`,
    `encode_returned` or `encode_raised`.

    For the sessions, which write a call's line without building an `Operation` they
    would not keep: constructing one cost a tenth of recording a small call. The fields
    are written one by one: the JSON encoder spent most of its time on the fields it
    could not know are plain, so only the inputs and the outcome go through it (by the
    caller). The optional fields are inline, not through a helper: a call each was a
    tenth of the cost.
    """
    source = source_logical_operation_id
    return (
        f'{{"kind":"operation","logical_id":{logical_id:d},'
        f'"namespace":{_string(identity.namespace)},"name":{_string(identity.name)},'
        f'"fingerprint":{_string(identity.fingerprint)},"occurrence":{identity.occurrence:d},'
        f'"inputs":{inputs_text},"outcome":{outcome_text},'
        f'"origin":{_string(origin)},'
        f'"patch_id":{"null" if patch_id is None else _string(patch_id)},'
        f'"source_logical_operation_id":{"null" if source is None else f"{source:d}"},'
        f'"lane":{"null" if lane is None else _string(lane)},'
        f'"start_ns":{"null" if start_ns is None else f"{start_ns:d}"},'
        f'"end_ns":{"null" if end_ns is None else f"{end_ns:d}"}}}\n'
    ).encode()


def encode_outcome(outcome: Outcome, value_text: str | None = None) -> str:
    """An outcome as an operation line holds it (`value_text` as for `encode_operation`)."""
    if isinstance(outcome, Returned):
        return encode_returned(outcome.value, value_text)
    return encode_raised(outcome)


def encode_returned(value: JsonValue, value_text: str | None = None) -> str:
    """The outcome of a call that returned `value` (encoded already: `value_text`)."""
    if value_text is None:
        value_text = "".join(_encode_chunks(value, 0))
    return '{"status":"ok","value":' + value_text + "}"


def encode_raised(raised: Raised) -> str:
    """The outcome of a call that raised, as `raised` describes it."""
    return '{"status":"error","error":' + "".join(_encode_chunks(raised.to_dict(), 0)) + "}"


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
