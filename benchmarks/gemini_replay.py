"""Google Gen AI adapter benchmark: replay and record against the bare SDK, in CPU time.

Run with `uv run python -m benchmarks.gemini_replay` (see benchmarks/README.md). Two
workloads, each N distinct calls of `google-genai`:

- `generate+function`: `models.generate_content` with a function declared, answered by a
  text and a function call;
- `stream50`: `models.generate_content_stream(...)` read to its end, 50 chunks.

How each is measured (the floor, replay, record) is `benchmarks/sdk_replay.py`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from importlib.metadata import version as distribution_version
from typing import Any

import httpx
from google import genai
from google.genai import types

from benchmarks import sdk_replay
from benchmarks.sdk_replay import Workload
from examples.local_gemini import API_KEY, MODEL, MODEL_VERSION
from toolreplay.adapters.google_genai import instrument

__all__ = ["main"]

CONFIG = types.GenerateContentConfig(
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="issue_refund", parameters_json_schema={"type": "object"}
                )
            ]
        )
    ]
)
_ORDER = re.compile(rb"order (\d+)")
_USAGE = {"promptTokenCount": 40, "candidatesTokenCount": 30, "totalTokenCount": 70}


def _response(i: int, parts: list[dict[str, Any]], *, last: bool = True) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if last:
        candidate["finishReason"] = "STOP"
    candidate["index"] = 0
    response: dict[str, Any] = {"candidates": [candidate]}
    if last:
        response["usageMetadata"] = _USAGE
    return {**response, "modelVersion": MODEL_VERSION, "responseId": f"bench{i:08d}"}


def _function_body(i: int) -> bytes:
    call = {"functionCall": {"name": "issue_refund", "args": {"order_id": i, "reason": "lost"}}}
    return json.dumps(_response(i, [{"text": f"Refunding order {i}."}, call])).encode()


def _stream_body(i: int) -> bytes:
    chunks = [_response(i, [{"text": f"w{i}.{k} "}], last=k == 49) for k in range(50)]
    return "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks).encode()


def _ask(i: int) -> str:
    return f"Refund order {i}, it never arrived."


def _call_function(client: Any, i: int) -> object:
    response = client.models.generate_content(model=MODEL, contents=_ask(i), config=CONFIG)
    return response.function_calls[0].args


def _call_stream(client: Any, i: int) -> object:
    chunks = client.models.generate_content_stream(model=MODEL, contents=_ask(i))
    return "".join(chunk.text for chunk in chunks)


WORKLOADS = (
    Workload("generate+function", _function_body, "application/json", _call_function),
    Workload("stream50", _stream_body, "text/event-stream", _call_stream),
)


def _client(handler: Callable[[Any], Any]) -> genai.Client:
    transport = httpx.MockTransport(handler)
    options = types.HttpOptions(
        httpx_client=httpx.Client(transport=transport),
        httpx_async_client=httpx.AsyncClient(transport=transport),
    )
    return genai.Client(api_key=API_KEY, http_options=options)


def bare_client(workload: Workload, bodies: list[bytes]) -> genai.Client:
    headers = {"content-type": workload.media_type}

    def handle(request: Any) -> Any:
        found = _ORDER.search(request.content)
        assert found is not None
        return httpx.Response(200, content=bodies[int(found.group(1))], headers=headers)

    return _client(handle)


def refusing_client() -> genai.Client:
    def refuse(request: Any) -> Any:
        raise AssertionError(f"a replayed call reached the transport: {request.url}")

    return _client(refuse)


GEMINI = sdk_replay.Adapter(
    name="Google Gen AI",
    bare_client=bare_client,
    refusing_client=refusing_client,
    instrument=instrument,
    environment=lambda: (
        f"google-genai {distribution_version('google-genai')}",
        f"httpx {distribution_version('httpx')}",
    ),
    workloads=WORKLOADS,
)


def main(argv: Sequence[str] | None = None) -> int:
    return sdk_replay.main(GEMINI, "gemini_replay", argv)


if __name__ == "__main__":
    raise SystemExit(main())
