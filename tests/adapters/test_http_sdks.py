"""A real SDK beyond OpenAI through the plain HTTP profile: Groq, given an instrumented client.

The Groq SDK takes an `httpx.Client` (`Groq(http_client=...)`); given one from
`toolreplay.adapters.http.instrument`, its calls are recorded as `groq.POST
/openai/v1/chat/completions` and replayed with the SDK's own objects coming back. A
local fake of Groq's OpenAI-compatible API is served over loopback; replay points the
SDK at a server that counts connections, with the network guard open.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import groq  # a dev dependency: an SDK beyond OpenAI that takes an httpx client
import httpx  # groq's HTTP library (it depends on it)

import toolreplay
from examples.local_openai import chat_completion_body, chat_completion_events, event_stream
from tests.adapters.http_api import served
from tests.support.counting_server import CountingServer
from toolreplay.adapters.http import instrument

API_KEY = "gsk_CANARY-groq-key-5e1d9a"  # the shape of a Groq key
ASK: Any = [{"role": "user", "content": "Refund order 8812?"}]


class LocalGroq:
    """Groq's chat completions endpoint: the first request is rate limited (the SDK
    retries it), then answers; streamed when asked."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        assert request.url.path == "/openai/v1/chat/completions", request.url.path
        assert request.headers["authorization"] == f"Bearer {API_KEY}"
        headers = {"x-request-id": f"req_{len(self.requests)}", "x-groq-region": "local"}
        if len(self.requests) == 1:
            return httpx.Response(
                429,
                json={"error": {"message": "Rate limit reached", "type": "tokens"}},
                headers={**headers, "retry-after-ms": "1"},
            )
        if json.loads(request.content).get("stream"):
            return httpx.Response(
                200,
                content=event_stream(chat_completion_events("Held for review.")),
                headers={**headers, "content-type": "text/event-stream"},
            )
        body = chat_completion_body("Approved.", model="llama-3.3-70b-versatile")
        return httpx.Response(200, json=body, headers=headers)


def app(base_url: str) -> dict[str, Any]:
    """An application on the Groq SDK, its HTTP client instrumented."""
    client = groq.Groq(
        api_key=API_KEY,
        base_url=base_url,
        max_retries=2,
        http_client=instrument(httpx.Client(), name="groq"),
    )
    with client:
        completion = client.chat.completions.create(model="llama-3.3-70b-versatile", messages=ASK)
        stream = client.chat.completions.create(
            model="llama-3.3-70b-versatile", messages=ASK, stream=True
        )
        streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    return {
        "content": completion.choices[0].message.content,
        "model": completion.model,
        "usage": completion.usage.total_tokens if completion.usage else None,
        "streamed": streamed,
    }


def test_a_groq_app_records_and_replays_with_the_sdks_objects(tmp_path: Path) -> None:
    path = tmp_path / "groq.trp"
    api = LocalGroq()
    with served(api) as url, toolreplay.record(path):
        recorded = app(url.removesuffix("/v1"))
    assert recorded == {
        "content": "Approved.",
        "model": "llama-3.3-70b-versatile",
        "usage": 43,
        "streamed": "Held for review.",
    }
    assert len(api.requests) == 3  # the rate-limited request, its retry, the stream

    operations = toolreplay.read_trace(path).operations
    assert [(op.effect, op.identity.occurrence) for op in operations] == [
        ("groq.POST /openai/v1/chat/completions", 0),  # a retry is a request of its own
        ("groq.POST /openai/v1/chat/completions", 1),
        ("groq.POST /openai/v1/chat/completions", 0),
    ]
    assert operations[0].inputs["body"] == {"messages": ASK, "model": "llama-3.3-70b-versatile"}
    content = path.read_bytes()
    assert API_KEY.encode() not in content
    assert b"authorization" not in content.lower()

    server = CountingServer()
    try:
        with toolreplay.replay(path, network="allow"):
            replayed = app(server.url.removesuffix("/"))
    finally:
        server.close()
    assert server.accepted == 0
    assert replayed == recorded
