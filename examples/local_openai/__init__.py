"""A local stand-in for the OpenAI API, for the examples, tests and benchmarks (no network).

The one home of the fake API bodies: a Responses body (`response_body`, with
messages or function calls), a Chat Completions body, their server-sent event
streams, embeddings and the model list, and `LocalOpenAI`, a transport handler
that answers like the API and counts the requests it was sent. `HTTP` is the
HTTP library the installed SDK uses (`httpx2` for openai 3.x, `httpx` for 2.x),
whose `MockTransport` serves these handlers in process.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable
from typing import Any

import openai

__all__ = [
    "HTTP",
    "REQUEST_ID",
    "LocalOpenAI",
    "chat_completion_body",
    "chat_completion_events",
    "event_stream",
    "function_call_item",
    "message_item",
    "refusing",
    "response_body",
    "response_events",
]

HTTP: Any = importlib.import_module(
    "httpx2" if int(openai.__version__.split(".", 1)[0]) >= 3 else "httpx"
)
"""`httpx2` under openai 3.x, `httpx` under 2.x: the library the SDK's clients are built on."""

REQUEST_ID = "req_5f0d1c2b3a4e49f8a7b6c5d4e3f2a1b0"


def message_item(
    text: str, item_id: str = "msg_0c4e6b1f2a9d7e3b0068a1f3c3a4b5c6"
) -> dict[str, Any]:
    """An assistant message output item saying `text`."""
    return {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
    }


def function_call_item(
    name: str, arguments: dict[str, Any], call_id: str = "call_7Xk2bQ9mZ1", item_id: str = "fc_1"
) -> dict[str, Any]:
    """A function call output item: the model asks for tool `name` with `arguments`."""
    return {
        "id": item_id,
        "type": "function_call",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def response_body(
    text: str = "approve", *, output: list[dict[str, Any]] | None = None, **overrides: Any
) -> dict[str, Any]:
    """A Responses API body as the API sends it: a reasoning item and a message saying `text`
    (or the given `output` items), with `overrides` applied to the top-level fields."""
    body: dict[str, Any] = {
        "id": "resp_0c4e6b1f2a9d7e3b0068a1f3c2d4e5f6",
        "object": "response",
        "created_at": 1767225600,
        "status": "completed",
        "background": False,
        "billing": {"payer": "developer"},
        "completed_at": 1767225601,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": 256,
        "max_tool_calls": None,
        "model": "gpt-5-mini-2025-08-07",
        "output": output
        if output is not None
        else [
            {"id": "rs_0c4e6b1f2a9d7e3b0068a1f3c31b2c3d", "type": "reasoning", "summary": []},
            message_item(text),
        ],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "prompt_cache_retention": "in_memory",
        "reasoning": {"effort": "minimal", "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 58,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 67,
        },
        "user": None,
        "metadata": {},
    }
    body.update(overrides)
    return body


def chat_completion_body(text: str = "approve", **overrides: Any) -> dict[str, Any]:
    """A Chat Completions body as the API sends it, the assistant saying `text`."""
    body: dict[str, Any] = {
        "id": "chatcmpl-C8x1Yv3QeZ0kB4m2",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": text,
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 41,
            "completion_tokens": 2,
            "total_tokens": 43,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_560af6e559",
    }
    body.update(overrides)
    return body


def response_events(text: str = "approve", deltas: int = 1) -> list[tuple[str, dict[str, Any]]]:
    """The Responses API's stream for a message saying `text`, split into `deltas` pieces.

    `deltas` = 42 gives a 50-event stream.
    """
    final = response_body(text)
    message = final["output"][1]
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    size = max(1, -(-len(text) // deltas))
    pieces = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    pieces += [""] * (deltas - len(pieces))
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": started}),
        (
            "response.output_item.added",
            {"output_index": 0, "item": {**message, "status": "in_progress", "content": []}},
        ),
        (
            "response.content_part.added",
            {"output_index": 0, "item_id": message["id"], "content_index": 0, "part": part},
        ),
    ]
    for piece in pieces:
        events.append(
            (
                "response.output_text.delta",
                {
                    "output_index": 0,
                    "item_id": message["id"],
                    "content_index": 0,
                    "delta": piece,
                    "logprobs": [],
                },
            )
        )
    done_part = {**part, "text": text}
    events += [
        (
            "response.output_text.done",
            {
                "output_index": 0,
                "item_id": message["id"],
                "content_index": 0,
                "text": text,
                "logprobs": [],
            },
        ),
        (
            "response.content_part.done",
            {"output_index": 0, "item_id": message["id"], "content_index": 0, "part": done_part},
        ),
        ("response.output_item.done", {"output_index": 0, "item": message}),
        ("response.completed", {"response": {**final, "output": [message]}}),
    ]
    return [
        (kind, {"type": kind, "sequence_number": number, **data})
        for number, (kind, data) in enumerate(events)
    ]


def chat_completion_events(text: str = "approve") -> list[tuple[str | None, Any]]:
    """The Chat Completions stream for `text` (one chunk per word), ending with `[DONE]`."""
    base = {
        "id": "chatcmpl-C8x1Yv3QeZ0kB4m2",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-4o-mini-2024-07-18",
        "service_tier": "default",
        "system_fingerprint": "fp_560af6e559",
    }
    chunks: list[tuple[str | None, Any]] = [
        (
            None,
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": "", "refusal": None},
                        "logprobs": None,
                        "finish_reason": None,
                    }
                ],
            },
        )
    ]
    words = text.split(" ")
    for index, word in enumerate(words):
        piece = word if index == 0 else f" {word}"
        chunks.append(
            (
                None,
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"content": piece},
                            "logprobs": None,
                            "finish_reason": None,
                        }
                    ],
                },
            )
        )
    chunks.append(
        (
            None,
            {
                **base,
                "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
            },
        )
    )
    chunks.append((None, "[DONE]"))
    return chunks


