"""A local stand-in for the Anthropic API, for real SDK clients: the handler of an
`httpx2.MockTransport` (the examples), or served over loopback by
`tests/adapters/http_api.served` (the tests). Messages (JSON and streamed, with text,
tool use and extended thinking), token counting, message batches (create, retrieve,
list, cancel, results as JSON lines), models, and an error of any status on request.

It answers as the API does (named server-sent events for a stream, `request-id` and
`anthropic-ratelimit-*` headers, an `anthropic-organization-id` that must not be
recorded), and checks what a real client must send: its key (`x-api-key`, or a bearer
token). `served` serves it under `/v1`; give the SDK the URL without it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx2

__all__ = [
    "API_KEY",
    "BATCH_ID",
    "DATED_MODEL",
    "MODEL",
    "ORGANIZATION",
    "REFUND_INPUT",
    "LocalAnthropic",
    "refusing",
    "sse",
]

API_KEY = "sk-ant-api03-CANARY-anthropic-3f9d1c"  # the shape of an Anthropic key
MODEL = "claude-sonnet-4-6"
DATED_MODEL = "claude-sonnet-4-6-20260217"
ORGANIZATION = "org-CANARY-4d2a"
USAGE = {
    "input_tokens": 31,
    "output_tokens": 17,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "service_tier": "standard",
}
BATCH_ID = "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d"
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def sse(events: list[dict[str, Any]]) -> bytes:
    """Named server-sent events, as the Messages API streams them."""
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events
    ).encode()


REFUND_INPUT = {"order_id": 8812, "reason": "lost in transit"}
"""The input of the tool use the API answers with, unless told otherwise."""


def _tool_results(request: dict[str, Any]) -> list[str] | None:
    """The text of the tool results the last message carries, None if it carries none."""
    last = request["messages"][-1]
    if not isinstance(last["content"], list):
        return None
    results = [part for part in last["content"] if part.get("type") == "tool_result"]
    if not results:
        return None
    texts: list[str] = []
    for result in results:
        content = result.get("content", "")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        texts.append(str(content))
    return texts


def _content(
    request: dict[str, Any],
    tool_input: dict[str, Any] = REFUND_INPUT,
    final_text: Callable[[list[str]], str] | None = None,
    preface: str | None = "Let me check that order.",
) -> list[dict[str, Any]]:
    """What the model answers: a thinking block when thinking is on, then (`preface` and)
    a tool use when tools are offered and the last message is the user's question, else
    text (made from the tool results by `final_text` when given)."""
    blocks: list[dict[str, Any]] = []
    if request.get("thinking", {}).get("type") == "enabled":
        blocks.append(
            {
                "type": "thinking",
                "thinking": "The order number is given, so I can look it up.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxPaW5nIHNpZ25hdHVyZQ==",
            }
        )
    results = _tool_results(request)
    if request.get("tools") and results is None:
        if preface is not None:
            blocks.append({"type": "text", "text": preface})
        blocks.append(
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": request["tools"][0]["name"],
                "input": tool_input,
            }
        )
    elif final_text is not None:
        blocks.append({"type": "text", "text": final_text(results or [])})
    else:
        blocks.append({"type": "text", "text": "Order 8812 was refunded in full."})
    return blocks


def message(
    request: dict[str, Any],
    number: int,
    tool_input: dict[str, Any] = REFUND_INPUT,
    final_text: Callable[[list[str]], str] | None = None,
    preface: str | None = "Let me check that order.",
) -> dict[str, Any]:
    content = _content(request, tool_input, final_text, preface)
    return {
        "id": f"msg_01XFDUDYJgAACzvnptvVoY{number:02d}",
        "type": "message",
        "role": "assistant",
        "model": DATED_MODEL,
        "content": content,
        "stop_reason": "tool_use" if content[-1]["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": USAGE,
    }


def stream_events(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The events the API streams for `final`, in small pieces, with a ping."""
    started = {**final, "content": [], "stop_reason": None, "usage": {**USAGE, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": started}, {"type": "ping"}]
    for index, block in enumerate(final["content"]):
        kind = block["type"]
        if kind == "text":
            opening, field, delta = {"type": "text", "text": ""}, "text", "text_delta"
            text = block["text"]
        elif kind == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            field, delta, text = "thinking", "thinking_delta", block["thinking"]
        else:
            opening = {**block, "input": {}}
            field, delta = "partial_json", "input_json_delta"
            text = json.dumps(block["input"])
        events.append({"type": "content_block_start", "index": index, "content_block": opening})
        for piece in re.findall(r".{1,7}", text, flags=re.S):
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": delta, field: piece},
                }
            )
        if kind == "thinking":
            signature = {"type": "signature_delta", "signature": block["signature"]}
            events.append({"type": "content_block_delta", "index": index, "delta": signature})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": USAGE["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return events


