"""The capture core: any HTTP API's requests as effects, whatever the provider.

Every provider adapter built on an `httpx`/`httpx2` client (`toolreplay.adapters.openai`,
`.anthropic`, `.google_genai`, `.http`) records and replays through this package: a capturing
transport wraps each of the client's transports (`transport.py`), turns a request
into inputs and a response into an output (`exchange.py`; streams as ordered events,
`sse.py`), hands a live body on as it arrives and records it when it ends
(`streams.py`), records a transport failure to raise it again (`errors.py`), sends a
fork's live calls with the network allowed, and never records a credential. What
differs between providers is a `ProviderProfile` (`profile.py`); RFC 0006 is the
contract.

Clients on other transports (aiohttp directly, rather than through an httpx client)
are not captured here: an adapter for one would give this core the same three things
an httpx transport does (the request's method, URL, headers and body; a response to
hand back whose body streams; the library's transport errors) by a transport class
of its own beside `CaptureTransport`, and reuse `exchange.py`, `streams.py` and
`errors.py` unchanged.
"""

from __future__ import annotations

from toolreplay.adapters.capture.errors import TRANSPORT_ERRORS, RecordedTransportError
from toolreplay.adapters.capture.exchange import (
    REDACTED,
    StreamEnd,
    is_secret_query_name,
    recorded_response,
    replayed_body,
    request_inputs,
)
from toolreplay.adapters.capture.profile import (
    CREDENTIAL_HEADERS,
    ProviderProfile,
    StreamFormat,
    is_credential_header,
)
from toolreplay.adapters.capture.sse import SSE
from toolreplay.adapters.capture.transport import (
    AsyncCaptureTransport,
    CaptureTransport,
    capturing_client,
    http_library,
    register_profile,
    replayed_operation,
)

__all__ = [
    "CREDENTIAL_HEADERS",
    "REDACTED",
    "SSE",
    "TRANSPORT_ERRORS",
    "AsyncCaptureTransport",
    "CaptureTransport",
    "ProviderProfile",
    "RecordedTransportError",
    "StreamEnd",
    "StreamFormat",
    "capturing_client",
    "http_library",
    "is_credential_header",
    "is_secret_query_name",
    "recorded_response",
    "register_profile",
    "replayed_body",
    "replayed_operation",
    "request_inputs",
]
