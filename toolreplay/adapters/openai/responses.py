"""The response codec: what a recorded `responses.create` holds, and the `Response` it rebuilds.

The envelope keeps the body exactly as the API sent it (every top-level field,
integers as integers) plus the request id, and nothing from the HTTP exchange
besides: no headers, no URL, no credentials. Rebuilding validates the body
against the SDK's own `Response` model, so a hand-edited envelope fails with a
precise error instead of producing a half-valid object.

The interpreted unions stay closed: output items `reasoning` and `message`, and
message content `output_text` and `refusal`. Any other type is refused by name,
when recording and when replaying, rather than passed on uninterpreted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pydantic
from openai.types.responses import Response

from toolreplay.adapters.openai.compat import sdk_response_body
from toolreplay.errors import UnsupportedResponseError
from toolreplay.portable import JsonValue, format_path

__all__ = [
    "ENVELOPE",
    "ENVELOPE_VERSION",
    "SUPPORTED_CONTENT_TYPES",
    "SUPPORTED_OUTPUT_TYPES",
    "check_closed_unions",
    "rebuild_response",
    "response_envelope",
    "validation_path",
]

ENVELOPE = "openai.response"
ENVELOPE_VERSION = 1
SUPPORTED_OUTPUT_TYPES = ("reasoning", "message")
SUPPORTED_CONTENT_TYPES = ("output_text", "refusal")


def response_envelope(body: object, request_id: str | None) -> dict[str, JsonValue]:
    """The recordable form of a response body as received.

    Nothing is judged here: the call is recorded as it happened, and
    `rebuild_response` refuses what it cannot interpret, identically when
    recording and when replaying.
    """
    return {
        "envelope": ENVELOPE,
        "version": ENVELOPE_VERSION,
        "body": cast(JsonValue, body),
        "request_id": request_id,
    }


def _type_of(item: JsonValue, path: str) -> str:
    kind = item.get("type") if isinstance(item, dict) else None
    if not isinstance(kind, str):
        raise UnsupportedResponseError(f"{path}: an item without a string type")
    return kind


def check_closed_unions(body: dict[str, JsonValue]) -> None:
    """Refuse output items and message content the adapter does not interpret."""
    output = body.get("output", [])
    if not isinstance(output, list):
        raise UnsupportedResponseError("$.output: must be a list")
    for index, item in enumerate(output):
        kind = _type_of(item, f"$.output[{index}]")
        if kind not in SUPPORTED_OUTPUT_TYPES:
            raise UnsupportedResponseError(
                f'$.output[{index}].type: "{kind}" is not supported; the adapter interprets '
                f"output items of type {' and '.join(SUPPORTED_OUTPUT_TYPES)} only"
            )
        if kind != "message":
            continue
        content = cast(dict[str, JsonValue], item).get("content", [])
        if not isinstance(content, list):
            raise UnsupportedResponseError(f"$.output[{index}].content: must be a list")
        for position, part in enumerate(content):
            part_kind = _type_of(part, f"$.output[{index}].content[{position}]")
            if part_kind not in SUPPORTED_CONTENT_TYPES:
                raise UnsupportedResponseError(
                    f'$.output[{index}].content[{position}].type: "{part_kind}" is not '
                    f"supported; message content may be "
                    f"{' or '.join(SUPPORTED_CONTENT_TYPES)} only"
                )


# Parts of a pydantic location that name a schema, not a place in the body: the union
# member tried (`ResponseOutputMessage`) or a core schema (`str`, `list[...]`, `literal[...]`).
_SCHEMA_TAGS = frozenset({"str", "int", "float", "bool", "none", "list", "dict"})


def validation_path(location: Sequence[int | str]) -> str:
    """A pydantic error location as the project's JSON path: `$.output[1].content[0].text`.

    Integers become indexes; the union tags pydantic inserts (class names, which
    start with an uppercase letter, and core schema names) are dropped.
    """
    segments: list[str | int] = [
        part
        for part in location
        if isinstance(part, int) or not (part[:1].isupper() or "[" in part or part in _SCHEMA_TAGS)
    ]
    return format_path(segments)


def rebuild_response(envelope: JsonValue) -> Response:
    """The SDK `Response` an envelope describes (the request id set as the SDK sets it)."""
    if (
        not isinstance(envelope, dict)
        or envelope.get("envelope") != ENVELOPE
        or envelope.get("version") != ENVELOPE_VERSION
    ):
        raise UnsupportedResponseError(
            f"not an {ENVELOPE} envelope of version {ENVELOPE_VERSION}; was this operation "
            "recorded by the Tool Replay OpenAI adapter?"
        )
    body = envelope.get("body")
    if not isinstance(body, dict):
        raise UnsupportedResponseError(
            f"the Responses API answered with {type(body).__name__}, not a JSON object"
        )
    check_closed_unions(body)
    try:
        response = Response.model_validate(sdk_response_body(body))
    except pydantic.ValidationError as error:
        first: Any = error.errors()[0]
        raise UnsupportedResponseError(
            f"the recorded body is not a valid openai 2.20.0 Response: "
            f"{validation_path(first['loc'])}: {first['msg']}. Re-record the call, or fix the "
            "envelope to match openai 2.20.0's Response"
        ) from None
    request_id = envelope.get("request_id")
    response._request_id = request_id if isinstance(request_id, str) else None  # pyright: ignore[reportPrivateUsage]  # the SDK's documented request-id attribute
    return response
