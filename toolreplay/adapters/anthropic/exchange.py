"""What the Anthropic profile adds to the capture core: effect names and kept headers.

- an effect is named after its endpoint (`effect_name`): `messages.create`,
  `messages.count_tokens`, `messages.batches.retrieve`, `models.list`;
- the response headers kept are those the SDK or the application act on
  (`RECORDED_RESPONSE_HEADERS`, with `anthropic-ratelimit-*`);
- the request headers that choose what the API does, `anthropic-version` and
  `anthropic-beta`, are inputs (`REQUEST_HEADERS`); `x-api-key` and `Authorization`
  never are, nor recorded anywhere (the core's credential rule).

Pure functions over plain values (no SDK, no HTTP library).
"""

from __future__ import annotations

from toolreplay.adapters.capture.exchange import resource_effect_name

__all__ = [
    "EFFECT_NAMESPACE",
    "RECORDED_RESPONSE_HEADERS",
    "REQUEST_HEADERS",
    "TRANSPORT_ERROR_ENVELOPE",
    "effect_name",
    "keeps_response_header",
]

EFFECT_NAMESPACE = "anthropic"

RECORDED_RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "request-id",  # the SDK's `_request_id`
        # The SDK's retry decisions read these; without them a replayed error would be
        # retried (or not) differently than it was live.
        "x-should-retry",
        "retry-after",
        "retry-after-ms",
    }
)
"""Response headers kept in a recording (lowercase), with `anthropic-ratelimit-*`. No
other: `anthropic-organization-id` names the account, and the rest are the
server's bookkeeping."""
_RECORDED_HEADER_PREFIXES = ("anthropic-ratelimit-",)

REQUEST_HEADERS = frozenset({"anthropic-version", "anthropic-beta"})
"""Request headers recorded as the `headers` input: the API version and the beta
features a request asks for change what the API answers."""

TRANSPORT_ERROR_ENVELOPE = "anthropic.transport_error"
"""The envelope of a recorded transport failure (`httpx2.<Class>`) of this adapter."""

# Endpoints named by the action their last segment is, not by a verb of the method.
_ACTIONS = frozenset({"count_tokens", "cancel", "results"})


def effect_name(method: str, path: str) -> str:
    """The effect's name (after `anthropic.`) for a request: `messages.create`.

    The name is the path's words joined by dots, then a verb: `create` (POST) and
    `list` (GET) on a collection, `retrieve` (GET) and `update` (POST) on an item,
    `delete` for DELETE; a path ending in an action (`count_tokens`, `cancel`,
    `results`) is named by it instead. A segment that is not a lowercase word (`v1`,
    `msgbatch_01H...`, `claude-sonnet-4-5`) is a version or a path parameter: it stays
    in the inputs' path and is left out of the name. A beta resource
    (`client.beta.messages.create`) has the same name; the `anthropic-beta` header it
    sends is an input.
    """
    segments = [segment for segment in path.split("/") if segment]
    return resource_effect_name(method, segments, _ACTIONS)


def keeps_response_header(name: str) -> bool:
    """Whether a response header (lowercase name) is kept in the output."""
    return name in RECORDED_RESPONSE_HEADERS or name.startswith(_RECORDED_HEADER_PREFIXES)
