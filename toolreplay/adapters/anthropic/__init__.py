"""Record and replay everything an Anthropic client sends: `instrument(Anthropic())`.

    from anthropic import Anthropic
    from toolreplay.adapters.anthropic import instrument

    client = instrument(Anthropic())
    message = client.messages.create(
        model="claude-sonnet-4-6", max_tokens=1024, messages=[{"role": "user", "content": "Hi"}]
    )

Every HTTP request the instrumented client makes (any endpoint, beta resources,
streaming or not, retries included) is one effect named after its endpoint
(`anthropic.messages.create`, `anthropic.messages.count_tokens`,
`anthropic.messages.batches.retrieve`, `anthropic.models.list`, ...), captured at the
SDK's HTTP transport by the capture core: inputs are the method, path, query, the
`anthropic-version` and `anthropic-beta` headers and the JSON body as sent; the output
is the status, a few response headers and the body as received (a stream as its named
events). `x-api-key`, `Authorization` and every other credential are never recorded.

Claude on the cloud platforms is captured the same way: `instrument(AnthropicBedrock())`
(requests signed by the SDK with SigV4, as usual; a stream is an AWS event stream, kept
as the Messages events its chunks carry) and `instrument(AnthropicVertex())` (a Google
bearer token). Their Messages calls are `anthropic.messages.create` too, the model in the
recorded path.
Supported SDK versions: anthropic 2.10.0 and later 2.x (`uv sync --extra anthropic`).

In a fork, `reply(...)` answers a Messages call in one line (a message, or the event
stream the API sends, for the request it answers) and `edit(...)` changes a recorded
answer by JSON path, keeping a stream's events consistent; `final_message` and
`edited_output` are the same machinery as plain functions over a recorded output.
"""

from __future__ import annotations

from toolreplay.adapters.sdk_versions import require_sdk
from toolreplay.errors import AnthropicAdapterDependencyError

SUPPORTED_SDK_VERSIONS = ">=2.10.0,<3"
"""The anthropic releases the adapter supports (a PEP 440 specifier)."""

require_sdk(
    "anthropic",
    distribution="anthropic",
    adapter="Anthropic",
    supported=SUPPORTED_SDK_VERSIONS,
    minimum=(2, 10, 0),
    below=(3,),
    extra="anthropic",
    error=AnthropicAdapterDependencyError,
)

from toolreplay.adapters.anthropic.client import (  # noqa: E402  # only after the version check
    InstrumentedAnthropic,
    InstrumentedAnthropicBedrock,
    InstrumentedAnthropicVertex,
    InstrumentedAsyncAnthropic,
    InstrumentedAsyncAnthropicBedrock,
    InstrumentedAsyncAnthropicVertex,
    instrument,
)
from toolreplay.adapters.anthropic.exchange import (  # noqa: E402
    EFFECT_NAMESPACE,
    RECORDED_RESPONSE_HEADERS,
    REQUEST_HEADERS,
    effect_name,
)
from toolreplay.adapters.anthropic.messages import edited_output, final_message  # noqa: E402
from toolreplay.adapters.anthropic.replies import edit, reply  # noqa: E402

__all__ = [
    "EFFECT_NAMESPACE",
    "RECORDED_RESPONSE_HEADERS",
    "REQUEST_HEADERS",
    "SUPPORTED_SDK_VERSIONS",
    "InstrumentedAnthropic",
    "InstrumentedAnthropicBedrock",
    "InstrumentedAnthropicVertex",
    "InstrumentedAsyncAnthropic",
    "InstrumentedAsyncAnthropicBedrock",
    "InstrumentedAsyncAnthropicVertex",
    "edit",
    "edited_output",
    "effect_name",
    "final_message",
    "instrument",
    "reply",
]
