"""Claude on Amazon Bedrock and Google Vertex AI: what their endpoints are called.

`AnthropicBedrock` and `AnthropicVertex` send the Messages API's requests to their
cloud's endpoints, with the model in the path rather than the body:

- Bedrock: `POST /model/<model id>/invoke`, `/invoke-with-response-stream` for a
  stream (an AWS event stream of the same events), `/count-tokens`;
- Vertex: `POST /projects/<project>/locations/<region>/publishers/anthropic/models/
  <model>:rawPredict`, `:streamRawPredict` for a stream (server-sent events), and
  `.../models/count-tokens:rawPredict`.

Each is named after the call it is, as on the first-party API: `messages.create`,
`messages.count_tokens`; any other path is named as the first-party profile names it.
The path (model, project, region) stays in the inputs. Bedrock keeps its request id and
error type headers too. Credentials (a SigV4 `Authorization` with `x-amz-security-token`,
a Google bearer token) are never recorded, by the core's rule; `x-amz-date` and the
other signing headers are not inputs (no request header is, but the profile's).

Pure functions over plain values (no SDK, no HTTP library).
"""

from __future__ import annotations

import re

from toolreplay.adapters.anthropic.exchange import effect_name, keeps_response_header

__all__ = [
    "BEDROCK_RESPONSE_HEADERS",
    "bedrock_effect_name",
    "keeps_bedrock_response_header",
    "vertex_effect_name",
]

BEDROCK_RESPONSE_HEADERS = frozenset(
    {
        "x-amzn-requestid",  # the request's id, as the service reports it
        "x-amzn-errortype",  # an error's class
        "x-amzn-bedrock-input-token-count",
        "x-amzn-bedrock-output-token-count",
    }
)
"""Bedrock's response headers kept beside the first-party ones (lowercase)."""

_BEDROCK = re.compile(r"/model/[^/]+/(invoke|invoke-with-response-stream|count-tokens)")
_VERTEX = re.compile(
    r"/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/([^/:]+):"
    r"(rawPredict|streamRawPredict)"
)


def bedrock_effect_name(method: str, path: str) -> str:
    """The effect's name (after `anthropic.`) for a request of `AnthropicBedrock`."""
    found = _BEDROCK.fullmatch(path)
    if method == "POST" and found is not None:
        return "messages.count_tokens" if found.group(1) == "count-tokens" else "messages.create"
    return effect_name(method, path)


def vertex_effect_name(method: str, path: str) -> str:
    """The effect's name (after `anthropic.`) for a request of `AnthropicVertex`."""
    found = _VERTEX.fullmatch(path)
    if method == "POST" and found is not None:
        return "messages.count_tokens" if found.group(1) == "count-tokens" else "messages.create"
    return effect_name(method, path)


def keeps_bedrock_response_header(name: str) -> bool:
    """Whether a Bedrock response header (lowercase name) is kept in the output."""
    return name in BEDROCK_RESPONSE_HEADERS or keeps_response_header(name)
