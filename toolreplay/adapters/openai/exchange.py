"""What the OpenAI profile adds to the capture core: names, kept headers, stable bodies.

The capture core (`toolreplay.adapters.capture`) turns each request into inputs and
each response into an output. For the OpenAI API:

- an effect is named after its endpoint (`effect_name`: `responses.create`);
- the response headers kept are those the SDK or the application act on
  (`RECORDED_RESPONSE_HEADERS`); no request header is an input;
- the Agents SDK's per-run `prompt_cache_key` is recorded as a placeholder
  (`stable_body`), so an unmodified agent's run replays;
- a replay miss against a trace of the first adapter, or one that recorded
  upload digests in hex, names `toolreplay migrate` (`explain_miss`).

Pure functions over plain values (no SDK, no HTTP library).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from toolreplay.adapters.capture.exchange import request_inputs as _request_inputs
from toolreplay.adapters.capture.exchange import resource_effect_name
from toolreplay.errors import LegacyOpenAITraceError
from toolreplay.portable import JsonValue
from toolreplay.trace.model import operation_location

if TYPE_CHECKING:
    from toolreplay.runtime.replaying import ReplaySession

__all__ = [
    "EFFECT_NAMESPACE",
    "PER_RUN_CACHE_KEY",
    "RECORDED_RESPONSE_HEADERS",
    "TRANSPORT_ERROR_ENVELOPE",
    "effect_name",
    "explain_miss",
    "keeps_response_header",
    "request_inputs",
    "stable_body",
]

EFFECT_NAMESPACE = "openai"

RECORDED_RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "x-request-id",
        # The SDK's retry decisions read these; without them a replayed error would be
        # retried (or not) differently than it was live.
        "x-should-retry",
        "retry-after",
        "retry-after-ms",
        "openai-processing-ms",
        "openai-version",
    }
)
"""Response headers kept in a recording (lowercase), with `x-ratelimit-*`. No other."""
_RECORDED_HEADER_PREFIXES = ("x-ratelimit-",)

TRANSPORT_ERROR_ENVELOPE = "openai.transport_error"
"""The envelope of a recorded transport failure (`httpx.<Class>`) of this adapter."""

# The Agents SDK sends a fresh random `prompt_cache_key` for every run that has no
# conversation, session or group: it only groups the run's turns for caching, and would
# make every run a different request. It is recorded as this placeholder.
_PER_RUN_CACHE_KEY = re.compile(r"agents-sdk:run:[0-9a-f]{32}")
PER_RUN_CACHE_KEY = "agents-sdk:run:<per-run>"


def effect_name(method: str, path: str) -> str:
    """The effect's name (after `openai.`) for a request: `responses.create`, `models.list`.

    The name is the path's words joined by dots, then a verb: `create` (POST) and
    `list` (GET) on a collection, `retrieve` (GET), `update` (POST) on an item,
    `delete` for DELETE. A segment that is not a lowercase word (`resp_123`,
    `gpt-4o`, `file-abc`) is a path parameter: it stays in the inputs' path and
    is left out of the name. Azure's leading `deployments/<name>` is left out too.
    """
    segments = [segment for segment in path.split("/") if segment]
    if len(segments) >= 2 and segments[0] == "deployments":
        segments = segments[2:]
    return resource_effect_name(method, segments)


def keeps_response_header(name: str) -> bool:
    """Whether a response header (lowercase name) is kept in the output."""
    return name in RECORDED_RESPONSE_HEADERS or name.startswith(_RECORDED_HEADER_PREFIXES)


def stable_body(body: JsonValue) -> JsonValue:
    """The body with the Agents SDK's per-run cache key replaced (see `PER_RUN_CACHE_KEY`)."""
    if isinstance(body, dict):
        key = body.get("prompt_cache_key")
        if isinstance(key, str) and _PER_RUN_CACHE_KEY.fullmatch(key):
            body["prompt_cache_key"] = PER_RUN_CACHE_KEY
    return body


def request_inputs(
    method: str,
    path: str,
    base_path: str,
    query: Iterable[tuple[str, str]],
    content_type: str | None,
    content: bytes,
) -> dict[str, JsonValue]:
    """The inputs of one request to the OpenAI API: method, relative path, query and body
    (the capture core's `request_inputs` with this profile's `stable_body`)."""
    return _request_inputs(
        method, path, base_path, query, content_type, content, stable=stable_body
    )


def explain_miss(
    session: ReplaySession, operation: str, inputs: dict[str, JsonValue]
) -> LegacyOpenAITraceError | None:
    """Why a request missed, when the trace was recorded by an older adapter: the first
    one (other inputs altogether), or one that recorded upload digests in hex."""
    convert = (
        "Convert the trace once with `toolreplay migrate TRACE --output NEW_TRACE` and "
        "replay the new trace"
    )
    uploading = "body_digest" in inputs
    for recorded in session.trace.operations:
        if recorded.identity.namespace != EFFECT_NAMESPACE:
            continue
        if "method" not in recorded.inputs:
            return LegacyOpenAITraceError(
                f"{operation}: this trace holds {recorded.effect} calls recorded by "
                "the first OpenAI adapter (whose inputs were model, input, reasoning and "
                "max_output_tokens); today's adapter records every request as method, path, "
                f"query and body. {convert}"
            )
        digest = recorded.inputs.get("body_digest")
        if uploading and isinstance(digest, dict) and "sha256" in digest:
            return LegacyOpenAITraceError(
                f"{operation}: this trace records file uploads by a hex digest "
                f"(body_digest.sha256, {operation_location(recorded)}); today's adapter "
                f"records it in base64 (body_digest.sha256_base64). {convert}"
            )
    return None
