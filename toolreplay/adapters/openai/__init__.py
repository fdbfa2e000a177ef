"""Record and replay everything an OpenAI client sends: `instrument(OpenAI())`.

    from openai import OpenAI
    from toolreplay.adapters.openai import instrument

    client = instrument(OpenAI())
    response = client.responses.create(model="gpt-5-mini", input="Approve this refund?")

Every HTTP request the instrumented client makes (any endpoint, any request
field, streaming or not, retries included) is one effect named after its
endpoint (`openai.responses.create`, `openai.chat.completions.create`, ...),
captured at the SDK's HTTP transport: inputs are the method, path, query and
JSON body as sent; the output is the status, a few response headers and the
body as received. Credentials and headers are never recorded. Supported SDK
versions: openai 2.20.0 and later, up to (not including) 4
(`uv sync --extra openai`).

In a fork, `reply(...)` answers a model call in one line (the adapter builds the
full response, streamed or not, for the request it answers) and `edit(...)`
changes a recorded answer by JSON path, keeping a stream's events consistent;
`final_response`, `edited_output` and `text_paths` are the same machinery as
plain functions over a recorded output.
"""

from __future__ import annotations

from toolreplay.adapters.sdk_versions import require_sdk
from toolreplay.errors import OpenAIAdapterDependencyError

SUPPORTED_SDK_VERSIONS = ">=2.20.0,<4"
"""The openai releases the adapter supports (a PEP 440 specifier)."""

require_sdk(
    "openai",
    distribution="openai",
    adapter="OpenAI",
    supported=SUPPORTED_SDK_VERSIONS,
    minimum=(2, 20, 0),
    below=(4,),
    extra="openai",
    error=OpenAIAdapterDependencyError,
)

from toolreplay.adapters.openai.client import (  # noqa: E402  # only after the version check
    InstrumentedAsyncAzureOpenAI,
    InstrumentedAsyncOpenAI,
    InstrumentedAzureOpenAI,
    InstrumentedOpenAI,
    instrument,
)
from toolreplay.adapters.openai.exchange import (  # noqa: E402
    EFFECT_NAMESPACE,
    RECORDED_RESPONSE_HEADERS,
    effect_name,
)
from toolreplay.adapters.openai.prepare import prepare_replay  # noqa: E402
from toolreplay.adapters.openai.replies import edit, reply  # noqa: E402
from toolreplay.adapters.openai.streams import (  # noqa: E402
    edited_output,
    final_response,
    text_paths,
)

__all__ = [
    "EFFECT_NAMESPACE",
    "RECORDED_RESPONSE_HEADERS",
    "SUPPORTED_SDK_VERSIONS",
    "InstrumentedAsyncAzureOpenAI",
    "InstrumentedAsyncOpenAI",
    "InstrumentedAzureOpenAI",
    "InstrumentedOpenAI",
    "edit",
    "edited_output",
    "effect_name",
    "final_response",
    "instrument",
    "prepare_replay",
    "reply",
    "text_paths",
]
