"""The operation model as trace lines: one JSON object a line, keys in the schema's order."""

from __future__ import annotations

import json
from typing import Any

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

__all__ = ["encode_footer", "encode_header", "encode_operation", "operation_to_dict"]


# Built once: json.dumps/json.loads with options build a new encoder/decoder per call.
# Not canonical (key order is the schema's, for readability), but deterministic.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _dump(obj: dict[str, Any]) -> bytes:
    return (_ENCODER.encode(obj) + "\n").encode("utf-8")


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


def encode_operation(operation: Operation) -> bytes:
    return _dump(operation_to_dict(operation))


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
