"""A second real SDK through the plain HTTP profile: Mistral, given instrumented clients.

The Mistral SDK (Speakeasy-generated, on httpx2, where the Groq SDK of
`test_http_sdks.py` is on httpx) takes its HTTP clients as `Mistral(client=...,
async_client=...)`. Given ones from `toolreplay.adapters.http.instrument`, its calls
are recorded as `mistral.POST /v1/chat/completions` (and so on) and replayed with the
SDK's own objects and exceptions coming back: a completion answered by a tool call, a
streamed completion, embeddings, a rate-limited request retried by the SDK's backoff,
and a 422 raised as the SDK's `HTTPValidationError`, sync and async. A local fake of
Mistral's API is served over loopback; replay points the SDK at a server that counts
connections, with the network guard open.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import httpx2  # mistralai's HTTP library (it depends on it)
import pytest
from mistralai.client import Mistral  # a dev dependency: an SDK on httpx2
from mistralai.client.errors import HTTPValidationError
from mistralai.client.utils import BackoffStrategy, RetryConfig

import toolreplay
from tests.adapters.http_api import served
from tests.support.counting_server import CountingServer
from toolreplay.adapters.http import edit, instrument, reply

API_KEY = "CANARY-mistral-key-7c2e04b1"
MODEL = "mistral-small-latest"
ASK: Any = [{"role": "user", "content": "Refund order 8812?"}]
TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "issue_refund",
            "description": "Refund an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "integer"}}},
        },
    }
]
USAGE = {"prompt_tokens": 21, "completion_tokens": 9, "total_tokens": 30}
STREAMED = ["Held ", "for ", "review."]


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "cmpl-local-1",
        "object": "chat.completion",
        "model": MODEL,
        "created": 1767225600,
        "usage": USAGE,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "cmpl-local-2",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "created": 1767225600,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class LocalMistral:
    """Mistral's chat, embeddings endpoints: the first chat request is rate limited (the
    SDK's backoff retries it); a request without `messages` content is a 422."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        assert request.headers["authorization"] == f"Bearer {API_KEY}"
        headers = {"x-request-id": f"req_{len(self.requests)}", "mistral-correlation-id": "c1"}
        body = json.loads(request.content)
        if request.url.path == "/v1/embeddings":
            data = [
                {"object": "embedding", "index": n, "embedding": [0.25, -0.5, float(n)]}
                for n, _ in enumerate(body["input"])
            ]
            answer = {"id": "emb-1", "object": "list", "model": body["model"], "data": data}
            return httpx2.Response(200, json={**answer, "usage": USAGE}, headers=headers)
        assert request.url.path == "/v1/chat/completions", request.url.path
        if len(self.requests) == 1:
            error = {"object": "error", "message": "Requests rate limit exceeded", "code": "1300"}
            return httpx2.Response(429, json=error, headers=headers)
        if not body["messages"][0]["content"]:
            detail = [{"loc": ["body", "messages", 0, "content"], "msg": "empty", "type": "value"}]
            return httpx2.Response(422, json={"detail": detail}, headers=headers)
        if body.get("stream"):
            chunks = [_chunk({"role": "assistant", "content": ""})]
            chunks += [_chunk({"content": piece}) for piece in STREAMED]
            chunks.append({**_chunk({"content": ""}, "stop"), "usage": USAGE})
            stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            return httpx2.Response(
                200,
                content=stream.encode(),
                headers={**headers, "content-type": "text/event-stream"},
            )
        call = {
            "id": "call_8812",
            "type": "function",
            "function": {"name": "issue_refund", "arguments": '{"order_id": 8812}'},
        }
        message = {"role": "assistant", "content": "", "tool_calls": [call]}
        return httpx2.Response(200, json=_completion(message, "tool_calls"), headers=headers)


def _client(base_url: str) -> Mistral:
    retries = RetryConfig("backoff", BackoffStrategy(1, 5, 1.1, 1_000), False)
    return Mistral(
        api_key=API_KEY,
        server_url=base_url,
        client=instrument(httpx2.Client(), name="mistral"),
        async_client=instrument(httpx2.AsyncClient(), name="mistral"),
        retry_config=retries,
    )


def _seen(completion: Any, streamed: list[str], embedded: Any, refused: Any) -> dict[str, Any]:
    call = completion.choices[0].message.tool_calls[0]
    return {
        "tool_call": (call.id, call.function.name, call.function.arguments),
        "finish": completion.choices[0].finish_reason,
        "usage": completion.usage.total_tokens,
        "streamed": "".join(streamed),
        "embeddings": [item.embedding for item in embedded.data],
        "refused": (
            type(refused).__name__,
            refused.status_code,
            refused.data.detail[0].loc if refused.data.detail else None,
        ),
    }


