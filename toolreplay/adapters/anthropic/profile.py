"""The Anthropic API as capture-core profiles (RFC 0006 Part IV): `ANTHROPIC`, and Claude
on the cloud platforms, `BEDROCK` and `VERTEX`.

All three record in the `anthropic` namespace, so a Messages call is
`anthropic.messages.create` wherever it is sent, and `reply(...)`/`edit(...)` answer it
on any of them. Registered on import: their recorded transport failures
(`anthropic.transport_error`) and the one `reply`/`edit` resolver.
"""

from __future__ import annotations

from toolreplay.adapters.anthropic.cloud import (
    bedrock_effect_name,
    keeps_bedrock_response_header,
    vertex_effect_name,
)
from toolreplay.adapters.anthropic.exchange import (
    EFFECT_NAMESPACE,
    REQUEST_HEADERS,
    TRANSPORT_ERROR_ENVELOPE,
    effect_name,
    keeps_response_header,
)
from toolreplay.adapters.anthropic.replies import ANTHROPIC_RECIPES
from toolreplay.adapters.capture import ProviderProfile, register_profile
from toolreplay.adapters.capture.aws_event_stream import BEDROCK_CHUNKS

__all__ = ["ANTHROPIC", "BEDROCK", "VERTEX"]

ANTHROPIC = ProviderProfile(
    namespace=EFFECT_NAMESPACE,
    provider="Anthropic",
    effect_name=effect_name,
    keeps_response_header=keeps_response_header,
    transport_error_envelope=TRANSPORT_ERROR_ENVELOPE,
    request_headers=REQUEST_HEADERS,
    recipes=ANTHROPIC_RECIPES,
    same_host=True,  # the base URL path is `/`: only the host says what is Anthropic's
)
"""The Anthropic profile: every request of an instrumented Anthropic client."""

BEDROCK = ProviderProfile(
    namespace=EFFECT_NAMESPACE,
    provider="Anthropic on Amazon Bedrock",
    effect_name=bedrock_effect_name,
    keeps_response_header=keeps_bedrock_response_header,
    transport_error_envelope=TRANSPORT_ERROR_ENVELOPE,
    request_headers=REQUEST_HEADERS,
    stream_format=BEDROCK_CHUNKS,
    recipes=ANTHROPIC_RECIPES,
    same_host=True,
)
"""Every request of an instrumented `AnthropicBedrock` client: streams are AWS event
streams, kept as the Messages events their chunks carry."""

VERTEX = ProviderProfile(
    namespace=EFFECT_NAMESPACE,
    provider="Anthropic on Google Vertex AI",
    effect_name=vertex_effect_name,
    keeps_response_header=keeps_response_header,
    transport_error_envelope=TRANSPORT_ERROR_ENVELOPE,
    request_headers=REQUEST_HEADERS,
    recipes=ANTHROPIC_RECIPES,
    same_host=True,
)
"""Every request of an instrumented `AnthropicVertex` client."""

for _profile in (ANTHROPIC, BEDROCK, VERTEX):
    register_profile(_profile)
