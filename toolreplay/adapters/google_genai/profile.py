"""The Gemini API (Google Gen AI) as a capture-core profile (RFC 0006 Part V): `GOOGLE_GENAI`.

Registered on import: its recorded transport failures (`google_genai.transport_error`)
and its `reply(...)`/`edit(...)` resolver, for the `google_genai` namespace.
"""

from __future__ import annotations

from toolreplay.adapters.capture import ProviderProfile, register_profile
from toolreplay.adapters.google_genai.exchange import (
    CREDENTIAL_OUTPUTS,
    EFFECT_NAMESPACE,
    REQUEST_HEADERS,
    TRANSPORT_ERROR_ENVELOPE,
    body_type,
    effect_name,
    keeps_response_header,
    stable_body,
)
from toolreplay.adapters.google_genai.replies import GOOGLE_GENAI_RECIPES

__all__ = ["GOOGLE_GENAI"]

GOOGLE_GENAI = ProviderProfile(
    namespace=EFFECT_NAMESPACE,
    provider="Google Gen AI",
    effect_name=effect_name,
    keeps_response_header=keeps_response_header,
    transport_error_envelope=TRANSPORT_ERROR_ENVELOPE,
    request_headers=REQUEST_HEADERS,
    recipes=GOOGLE_GENAI_RECIPES,
    body_type=body_type,
    stable_body=stable_body,
    credential_outputs=CREDENTIAL_OUTPUTS,
)
"""The Google Gen AI profile: every request of an instrumented `genai.Client`."""

register_profile(GOOGLE_GENAI)