def sync_app(base_url: str) -> dict[str, Any]:
    """An application on the Mistral SDK: a tool call, a stream, embeddings, an error."""
    client = _client(base_url)
    completion = client.chat.complete(model=MODEL, messages=ASK, tools=TOOLS)
    with client.chat.stream(model=MODEL, messages=ASK) as events:
        streamed = [str(event.data.choices[0].delta.content or "") for event in events]
    embedded = client.embeddings.create(model="mistral-embed", inputs=["refund", "order"])
    with pytest.raises(HTTPValidationError) as refused:
        client.chat.complete(model=MODEL, messages=[{"role": "user", "content": ""}])
    return _seen(completion, streamed, embedded, refused.value)


async def async_app(base_url: str) -> dict[str, Any]:
    """The same application on the SDK's async methods."""
    client = _client(base_url)
    completion = await client.chat.complete_async(model=MODEL, messages=ASK, tools=TOOLS)
    streamed: list[str] = []
    async with await client.chat.stream_async(model=MODEL, messages=ASK) as events:
        async for event in events:
            streamed.append(str(event.data.choices[0].delta.content or ""))
    embedded = await client.embeddings.create_async(
        model="mistral-embed", inputs=["refund", "order"]
    )
    with pytest.raises(HTTPValidationError) as refused:
        await client.chat.complete_async(model=MODEL, messages=[{"role": "user", "content": ""}])
    return _seen(completion, streamed, embedded, refused.value)


def run(mode: str, base_url: str) -> dict[str, Any]:
    return sync_app(base_url) if mode == "sync" else asyncio.run(async_app(base_url))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_mistral_app_records_and_replays_with_the_sdks_objects(mode: str, tmp_path: Path) -> None:
    path = tmp_path / "mistral.trp"
    api = LocalMistral()
    with served(api) as url, toolreplay.record(path):
        recorded = run(mode, url.removesuffix("/v1"))
    assert recorded == {
        "tool_call": ("call_8812", "issue_refund", '{"order_id": 8812}'),
        "finish": "tool_calls",
        "usage": 30,
        "streamed": "Held for review.",
        "embeddings": [[0.25, -0.5, 0.0], [0.25, -0.5, 1.0]],
        "refused": ("HTTPValidationError", 422, ["body", "messages", 0, "content"]),
    }
    assert len(api.requests) == 5  # the rate-limited request and its retry, then three

    operations = toolreplay.read_trace(path).operations
    assert [(op.effect, op.identity.occurrence) for op in operations] == [
        ("mistral.POST /v1/chat/completions", 0),  # a retry is a request of its own
        ("mistral.POST /v1/chat/completions", 1),
        ("mistral.POST /v1/chat/completions", 0),  # the stream: another body
        ("mistral.POST /v1/embeddings", 0),
        ("mistral.POST /v1/chat/completions", 0),
    ]
    body: Any = operations[0].inputs["body"]
    assert body["tools"] == TOOLS
    outputs: list[Any] = [cast(Any, op.outcome).value for op in operations]
    assert [output["status"] for output in outputs] == [429, 200, 200, 200, 422]
    assert outputs[2]["events"][-1] == {"data_text": "[DONE]"}
    content = path.read_bytes()
    assert API_KEY.encode() not in content
    assert b"authorization" not in content.lower()

    server = CountingServer()
    try:
        with toolreplay.replay(path, network="allow"):
            replayed = run(mode, server.url.removesuffix("/"))
    finally:
        server.close()
    assert server.accepted == 0
    assert replayed == recorded


def test_a_fork_edits_mistral_answers_by_json_path_and_replies_to_a_new_call(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mistral.trp"
    with served(LocalMistral()) as url, toolreplay.record(path):
        recorded = sync_app(url.removesuffix("/v1"))
    arguments = "$.choices[0].message.tool_calls[0].function.arguments"
    patches = [
        toolreplay.replace_output(at=1, value=edit({arguments: '{"order_id": 1}'})),
        # A stream's `$` is its events' data: event 3 carries "review.".
        toolreplay.replace_output(at=2, value=edit({"$[3].choices[0].delta.content": "later."})),
        toolreplay.supply_output(
            effect="mistral.POST /v1/chat/completions",
            value=reply(_completion({"role": "assistant", "content": "Forked."}, "stop")),
        ),
    ]
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(path, branch, patches=patches):
        forked = sync_app("http://127.0.0.1:9")
        client = _client("http://127.0.0.1:9")
        extra = client.chat.complete(model=MODEL, messages=[{"role": "user", "content": "Hi"}])
    assert forked == {
        **recorded,
        "tool_call": ("call_8812", "issue_refund", '{"order_id": 1}'),
        "streamed": "Held for later.",
    }
    # The reply is parsed by the SDK as its own response type.
    assert type(extra).__name__ == "ChatCompletionResponse"
    message = extra.choices[0].message
    assert message is not None
    assert message.content == "Forked."
    report = toolreplay.diff(path, branch)
    assert [d.patch_id for d in report.differences][:2] == [p.patch_id for p in patches[:2]]
