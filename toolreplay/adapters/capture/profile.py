"""What a provider adapter tells the capture core: a `ProviderProfile`.

The capture core (this package) records and replays every request an HTTP client
sends, whatever the API: it turns a request into inputs (method, path, query,
body), a response into an output (status, kept headers, the body as JSON, events,
text or base64), keeps credentials out, and serves a recorded output back. What
differs between providers is small, and a profile says it:

- `namespace` and `effect_name`: what each request is called (`openai.responses.create`,
  `github.GET /repos/{id}`);
- `keeps_response_header` and `request_headers`: which headers are kept (credential
  headers never are, whatever a profile says: `is_credential_header`);
- `stream_format`: how a streamed body is split into ordered events (`SSE`, or
  `BEDROCK_CHUNKS` for Amazon Bedrock's binary event streams);
- `stable_body` and `explain_miss`: how a request body is made the same across runs,
  and what a replay miss means for this provider's older traces;
- `body_type`: what a request's body is where its SDK labels it wrongly (an upload's
  bytes sent as `application/json`);
- `credential_outputs`: where a response body holds a credential the API issues (an
  ephemeral token), recorded as `<redacted>`;
- `transport_error_envelope`: the envelope a transport failure is recorded in;
- `recipes`: how `reply(...)` and `edit(...)` build an output for a fork.

How the SDK reads a served response back (its parsing, its exceptions) is the SDK's:
the core serves the recorded status, headers and body bytes, and raises a recorded
transport failure as the client library's own exception class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from toolreplay.adapters.capture.sse import SSE
from toolreplay.errors import AdapterOptionError, ToolReplayError
from toolreplay.jsonpath import parse_path
from toolreplay.portable import JsonValue

if TYPE_CHECKING:
    from toolreplay.runtime.recipes import RecipeResolver
    from toolreplay.runtime.replaying import ReplaySession

__all__ = [
    "CREDENTIAL_HEADERS",
    "ProviderProfile",
    "StreamFormat",
    "is_credential_header",
]

CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "set-cookie2",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-amz-security-token",
    }
)
"""Header names (lowercase) that carry credentials: never recorded, in any direction."""
# And any name of these shapes: `x-auth-token`, `x-csrf-token`, `x-vendor-api-key`,
# `x-client-secret`, `x-session-id`, `x-hub-signature`, `x-goog-iam-authorization`.
# (`-token` only at the end: `x-ratelimit-remaining-tokens` is a count, not a secret.)
_CREDENTIAL_SHAPE = re.compile(
    r"authorization|password|passwd|credential|cookie|api-?key|secret|session"
    r"|(^|-)(token|signature|sig|auth)$"
)


def is_credential_header(name: str) -> bool:
    """Whether a header (lowercase name) may carry a credential: never recorded."""
    return name in CREDENTIAL_HEADERS or _CREDENTIAL_SHAPE.search(name) is not None


class StreamFormat(Protocol):
    """How a streamed response body is recorded as ordered events and served again.

    `binary` says the body's bytes are not its text (AWS event streams hold their events
    in base64), so the secret scan searches the recorded events, not the body."""

    name: str
    binary: bool

    def matches(self, media_type: str) -> bool:
        """Whether a body of this media type (lowercase, no parameters) is such a stream."""
        ...

    def parse(self, content: bytes) -> tuple[list[JsonValue], str, bool]:
        """The complete events, what follows the last one (as text), and whether every
        event is known to be portable JSON. A ValueError if the body is not such a
        stream: it is then recorded as bytes."""
        ...

    def encode(self, operation: str, events: list[JsonValue], tail: str) -> bytes:
        """The body bytes the recorded events (and tail) stand for."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderProfile:
    """One provider's part of recording and replaying its HTTP API (see the module).

    `effect_name(method, path)` is the name after the namespace, from the method and
    the path relative to the client's base URL. `keeps_response_header(name)` (a
    lowercase name) says which response headers the output keeps; credential headers
    are dropped whatever it says. `request_headers` are request headers (lowercase)
    recorded as the `headers` input; none by default, since most vary between runs
    and library versions, and none may be a credential header. `stable_body` rewrites a
    parsed JSON request body in place of values that differ on every run (None: the
    body as sent). `explain_miss(session, operation, inputs)` may turn a replay miss
    into a clearer error (a trace recorded by an older adapter), or give None.
    `body_type(content_type, headers)` gives the content type a request's body is
    recorded by, from the one it was sent with and its headers (lowercase names):
    for an SDK that sends bytes labelled as JSON (None: the header as sent).
    `credential_outputs` maps an effect name (after the namespace) to JSON paths into
    its JSON response body whose values are credentials the API hands out (an ephemeral
    token): they are recorded, and so replayed, as `<redacted>`; the live response the
    application gets while recording is untouched.
    `provider` names the API in messages ("OpenAI"). `same_host` makes a request to
    another host than the client's base URL no endpoint of the API, refused when it would
    be sent (recording, a fork's live call): for an API whose base URL path is `/`, where
    the path alone says nothing (Anthropic's).
    """

    namespace: str
    provider: str
    effect_name: Callable[[str, str], str]
    keeps_response_header: Callable[[str], bool]
    transport_error_envelope: str
    request_headers: frozenset[str] = frozenset()
    stream_format: StreamFormat = SSE
    stable_body: Callable[[JsonValue], JsonValue] | None = None
    explain_miss: (
        Callable[[ReplaySession, str, dict[str, JsonValue]], ToolReplayError | None] | None
    ) = None
    recipes: RecipeResolver | None = None
    body_type: Callable[[str | None, Mapping[str, str]], str | None] | None = None
    credential_outputs: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict[str, tuple[str, ...]]
    )
    same_host: bool = False

    def __post_init__(self) -> None:
        for name, paths in self.credential_outputs.items():
            what = f"credential path of {self.namespace}.{name} ({self.provider} profile)"
            for path in paths:
                parse_path(path, what=what, error=AdapterOptionError)
        credentials = sorted(name for name in self.request_headers if is_credential_header(name))
        if credentials:
            raise AdapterOptionError(
                f"the {self.provider} profile records request headers {credentials}, which "
                "carry credentials and are never recorded; leave them out"
            )
