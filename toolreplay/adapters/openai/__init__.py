"""Record and replay OpenAI Responses API calls: `instrument(OpenAI())`.

    from openai import OpenAI
    from toolreplay.adapters.openai import instrument

    client = instrument(OpenAI())
    response = client.responses.create(model="gpt-5-mini", input="Approve this refund?")

Only `responses.create` is instrumented, recorded as the effect
`openai.responses.create`, for a closed request surface (`model`, a string
`input`, `reasoning={"effort": ...}`, `max_output_tokens`; no streaming) and a
closed set of output items. Everything else on the client passes through. The
adapter is built for exactly openai==2.20.0 (`uv sync --extra openai`).
"""

from __future__ import annotations

from toolreplay.errors import OpenAIAdapterDependencyError

SUPPORTED_SDK_VERSION = "2.20.0"
_INSTALL = (
    'uv sync --extra openai (or: pip install "toolreplay[openai]", which pins openai==2.20.0)'
)

try:
    import openai as _openai
except ImportError as error:
    raise OpenAIAdapterDependencyError(
        f"the Tool Replay OpenAI adapter needs the openai package, version "
        f"{SUPPORTED_SDK_VERSION}, which is not installed. Install it with: {_INSTALL}"
    ) from error

if _openai.__version__ != SUPPORTED_SDK_VERSION:
    raise OpenAIAdapterDependencyError(
        f"the Tool Replay OpenAI adapter is built for openai=={SUPPORTED_SDK_VERSION}, but "
        f"openai {_openai.__version__} is installed; its response and error types may differ. "
        f"Install the supported version with: {_INSTALL}"
    )

from toolreplay.adapters.openai.client import (  # noqa: E402  # only after the version check
    EFFECT_NAME,
    InstrumentedAsyncOpenAI,
    InstrumentedOpenAI,
    instrument,
)
from toolreplay.adapters.openai.request import SUPPORTED_EFFORTS  # noqa: E402

__all__ = [
    "EFFECT_NAME",
    "SUPPORTED_EFFORTS",
    "SUPPORTED_SDK_VERSION",
    "InstrumentedAsyncOpenAI",
    "InstrumentedOpenAI",
    "instrument",
]
