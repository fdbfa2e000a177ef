"""Record and replay everything a Google Gen AI client sends: `instrument(genai.Client())`.

    from google import genai
    from toolreplay.adapters.google_genai import instrument

    client = instrument(genai.Client(api_key="..."))
    response = client.models.generate_content(model="gemini-2.5-flash", contents="Hi")

Every HTTP request the instrumented client makes (any resource, sync or under
`client.aio`, chats, streaming or not, retries included) is one effect named after the
API method it calls (`google_genai.models.generate_content`,
`google_genai.models.stream_generate_content`, `google_genai.models.count_tokens`,
`google_genai.models.batch_embed_contents`, `google_genai.files.upload`, ...), captured
at the SDK's httpx clients by the capture core: inputs are the method, path, query,
the resumable-upload headers and the JSON body as sent; the output is the status, a few
response headers and the body as received (a stream as its ordered chunks).
`x-goog-api-key`, `Authorization` and a `key=` query parameter are never recorded.
Supported SDK versions: google-genai 1.47.0 and later, up to 3.x
(`uv sync --extra google-genai`).

In a fork, `reply(...)` answers a `generateContent` call in one line (text, function
calls, a thought summary; a JSON body, or the chunks the API streams) and `edit(...)`
changes a recorded answer by JSON path, keeping a stream's chunks consistent;
`final_response` and `edited_output` are the same machinery as plain functions over a
recorded output.
"""

from __future__ import annotations

from toolreplay.adapters.sdk_versions import release
from toolreplay.errors import GoogleGenAIAdapterDependencyError

SUPPORTED_SDK_VERSIONS = ">=1.47.0,<4"
"""The google-genai releases the adapter supports (a PEP 440 specifier)."""
_MINIMUM = (1, 47, 0)
_BELOW = (4,)
_INSTALL = 'uv sync --extra google-genai (or: pip install "toolreplay[google-genai]")'

try:
    from google.genai import version as _version
except ImportError as error:
    raise GoogleGenAIAdapterDependencyError(
        "the Tool Replay Google Gen AI adapter needs the google-genai package "
        f"({SUPPORTED_SDK_VERSIONS}), which is not installed. Install it with: {_INSTALL}"
    ) from error


if not (_MINIMUM <= release(_version.__version__) < _BELOW):
    raise GoogleGenAIAdapterDependencyError(
        f"the Tool Replay Google Gen AI adapter supports google-genai {SUPPORTED_SDK_VERSIONS}, "
        f"but google-genai {_version.__version__} is installed. Install a supported version "
        f"with: {_INSTALL}"
    )

from toolreplay.adapters.google_genai.client import (  # noqa: E402  # only after the version check
    InstrumentedClient,
    instrument,
)
from toolreplay.adapters.google_genai.exchange import (  # noqa: E402
    EFFECT_NAMESPACE,
    RECORDED_RESPONSE_HEADERS,
    REQUEST_HEADERS,
    effect_name,
)
from toolreplay.adapters.google_genai.replies import edit, reply  # noqa: E402
from toolreplay.adapters.google_genai.responses import (  # noqa: E402
    edited_output,
    final_response,
    response_chunks,
)

__all__ = [
    "EFFECT_NAMESPACE",
    "RECORDED_RESPONSE_HEADERS",
    "REQUEST_HEADERS",
    "SUPPORTED_SDK_VERSIONS",
    "InstrumentedClient",
    "edit",
    "edited_output",
    "effect_name",
    "final_response",
    "instrument",
    "reply",
    "response_chunks",
]
