"""The Anthropic API as a capture-core profile (RFC 0006 Part IV): `ANTHROPIC`.

Registered on import: its recorded transport failures (`anthropic.transport_error`)
and its `reply(...)`/`edit(...)` resolver, for the `anthropic` namespace.
"""

from __future__ import annotations

from toolreplay.adapters.anthropic.exchange import (
    EFFECT_NAMESPACE,
    REQUEST_HEADERS,
    TRANSPORT_ERROR_ENVELOPE,
    effect_name,
    keeps_response_header,
)
from toolreplay.adapters.anthropic.replies import ANTHROPIC_RECIPES
from toolreplay.adapters.capture import ProviderProfile, register_profile

__all__ = ["ANTHROPIC"]

ANTHROPIC = ProviderProfile(
    namespace=EFFECT_NAMESPACE,
    provider="Anthropic",
    effect_name=effect_name,
    keeps_response_header=keeps_response_header,
    transport_error_envelope=TRANSPORT_ERROR_ENVELOPE,
    request_headers=REQUEST_HEADERS,
    recipes=ANTHROPIC_RECIPES,
)
"""The Anthropic profile: every request of an instrumented Anthropic client."""

register_profile(ANTHROPIC)
