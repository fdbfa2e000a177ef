"""Provider errors: recorded as envelopes, rebuilt offline as the same SDK exception.

Supported: `APIStatusError` and its status subclasses, `APITimeoutError` and
`APIConnectionError`. An envelope keeps the class, status code, message, error
body and request id, nothing of the HTTP exchange besides. Rebuilding needs an
`httpx.Request` (and, for a status error, an `httpx.Response`): they are
synthetic, made here with a fixed placeholder URL, and no transport ever sees
them.
"""

from __future__ import annotations

from typing import cast

import httpx
import openai

from toolreplay.errors import NonPortableValueError, UnsupportedResponseError
from toolreplay.portable import JsonValue, encodable_text, ensure_portable
from toolreplay.runtime.failures import register_failure_codec

__all__ = ["STATUS_ERRORS", "OpenAIErrorCodec"]

ENVELOPE = "openai.error"
ENVELOPE_VERSION = 1
_PLACEHOLDER_URL = "https://api.openai.invalid/v1/responses"

STATUS_ERRORS: dict[str, type[openai.APIStatusError]] = {
    kind.__name__: kind
    for kind in (
        openai.BadRequestError,
        openai.AuthenticationError,
        openai.PermissionDeniedError,
        openai.NotFoundError,
        openai.ConflictError,
        openai.UnprocessableEntityError,
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APIStatusError,
    )
}
_CONNECTION_ERRORS: dict[str, type[openai.APIConnectionError]] = {
    "APITimeoutError": openai.APITimeoutError,
    "APIConnectionError": openai.APIConnectionError,
}


_STATUS_CLASSES: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


def _status_class(status: int) -> type[openai.APIStatusError]:
    """The class the SDK raises for `status` (as its client maps it)."""
    if status >= 500:
        return openai.InternalServerError
    return _STATUS_CLASSES.get(status, openai.APIStatusError)


def _synthetic_request() -> httpx.Request:
    return httpx.Request("POST", _PLACEHOLDER_URL)


class OpenAIErrorCodec:
    """The `FailureCodec` for the SDK's provider errors (stable names `openai.<Class>`)."""

    def error_type(self, error: Exception) -> str | None:
        name = type(error).__name__
        if type(error) in (*STATUS_ERRORS.values(), *_CONNECTION_ERRORS.values()):
            return f"openai.{name}"
        return None

    def capture(self, error: Exception) -> JsonValue:
        envelope: dict[str, JsonValue] = {
            "envelope": ENVELOPE,
            "version": ENVELOPE_VERSION,
            "class": type(error).__name__,
            "message": encodable_text(str(getattr(error, "message", error))),
        }
        if isinstance(error, openai.APIStatusError):
            try:
                body = ensure_portable(error.body)
            except NonPortableValueError:
                body = encodable_text(repr(error.body))
            envelope.update(status_code=error.status_code, body=body, request_id=error.request_id)
        return envelope

    def rebuild(self, error_type: str, envelope: JsonValue) -> Exception:
        if (
            not isinstance(envelope, dict)
            or envelope.get("envelope") != ENVELOPE
            or envelope.get("version") != ENVELOPE_VERSION
        ):
            raise UnsupportedResponseError(
                f"{error_type}: not an {ENVELOPE} envelope of version {ENVELOPE_VERSION}"
            )
        name = envelope.get("class")
        if error_type != f"openai.{name}":
            raise UnsupportedResponseError(
                f"{error_type}: the envelope describes {name!r}; the trace was edited"
            )
        message = str(envelope.get("message", ""))
        if name in _CONNECTION_ERRORS:
            if name == "APITimeoutError":
                return openai.APITimeoutError(request=_synthetic_request())
            return openai.APIConnectionError(message=message, request=_synthetic_request())
        kind = STATUS_ERRORS.get(str(name))
        status = envelope.get("status_code")
        if kind is None or not isinstance(status, int) or _status_class(status) is not kind:
            raise UnsupportedResponseError(
                f"{error_type}: the envelope names {name!r} with status {status!r}, which the "
                "adapter does not rebuild"
            )
        request_id = envelope.get("request_id")
        headers = {"x-request-id": request_id} if isinstance(request_id, str) else {}
        response = httpx.Response(status, request=_synthetic_request(), headers=headers)
        return kind(message, response=response, body=cast(object, envelope.get("body")))


CODEC = OpenAIErrorCodec()
register_failure_codec(
    CODEC,
    tuple(f"openai.{name}" for name in (*STATUS_ERRORS, *_CONNECTION_ERRORS)),
)
