"""Converting traces written by an earlier adapter into today's shape: `toolreplay migrate`.

Two migrations exist. First, the first OpenAI adapter recorded `responses.create`
alone, as the effect `openai.responses.create` with the inputs `model`,
`input`, `reasoning` and `max_output_tokens` and an `openai.response` envelope
(version 1) as output, or an `openai.error` envelope as failure. Today's adapter
records every HTTP request (RFC 0006), so such an operation becomes the request
the SDK sent for it (`POST /responses` with those fields as the JSON body) and
the response it received (status, request id, body). Provider errors with a
status become the error response; timeouts and connection errors become the
transport failures the SDK maps to the same exceptions.

Second, the adapter recorded a file upload's digest as hex (`sha256`); it now
records base64 (`sha256_base64`), because the secret scan can read a run of a hex
digest's decimal digits as a card number. The digest of the same bytes is
re-encoded, so the upload matches again.

Pure JSON work: it needs no SDK. The source is never modified; the result is
written to a temporary sibling of the output and renamed into place.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

from toolreplay.errors import TraceError, TraceFormatError
from toolreplay.portable import JsonValue, fingerprint
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Outcome,
    Raised,
    Returned,
    operation_location,
)
from toolreplay.trace.reader import read_trace
from toolreplay.trace.writer import check_copy_path, write_whole_trace

__all__ = ["MigratedTrace", "migrate_trace"]

_LEGACY_FIELDS = ("model", "input", "reasoning", "max_output_tokens")
# The order openai 2.20.0 wrote these fields into the request body.
_BODY_ORDER = ("input", "max_output_tokens", "model", "reasoning")
_JSON = "application/json"


@dataclass(frozen=True, slots=True)
class MigratedTrace:
    """What `migrate_trace` wrote: where, and how many operations it converted."""

    path: Path
    converted: int
    operations: int


def _is_legacy(operation: Operation) -> bool:
    return (
        operation.identity.namespace == "openai"
        and operation.identity.name == "responses.create"
        and "method" not in operation.inputs
    )


def _upload_digest(source: Path, operation: Operation) -> dict[str, JsonValue] | None:
    """The inputs of an upload recorded with a hex digest, with a base64 one instead (None:
    not such an upload)."""
    inputs = operation.inputs
    digest = inputs.get("body_digest")
    if operation.identity.namespace != "openai" or not isinstance(digest, dict):
        return None
    hex_digest = digest.get("sha256")
    if hex_digest is None:
        return None
    try:
        raw = bytes.fromhex(hex_digest) if isinstance(hex_digest, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != 32:  # the size of a SHA-256 digest
        raise _problem(source, operation, f"has body_digest.sha256 {hex_digest!r}")
    converted = {key: value for key, value in digest.items() if key != "sha256"}
    converted["sha256_base64"] = base64.b64encode(raw).decode()
    return {**inputs, "body_digest": converted}


def _problem(source: Path, operation: Operation, what: str) -> TraceFormatError:
    return TraceFormatError(
        f"{operation_location(operation)} ({operation.effect}) {what}; it is not what the "
        "first OpenAI adapter recorded, so it cannot be migrated. Re-record the call",
        path=source,
        line=operation.line,
    )


def _request(source: Path, operation: Operation) -> dict[str, JsonValue]:
    inputs = operation.inputs
    if set(inputs) != set(_LEGACY_FIELDS):
        raise _problem(source, operation, f"has the inputs {sorted(inputs)}")
    body: dict[str, JsonValue] = {
        field: inputs[field] for field in _BODY_ORDER if inputs[field] is not None
    }
    return {"method": "POST", "path": "/responses", "query": {}, "body": body}


def _headers(request_id: JsonValue) -> dict[str, JsonValue]:
    headers: dict[str, JsonValue] = {"content-type": _JSON}
    if isinstance(request_id, str):
        headers["x-request-id"] = request_id
    return headers


def _outcome(source: Path, operation: Operation) -> Outcome:
    outcome = operation.outcome
    if isinstance(outcome, Returned):
        envelope = outcome.value
        if (
            not isinstance(envelope, dict)
            or envelope.get("envelope") != "openai.response"
            or envelope.get("version") != 1
            or not isinstance(envelope.get("body"), dict)
        ):
            raise _problem(source, operation, "returned something other than a v1 envelope")
        return Returned(
            {
                "status": 200,
                "headers": _headers(envelope.get("request_id")),
                "body": envelope["body"],
                "end": "complete",
            }
        )
    error = outcome.args[0] if outcome.args is not None and len(outcome.args) == 1 else None
    if not isinstance(error, dict) or error.get("envelope") != "openai.error":
        raise _problem(source, operation, f"raised {outcome.error_type} without an error envelope")
    kind = error.get("class")
    message = error.get("message")
    if kind == "APITimeoutError":
        return _transport_failure("TimeoutException", "timed out")
    if kind == "APIConnectionError":
        return _transport_failure("ConnectError", message if isinstance(message, str) else "")
    status = error.get("status_code")
    if type(status) is not int:
        raise _problem(source, operation, f"raised {kind!r} without a status code")
    body = error.get("body")
    # The SDK keeps the `error` member of an error response as `body`; the response had it
    # under "error".
    return Returned(
        {
            "status": status,
            "headers": _headers(error.get("request_id")),
            "body": {"error": body} if isinstance(body, dict) else body,
            "end": "complete",
        }
    )


def _transport_failure(kind: str, message: str) -> Raised:
    envelope: dict[str, JsonValue] = {
        "envelope": "openai.transport_error",
        "version": 1,
        "kind": kind,
        "message": message,
        "response": None,
    }
    return Raised(error_type=f"httpx.{kind}", message=f"{kind}: {message}", args=[envelope])


def migrate_trace(
    source: str | os.PathLike[str], output: str | os.PathLike[str], *, overwrite: bool = False
) -> MigratedTrace:
    """Write `source` to `output` with every operation of an earlier adapter converted.

    Raises `TraceError` when `source` holds nothing to convert or is incomplete
    (a migrated trace must not claim a completeness the source lacks),
    `TraceFormatError` naming the operation when one cannot be converted, and
    `TraceExistsError` when `output` exists and `overwrite` is false, and
    `TraceError` when it cannot be written. Nothing is written unless every
    operation converts.
    """
    source_path, output_path = Path(source), Path(output)
    check_copy_path(source_path, output_path, operation="a migration", copy="the migrated copy")
    trace = read_trace(source_path)
    if trace.footer is None:
        raise TraceError(
            f"{source_path}: {trace.describe_state()}; only a complete trace can be migrated "
            "(replay or fork it with the adapter it was recorded with instead)",
            path=source_path,
        )
    converted = 0
    kinds: set[str] = set()
    occurrences: dict[tuple[str, str, str], int] = {}
    operations: list[Operation] = []
    for operation in trace.operations:
        inputs, outcome = operation.inputs, operation.outcome
        if _is_legacy(operation):
            inputs = _request(source_path, operation)
            outcome = _outcome(source_path, operation)
            kinds.add("openai adapter 1 to 2")
            converted += 1
        elif (upload := _upload_digest(source_path, operation)) is not None:
            inputs = upload
            kinds.add("upload digests hex to base64")
            converted += 1
        identity = operation.identity
        digest = fingerprint(cast(JsonValue, inputs))
        key = (identity.namespace, identity.name, digest)
        occurrence = occurrences.get(key, 0)
        occurrences[key] = occurrence + 1
        operations.append(
            replace(
                operation,
                identity=OperationIdentity(identity.namespace, identity.name, digest, occurrence),
                inputs=inputs,
                outcome=outcome,
                line=None,
            )
        )
    if converted == 0:
        raise TraceError(
            f"{source_path}: no operation was recorded by an earlier adapter; there is nothing "
            "to migrate, and the trace replays as it is",
            path=source_path,
        )
    metadata = {**trace.header.metadata, "migrated": ", ".join(sorted(kinds))}
    write_whole_trace(
        output_path,
        replace(trace.header, metadata=metadata),
        operations,
        trace.footer.ending,
        overwrite=overwrite,
        what="migrated trace",
    )
    return MigratedTrace(output_path, converted, len(operations))