BATCH = {
    "id": BATCH_ID,
    "type": "message_batch",
    "processing_status": "ended",
    "request_counts": {"processing": 0, "succeeded": 1, "errored": 0, "canceled": 0, "expired": 0},
    "ended_at": "2026-01-02T00:00:00Z",
    "created_at": "2026-01-01T00:00:00Z",
    "expires_at": "2026-01-02T00:00:00Z",
    "archived_at": None,
    "cancel_initiated_at": None,
    "results_url": None,
}


class LocalAnthropic:
    """The Anthropic API on loopback. `fail` maps a status to answer the next Messages
    request with (an error body of the API's shape); `requests` are those received.

    A scripted agent's model: its tool use has `tool_input` (after the text `preface`,
    unless None), and once the tools have answered, its text is `final_text(the tool
    results' texts)`.
    """

    def __init__(
        self,
        *,
        tool_input: dict[str, Any] = REFUND_INPUT,
        final_text: Callable[[list[str]], str] | None = None,
        preface: str | None = "Let me check that order.",
    ) -> None:
        self.requests: list[Any] = []
        self.fail: list[int] = []
        self.tool_input = tool_input
        self.final_text = final_text
        self.preface = preface

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        # The SDK sends its key as `x-api-key` or, in newer releases, as a bearer token.
        sent = {
            request.headers.get("x-api-key"),
            request.headers.get("authorization", "").removeprefix("Bearer "),
        }
        assert API_KEY in sent, "the SDK sends its key"
        number = len(self.requests)
        headers = {
            "request-id": f"req_011CT{number:04d}",
            "anthropic-organization-id": ORGANIZATION,
            "anthropic-ratelimit-requests-remaining": "49",
        }
        path = request.url.path
        if self.fail and path == "/v1/messages":
            status = self.fail.pop(0)
            kind = ERROR_TYPES.get(status, "api_error")
            body = {"type": "error", "error": {"type": kind, "message": f"status {status}"}}
            if status == 429:
                headers["retry-after"] = "0"
            return httpx2.Response(status, json=body, headers=headers)
        if path == "/v1/messages":
            sent = json.loads(request.content)
            final = message(sent, number, self.tool_input, self.final_text, self.preface)
            if sent.get("stream"):
                return httpx2.Response(
                    200,
                    content=sse(stream_events(final)),
                    headers={**headers, "content-type": "text/event-stream; charset=utf-8"},
                )
            return httpx2.Response(200, json=final, headers=headers)
        if path == "/v1/messages/count_tokens":
            return httpx2.Response(200, json={"input_tokens": 42}, headers=headers)
        base = f"{request.url.scheme}://{request.url.host}:{request.url.port}"
        batch = {**BATCH, "results_url": f"{base}/v1/messages/batches/{BATCH_ID}/results"}
        if path == "/v1/messages/batches" and request.method == "POST":
            return httpx2.Response(
                200, json={**batch, "processing_status": "in_progress"}, headers=headers
            )
        if path == "/v1/messages/batches":
            page = {"data": [batch], "has_more": False, "first_id": BATCH_ID, "last_id": BATCH_ID}
            return httpx2.Response(200, json=page, headers=headers)
        if path == f"/v1/messages/batches/{BATCH_ID}":
            return httpx2.Response(200, json=batch, headers=headers)
        if path == f"/v1/messages/batches/{BATCH_ID}/cancel":
            return httpx2.Response(
                200, json={**batch, "processing_status": "canceling"}, headers=headers
            )
        if path == f"/v1/messages/batches/{BATCH_ID}/results":
            line = {
                "custom_id": "order-8812",
                "result": {
                    "type": "succeeded",
                    "message": message({"messages": [{"content": "x"}]}, 0),
                },
            }
            return httpx2.Response(
                200,
                content=(json.dumps(line) + "\n").encode(),
                headers={**headers, "content-type": "application/binary"},
            )
        model = {"type": "model", "id": DATED_MODEL, "display_name": "Claude Sonnet 4.6",
                 "created_at": "2025-09-29T00:00:00Z"}  # fmt: skip
        if path == "/v1/models":
            page = {
                "data": [model],
                "has_more": False,
                "first_id": DATED_MODEL,
                "last_id": DATED_MODEL,
            }
            return httpx2.Response(200, json=page, headers=headers)
        if path == f"/v1/models/{DATED_MODEL}":
            return httpx2.Response(200, json=model, headers=headers)
        body = {"type": "error", "error": {"type": "not_found_error", "message": path}}
        return httpx2.Response(404, json=body, headers=headers)


def refusing(requests: list[Any] | None = None) -> Callable[[Any], Any]:
    """A handler that fails on any request it is given (and appends it to `requests`):
    the transport of a client that must send nothing, as under replay."""

    def refuse(request: Any) -> Any:
        if requests is not None:
            requests.append(request)
        raise httpx2.ConnectError(
            f"no provider in this run, yet {request.method} {request.url.path} was sent",
            request=request,
        )

    return refuse