def event_stream(events: list[tuple[str | None, Any]]) -> bytes:
    """Server-sent events as the API writes them."""
    lines: list[str] = []
    for kind, data in events:
        if kind is not None:
            lines.append(f"event: {kind}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


def _embeddings_body(count: int) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": [0.0123, -0.0456, 0.0789]}
            for index in range(count)
        ],
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 5, "total_tokens": 5},
    }


_MODELS = {
    "object": "list",
    "data": [
        {"id": "gpt-5-mini", "object": "model", "created": 1754425777, "owned_by": "system"},
        {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
    ],
}


class LocalOpenAI:
    """A transport handler answering like the OpenAI API, and counting requests.

    `POST /responses` answers with `responses[i]` for the i-th such request
    (the last one repeats), streamed as events when the request asks for
    `stream`; `POST /chat/completions` likewise with `chat_texts`;
    `POST /embeddings`, `GET /models` and `GET /responses/{id}` with fixed
    bodies; anything else with 404 like the API.
    """

    def __init__(
        self,
        *responses: dict[str, Any] | str,
        chat_texts: tuple[str, ...] = ("approve",),
        deltas: int = 1,
        request_id: str = REQUEST_ID,
    ) -> None:
        self.responses = [
            response_body(item) if isinstance(item, str) else item
            for item in (responses or ("approve",))
        ]
        self.chat_texts = chat_texts
        self.deltas = deltas
        self.request_id = request_id
        self.requests: list[Any] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    def _next(self, items: list[Any], path: str) -> Any:
        served = sum(1 for request in self.requests if request.url.path.endswith(path)) - 1
        return copy.deepcopy(items[min(served, len(items) - 1)])

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        headers = {"x-request-id": self.request_id}
        path = request.url.path
        is_json = request.headers.get("content-type", "").startswith("application/json")
        body: dict[str, Any] = json.loads(request.content) if is_json and request.content else {}
        if request.method == "POST" and path.endswith("/responses"):
            answer = self._next(self.responses, "/responses")
            if body.get("stream"):
                text = answer["output"][-1]["content"][0]["text"]
                stream = event_stream(list(response_events(text, self.deltas)))
                return self._events(stream, headers)
            return HTTP.Response(200, json=answer, headers=headers)
        if request.method == "POST" and path.endswith("/chat/completions"):
            text = self._next(list(self.chat_texts), "/chat/completions")
            if body.get("stream"):
                return self._events(event_stream(chat_completion_events(text)), headers)
            return HTTP.Response(200, json=chat_completion_body(text), headers=headers)
        if request.method == "POST" and path.endswith("/embeddings"):
            given = body.get("input")
            count = len(given) if isinstance(given, list) else 1
            return HTTP.Response(200, json=_embeddings_body(count), headers=headers)
        if request.method == "GET" and path.endswith("/models"):
            return HTTP.Response(200, json=_MODELS, headers=headers)
        if request.method == "GET" and "/responses/" in path:
            return HTTP.Response(200, json=self.responses[0], headers=headers)
        return HTTP.Response(
            404,
            json={"error": {"message": f"Unknown path {path}", "type": "invalid_request_error"}},
            headers=headers,
        )

    def _events(self, stream: bytes, headers: dict[str, str]) -> Any:
        return HTTP.Response(
            200, content=stream, headers={**headers, "content-type": "text/event-stream"}
        )


def refusing(requests: list[Any] | None = None, *, http: Any = HTTP) -> Callable[[Any], Any]:
    """A handler that fails on any request it is given (and appends it to `requests`), with
    the `ConnectError` of `http` (by default the OpenAI SDK's HTTP library; another SDK's
    clients may be built on the other one)."""

    def refuse(request: Any) -> Any:
        if requests is not None:
            requests.append(request)
        raise http.ConnectError(
            f"no provider in this run, yet {request.method} {request.url.path} was sent",
            request=request,
        )

    return refuse
