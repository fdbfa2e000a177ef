"""The OpenAI API as a capture-core profile (RFC 0006 §A): `OPENAI`.

Registered on import: its recorded transport failures (`openai.transport_error`)
and its `reply(...)`/`edit(...)` resolver, for the `openai` namespace.
"""

from __future__ import annotations

from toolreplay.adapters.capture import ProviderProfile, register_profile
from toolreplay.adapters.openai.exchange import (
    EFFECT_NAMESPACE,
    TRANSPORT_ERROR_ENVELOPE,
    effect_name,
    explain_miss,
    keeps_response_header,
    stable_body,
)
from toolreplay.adapters.openai.replies import OPENAI_RECIPES

__all__ = ["OPENAI"]

OPENAI = ProviderProfile(
    namespace=EFFECT_NAMESPACE,
    provider="OpenAI",
    effect_name=effect_name,
    keeps_response_header=keeps_response_header,
    transport_error_envelope=TRANSPORT_ERROR_ENVELOPE,
    stable_body=stable_body,
    explain_miss=explain_miss,
    recipes=OPENAI_RECIPES,
)
"""The OpenAI profile: every request of an instrumented OpenAI client."""

register_profile(OPENAI)
