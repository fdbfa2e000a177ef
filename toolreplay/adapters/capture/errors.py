"""Transport failures as recorded failures: `httpx.<Class>`, raised again on replay.

A timeout, a refused connection or a body the server cut is recorded as the
failure `httpx.<Class>` (the class name is the same in `httpx` and `httpx2`),
whose envelope holds the class, the message (with the request's URL and host
replaced by `<url>`) and, for a body cut midway, the output received before the
cut. Replay raises the same class of the replaying client's own HTTP library, after
serving that partial body, so the SDK above it raises what it raised live.

Each profile names its envelope (`openai.transport_error`); the codec accepts the
envelopes of the profiles registered in the process.
"""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any, cast

from toolreplay.errors import UnsupportedResponseError
from toolreplay.failures import register_failure_codec
from toolreplay.portable import JsonValue, encodable_text

__all__ = [
    "TRANSPORT_ERRORS",
    "RecordedTransportError",
    "library_error",
    "register_transport_error_envelope",
    "transport_error",
]

TRANSPORT_ERRORS = (
    "ConnectTimeout",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "TimeoutException",
    "ConnectError",
    "ReadError",
    "WriteError",
    "CloseError",
    "NetworkError",
    "RemoteProtocolError",
    "LocalProtocolError",
    "ProtocolError",
    "ProxyError",
    "UnsupportedProtocol",
    "TransportError",
)
"""The HTTP library's transport errors a recording keeps by class (most specific first)."""

_VERSION = 1
_ENVELOPES: set[str] = set()
_LOCK = threading.Lock()


def register_transport_error_envelope(envelope: str) -> None:
    """Accept recorded transport failures in `envelope` (a profile's, on registration)."""
    with _LOCK:
        _ENVELOPES.add(envelope)


class RecordedTransportError(Exception):
    """A transport error as recorded: the library's class name, its message, the
    response received before it (a stream cut midway), if any, and the envelope its
    profile records it in.

    Raised by replay inside the transport, which turns it back into the HTTP
    library's own exception; applications never see it.
    """

    def __init__(
        self, kind: str, message: str, partial: dict[str, JsonValue] | None, envelope: str
    ) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.partial = partial
        self.envelope = envelope


class _TransportErrorCodec:
    """Records `RecordedTransportError` as `httpx.<Class>` and rebuilds it on replay."""

    def error_type(self, error: Exception) -> str | None:
        if isinstance(error, RecordedTransportError):
            return f"httpx.{error.kind}"
        return None

    def capture(self, error: Exception) -> JsonValue:
        assert isinstance(error, RecordedTransportError)
        return {
            "envelope": error.envelope,
            "version": _VERSION,
            "kind": error.kind,
            "message": error.message,
            "response": error.partial,
        }

    def rebuild(self, error_type: str, envelope: JsonValue) -> Exception:
        kind = error_type.removeprefix("httpx.")
        name = envelope.get("envelope") if isinstance(envelope, dict) else None
        if (
            not isinstance(envelope, dict)
            or name not in _ENVELOPES
            or envelope.get("version") != _VERSION
            or envelope.get("kind") != kind
            or kind not in TRANSPORT_ERRORS
        ):
            known = " or ".join(sorted(_ENVELOPES)) or "transport_error"
            raise UnsupportedResponseError(
                f"{error_type}: the recorded failure is not a {known} envelope of "
                f"version {_VERSION} for {kind!r}; re-record the call"
            )
        assert isinstance(name, str)
        message = envelope.get("message")
        partial = envelope.get("response")
        return RecordedTransportError(
            kind,
            message if isinstance(message, str) else "",
            cast(dict[str, JsonValue], partial) if isinstance(partial, dict) else None,
            name,
        )


register_failure_codec(_TransportErrorCodec(), tuple(f"httpx.{kind}" for kind in TRANSPORT_ERRORS))


def transport_error(
    library: ModuleType,
    error: Exception,
    request: Any,
    partial: dict[str, JsonValue] | None,
    envelope: str,
) -> Exception:
    """What to record for `error`: a `RecordedTransportError`, or `error` itself (an
    exception that is not the library's transport error, recorded as RFC 0001 §6 says)."""
    if not isinstance(error, library.TransportError):
        return error
    kind = next(
        (kind.__name__ for kind in type(error).__mro__ if kind.__name__ in TRANSPORT_ERRORS),
        "TransportError",
    )
    message = encodable_text(str(error))
    url = request.url
    for secret in (str(url), url.netloc.decode("ascii", "replace"), url.host):
        if secret:
            message = message.replace(secret, "<url>")
    return RecordedTransportError(kind, message, partial, envelope)


def library_error(library: ModuleType, recorded: RecordedTransportError, request: Any) -> Any:
    """The HTTP library's own exception for a recorded transport failure."""
    return getattr(library, recorded.kind)(recorded.message, request=request)
